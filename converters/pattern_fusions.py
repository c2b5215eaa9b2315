"""Exporter pattern fusions: activations written out as element-wise arithmetic become one
Activation, which fuse_activation then moves into its producer's output write.

ONNX exporters (torch's TorchScript and dynamo exporters, Paddle, tf2onnx) write many
activations as chains of small ops: HardSwish as x * Clip(x + 3, 0, 6) / 6 (or x *
HardSigmoid(x), x * Min(Max(x + 3, 0), 6) * (1/6), ...), SiLU as x * Sigmoid(x), GELU as
0.5 * x * (1 + Erf(x / sqrt 2)) or with Tanh(sqrt(2/pi) (x + 0.044715 x^3)), Mish as
x * Tanh(Softplus(x)). Each op of such a chain is a full pass over memory.

Rather than one matcher per spelling, each candidate chain is read back into a small algebra:
a sum of terms coef * x^k * f(sub-expression), where f is one of the element-wise functions the
chain uses (SIGMOID, TANH, ERF, SOFTPLUS, EXP, CLIP[lo, hi]). Association order, constant
placement, Div by c versus Mul by 1/c, Sub, Neg, Pow and x*x*x all give the same canonical
form, which is then compared with each target's (constants within a relative 1e-6, so float32
spellings of 1/6 or sqrt 2 match and 0.2 or 1.5 do not). A chain is rewritten only when it has
one variable input x (f32), every constant is a one-element f32 that broadcasts nothing, and
every intermediate tensor is used only inside the chain and is not a graph output.

The rewrites run before fuse_bias and fuse_activation (transforms.TRANSFORMS).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import ir

_RTOL = 1e-6
_MAX_CHAIN = 24  # ops read back from one root; exporter chains have at most about 12
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715
_INF = math.inf


@dataclass(frozen=True)
class _Atom:
    """f(arg): fn names the function, params its constants (CLIP: (lo, hi))."""
    fn: str
    params: tuple
    arg: tuple  # an expression


# An expression is a tuple of terms (coef, power of x, atom or None), like terms combined.
_X = ((1.0, 1, None),)


def _close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= _RTOL * max(abs(a), abs(b))


def _atom_eq(a: _Atom | None, b: _Atom | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.fn == b.fn and len(a.params) == len(b.params)
            and all(_close(p, q) for p, q in zip(a.params, b.params)) and _expr_eq(a.arg, b.arg))


def _expr_eq(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    left = list(b)
    for c, k, f in a:
        for i, (c2, k2, f2) in enumerate(left):
            if k == k2 and _close(c, c2) and _atom_eq(f, f2):
                del left[i]
                break
        else:
            return False
    return True


def _combine(terms) -> tuple:
    out: list = []
    for c, k, f in terms:
        for i, (c2, k2, f2) in enumerate(out):
            if k == k2 and _atom_eq(f, f2):
                out[i] = (c + c2, k, f)
                break
        else:
            out.append((c, k, f))
    return tuple(t for t in out if t[0] != 0.0)


def _add(a: tuple, b: tuple) -> tuple:
    return _combine(a + b)


def _scale(a: tuple, s: float) -> tuple:
    return _combine((c * s, k, f) for c, k, f in a)


def _mul(a: tuple, b: tuple) -> tuple | None:
    terms = []
    for c, k, f in a:
        for c2, k2, f2 in b:
            if f is not None and f2 is not None:
                return None  # a product of two functions is no target's form
            terms.append((c * c2, k + k2, f if f is not None else f2))
    return _combine(terms)


def _const(v: float) -> tuple:
    return ((v, 0, None),) if v != 0.0 else ()


def _as_const(a: tuple) -> float | None:
    if not a:
        return 0.0
    if len(a) == 1 and a[0][1] == 0 and a[0][2] is None:
        return a[0][0]
    return None


def _apply(fn: str, a: tuple) -> tuple:
    if fn == "LOG" and len(a) == 2:  # log(1 + exp(b)) is softplus(b)
        one = [t for t in a if t[1] == 0 and t[2] is None and t[0] == 1.0]
        ex = [t for t in a if t[0] == 1.0 and t[1] == 0 and t[2] is not None and t[2].fn == "EXP"]
        if one and ex:
            return ((1.0, 0, _Atom("SOFTPLUS", (), ex[0][2].arg)),)
    return ((1.0, 0, _Atom(fn, (), a)),)


def _clip(a: tuple, lo: float, hi: float) -> tuple:
    """min(max(a, lo), hi); a clip of c * clip(b) (c > 0) narrows that clip's bounds."""
    if len(a) == 1 and a[0][1] == 0 and a[0][2] is not None and a[0][2].fn == "CLIP" \
            and a[0][0] > 0:
        c, f = a[0][0], a[0][2]
        nlo, nhi = max(f.params[0], lo / c), min(f.params[1], hi / c)
        return ((c, 0, _Atom("CLIP", (nlo, nhi), f.arg)),)
    return ((1.0, 0, _Atom("CLIP", (lo, hi), a)),)


