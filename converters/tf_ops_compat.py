"""TensorFlow front end, a mixin of TfConverter: legacy and alias forms of mapped ops (Div,
Concat with the axis first, BatchMatMulV3, MaxPoolV2 with ksize/strides as inputs), the
pass-through ops frozen graphs keep (EnsureShape, CheckNumerics, PreventGradient, Print,
DebugIdentity), and NonMaxSuppression V2-V5 as ONNX NonMaxSuppression.
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
