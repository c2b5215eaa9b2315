"""TensorFlow while loops in their lowered (TF1) form -> ONNX Loop, a mixin of TfConverter.

convert_variables_to_constants_v2 lowers a While (a Keras LSTM/GRU with unroll=False, a
tf.while_loop) into a frame: per loop variable Enter -> Merge(Enter, NextIteration) ->
Switch(Merge, LoopCond) -> Exit (false side) / body (true side) -> NextIteration; loop
invariants enter through an Enter of their own. A frame becomes one ONNX Loop:

* the condition's nodes are converted twice: on the initial values (the Loop's first cond)
  and inside the body on the new values (the body's cond output);
* a variable the body hands back unchanged (the maximum trip count, a TensorList made from a
  tensor) is read from outside, as invariants are;
* a TensorList that is reserved before the loop and written with TensorListSetItem at the
  index of a counter that starts at 0 and grows by 1 (Keras's output sequence) becomes a scan
  output of the Loop (the items stacked); a one-element list written at index 0 on every turn
  (Keras's last output) is the scan output's last item; TensorListFromTensor / GetItem / Stack
  are the tensor itself / a Gather / the stacked tensor;
* the other variables are carried.
Other uses of TensorLists, nested frames and tf.cond's Switch/Merge raise UnsupportedError.
"""
from __future__ import annotations

import copy

import numpy as np
from onnx import helper

from mace.errors import UnsupportedError

from . import tf_pb
from .onnx_builder import OnnxBuilder
from .tf_common import _DTYPES, _attr

FRAME_OPS = {"Enter", "Merge", "Switch", "Exit", "NextIteration", "LoopCond"}


def _ref(t: str) -> str:
    if t.startswith("^"):
        return ""
    return t if ":" in t and t.rsplit(":", 1)[1].isdigit() else t + ":0"


class _Frame:
    def __init__(self, name):
        self.name = name
        self.vars: list[dict] = []      # enter, merge, switch, nextit, exit, src, body
        self.invariants: list = []      # Enter nodes read as they are
        self.loopcond = None
        self.cond_nodes: list = []
        self.body_nodes: list = []
        self.internal: set[str] = set()
        self.done = False