def _poly(a: tuple) -> dict | None:
    """{power: coef} of a polynomial in x (no functions), else None."""
    if any(f is not None for _, _, f in a):
        return None
    return {k: c for c, k, _ in a}


class _Reader:
    """Reads the chain ending at one root tensor back into an expression in one variable x."""

    def __init__(self, graph: ir.Graph, producers: dict, x: str, rank: int | None):
        self.graph, self.producers, self.x, self.rank = graph, producers, x, rank
        self.ops: dict[int, ir.Op] = {}
        self.memo: dict[str, tuple | None] = {}

    def scalar(self, name: str) -> float | None:
        c = self.graph.consts.get(name)
        if c is None or c.dtype != np.float32 or c.size != 1:
            return None
        if c.ndim > (self.rank if self.rank is not None else 0):
            return None  # a [1, 1, 1, 1] constant would broadcast x up to its rank
        return float(c.reshape(-1)[0])

    def read(self, name: str) -> tuple | None:
        if name == self.x:
            return _X
        if name in self.memo:
            return self.memo[name]
        v = self.scalar(name)
        if v is not None:
            return _const(v)
        op = self.producers.get(name)
        if op is None or len(op.outputs) != 1 or len(self.ops) >= _MAX_CHAIN:
            return None
        self.ops[id(op)] = op
        e = self._op(op)
        self.memo[name] = e
        return e

    def _op(self, op: ir.Op) -> tuple | None:
        if op.type == "Eltwise":
            if not set(op.args) <= {"type"} | set(ir.ACTIVATION_ARGS):
                return None
            e = self._eltwise(op)
            return None if e is None else self._fused(op, e)
        if op.type == "Activation" and len(op.inputs) == 1:
            a = self.read(op.inputs[0])
            return None if a is None else self._fused(op, a)
        if op.type == "Where" and len(op.inputs) == 3 and not op.args:
            return self._thresholded_softplus(op)
        return None

    def _thresholded_softplus(self, op: ir.Op) -> tuple | None:
        """Where(e > t, e, Softplus(e)): torch's F.softplus (threshold 20) as the dynamo exporter
        writes it. It is Softplus(e) to float precision when t >= 15 (there softplus(e) - e <
        exp(-t) is under half an ulp of e)."""
        cmp = self.producers.get(op.inputs[0])
        if (cmp is None or cmp.type != "Compare" or len(cmp.inputs) != 2
                or cmp.args not in ({"type": "GREATER"}, {"type": "GREATER_EQUAL"})):
            return None
        t = self.scalar(cmp.inputs[1])
        if t is None or t < 15.0:
            return None
        self.ops[id(cmp)] = cmp
        e, a, b = (self.read(n) for n in (cmp.inputs[0], op.inputs[1], op.inputs[2]))
        if e is None or a is None or b is None or not _expr_eq(a, e):
            return None
        sp = _apply("SOFTPLUS", e)
        return b if _expr_eq(b, sp) else None

    def _fused(self, op: ir.Op, e: tuple) -> tuple | None:
        """e with op's (fused or own) activation applied."""
        kind = op.args.get("activation", "NOOP")
        if kind in ("NOOP", "", None):
            return e
        if kind == "RELU":
            return _clip(e, 0.0, _INF)
        if kind == "RELUX":
            return _clip(e, 0.0, float(op.args.get("max_limit", 6.0)))
        if kind == "HARDSIGMOID":
            alpha = float(op.args.get("hardsigmoid_alpha", 0.2))
            beta = float(op.args.get("hardsigmoid_beta", 0.5))
            return _clip(_add(_scale(e, alpha), _const(beta)), 0.0, 1.0)
        if kind in ("SIGMOID", "TANH"):
            return _apply(kind, e)
        return None

    def _eltwise(self, op: ir.Op) -> tuple | None:
        kind = op.args["type"]
        if len(op.inputs) == 1:
            a = self.read(op.inputs[0])
            if a is None:
                return None
            if kind == "NEG":
                return _scale(a, -1.0)
            if kind in ("ERF", "EXP", "LOG", "SOFTPLUS", "TANH", "SIGMOID"):
                return _apply(kind, a)
            return None
        if len(op.inputs) != 2:
            return None
        a, b = (self.read(t) for t in op.inputs)
        if a is None or b is None:
            return None
        ca, cb = _as_const(a), _as_const(b)
        if kind == "ADD":
            return _add(a, b)
        if kind == "SUB":
            return _add(a, _scale(b, -1.0))
        if kind == "PROD":
            return _mul(a, b)
        if kind == "DIV":
            return _scale(a, 1.0 / cb) if cb else None
        if kind == "POW":
            if cb is None or cb not in (1.0, 2.0, 3.0, 4.0):
                return None
            r = a
            for _ in range(int(cb) - 1):
                r = _mul(r, a)
                if r is None:
                    return None
            return r
        if kind in ("MAX", "MIN"):
            if (ca is None) == (cb is None):
                return None
            e, c = (b, ca) if ca is not None else (a, cb)
            return _clip(e, c, _INF) if kind == "MAX" else _clip(e, -_INF, c)
        return None


