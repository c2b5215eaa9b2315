"""TensorFlow front end, a mixin of TfConverter: legacy and alias forms of mapped ops (Div,
Concat with the axis first, BatchMatMulV3, MaxPoolV2 with ksize/strides as inputs), the
pass-through ops frozen graphs keep (EnsureShape, CheckNumerics, PreventGradient, Print,
DebugIdentity), NonMaxSuppression V2-V5 as ONNX NonMaxSuppression, and the quantization ops of
TF graphs: FakeQuantWithMinMaxVars/Args (quantization-aware training) computed in float as TF
does, Dequantize (quantize_weights) folded on constants or computed in float.
"""
from __future__ import annotations

import numpy as np

from . import tf_pb
from .tf_common import _attr


def _copy(n, inputs=None):
    """A NodeDef like n (same name and attrs), with other inputs where given."""
    m = tf_pb.NodeDef()
    m.CopyFrom(n)
    if inputs is not None:
        del m.input[:]
        m.input.extend(inputs)
    return m


def _fake_quant_range(lo: float, hi: float, bits: int, narrow: bool):
    """TF's nudged (min, max, scale): the range moved so that 0 is exactly representable."""
    qmin, qmax = (1 if narrow else 0), (1 << bits) - 1
    scale = (hi - lo) / (qmax - qmin)
    zp_from_min = qmin - lo / scale
    if zp_from_min < qmin:
        zp = qmin
    elif zp_from_min > qmax:
        zp = qmax
    else:
        zp = round(zp_from_min)  # TF: std::round, halves away from zero (zp_from_min >= 0)
        if zp_from_min - np.floor(zp_from_min) == 0.5:
            zp = np.floor(zp_from_min) + 1
    return np.float32((qmin - zp) * scale), np.float32((qmax - zp) * scale), np.float32(scale)


