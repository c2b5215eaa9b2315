/* Pool3D: 3-D max / average pooling over NCDHW (ONNX MaxPool, AveragePool on 5-D input), f32. */
/*
 * Inputs:  0 x  [N, C, D, H, W] (f32)
 * Output:  0 y  [N, C, D_out, H_out, W_out]
 * Arguments:
 *   pooling_type       "MAX" | "AVG" (required)
 *   kernels            ints [kD, kH, kW] (required)
 *   strides, dilations ints [D, H, W], default 1
 *   padding_values     ints [d, h, w begin, d, h, w end], default 0 (the converter resolves
 *                      ONNX's auto_pad into these)
 *   count_include_pad  int 0 (default) | 1: AVG divides by the taps inside the padded input
 *   ceil_mode          int 0 (default) | 1: output sizes rounded up, a last window that would
 *                      start in the end padding dropped (as ONNX Runtime does)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/window3d.h"
#include "ops/window3d.h"

#define POOL3D_GRAIN 4096

typedef struct pool3d_state {
  int is_max, count_include_pad, ceil_mode;
  mace_window3d g;
} pool3d_state;

static mace_status pool3d_init(mace_op *op) {
  pool3d_state *s = (pool3d_state *)op->state;
  const char *type = mace_op_arg_str(op, "pooling_type", "");
  if (strcmp(type, "MAX") == 0) s->is_max = 1;
  else if (strcmp(type, "AVG") != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Pool3D): pooling_type \"%s\", expects "
                      "\"MAX\" or \"AVG\"", op->name, type);
  s->count_include_pad = mace_op_arg_int(op, "count_include_pad", 0) != 0;
  s->ceil_mode = mace_op_arg_int(op, "ceil_mode", 0) != 0;
  return MACE_OK;
}

static mace_status pool3d_infer(mace_op *op) {
  pool3d_state *s = (pool3d_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_window3d_infer(op, "Pool3D", x, NULL, s->ceil_mode, &s->g));
  const int64_t dims[5] = {x->dims[0], x->dims[1], s->g.out[0], s->g.out[1], s->g.out[2]};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 5));
  op->macs = mace_tensor_numel(op->outputs[0]) * s->g.k[0] * s->g.k[1] * s->g.k[2];
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const pool3d_state *s;
  const mace_op *op;
} pool3d_job;

static void pool3d_range(void *ctx, int64_t begin, int64_t end) {
  const pool3d_job *j = (const pool3d_job *)ctx;
  mace_f32_pool3d__ref((const float *)j->op->inputs[0]->data, (float *)j->op->outputs[0]->data,
                       &j->s->g, j->s->is_max, j->s->count_include_pad, begin, end);
}

static mace_status pool3d_run(mace_op *op) {
  const pool3d_state *s = (const pool3d_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  const int64_t per_row = y->dims[3] * y->dims[4] * s->g.k[0] * s->g.k[1] * s->g.k[2];
  pool3d_job job = {s, op};
  if (rows > 0 && per_row > 0)
    mace_threadpool_parallel_for(op->pool, rows, 1 + POOL3D_GRAIN / per_row, pool3d_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_pool3d_f32 = {.type = "Pool3D", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32, .state_size = sizeof(pool3d_state),
                                         .init = pool3d_init, .infer = pool3d_infer,
                                         .run = pool3d_run};