def _linear_clip(term) -> tuple | None:
    """(slope, offset, lo, hi) of coef * clip(a x + b, lo, hi) as clip(a' x + b', lo', hi')
    (coef > 0), for a term coef * x^k * CLIP(a x + b)."""
    c, _, f = term
    if f is None or f.fn != "CLIP" or c <= 0:
        return None
    p = _poly(f.arg)
    if p is None or not set(p) <= {0, 1} or p.get(1, 0.0) == 0.0:
        return None
    return c * p[1], c * p.get(0, 0.0), c * f.params[0], c * f.params[1]


def _gelu_tanh_arg(p: dict | None, scale: float) -> bool:
    """p is scale * sqrt(2/pi) * (x + 0.044715 x^3)."""
    return (p is not None and set(p) == {1, 3} and _close(p[1], scale * _SQRT_2_OVER_PI)
            and _close(p[3] / p[1], _GELU_CUBIC))


def _target(e: tuple) -> dict | None:
    """The Activation arguments whose function e is, else None."""
    if len(e) == 1:
        c, k, f = e[0]
        if f is None:
            return None
        if k == 0 and f.fn == "CLIP":
            lc = _linear_clip(e[0])
            if lc is None:
                return None
            a, b, lo, hi = lc
            if _poly(f.arg) == {1: 1.0} and c == 1.0 and lo == 0.0:
                return {"activation": "RELU"} if hi == _INF else \
                    {"activation": "RELUX", "max_limit": float(hi)}
            if lo == 0.0 and _close(hi, 1.0):
                return {"activation": "HARDSIGMOID", "hardsigmoid_alpha": float(a),
                        "hardsigmoid_beta": float(b)}
            return None
        if k != 1:
            return None
        if f.fn == "CLIP":
            lc = _linear_clip(e[0])
            if lc is not None and all(_close(v, t) for v, t in zip(lc, (1 / 6, 0.5))) \
                    and lc[2] == 0.0 and _close(lc[3], 1.0):
                return {"activation": "HARDSWISH"}
            return None
        if c != 1.0 and not _close(c, 1.0):
            return None
        p = _poly(f.arg)
        if f.fn == "SIGMOID" and p is not None:
            if set(p) == {1}:
                return {"activation": "SWISH"} if _close(p[1], 1.0) else \
                    {"activation": "SWISH", "activation_coefficient": float(p[1])}
            if _gelu_tanh_arg(p, 2.0):  # 1 + tanh(u) = 2 sigmoid(2u)
                return {"activation": "GELU_TANH"}
        if (f.fn == "TANH" and len(f.arg) == 1 and _close(f.arg[0][0], 1.0)
                and f.arg[0][1] == 0 and f.arg[0][2] is not None
                and f.arg[0][2].fn == "SOFTPLUS" and _expr_eq(f.arg[0][2].arg, _X)):
            return {"activation": "MISH"}
        return None
    if len(e) == 2:  # 0.5 x + 0.5 x f(...): GELU's two forms
        plain = [t for t in e if t[2] is None]
        func = [t for t in e if t[2] is not None]
        if len(plain) != 1 or len(func) != 1:
            return None
        (c1, k1, _), (c2, k2, f) = plain[0], func[0]
        if k1 != 1 or k2 != 1 or not _close(c1, 0.5) or not _close(c2, 0.5):
            return None
        p = _poly(f.arg)
        if f.fn == "ERF" and p is not None and set(p) == {1} and _close(p[1], math.sqrt(0.5)):
            return {"activation": "GELU"}
        if f.fn == "TANH" and _gelu_tanh_arg(p, 1.0):
            return {"activation": "GELU_TANH"}
    return None


