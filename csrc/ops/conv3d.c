/* Conv3D: grouped 3-D convolution over NCDHW (ONNX Conv on 5-D input), f32, direct. */
/*
 * Inputs:  0 x     [N, C_in, D, H, W] (f32)
 *          1 w     [C_out, C_in / group, kD, kH, kW] (f32)
 *          2 bias  [C_out] (f32), optional
 * Output:  0 y     [N, C_out, D_out, H_out, W_out]
 * Arguments:
 *   group              int, default 1: C_in and C_out are multiples of it
 *   strides, dilations ints [D, H, W], default 1
 *   padding_values     ints [d, h, w begin, d, h, w end], default 0 (the converter resolves
 *                      ONNX's auto_pad into these)
 * The kernel is the direct reference loop (kernels/cpu/ref/window3d.h), threaded over output
 * rows; 1-D and 2-D convolutions take Conv2D's packed/SIMD paths instead.
 */
#include "core/op.h"
#include "kernels/cpu/ref/window3d.h"
#include "ops/window3d.h"

#define CONV3D_GRAIN 16384

typedef struct conv3d_state {
  int64_t group;
  mace_window3d g;
} conv3d_state;

static mace_status conv3d_infer(mace_op *op) {
  conv3d_state *s = (conv3d_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  s->group = mace_op_arg_int(op, "group", 1);
  if (w->ndim != 5 || x->ndim != 5 || s->group < 1 || x->dims[1] % s->group != 0 ||
      w->dims[0] % s->group != 0 || w->dims[1] * s->group != x->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv3D): input '%s' (rank %d, %lld channels), "
                      "filter '%s' (rank %d) and group %lld do not fit: the filter must be "
                      "[C_out, C_in / group, kD, kH, kW]", op->name, x->name, x->ndim,
                      (long long)(x->ndim > 1 ? x->dims[1] : 0), w->name, w->ndim,
                      (long long)s->group);
  if (b != NULL) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
    if (mace_tensor_numel(b) != w->dims[0])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv3D): bias '%s' has %lld values for %lld "
                        "output channels", op->name, b->name, (long long)mace_tensor_numel(b),
                        (long long)w->dims[0]);
  }
  MACE_RETURN_IF_ERROR(mace_window3d_infer(op, "Conv3D", x, w->dims + 2, 0, &s->g));
  const int64_t dims[5] = {x->dims[0], w->dims[0], s->g.out[0], s->g.out[1], s->g.out[2]};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 5));
  op->macs = mace_tensor_numel(op->outputs[0]) * mace_tensor_numel(w) / w->dims[0];
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const conv3d_state *s;
  const mace_op *op;
} conv3d_job;

static void conv3d_range(void *ctx, int64_t begin, int64_t end) {
  const conv3d_job *j = (const conv3d_job *)ctx;
  const mace_op *op = j->op;
  mace_f32_conv3d__ref((const float *)op->inputs[0]->data, (const float *)op->inputs[1]->data,
                       op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL,
                       (float *)op->outputs[0]->data, &j->s->g, op->inputs[0]->dims[1],
                       op->inputs[1]->dims[0], j->s->group, begin, end);
}

static mace_status conv3d_run(mace_op *op) {
  const conv3d_state *s = (const conv3d_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  const int64_t per_row = rows > 0 ? op->macs / rows : 0;
  conv3d_job job = {s, op};
  if (rows > 0)
    mace_threadpool_parallel_for(op->pool, rows, 1 + CONV3D_GRAIN / (per_row + 1), conv3d_range,
                                 &job);
  return MACE_OK;
}

const mace_op_kind mace_op_conv3d_f32 = {.type = "Conv3D", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32, .state_size = sizeof(conv3d_state),
                                         .infer = conv3d_infer, .run = conv3d_run};
