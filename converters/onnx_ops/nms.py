"""ONNX NonMaxSuppression: not supported (its output shape [num_selected, 3] depends on the
input values, and mace plans every output's shape before running)."""
from __future__ import annotations

from mace.errors import UnsupportedError

from . import register


@register("NonMaxSuppression")
def non_max_suppression(ctx, node):
    raise UnsupportedError(
        f"ONNX op 'NonMaxSuppression' (node '{node.name}'): the output shape [num_selected, 3] "
        "depends on the input values; mace needs every output shape before running")