_READ_OPS = ("Eltwise", "Activation", "Where", "Compare")
# The least rank of these ops' outputs, for an x whose shape is not known at convert time
# (symbolic dims): constants of up to that rank cannot broadcast x to a higher rank.
_RANK_OF = {"Conv2D": 4, "Deconv2D": 4, "Pooling": 4, "FullyConnected": 2}


def _candidates(graph: ir.Graph, producers: dict, root: ir.Op) -> list[str]:
    """Tensors the chain ending at root reads, nearest first: the possible x."""
    seen, out, todo = set(), [], list(root.inputs)
    ops = 0
    while todo and ops < _MAX_CHAIN:
        t = todo.pop(0)
        if t in seen or t in graph.consts:
            continue
        seen.add(t)
        out.append(t)
        op = producers.get(t)
        if op is not None and op.type in _READ_OPS:
            ops += 1
            todo.extend(op.inputs)
    return out


def _match(graph: ir.Graph, consumers: dict, outputs: set, producers: dict, root: ir.Op,
           done: set):
    """(x, activation args, ops of the chain) of the largest chain ending at root, else None."""
    best = None
    out = root.outputs[0]
    if graph.dtypes.get(out) != np.float32:
        return None
    for x in _candidates(graph, producers, root):
        if graph.dtypes.get(x) != np.float32:
            continue
        shape = graph.shapes.get(x)
        rank = len(shape) if shape is not None else _RANK_OF.get(getattr(producers.get(x), "type",
                                                                         None))
        r = _Reader(graph, producers, x, rank)
        e = r.read(out)
        if e is None or len(r.ops) < 2 or (best is not None and len(r.ops) <= len(best[2])):
            continue
        if any(i in done for i in r.ops):
            continue
        args = _target(e)
        if args is None:
            continue
        inner = [t for op in r.ops.values() for t in op.outputs if t != out]
        if any(t in outputs or any(id(u) not in r.ops for u in consumers.get(t, []))
               for t in inner):
            continue  # an intermediate is used outside the chain or is a graph output
        best = (x, args, list(r.ops.values()))
    return best


