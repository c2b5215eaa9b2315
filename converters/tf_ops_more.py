"""More TensorFlow ops for the TensorFlow front end (a mixin of TfConverter), each written as
the ONNX ops mace runs: element-wise math, comparisons and logic, arg/logical reductions,
slicing / splitting / tiling / gathering, depth-space-batch moves, fills and selection, Cumsum,
TopKV2, OneHot, Einsum, LRN and ResizeBicubic.

Layout: a tensor the converter holds as NCHW (`held`) stays held through element-wise ops and
through axis-taking ops whose TF axes are remapped to NCHW; where a remap would change the
order of the remaining dims, the op reads the NHWC value instead.
"""
from __future__ import annotations

import numpy as np

from .tf_common import _DTYPES, _NHWC_AXIS_IN_NCHW, _TO_NCHW, _attr
from .tf_einsum import lower_einsum

_BIG = np.iinfo(np.int64).max
_FOLD = {"Pow": np.power, "Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less,
         "Greater": np.greater, "LessEqual": np.less_equal, "GreaterEqual": np.greater_equal,
         "SquaredDifference": lambda a, b: (a - b) * (a - b), "FloorMod": np.mod,
         "FloorDiv": np.floor_divide, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or}
_COMPARE = {"Equal": "Equal", "Less": "Less", "Greater": "Greater", "LessEqual": "LessOrEqual",
            "GreaterEqual": "GreaterOrEqual", "LogicalAnd": "And", "LogicalOr": "Or"}


