/* Shape: the dims of a tensor as an int64 vector, computed from its shape only (TF/ONNX Shape). */
/*
 * Inputs:  0 X (any dtype; only its dims are read, never its data)
 * Output:  0 Y int64 [end - start] = X.dims[start..end)
 * Arguments:
 *   start  int (default 0), end int (default rank): ONNX opset-15 slicing, negative values
 *          count from the rank, both clamped to [0, rank]
 * When Y feeds a value input (a Reshape's shape, ...), the net evaluates this op at infer.
 */
#include "core/op.h"

typedef struct shape_state {
  int64_t start, n;
} shape_state;

static int64_t shape_clamp(int64_t v, int64_t r) {
  if (v < 0) v += r;
  return v < 0 ? 0 : (v > r ? r : v);
}

static mace_status shape_infer(mace_op *op) {
  shape_state *s = (shape_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const int64_t r = op->inputs[0]->ndim;
  s->start = shape_clamp(mace_op_arg_int(op, "start", 0), r);
  const int64_t end = shape_clamp(mace_op_arg_int(op, "end", r), r);
  s->n = end > s->start ? end - s->start : 0;
  int64_t dims[1] = {s->n};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, dims, 1));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

static mace_status shape_run(mace_op *op) {
  const shape_state *s = (const shape_state *)op->state;
  int64_t *y = (int64_t *)op->outputs[0]->data;
  for (int64_t k = 0; k < s->n; ++k) y[k] = op->inputs[0]->dims[s->start + k];
  return MACE_OK;
}

const mace_op_kind mace_op_shape = {.type = "Shape", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID,
                                    .state_size = sizeof(shape_state),
                                    .dims_only_inputs = 1u,
                                    .infer = shape_infer, .run = shape_run};