def fuse_exporter_patterns(graph: ir.Graph) -> bool:
    """Every chain that computes one activation of one tensor becomes that Activation. Roots are
    tried from the graph's end, so the largest chain wins over a chain inside it."""
    consumers, producers = graph.consumers(), graph.producers()
    outputs = {t.name for t in graph.outputs}
    done: set = set()  # ids of the ops of the chains found
    new: dict = {}  # id of a chain's root -> its Activation
    for root in reversed(graph.ops):
        if (id(root) in done or root.type not in ("Eltwise", "Activation")
                or len(root.outputs) != 1):
            continue
        found = _match(graph, consumers, outputs, producers, root, done)
        if found is None:
            continue
        x, args, chain = found
        new[id(root)] = ir.Op("Activation", root.name, [x], list(root.outputs), args)
        done |= {id(o) for o in chain}
    if new:  # each Activation takes its root's place: its x is computed before the chain was
        graph.ops = [new.get(id(o), o) for o in graph.ops if id(o) in new or id(o) not in done]
    return bool(new)


# Unary ops that have a fused-activation twin: the twin fuses into the producer.
_UNARY_TO_ACTIVATION = {("Eltwise", "MISH"): "MISH", ("Eltwise", "GELU_TANH"): "GELU_TANH",
                        ("UnaryMath", "SWISH"): "SWISH"}


def unary_to_activation(graph: ir.Graph) -> bool:
    """f32 Eltwise MISH / GELU_TANH (ONNX Mish, Gelu with approximate="tanh") and UnaryMath
    SWISH (ONNX Swish, alpha kept) become the Activation of the same function."""
    changed = False
    for i, op in enumerate(graph.ops):
        kind = _UNARY_TO_ACTIVATION.get((op.type, op.args.get("type")))
        if (kind is None or len(op.inputs) != 1 or len(op.outputs) != 1
                or graph.dtypes.get(op.inputs[0]) != np.float32):
            continue
        extra = set(op.args) - {"type"}
        if extra - ({"alpha"} if kind == "SWISH" else set()):
            continue
        args = {"activation": kind}
        alpha = float(op.args.get("alpha", 1.0))
        if alpha != 1.0:
            args["activation_coefficient"] = alpha
        graph.ops[i] = ir.Op("Activation", op.name, list(op.inputs), list(op.outputs), args)
        changed = True
    return changed


_VIEWS = ("Squeeze", "ExpandDims")
_FUSING = ("Conv2D", "Deconv2D", "FullyConnected", "MatMul")


def activation_before_view(graph: ir.Graph) -> bool:
    """Producer -> Squeeze/ExpandDims -> Activation, the producer one that fuses activations
    (a 1-D convolution runs as Conv2D between two such views), becomes producer -> Activation
    -> view: an element-wise function commutes with a view, and fuse_activation then moves it
    into the producer."""
    consumers, producers = graph.consumers(), graph.producers()
    outputs = {t.name for t in graph.outputs}
    for view in graph.ops:
        if view.type not in _VIEWS or len(view.inputs) != 1 or len(view.outputs) != 1:
            continue
        t, v = view.inputs[0], view.outputs[0]
        users = consumers.get(v, [])
        act = users[0] if len(users) == 1 else None
        prod = producers.get(t)
        if (act is None or act.type != "Activation" or len(act.inputs) != 1
                or act.args.get("activation") in (None, "NOOP", "PRELU")
                or prod is None or prod.type not in _FUSING
                or prod.args.get("activation", "NOOP") not in ("NOOP", "")
                or v in outputs or t in outputs or len(consumers.get(t, [])) != 1
                or graph.dtypes.get(t) != np.float32):
            continue
        mid = act.outputs[0] + "_pre_view"
        while mid in producers or mid in consumers or mid in graph.consts:
            mid += "_"
        act.inputs, act.outputs, view.inputs, view.outputs = [t], [mid], [mid], list(act.outputs)
        graph.ops.remove(act)
        graph.ops.insert(graph.ops.index(view), act)
        if t in graph.shapes:
            graph.shapes[mid] = list(graph.shapes[t])
        graph.dtypes[mid] = graph.dtypes[t]
        return True  # the maps above are stale now
    return False


PATTERN_FUSIONS = [unary_to_activation, fuse_exporter_patterns, activation_before_view]
