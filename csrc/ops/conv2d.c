/* Conv2D: grouped 2-D convolution (ONNX Conv) with a fused activation, f32, NCHW, on the CPU. */
/*
 * Inputs:  0 x       [N, C_in, H, W]
 *          1 filter  [C_out, C_in / group, kH, kW] (OIHW, as ONNX)
 *          2 bias    [C_out] (optional)
 * Output:  0 y       [N, C_out, H_out, W_out]
 * Arguments:
 *   strides         ints [sH, sW], default [1, 1]
 *   dilations       ints [dH, dW], default [1, 1]
 *   padding_values  ints [top, left, bottom, right], default zeros (used when EXPLICIT)
 *   padding         "EXPLICIT" (default) | "SAME_UPPER" | "SAME_LOWER" | "VALID";
 *                   SAME_* are resolved from the input shape at infer time
 *   group           int, default 1 (C_in and C_out both divisible by it; depthwise = C_in)
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                   the fused activation (ops/fused_activation.h), applied in the output write
 */
#include "core/op.h"
#include "kernels/cpu/ref/conv2d.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"

typedef struct conv2d_state {
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_activation act;
  mace_conv2d_shape shape;
} conv2d_state;

static mace_status conv2d_init(mace_op *op) {
  conv2d_state *st = op->state;
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): unknown padding \"%s\"", op->name,
                      pad);
  st->group = mace_op_arg_int(op, "group", 1);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): group %lld must be >= 1", op->name,
                      (long long)st->group);
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status conv2d_infer(mace_op *op) {
  conv2d_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  if (b) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): input has rank %d, expects 4 (NCHW)",
                      op->name, x->ndim);
  if (w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): filter has rank %d, expects 4 (OIHW)",
                      op->name, w->ndim);
  const int64_t n = x->dims[0], c = x->dims[1], g = st->group, oc = w->dims[0];
  if (c % g != 0 || oc % g != 0 || w->dims[1] * g != c)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Conv2D): input has %lld channels, filter is [%lld, %lld, ...] "
                      "with group %lld (needs C_in = filter[1] * group and C_out %% group == 0)",
                      op->name, (long long)c, (long long)oc, (long long)w->dims[1], (long long)g);
  if (w->dims[2] < 1 || w->dims[3] < 1 || oc < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): empty filter", op->name);
  if (b && (b->ndim != 1 || b->dims[0] != oc))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): bias has %lld values (rank %d), "
                      "expects [%lld]", op->name, (long long)mace_tensor_numel(b), b->ndim,
                      (long long)oc);
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  const int64_t oh = mace_window_out_size(x->dims[2], w->dims[2], st->strides[0],
                                          st->dilations[0], st->mode, 0, &pads[0], &pads[2]);
  const int64_t ow = mace_window_out_size(x->dims[3], w->dims[3], st->strides[1],
                                          st->dilations[1], st->mode, 0, &pads[1], &pads[3]);
  if (oh <= 0 || ow <= 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Conv2D): output size %lldx%lld is not positive (input %lldx%lld, "
                      "kernel %lldx%lld)", op->name, (long long)oh, (long long)ow,
                      (long long)x->dims[2], (long long)x->dims[3], (long long)w->dims[2],
                      (long long)w->dims[3]);
  mace_conv2d_shape *s = &st->shape;
  *s = (mace_conv2d_shape){.batch = n, .in_c = c, .in_h = x->dims[2], .in_w = x->dims[3],
                           .out_c = oc, .out_h = oh, .out_w = ow,
                           .k_h = w->dims[2], .k_w = w->dims[3],
                           .stride_h = st->strides[0], .stride_w = st->strides[1],
                           .dilation_h = st->dilations[0], .dilation_w = st->dilations[1],
                           .pad_top = pads[0], .pad_left = pads[1], .group = g};
  const int64_t dims[4] = {n, oc, oh, ow};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = n * oc * oh * ow * (c / g) * s->k_h * s->k_w;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct conv2d_ctx {
  const conv2d_state *st;
  const float *x, *w, *b;
  float *y;
} conv2d_ctx;

static void conv2d_range(void *p, int64_t begin, int64_t end) {
  const conv2d_ctx *c = p;
  mace_f32_conv2d__ref(&c->st->shape, c->x, c->w, c->b, &c->st->act, c->y, begin, end);
}

static mace_status conv2d_run(mace_op *op) {
  const conv2d_state *st = op->state;
  conv2d_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
                  op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, mace_f32_conv2d_window__ref(&st->shape), 1,
                               conv2d_range, &c);
  return MACE_OK;
}

const mace_op_kind mace_op_conv2d_f32 = {.type = "Conv2D",
                                         .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(conv2d_state),
                                         .init = conv2d_init,
                                         .infer = conv2d_infer,
                                         .run = conv2d_run};
