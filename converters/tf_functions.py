"""TensorFlow function calls inlined before conversion: a (Stateful)PartitionedCall node whose
function is in the GraphDef's library becomes the function's nodes, renamed under the call's
name, with its arguments wired to the call's inputs and an IdentityN named as the call giving
its results. Frozen Keras models keep such calls where Keras jit-compiles a piece (grouped
Conv2D) and wherever a tf.function calls another with jit_compile / noinline.

Inside a function a tensor is 'node:output_arg:index' (the index within that output arg);
the flat output index follows from the op's output args, known here for the ops with more
than one (FusedBatchNorm*, TopKV2, Unique, NonMaxSuppressionV4/V5); other ops have one.
"""
from __future__ import annotations

from mace.errors import InvalidModelError, UnsupportedError

from . import tf_pb

CALLS = ("StatefulPartitionedCall", "PartitionedCall")
_BN_OUT = ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
           "reserve_space_3"]
_OUT_ARGS = {"FusedBatchNorm": _BN_OUT, "FusedBatchNormV2": _BN_OUT,
             "FusedBatchNormV3": _BN_OUT, "TopKV2": ["values", "indices"],
             "Unique": ["y", "idx"], "NonMaxSuppressionV4": ["selected_indices", "valid_outputs"],
             "NonMaxSuppressionV5": ["selected_indices", "selected_scores", "valid_outputs"]}
_MAX_DEPTH = 16


def _flat(fn_nodes, ref: str, where: str) -> tuple[str, int]:
    """'node:arg:i' inside a function -> (node, flat output index)."""
    parts = ref.split(":")
    if len(parts) == 1:
        return parts[0], 0
    if len(parts) == 2:
        return parts[0], int(parts[1])
    node, arg, idx = parts[0], parts[1], int(parts[2])
    op = fn_nodes[node].op if node in fn_nodes else ""
    args = _OUT_ARGS.get(op)
    if args is None:
        return node, idx
    if arg not in args:
        raise UnsupportedError(f"TensorFlow function {where}: output '{arg}' of op '{op}' "
                               "is not known")
    return node, args.index(arg) + idx


def _inline_call(call, fdef) -> list:
    where = f"'{fdef.signature.name}' (called by node '{call.name}')"
    prefix = call.name + "/"
    args = [a.name for a in fdef.signature.input_arg]
    data_ins = [i for i in call.input if not i.startswith("^")]
    if len(data_ins) != len(args):
        raise InvalidModelError(f"TensorFlow function {where}: {len(data_ins)} inputs for "
                                f"{len(args)} arguments")
    arg_map = dict(zip(args, data_ins))
    fn_nodes = {n.name: n for n in fdef.node_def}

    def resolve(ref: str) -> str:
        if ref.startswith("^"):
            name = ref[1:]
            return "^" + (prefix + name if name in fn_nodes else arg_map.get(name, name))
        if ref in arg_map:
            return arg_map[ref]
        node, k = _flat(fn_nodes, ref, where)
        if node not in fn_nodes:
            raise InvalidModelError(f"TensorFlow function {where}: '{ref}' names no node "
                                    "or argument")
        return f"{prefix}{node}:{k}" if k else prefix + node
    out = []
    for n in fdef.node_def:
        m = tf_pb.NodeDef()
        m.CopyFrom(n)
        m.name = prefix + n.name
        del m.input[:]
        m.input.extend(resolve(i) for i in n.input)
        out.append(m)
    res = tf_pb.NodeDef(name=call.name, op="IdentityN")
    for a in fdef.signature.output_arg:
        if a.name not in fdef.ret:
            raise InvalidModelError(f"TensorFlow function {where}: no value for output "
                                    f"'{a.name}'")
        res.input.append(resolve(fdef.ret[a.name]))
    out.append(res)
    return out


def inline_functions(nodes: list, library) -> list:
    """The node list with every call of a library function replaced by the function's nodes
    (calls inside functions too); a call of a function not in the library is left for the
    converter to refuse by name."""
    funcs = {f.signature.name: f for f in library.function} if library is not None else {}
    depth = 0
    while any(n.op in CALLS and n.attr["f"].func.name in funcs for n in nodes):
        depth += 1
        if depth > _MAX_DEPTH:
            raise UnsupportedError(f"TensorFlow function calls nest deeper than {_MAX_DEPTH} "
                                   "(recursion?)")
        new = []
        for n in nodes:
            f = funcs.get(n.attr["f"].func.name) if n.op in CALLS else None
            new.extend(_inline_call(n, f) if f is not None else [n])
        nodes = new
    return nodes