class TfOpsMore:
    # --- helpers ------------------------------------------------------------------------------
    def _i64(self, v, base="const") -> str:
        return self.b.const(np.asarray(v, np.int64), base)

    def _held4(self, x: str) -> bool:
        return x in self.env and self.held(x) and self._rank_of(x) == 4

    def _axis(self, n, axis: int, rank: int | None) -> int:
        if axis < 0:
            if rank is None:
                raise self._fail(n, "a negative axis needs a known rank")
            axis += rank
        return axis

    def _in_layout(self, x: str, axes: list[int] | None = None):
        """(onnx name, held, rank, axes) for an op that keeps the layout of x: held tensors with
        the TF axes remapped to NCHW."""
        r = self._rank_of(x)
        if self._held4(x):
            return self.env[x][0], True, 4, [_NHWC_AXIS_IN_NCHW[a % 4] for a in (axes or [])]
        return self.nhwc(x), False, r, list(axes or [])

    # --- element-wise math ---------------------------------------------------------------------
    def _Sqrt(self, n):
        self._unary(n, "Sqrt")

    def _Exp(self, n):
        self._unary(n, "Exp")

    def _Log(self, n):
        self._unary(n, "Log")

    def _Softplus(self, n):
        self._unary(n, "Softplus")

    def _Floor(self, n):
        self._unary(n, "Floor")

    def _Reciprocal(self, n):
        self._unary(n, "Reciprocal")

    _Inv = _Reciprocal

    def _Ceil(self, n):
        self._unary(n, "Ceil")

    def _Round(self, n):  # both round half to even
        self._unary(n, "Round")

    def _Sign(self, n):
        self._unary(n, "Sign")

    def _Sin(self, n):
        self._unary(n, "Sin")

    def _Cos(self, n):
        self._unary(n, "Cos")

    def _Tan(self, n):
        self._unary(n, "Tan")

    def _Erf(self, n):
        self._unary(n, "Erf")

    def _Softsign(self, n):
        self._unary(n, "Softsign")

    def _Selu(self, n):  # ONNX's default alpha and gamma are TF's constants
        self._unary(n, "Selu")

    def _LogicalNot(self, n):
        self._unary(n, "Not")

    def _chain(self, n, ops):
        """Unary chain: ops is [(op, uses x twice)] applied in turn."""
        x = self.ins(n)[0]
        if self._fold_unary(n):
            return
        if x in self.vals and x not in self.env:
            self.nhwc(x)
        name, held = self.env[x]
        y = name
        for i, (op, twice) in enumerate(ops):
            ins = [y, y] if twice else [y]
            if i == len(ops) - 1:
                self.emit(n, op, ins, held, rank=self.rank.get(name))
            else:
                y = self.b.node1(op, ins, name=f"{n.name}/{op.lower()}")

    def _Rsqrt(self, n):
        self._chain(n, [("Sqrt", False), ("Reciprocal", False)])

    def _Square(self, n):
        self._chain(n, [("Mul", True)])

    def _binary2(self, n, op):
        """Element-wise binary TF op `n.op` -> ONNX op chain; folded when both are constant."""
        a, b = self.ins(n)[:2]
        if a in self.vals and b in self.vals:
            v = _FOLD[n.op](self.vals[a], self.vals[b])
            self.vals[self.out(n)] = v if v.dtype == np.bool_ else v.astype(self.vals[a].dtype)
            return
        (xa, xb), held, rank = self._bin_ins(a, b)
        nb = self.b.node1
        if op == "SquaredDifference":
            d = nb("Sub", [xa, xb], name=n.name + "/sub")
            self.emit(n, "Mul", [d, d], held, rank=rank)
        elif op == "NotEqual":
            e = nb("Equal", [xa, xb], name=n.name + "/equal")
            self.emit(n, "Not", [e], held, rank=rank)
        elif op == "FloorMod":
            self.emit(n, "Mod", [xa, xb], held, rank=rank, fmod=0)
        elif op == "FloorDiv":
            dt = _DTYPES.get(_attr(n, "T", 1), np.float32)
            if np.issubdtype(dt, np.floating):
                q = nb("Div", [xa, xb], name=n.name + "/div")
                self.emit(n, "Floor", [q], held, rank=rank)
            else:  # exact: (a - floormod(a, b)) / b divides evenly
                m = nb("Mod", [xa, xb], name=n.name + "/mod", fmod=0)
                s = nb("Sub", [xa, m], name=n.name + "/sub")
                self.emit(n, "Div", [s, xb], held, rank=rank)
        else:
            self.emit(n, op, [xa, xb], held, rank=rank)

    def _SquaredDifference(self, n):
        self._binary2(n, "SquaredDifference")

    def _Pow(self, n):
        self._binary2(n, "Pow")

    def _FloorDiv(self, n):
        self._binary2(n, "FloorDiv")

    def _FloorMod(self, n):
        self._binary2(n, "FloorMod")

    def _NotEqual(self, n):
        self._binary2(n, "NotEqual")

    def _compare(self, n):
        self._binary2(n, _COMPARE[n.op])

    _Equal = _Less = _Greater = _LessEqual = _GreaterEqual = _compare
    _LogicalAnd = _LogicalOr = _compare

    # --- reductions -----------------------------------------------------------------------------
    def _Min(self, n):
        self._reduce(n, "ReduceMin")

    def _Prod(self, n):
        self._reduce(n, "ReduceProd")

    def _logic_reduce(self, n, op):
        """All / Any: ReduceMin / ReduceMax of the condition as int32, back to bool."""
        x = self.ins(n)[0]
        if x in self.vals:
            axes = tuple(int(a) for a in self.val(n, 1, "the axes").reshape(-1))
            fn = np.all if n.op == "All" else np.any
            self.vals[self.out(n)] = fn(self.vals[x], axis=axes,
                                        keepdims=bool(_attr(n, "keep_dims", False)))
            return
        name, held = self.env[x]
        m = type(n)()  # the same reduction on the int32 copy, as a node of its own
        m.CopyFrom(n)
        m.name = n.name + "/reduce"
        m.input[0] = n.name + "/i32:0"
        self.env[m.input[0]] = (self.b.node1("Cast", [name], name=n.name + "/i32", to=6), held)
        self.rank[self.env[m.input[0]][0]] = self._rank_of(x)
        self._reduce(m, op)
        y, held = self.env[self.out(m)]
        self.emit(n, "Cast", [y], held, rank=self.rank.get(y), to=9)

    def _All(self, n):
        self._logic_reduce(n, "ReduceMin")

    def _Any(self, n):
        self._logic_reduce(n, "ReduceMax")

    def _axis_dropped_input(self, x, axis):
        """(input, axis) for an op that removes NHWC `axis` from x: a rank-4 x held as NCHW is
        read in place when the axis is C (NHWC minus C is NCHW minus C), else in NHWC."""
        if self._held4(x) and axis == 3:
            return self.env[x][0], 1
        return self.nhwc(x), axis

    def _ArgMax(self, n, op="ArgMax"):
        x = self.ins(n)[0]
        axis = int(self.val(n, 1, "the dimension").reshape(-1)[0])
        dt = _DTYPES.get(_attr(n, "output_type", 9))
        if dt not in (np.int32, np.int64):
            raise self._fail(n, f"output_type {_attr(n, 'output_type')} is not int32 or int64")
        if x in self.vals:
            fn = np.argmax if op == "ArgMax" else np.argmin
            self.vals[self.out(n)] = fn(self.vals[x], axis=axis).astype(dt)
            return
        r = self._rank_of(x)
        axis = self._axis(n, axis, r)
        xin, axis = self._axis_dropped_input(x, axis)
        rank = r - 1 if r is not None else None
        if dt == np.int64:
            self.emit(n, op, [xin], rank=rank, axis=axis, keepdims=0)
            return
        y = self.b.node1(op, [xin], name=n.name + "/i64", axis=axis, keepdims=0)
        self.emit(n, "Cast", [y], rank=rank, to=6)

    def _ArgMin(self, n):
        self._ArgMax(n, "ArgMin")

    # --- slicing and tiling ---------------------------------------------------------------------
    def _Tile(self, n):
        x = self.ins(n)[0]
        reps = [int(v) for v in self.val(n, 1, "multiples").reshape(-1)]
        if x in self.vals:
            self.vals[self.out(n)] = np.tile(self.vals[x], reps)
            return
        xin, held, r, _ = self._in_layout(x)
        if held:
            reps = [reps[p] for p in _TO_NCHW]
        self.emit(n, "Tile", [xin, self._i64(reps)], held, rank=r)

    def _GatherV2(self, n):
        ts = self.ins(n)
        x, idx = ts[:2]
        axis = int(self.val(n, 2, "axis").reshape(-1)[0]) if n.op == "GatherV2" else 0
        bd = int(_attr(n, "batch_dims", 0))
        if bd != 0:
            raise self._fail(n, f"batch_dims={bd} is not supported (only 0)")
        if x in self.vals and idx in self.vals:
            self.vals[self.out(n)] = np.take(self.vals[x], self.vals[idx], axis=axis)
            return
        r, ri = self._rank_of(x), self._rank_of(idx)
        axis = self._axis(n, axis, r)
        # On a held tensor: 1-D indices keep the layout; a scalar index may drop C only.
        if self._held4(x) and (ri == 1 or (ri == 0 and axis == 3)):
            self.emit(n, "Gather", [self.env[x][0], self.nhwc(idx)], ri == 1, rank=3 + ri,
                      axis=_NHWC_AXIS_IN_NCHW[axis])
            return
        self.emit(n, "Gather", [self.nhwc(x), self.nhwc(idx)], axis=axis,
                  rank=r + ri - 1 if r is not None and ri is not None else None)

    _Gather = _GatherV2

    def _split_out(self, n, xin, held, r, axis, sizes, count):
        outs = [self.new_name(n, held, k) or self.b.unique(f"{n.name}:{k}") for k in range(count)]
        ins = [xin] + ([self._i64(sizes)] if sizes else [])
        self.b.node("Split", ins, outs, name=n.name, axis=axis)
        for k, o in enumerate(outs):
            self.put(n, o, held, k=k, rank=r)

    def _Split(self, n):
        x = self.ins(n)[1]
        axis = int(self.val(n, 0, "split_dim").reshape(-1)[0])
        num = int(_attr(n, "num_split", 1))
        if x in self.vals:
            for k, v in enumerate(np.split(self.vals[x], num, axis=axis)):
                self.vals[self.out(n, k)] = v
            return
        xin, held, r, axes = self._in_layout(x, [self._axis(n, axis, self._rank_of(x))])
        self._split_out(n, xin, held, r, axes[0], None, num)

    def _SplitV(self, n):
        x = self.ins(n)[0]
        sizes = [int(v) for v in self.val(n, 1, "size_splits").reshape(-1)]
        axis = int(self.val(n, 2, "split_dim").reshape(-1)[0])
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise self._fail(n, f"size_splits {sizes} is invalid")
        if x in self.vals:
            v = self.vals[x]
            if -1 in sizes:
                sizes[sizes.index(-1)] = v.shape[axis] - sum(s for s in sizes if s >= 0)
            for k, part in enumerate(np.split(v, np.cumsum(sizes)[:-1], axis=axis)):
                self.vals[self.out(n, k)] = part
            return
        xin, held, r, axes = self._in_layout(x, [self._axis(n, axis, self._rank_of(x))])
        if -1 not in sizes:
            self._split_out(n, xin, held, r, axes[0], sizes, len(sizes))
            return
        # An inferred size: slice each part, offsets after the -1 counted from the end.
        m = sizes.index(-1)
        for k, s in enumerate(sizes):
            if k < m:
                b, e = sum(sizes[:k]), sum(sizes[:k + 1])
            elif k == m:
                b, e = sum(sizes[:k]), -sum(sizes[k + 1:]) or _BIG
            else:
                b, e = -sum(sizes[k:]), -sum(sizes[k + 1:]) or _BIG
            y = self.b.node1("Slice", [xin, self._i64([b]), self._i64([e]), self._i64(axes)],
                             self.new_name(n, held, k), name=f"{n.name}/part{k}")
            self.put(n, y, held, k=k, rank=r)

    def _Slice(self, n):
        x = self.ins(n)[0]
        begin = [int(v) for v in self.val(n, 1, "begin").reshape(-1)]
        size = [int(v) for v in self.val(n, 2, "size").reshape(-1)]
        end = [_BIG if s == -1 else b + s for b, s in zip(begin, size)]
        if x in self.vals:
            self.vals[self.out(n)] = self.vals[x][tuple(slice(b, None if e == _BIG else e)
                                                        for b, e in zip(begin, end))]
            return
        xin, held, r, _ = self._in_layout(x)
        axes = list(range(len(begin)))
        if held:
            axes = [_NHWC_AXIS_IN_NCHW[a] for a in axes]
        self.emit(n, "Slice", [xin, self._i64(begin), self._i64(end), self._i64(axes)], held,
                  rank=r)

    def _Unpack(self, n):
        x = self.ins(n)[0]
        num = int(_attr(n, "num", 0))
        axis = int(_attr(n, "axis", 0))
        if x in self.vals:
            for k in range(num):
                self.vals[self.out(n, k)] = np.take(self.vals[x], k, axis=axis)
            return
        r = self._rank_of(x)
        axis = self._axis(n, axis, r)
        xin, axis = self._axis_dropped_input(x, axis)
        parts = self.b.node("Split", [xin], num, name=n.name + "/split", axis=axis)
        for k, p in enumerate(parts):
            y = self.b.node1("Squeeze", [p, self._i64([axis])], self.new_name(n, False, k),
                             name=f"{n.name}/{k}")
            self.put(n, y, k=k, rank=r - 1 if r is not None else None)

    def _ReverseV2(self, n):
        x = self.ins(n)[0]
        axes = [int(v) for v in self.val(n, 1, "axis").reshape(-1)]
        if x in self.vals:
            self.vals[self.out(n)] = np.flip(self.vals[x], axis=tuple(axes))
            return
        r = self._rank_of(x)
        xin, held, r, axes = self._in_layout(x, [self._axis(n, a, r) for a in axes])
        k = len(axes)
        if not k:
            self.emit(n, "Identity", [xin], held, rank=r)
            return
        self.emit(n, "Slice", [xin, self._i64([-1] * k), self._i64([-_BIG] * k),
                               self._i64(axes), self._i64([-1] * k)], held, rank=r)

    # --- depth / space / batch ------------------------------------------------------------------
    def _depth_space(self, n, op):
        x = self.ins(n)[0]
        fmt = _attr(n, "data_format", "NHWC") or "NHWC"
        if fmt not in ("NHWC", "NCHW"):
            raise self._fail(n, f"data_format {fmt} is not supported")
        bs = int(_attr(n, "block_size", 0))
        attrs = {"mode": "DCR"} if op == "DepthToSpace" else {}
        self._img_out(n, fmt, op, [self._img_in(n, fmt, x)], blocksize=bs, **attrs)

    def _DepthToSpace(self, n):
        self._depth_space(n, "DepthToSpace")

    def _SpaceToDepth(self, n):
        self._depth_space(n, "SpaceToDepth")

    def _dims(self, xin, n, tag, idx):
        """1-D int64 tensor: the dims of xin at positions idx (run-time Shape, folded when
        static)."""
        s = self.b.node1("Shape", [xin], name=f"{n.name}/{tag}_shape")
        return self.b.node1("Gather", [s, self._i64(idx)], name=f"{n.name}/{tag}_dims", axis=0)

    def _block_args(self, n, what):
        block = [int(v) for v in self.val(n, 1, "block_shape").reshape(-1)]
        pc = self.val(n, 2, what).astype(np.int64).reshape(-1, 2)
        if pc.shape[0] != len(block) or min(block, default=1) < 1:
            raise self._fail(n, f"block_shape {block} and {what} {pc.tolist()} do not match")
        return block, pc

    def _space_layout(self, n, x, m):
        """(onnx name, held, rank, spatial positions) for the space/batch ops: a held 4-D
        tensor with 2 block dims is used as NCHW (spatial dims 2, 3), else the NHWC value."""
        r = self._rank_of(x)
        if r is None or r < m + 1:
            raise self._fail(n, f"the input rank must be known and above {m}")
        if self._held4(x) and m == 2:
            return self.env[x][0], True, 4, [2, 3]
        return self.nhwc(x), False, r, list(range(1, m + 1))

    def _SpaceToBatchND(self, n):
        x = self.ins(n)[0]
        block, pads = self._block_args(n, "paddings")
        m, nb = len(block), self.b.node1
        xin, held, r, sp = self._space_layout(n, x, m)
        full = np.zeros((r, 2), np.int64)
        full[sp] = pads
        xp = nb("Pad", [xin, self._i64(np.concatenate([full[:, 0], full[:, 1]]))],
                name=n.name + "/pad")
        d = self._dims(xp, n, "pad", list(range(r)))
        dim = [nb("Slice", [d, self._i64([j]), self._i64([j + 1])], name=f"{n.name}/d{j}")
               for j in range(r)]
        # Each spatial dim S_i -> (S_i / b_i, b_i); then the b_i go in front of the batch.
        t1, pos, bpos = [], [], []
        for j in range(r):
            pos.append(len(t1))
            if j in sp:
                i = sp.index(j)
                dim[j] = nb("Div", [dim[j], self._i64([block[i]])], name=f"{n.name}/q{j}")
                t1 += [dim[j], self._i64([block[i]])]
                bpos.append(len(t1) - 1)
            else:
                t1.append(dim[j])
        y = nb("Reshape", [xp, nb("Concat", t1, name=n.name + "/shape1", axis=0)],
               name=n.name + "/split")
        y = nb("Transpose", [y], name=n.name + "/perm", perm=bpos + pos)
        t2 = nb("Concat", [self._i64([-1])] + dim[1:], name=n.name + "/shape2", axis=0)
        self.emit(n, "Reshape", [y, t2], held, rank=r)

    def _BatchToSpaceND(self, n):
        x = self.ins(n)[0]
        block, crops = self._block_args(n, "crops")
        m, nb = len(block), self.b.node1
        xin, held, r, sp = self._space_layout(n, x, m)
        d = self._dims(xin, n, "in", list(range(r)))
        rest = nb("Slice", [d, self._i64([1]), self._i64([_BIG])], name=n.name + "/r")
        # [b_1, ..., b_M, B / prod(b), dims 1..] -> each b_i after its spatial dim.
        t1 = nb("Concat", [self._i64(block + [-1]), rest], name=n.name + "/shape1", axis=0)
        y = nb("Reshape", [xin, t1], name=n.name + "/split")
        perm, t2 = [m], [self._i64([-1])]
        for j in range(1, r):
            dj = nb("Slice", [d, self._i64([j]), self._i64([j + 1])], name=f"{n.name}/d{j}")
            perm.append(m + j)
            if j in sp:
                i = sp.index(j)
                perm.append(i)
                dj = nb("Mul", [dj, self._i64([block[i]])], name=f"{n.name}/grown{j}")
            t2.append(dj)
        y = nb("Transpose", [y], name=n.name + "/perm", perm=perm)
        y = nb("Reshape", [y, nb("Concat", t2, name=n.name + "/shape2", axis=0)],
               name=n.name + "/merge")
        ends = [-int(e) if e else _BIG for e in crops[:, 1]]
        self.emit(n, "Slice", [y, self._i64(crops[:, 0]), self._i64(ends), self._i64(sp)],
                  held, rank=r)

    # --- normalization --------------------------------------------------------------------------
    def _LRN(self, n):
        x = self.ins(n)[0]
        radius = int(_attr(n, "depth_radius", 5))
        size = 2 * radius + 1
        # TF: x / (bias + alpha * sum(x^2))^beta; ONNX divides alpha by the window size.
        self._img_out(n, "NHWC", "LRN", [self.nchw(x)], size=size,
                      alpha=float(_attr(n, "alpha", 1.0)) * size,
                      beta=float(_attr(n, "beta", 0.5)), bias=float(_attr(n, "bias", 1.0)))

    # --- resize -----------------------------------------------------------------------------
    def _ResizeBicubic(self, n):
        x = self.ins(n)[0]
        hw = self.val(n, 1, "size").astype(np.int64).reshape(-1)
        xn = self.nchw(x)
        shp = self.b.node1("Shape", [xn], name=n.name + "/shape")
        nc = self.b.node1("Slice", [shp, self._i64([0]), self._i64([2])], name=n.name + "/nc")
        sizes = self.b.node1("Concat", [nc, self._i64(hw)], name=n.name + "/sizes", axis=0)
        # TF's kernel: half-pixel centers use Keys' a = -0.5 with taps outside the image
        # dropped and the rest renormalized; the legacy path a = -0.75 with edge taps repeated.
        # TF reads the weights from a table with steps of 1/1024 of a pixel, mace computes them:
        # where a sampling offset falls between steps the two differ slightly.
        half = bool(_attr(n, "half_pixel_centers", False))
        if _attr(n, "align_corners", False):
            if half:
                raise self._fail(n, "align_corners together with half_pixel_centers is invalid")
            ct = "align_corners"
        else:
            ct = "half_pixel" if half else "asymmetric"
        self.emit(n, "Resize", [xn, "", "", sizes], True, rank=4, mode="cubic",
                  coordinate_transformation_mode=ct, cubic_coeff_a=-0.5 if half else -0.75,
                  exclude_outside=int(half))

    # --- fills, selection, sums ---------------------------------------------------------------
    def _Fill(self, n):
        dims, value = self.ins(n)[:2]
        if dims in self.vals and value in self.vals:
            v = self.vals[value]
            self.vals[self.out(n)] = np.full(self.vals[dims].astype(np.int64), v, v.dtype)
            return
        shape = self.b.node1("Cast", [self.nhwc(dims)], name=n.name + "/dims", to=7)
        self.emit(n, "Expand", [self.nhwc(value), shape])

    def _like(self, n, fill):
        x = self.ins(n)[0]
        dt = _DTYPES.get(_attr(n, "T", 1), np.float32)
        if x in self.vals:
            self.vals[self.out(n)] = np.full(self.vals[x].shape, fill, self.vals[x].dtype)
            return
        name, held = self.env[x]
        s = self.b.node1("Shape", [name], name=n.name + "/shape")
        self.emit(n, "Expand", [self.b.const(np.array(fill, dt)), s], held,
                  rank=self._rank_of(x))

    def _ZerosLike(self, n):
        self._like(n, 0)

    def _OnesLike(self, n):
        self._like(n, 1)

    def _SelectV2(self, n):
        c, a, b = self.ins(n)[:3]
        if all(t in self.vals for t in (c, a, b)):
            self.vals[self.out(n)] = np.where(self.vals[c], self.vals[a], self.vals[b])
            return
        cond = self.nhwc(c)
        rc, ra = self._rank_of(c), self._rank_of(a)
        if n.op == "Select" and rc == 1 and ra is not None and ra > 1:  # picks whole rows
            cond = self.b.node1("Unsqueeze", [cond, self._i64(list(range(1, ra)))],
                                name=n.name + "/rows")
        self.emit(n, "Where", [cond, self.nhwc(a), self.nhwc(b)], rank=ra)

    _Select = _SelectV2

    def _AddN(self, n):
        xs = self.ins(n)
        if all(t in self.vals for t in xs):
            self.vals[self.out(n)] = sum(self.vals[t] for t in xs[1:]) + self.vals[xs[0]]
            return
        if all(self._held4(t) for t in xs):
            self.emit(n, "Sum", [self.env[t][0] for t in xs], True, rank=4)
            return
        self.emit(n, "Sum", [self.nhwc(t) for t in xs], rank=self._rank_of(xs[0]))

    def _ClipByValue(self, n):
        x, lo, hi = self.ins(n)[:3]
        if lo in self.vals and hi in self.vals and self.vals[lo].size == 1 \
                and self.vals[hi].size == 1:
            name, held = self.env[x] if x in self.env else (self.nhwc(x), False)
            self.emit(n, "Clip", [name, self.b.const(self.vals[lo].reshape(())),
                                  self.b.const(self.vals[hi].reshape(()))], held,
                      rank=self._rank_of(x))
            return
        y = self.b.node1("Min", [self.nhwc(x), self.nhwc(hi)], name=n.name + "/min")
        self.emit(n, "Max", [y, self.nhwc(lo)], rank=self._rank_of(x))

    def _LogSoftmax(self, n):
        x = self.ins(n)[0]
        name, held = self.env[x]
        self.emit(n, "LogSoftmax", [name], held, axis=1 if held else -1, rank=self._rank_of(x))

    def _Range(self, n):
        ts = self.ins(n)[:3]
        if all(t in self.vals for t in ts):
            v = [self.vals[t].reshape(()) for t in ts]
            self.vals[self.out(n)] = np.arange(v[0], v[1], v[2]).astype(v[0].dtype)
            return
        self.emit(n, "Range", [self.nhwc(t) for t in ts], rank=1)

    def _Cumsum(self, n):
        x = self.ins(n)[0]
        axis = int(self.val(n, 1, "axis").reshape(-1)[0])
        xin, held, r, axes = self._in_layout(x, [self._axis(n, axis, self._rank_of(x))])
        self.emit(n, "CumSum", [xin, self._i64(axes[0])], held, rank=r,
                  exclusive=int(bool(_attr(n, "exclusive", False))),
                  reverse=int(bool(_attr(n, "reverse", False))))

    def _TopKV2(self, n):
        x = self.ins(n)[0]
        k = int(self.val(n, 1, "k").reshape(-1)[0])
        xin, held, r, _ = self._in_layout(x)
        axis = 1 if held else -1  # TF takes the last axis: C of a held tensor
        outs = [self.new_name(n, held, 0) or self.b.unique(n.name + ":0"),
                self.b.unique(n.name + "/i64")]
        # TF's sorted=False leaves the order open; sorted output is one valid order.
        self.b.node("TopK", [xin, self._i64([k])], outs, name=n.name, axis=axis, largest=1,
                    sorted=1)
        self.put(n, outs[0], held, rank=r)
        idx = self.b.node1("Cast", [outs[1]], self.new_name(n, held, 1), name=n.name + "/i32",
                           to=6)
        self.put(n, idx, held, k=1, rank=r)

    def _OneHot(self, n):
        idx = self.ins(n)[0]
        depth = int(self.val(n, 1, "depth").reshape(-1)[0])
        on, off = self.val(n, 2, "on_value"), self.val(n, 3, "off_value")
        axis = int(_attr(n, "axis", -1))
        r = self._rank_of(idx)
        vals = self.b.const(np.array([off.reshape(()), on.reshape(())], on.dtype))
        # TF gives all off_value for a negative index, ONNX counts it from the end: make
        # negative indices out of range.
        i64 = self.b.node1("Cast", [self.nhwc(idx)], name=n.name + "/i64", to=7)
        neg = self.b.node1("Less", [i64, self._i64(0)], name=n.name + "/neg")
        i64 = self.b.node1("Where", [neg, self._i64(depth), i64], name=n.name + "/idx")
        self.emit(n, "OneHot", [i64, self._i64(depth), vals], axis=axis,
                  rank=r + 1 if r is not None else None)

    # --- generic tensor ops ---------------------------------------------------------------------
    def _IdentityN(self, n):
        for k, t in enumerate(self.ins(n)):
            if t in self.vals:
                self.vals[self.out(n, k)] = self.vals[t]
            if t in self.env:
                self.env[self.out(n, k)] = self.env[t]

    def _BroadcastTo(self, n):
        x, s = self.ins(n)[:2]
        if x in self.vals and s in self.vals:
            self.vals[self.out(n)] = np.broadcast_to(self.vals[x], self.vals[s]).copy()
            return
        shape = self.b.node1("Cast", [self.nhwc(s)], name=n.name + "/shape", to=7)
        r = int(self.vals[s].size) if s in self.vals else None
        self.emit(n, "Expand", [self.nhwc(x), shape], rank=r)

    def _GatherNd(self, n):
        x, idx = self.ins(n)[:2]
        if x in self.vals and idx in self.vals:
            v, i = self.vals[x], self.vals[idx]
            self.vals[self.out(n)] = v[tuple(np.moveaxis(i, -1, 0))]
            return
        i64 = self.b.node1("Cast", [self.nhwc(idx)], name=n.name + "/i64", to=7)
        self.emit(n, "GatherND", [self.nhwc(x), i64])

    def _Einsum(self, n):
        if lower_einsum(self, n):  # MatMul form: runs at every batch / sequence length
            return
        eq = _attr(n, "equation", "")
        xs = self.ins(n)
        self.emit(n, "Einsum", [self.nhwc(t) for t in xs], equation=eq)

    def _Size(self, n):
        x = self.ins(n)[0]
        dt = _DTYPES.get(_attr(n, "out_type", 3), np.int32)
        if x in self.vals:
            self.vals[self.out(n)] = np.array(self.vals[x].size, dt)
            return
        s = self.b.node1("Shape", [self.env[x][0]], name=n.name + "/shape")
        p = self.b.node1("ReduceProd", [s], name=n.name + "/prod", keepdims=0)
        self.emit(n, "Cast", [p], rank=0, to=6 if dt == np.int32 else 7)

    def _Rank(self, n):
        r = self._rank_of(self.ins(n)[0])
        if r is None:
            raise self._fail(n, "the input rank is not known")
        self.vals[self.out(n)] = np.array(r, np.int32)

    def _Where(self, n):
        """One input: the coordinates of the true (non-zero) entries, [count, rank] int64."""
        if len(self.ins(n)) != 1:
            self._SelectV2(n)
            return
        x = self.ins(n)[0]
        if x in self.vals:
            self.vals[self.out(n)] = np.argwhere(self.vals[x]).astype(np.int64)
            return
        nz = self.b.node1("NonZero", [self.nhwc(x)], name=n.name + "/nonzero")
        self.emit(n, "Transpose", [nz], rank=2, perm=[1, 0])