class TfWhile:
    # --- analysis ---------------------------------------------------------------------------
    def _frames(self, nodes) -> dict:
        """frame name -> _Frame, with the names of every node a frame owns."""
        by_name = {n.name: n for n in nodes}
        users: dict[str, list] = {}
        for n in nodes:
            for t in n.input:
                if not t.startswith("^"):
                    users.setdefault(_ref(t), []).append(n)
        frames: dict[str, _Frame] = {}
        for n in nodes:
            if n.op == "Enter":
                f = frames.setdefault(_attr(n, "frame_name", ""), _Frame(_attr(n, "frame_name",
                                                                              "")))
                merge = next((u for u in users.get(n.name + ":0", []) if u.op == "Merge"), None)
                if merge is None:
                    f.invariants.append(n)
                    continue
                other = [_ref(t).rsplit(":", 1)[0] for t in merge.input if _ref(t)]
                nxt = next((by_name[o] for o in other if by_name.get(o) is not None and
                            by_name[o].op == "NextIteration"), None)
                sw = next((u for u in users.get(merge.name + ":0", []) if u.op == "Switch"), None)
                if nxt is None or sw is None:
                    raise self._fail(n, "a loop variable without NextIteration / Switch")
                ex = next((u for u in users.get(sw.name + ":0", []) if u.op == "Exit"), None)
                f.loopcond = by_name[_ref(sw.input[1]).rsplit(":", 1)[0]]
                f.vars.append(dict(enter=n, merge=merge, switch=sw, nextit=nxt, exit=ex,
                                   src=_ref(n.input[0]), body=_ref(nxt.input[0])))
        for f in frames.values():
            if f.loopcond is None:
                e = f.invariants[0]
                raise UnsupportedError(f"TensorFlow op 'Enter' (node '{e.name}'): loop "
                                       f"'{f.name}' has no loop variable (Merge, NextIteration, "
                                       "Switch): not a while loop mace converts")
            stop = {v["merge"].name for v in f.vars} | {v["switch"].name for v in f.vars} | \
                {e.name for e in f.invariants}
            f.cond_nodes = self._walk([_ref(f.loopcond.input[0])], by_name, stop, f)
            f.body_nodes = self._walk([v["body"] for v in f.vars], by_name, stop, f)
            f.internal = {n.name for n in f.cond_nodes + f.body_nodes} | stop | \
                {v["nextit"].name for v in f.vars} | {f.loopcond.name} | \
                {v["enter"].name for v in f.vars}
            # Nodes inside the loop that feed nothing it returns (TF's control helpers).
            todo = [f.loopcond.name] + [v["switch"].name for v in f.vars] + \
                [e.name for e in f.invariants]
            while todo:
                name = todo.pop()
                for k in range(8):
                    for u in users.get(f"{name}:{k}", []):
                        if u.op != "Exit" and u.name not in f.internal:
                            f.internal.add(u.name)
                            todo.append(u.name)
        return frames

    def _walk(self, refs, by_name, stop, frame) -> list:
        """Nodes computing refs back to the frame's Merge/Switch/Enter nodes, in order."""
        order, seen = [], set()
        for r in refs:
            stack = [(r.rsplit(":", 1)[0], False)]
            while stack:
                name, done = stack.pop()
                if done:
                    order.append(by_name[name])
                    continue
                if name in seen or name in stop:
                    continue
                seen.add(name)
                n = by_name[name]
                if n.op in FRAME_OPS:
                    raise self._fail(n, f"loop '{frame.name}' holds another loop or a tf.cond, "
                                        "which is not supported")
                stack.append((name, True))
                for t in n.input:
                    if _ref(t):
                        stack.append((_ref(t).rsplit(":", 1)[0], False))
        return order

    # --- emission ---------------------------------------------------------------------------
    def _scope(self, builder, env, vals):
        """A converter like self writing into `builder`, its tensors seeded with env / vals."""
        c = copy.copy(self)
        c.b, c.env, c.vals = builder, dict(env), dict(vals)
        c._nhwc, c._nchw = {}, {}
        return c

    def _through_identity(self, ref: str) -> str:
        while True:
            n = self._by_name.get(ref.rsplit(":", 1)[0])
            if n is None or n.op not in ("Identity", "StopGradient", "Snapshot"):
                return ref
            ref = _ref(n.input[0])

    def _const_of(self, ref):
        """The value of ref (through Identity) if constant, converted yet or not (a Const
        inside a loop is converted with the loop)."""
        ref = self._through_identity(ref)
        if ref in self.vals:
            return self.vals[ref]
        node = self._by_name.get(ref.rsplit(":", 1)[0])
        return _attr(node, "value") if node is not None and node.op == "Const" else None

    def _counter(self, f, ref) -> bool:
        """ref is the body value of a variable starting at 0 and growing by 1 per turn."""
        ref = self._through_identity(ref)
        for v in f.vars:
            if ref == v["switch"].name + ":1":
                start = self._const_of(v["src"])
                add = self._by_name.get(self._through_identity(v["body"]).rsplit(":", 1)[0])
                if start is None or int(np.asarray(start).reshape(-1)[0]) != 0 or add is None \
                        or add.op not in ("Add", "AddV2"):
                    return False
                a, b = (self._through_identity(_ref(t)) for t in add.input[:2])
                one = self._const_of(b if a == ref else a)
                return ref in (a, b) and one is not None and \
                    int(np.asarray(one).reshape(-1)[0]) == 1
        return False

    def _last_only(self, reserve_ref, index_ref) -> bool:
        """A list reserved with one element and written at index 0 (Keras's last output)."""
        reserve = self._by_name[reserve_ref.rsplit(":", 1)[0]]
        num, idx = self._const_of(_ref(reserve.input[1])), self._const_of(index_ref)
        return num is not None and idx is not None and int(np.asarray(num).reshape(-1)[0]) == 1 \
            and int(np.asarray(idx).reshape(-1)[0]) == 0

    def _emit_frame(self, f: _Frame) -> None:
        f.done = True
        outer, vals = {}, {}
        for e in f.invariants:
            src = _ref(e.input[0])
            if src in self.vals:
                vals[e.name + ":0"] = self.vals[src]
            else:
                outer[e.name + ":0"] = (self.nhwc(src), False)
        carried, passed, scans = [], [], []
        for v in f.vars:
            body = self._through_identity(v["body"])
            setitem = self._by_name.get(body.rsplit(":", 1)[0])
            if body == v["switch"].name + ":1":
                passed.append(v)
            elif setitem is not None and setitem.op == "TensorListSetItem" and \
                    self._by_name[v["src"].rsplit(":", 1)[0]].op == "TensorListReserve" and \
                    self._through_identity(_ref(setitem.input[0])) == v["switch"].name + ":1" \
                    and (self._counter(f, _ref(setitem.input[1])) or
                         self._last_only(v["src"], _ref(setitem.input[1]))):
                scans.append((v, setitem))
            else:
                carried.append(v)
        for v in passed:
            for t in (v["merge"].name + ":0", v["switch"].name + ":1"):
                if v["src"] in self.vals:
                    vals[t] = self.vals[v["src"]]
                else:
                    outer[t] = (self.nhwc(v["src"]), False)
        scan_items = {s.name for _, s in scans}
        # The first condition, on the initial values.
        first = self._scope(self.b, outer, vals)
        for v in carried:
            if v["src"] in self.vals:
                first.vals[v["merge"].name + ":0"] = self.vals[v["src"]]
            else:
                first.env[v["merge"].name + ":0"] = (self.nhwc(v["src"]), False)
        first._run(f.cond_nodes)
        cond0 = first.nhwc(_ref(f.loopcond.input[0]))
        # The body: its formal inputs, then its nodes and the condition on the new values.
        bb = OnnxBuilder(f.name + "/body")
        it, cin = bb.unique(f.name + "/iter"), bb.unique(f.name + "/cond")
        formals = [helper.make_tensor_value_info(it, helper.np_dtype_to_tensor_dtype(
            np.dtype(np.int64)), []), helper.make_tensor_value_info(cin, 9, [])]
        body = self._scope(bb, outer, vals)
        for v in carried:
            name = bb.unique(v["switch"].name + "/in")
            dt = _DTYPES.get(_attr(v["enter"], "T", tf_pb.DT_FLOAT), np.float32)
            formals.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None))
            body.env[v["switch"].name + ":1"] = (name, False)
            body.rank[name] = self._rank_of(v["src"])
        body._run([n for n in f.body_nodes if n.name not in scan_items])
        for v in carried:
            body.env[v["merge"].name + ":0"] = (body.nhwc(v["body"]), False)
        body._run(f.cond_nodes)
        outs = [body.nhwc(_ref(f.loopcond.input[0]))] + [body.nhwc(v["body"]) for v in carried] \
            + [body.nhwc(_ref(s.input[2])) for _, s in scans]
        outs = [bb.node1("Identity", [o], name=f"{f.name}/out{k}") for k, o in enumerate(outs)]
        types = [9] + [helper.np_dtype_to_tensor_dtype(np.dtype(_DTYPES.get(
            _attr(v["enter"], "T", tf_pb.DT_FLOAT), np.float32))) for v in carried] + \
            [helper.np_dtype_to_tensor_dtype(np.dtype(_DTYPES.get(
                _attr(s, "element_dtype", tf_pb.DT_FLOAT), np.float32))) for _, s in scans]
        graph = helper.make_graph(
            bb.nodes, f.name + "/body", formals,
            [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, types)],
            initializer=[helper.make_tensor(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                            v.shape, v.reshape(-1).tolist())
                         for k, v in bb.inits.items()])
        inits = [self.vals[v["src"]] if v["src"] in self.vals else None for v in carried]
        ins = ["", cond0] + [self.b.const(a, v["src"]) if a is not None else self.nhwc(v["src"])
                             for v, a in zip(carried, inits)]
        res = self.b.node("Loop", ins, len(carried) + len(scans), name=f.name, body=graph)
        for k, (v, r) in enumerate(zip([v for v in carried] + [v for v, _ in scans], res)):
            if v["exit"] is not None and k >= len(carried) and \
                    not self._counter(f, _ref(scans[k - len(carried)][1].input[1])):
                # A one-element list written at 0 every turn: the last turn's item.
                r = self.b.node1("Slice", [r, self.b.const(np.array([-1], np.int64)),
                                           self.b.const(np.array([2 ** 62], np.int64)),
                                           self.b.const(np.array([0], np.int64))],
                                 name=v["exit"].name + "/last")
            if v["exit"] is not None:
                self.env[v["exit"].name + ":0"] = (r, False)
        for v in passed:
            if v["exit"] is not None:
                if v["src"] in self.vals:
                    self.vals[v["exit"].name + ":0"] = self.vals[v["src"]]
                else:
                    self.env[v["exit"].name + ":0"] = (self.nhwc(v["src"]), False)

    def _run(self, nodes) -> None:
        for n in nodes:
            fn = getattr(self, "_" + n.op, None)
            if fn is None:
                raise self._fail(n, "not supported")
            fn(n)

    # --- TensorList ops outside the scan pattern -------------------------------------------------
    def _TensorListFromTensor(self, n):
        self._Identity(n)

    def _TensorListStack(self, n):
        self._Identity(n)

    def _TensorListGetItem(self, n):
        x, i = self.ins(n)[:2]
        idx = self.b.node1("Cast", [self.nhwc(i)], name=n.name + "/index", to=7)
        self.emit(n, "Gather", [self.nhwc(x), idx], axis=0)

    def _TensorListReserve(self, n):
        """Only as a loop's scan output (the frame reads it); nothing to compute here."""