class TfOpsCompat:
    def _Div(self, n):  # tf.compat.v1.div: C-style on integers, as ONNX Div
        self._binary(n, "Div")

    def _Concat(self, n):
        """tf.compat.v1 Concat: the axis is the first input."""
        ins = [i for i in n.input if not i.startswith("^")]
        self._ConcatV2(_copy(n, ins[1:] + ins[:1]))

    def _BatchMatMulV3(self, n):
        self._BatchMatMulV2(n)

    def _MaxPoolV2(self, n):
        m = _copy(n, [i for i in n.input if not i.startswith("^")][:1])
        for i, key in ((1, "ksize"), (2, "strides")):
            m.attr[key].list.i.extend(int(v) for v in self.val(n, i, key).reshape(-1))
        self._MaxPool(m)

    def _pass_through(self, n):
        self._Identity(n)

    _EnsureShape = _pass_through
    _CheckNumerics = _pass_through
    _PreventGradient = _pass_through
    _DebugIdentity = _pass_through
    _Print = _pass_through  # tf.compat.v1.Print: its first input, the printing dropped

    # --- NonMaxSuppression ---------------------------------------------------------------------
    def _nms(self, n, version):
        """selected_indices (int32 [M], best score first) of boxes [N, 4] (any diagonal
        corners) and scores [N]; V4 without padding adds valid_outputs, V5 also the selected
        scores (soft-NMS off)."""
        ins = self.ins(n)
        if version >= 4 and _attr(n, "pad_to_max_output_size", False):
            raise self._fail(n, "pad_to_max_output_size=True is not supported")
        if version == 5:
            sigma = float(self.val(n, 5, "soft_nms_sigma").reshape(-1)[0])
            if sigma != 0.0:
                raise self._fail(n, f"soft_nms_sigma {sigma} (soft NMS) is not supported")
        c, nb = self.b.const, self.b.node1
        boxes = nb("Unsqueeze", [self.nhwc(ins[0]), self._i64([0])], name=n.name + "/boxes")
        scores = nb("Unsqueeze", [self.nhwc(ins[1]), self._i64([0, 1])], name=n.name + "/scores")
        args = [boxes, scores,
                self._i64(self.val(n, 2, "max_output_size").reshape(1)),
                c(self.val(n, 3, "iou_threshold").astype(np.float32).reshape(1))]
        if version >= 3:
            args.append(c(self.val(n, 4, "score_threshold").astype(np.float32).reshape(1)))
        sel = nb("NonMaxSuppression", args, name=n.name + "/nms")
        idx = nb("Gather", [sel, self._i64(2)], name=n.name + "/box_index", axis=1)
        self.emit(n, "Cast", [idx], rank=1, to=6)
        if version == 4:
            count = nb("Shape", [idx], name=n.name + "/count")
            count = nb("Squeeze", [count, self._i64([0])], name=n.name + "/count0")
            self.put(n, nb("Cast", [count], name=n.name + "/valid", to=6), k=1, rank=0)
        if version == 5:
            got = nb("Gather", [self.nhwc(ins[1]), idx], name=n.name + "/selected_scores",
                     axis=0)
            self.put(n, got, k=1, rank=1)
            count = nb("Shape", [idx], name=n.name + "/count")
            count = nb("Squeeze", [count, self._i64([0])], name=n.name + "/count0")
            self.put(n, nb("Cast", [count], name=n.name + "/valid", to=6), k=2, rank=0)

    def _NonMaxSuppressionV2(self, n):
        self._nms(n, 2)

    def _NonMaxSuppressionV3(self, n):
        self._nms(n, 3)

    def _NonMaxSuppressionV4(self, n):
        self._nms(n, 4)

    def _NonMaxSuppressionV5(self, n):
        self._nms(n, 5)

    # --- quantization --------------------------------------------------------------------------
    def _fake_quant(self, n, lo, hi):
        """y = floor((clip(x, nmin, nmax) - nmin) * (1 / scale) + 0.5) * scale + nmin, in
        float32 as TF's kernel computes it."""
        bits, narrow = int(_attr(n, "num_bits", 8)), bool(_attr(n, "narrow_range", False))
        if not 2 <= bits <= 16:
            raise self._fail(n, f"num_bits {bits} is not in 2..16")
        nmin, nmax, scale = _fake_quant_range(float(lo), float(hi), bits, narrow)
        x = self.ins(n)[0]
        if x in self.vals and x not in self.env:
            self.nhwc(x)
        name, held = self.env[x]
        c, nb = self.b.const, self.b.node1
        y = nb("Clip", [name, c(nmin), c(nmax)], name=n.name + "/clip")
        y = nb("Sub", [y, c(nmin)], name=n.name + "/shift")
        y = nb("Mul", [y, c(np.float32(1) / scale)], name=n.name + "/scale")
        y = nb("Floor", [nb("Add", [y, c(np.float32(0.5))], name=n.name + "/half")],
               name=n.name + "/round")
        y = nb("Mul", [y, c(scale)], name=n.name + "/unscale")
        self.emit(n, "Add", [y, c(nmin)], held, rank=self._rank_of(x))

    def _FakeQuantWithMinMaxArgs(self, n):
        self._fake_quant(n, _attr(n, "min", -6.0), _attr(n, "max", 6.0))

    def _FakeQuantWithMinMaxVars(self, n):
        lo = self.val(n, 1, "min").reshape(-1)
        hi = self.val(n, 2, "max").reshape(-1)
        self._fake_quant(n, lo[0], hi[0])

    def _Dequantize(self, n):
        """quint8 / qint8 -> float32 by TF's modes MIN_COMBINED, MIN_FIRST and SCALED
        (per-tensor, axis -1); folded when the input is a constant."""
        x = self.ins(n)[0]
        mode = _attr(n, "mode", "MIN_COMBINED") or "MIN_COMBINED"
        if int(_attr(n, "axis", -1)) != -1:
            raise self._fail(n, "per-channel Dequantize (axis) is not supported")
        lo = float(self.val(n, 1, "min_range").reshape(-1)[0])
        hi = float(self.val(n, 2, "max_range").reshape(-1)[0])
        t = int(_attr(n, "T", 12))
        if t not in (11, 12):
            raise self._fail(n, "only qint8 and quint8 inputs are supported")
        lowest, highest = (-128, 127) if t == 11 else (0, 255)
        if mode == "MIN_COMBINED":
            scale = (hi - lo) / (highest - lowest)
            offset = lo - lowest * scale if t == 12 else lo + (highest - lowest + 1) / 2 * scale
        elif mode == "MIN_FIRST":  # TF rounds min_range to a multiple of the step
            steps = 256.0
            scale = (hi - lo) * (steps / (steps - 1.0)) / steps
            r = lo / np.float32(scale)
            offset = np.sign(r) * np.floor(abs(r) + 0.5) * np.float32(scale) - lowest * scale
        elif mode == "SCALED":
            narrow = bool(_attr(n, "narrow_range", False))
            lo_q = lowest + 1 if (narrow and t == 11) else lowest
            scale = max(hi / highest, lo / lo_q) if lo_q else hi / highest
            offset = 0.0
        else:
            raise self._fail(n, f"mode {mode} is not supported")
        if x in self.vals:
            v = self.vals[x].astype(np.float64) * scale + offset
            self.vals[self.out(n)] = v.astype(np.float32)
            return
        f = self.b.node1("Cast", [self.nhwc(x)], name=n.name + "/float", to=1)
        f = self.b.node1("Mul", [f, self.b.const(np.float32(scale))], name=n.name + "/scale")
        self.emit(n, "Add", [f, self.b.const(np.float32(offset))], rank=self._rank_of(x))
