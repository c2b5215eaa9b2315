/* Deconv2D: grouped 2-D transposed convolution (ONNX ConvTranspose) with a fused activation, f32, NCHW, on the CPU. */
/*
 * Inputs:  0 x       [N, C_in, H, W]
 *          1 filter  [C_in, C_out / group, kH, kW] (ONNX ConvTranspose layout, unchanged)
 *          2 bias    [C_out] (optional)
 * Output:  0 y       [N, C_out, H_out, W_out]
 * Arguments:
 *   strides         ints [sH, sW], default [1, 1]
 *   dilations       ints [dH, dW], default [1, 1]
 *   padding_values  ints [top, left, bottom, right], default zeros (used when EXPLICIT
 *                   and no output_shape)
 *   output_padding  ints [h, w], default [0, 0]: extra rows/columns at the end
 *   output_shape    ints [H_out, W_out] (optional): the pads are then derived from it
 *   padding         "EXPLICIT" (default) | "SAME_UPPER" | "SAME_LOWER" | "VALID"
 *   group           int, default 1
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                   the fused activation (ops/fused_activation.h)
 * Sizes follow ONNX Runtime: full = stride * (in - 1) + output_padding + dilation * (k - 1) + 1;
 * EXPLICIT: out = full - pad_begin - pad_end. SAME_*: out = min(in * stride, full). With an out given
 * (output_shape or SAME), total = full - out is split with the odd pixel at the end for
 * SAME_UPPER and at the start otherwise.
 */
#include "core/op.h"
#include "kernels/cpu/ref/deconv2d.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"

typedef struct deconv2d_state {
  int64_t strides[2], dilations[2], pads[4], out_pad[2], out_shape[2], group;
  int has_out_shape;
  mace_pad_mode mode;
  mace_activation act;
  mace_deconv2d_shape shape;
} deconv2d_state;

static mace_status deconv2d_init(mace_op *op) {
  deconv2d_state *st = op->state;
  const int64_t *v;
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "output_padding", 2, st->out_pad, 0));
  if (mace_op_arg_ints(op, "output_shape", &v) >= 0) {
    st->has_out_shape = 1;
    MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "output_shape", 2, st->out_shape, 1));
  }
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): unknown padding \"%s\"", op->name,
                      pad);
  st->group = mace_op_arg_int(op, "group", 1);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): group %lld must be >= 1",
                      op->name, (long long)st->group);
  return mace_fused_activation_parse(op, &st->act);
}

/* One spatial axis: output size and the begin padding (-1 size when inconsistent). */
static int64_t deconv_axis(const deconv2d_state *st, int a, int64_t in, int64_t k,
                           int64_t *pad_begin) {
  const int64_t s = st->strides[a];
  const int64_t full = s * (in - 1) + st->out_pad[a] + st->dilations[a] * (k - 1) + 1;
  int64_t out;
  if (st->has_out_shape) out = st->out_shape[a];
  else if (st->mode == MACE_PAD_SAME_UPPER || st->mode == MACE_PAD_SAME_LOWER)
    out = in * s < full ? in * s : full;  /* never negative padding (ONNX Runtime) */
  else if (st->mode == MACE_PAD_VALID) out = full;
  else {
    *pad_begin = st->pads[a];
    return full - st->pads[a] - st->pads[a + 2];
  }
  const int64_t total = full - out;
  if (total < 0) {  /* output_shape beyond the full extent: extra rows at the end, as
                     * output_padding would give (the ONNX backend tests expect this) */
    *pad_begin = 0;
    return out;
  }
  *pad_begin = st->mode == MACE_PAD_SAME_UPPER ? total / 2 : total - total / 2;
  return out;
}

static mace_status deconv2d_infer(mace_op *op) {
  deconv2d_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  if (b) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): input has rank %d, expects 4 (NCHW)", op->name,
                      x->ndim);
  if (w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): filter has rank %d, expects 4 [C_in, C_out/group, kH, kW]",
                      op->name, w->ndim);
  const int64_t n = x->dims[0], c = x->dims[1], g = st->group;
  const int64_t oc = w->dims[1] * g;
  if (w->dims[0] != c || c % g != 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): input has %lld channels, filter is [%lld, %lld, ...] "
                      "with group %lld (needs filter[0] = C_in, C_in %% group == 0)",
                      op->name, (long long)c, (long long)w->dims[0], (long long)w->dims[1],
                      (long long)g);
  if (w->dims[1] < 1 || w->dims[2] < 1 || w->dims[3] < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): empty filter", op->name);
  if (b && (b->ndim != 1 || b->dims[0] != oc))
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): bias has %lld values (rank %d), expects [%lld]",
                      op->name, (long long)mace_tensor_numel(b), b->ndim, (long long)oc);
  for (int a = 0; a < 2; ++a)
    if (st->out_pad[a] >= st->strides[a] && st->out_pad[a] >= st->dilations[a])
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (Deconv2D): output_padding %lld must be smaller than the "
                        "stride or the dilation", op->name, (long long)st->out_pad[a]);
  int64_t pt = 0, pl = 0;
  const int64_t oh = deconv_axis(st, 0, x->dims[2], w->dims[2], &pt);
  const int64_t ow = deconv_axis(st, 1, x->dims[3], w->dims[3], &pl);
  if (oh <= 0 || ow <= 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): output size %lldx%lld is not positive or does not fit "
                      "the input %lldx%lld, kernel %lldx%lld and strides",
                      op->name, (long long)oh, (long long)ow, (long long)x->dims[2],
                      (long long)x->dims[3], (long long)w->dims[2], (long long)w->dims[3]);
  st->shape = (mace_deconv2d_shape){.batch = n, .in_c = c, .in_h = x->dims[2],
                                    .in_w = x->dims[3], .out_c = oc, .out_h = oh, .out_w = ow,
                                    .k_h = w->dims[2], .k_w = w->dims[3],
                                    .stride_h = st->strides[0], .stride_w = st->strides[1],
                                    .dilation_h = st->dilations[0],
                                    .dilation_w = st->dilations[1], .pad_top = pt,
                                    .pad_left = pl, .group = g};
  const int64_t dims[4] = {n, oc, oh, ow};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = n * c * x->dims[2] * x->dims[3] * (oc / g) * w->dims[2] * w->dims[3];
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct deconv2d_ctx {
  const deconv2d_state *st;
  const float *x, *w, *b;
  float *y;
} deconv2d_ctx;

static void deconv2d_range(void *p, int64_t begin, int64_t end) {
  const deconv2d_ctx *c = p;
  mace_f32_deconv2d__ref(&c->st->shape, c->x, c->w, c->b, &c->st->act, c->y, begin, end);
}

static mace_status deconv2d_run(mace_op *op) {
  const deconv2d_state *st = op->state;
  deconv2d_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
                    op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, st->shape.batch * st->shape.out_c, 1, deconv2d_range,
                               &c);
  return MACE_OK;
}

const mace_op_kind mace_op_deconv2d_f32 = {.type = "Deconv2D",
                                           .device = MACE_DEVICE_CPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(deconv2d_state),
                                           .init = deconv2d_init,
                                           .infer = deconv2d_infer,
                                           .run = deconv2d_run};
