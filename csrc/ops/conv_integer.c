/* ConvInteger: ONNX's 2-D convolution of u8/i8 operands minus zero points into int32, NCHW. */
/*
 * Inputs:  0 X (u8 | i8, [N, C, H, W]), 1 W (u8 | i8, [M, C / group, kH, kW]),
 *          2 x_zp (X's dtype, one value; optional), 3 w_zp (W's dtype, one value or [M];
 *          optional)
 * Output:  0 Y (i32, [N, M, H_out, W_out]) = sum of (x - x_zp) * (w - w_zp), exact
 *          (wrapping past int32, as ONNX Runtime); padding contributes 0.
 * Arguments: Conv2D's strides, dilations, padding_values, padding, group.
 * The reference kernel (kernels/cpu/ref/integer_linear.h) only: the int8 path mace builds
 * itself is QLinearConv2D; this op carries ConvInteger models as they are.
 */
#include "core/op.h"
#include "kernels/cpu/ref/integer_linear.h"
#include "ops/conv_pad.h"
#include "ops/q8_scalar.h"

#define WHAT "ConvInteger"

typedef struct conv_integer_state {
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_conv_integer_shape shape;
} conv_integer_state;

static mace_status conv_integer_init(mace_op *op) {
  conv_integer_state *st = (conv_integer_state *)op->state;
  st->strides[0] = st->strides[1] = st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  st->group = mace_op_arg_int(op, "group", 1);
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): unknown padding \"%s\"", op->name,
                      pad);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): group %lld must be >= 1",
                      op->name, (long long)st->group);
  return MACE_OK;
}

static mace_status conv_integer_infer(mace_op *op) {
  conv_integer_state *st = (conv_integer_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 4, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  if (!mace_q8_is_int8(x->dtype) || !mace_q8_is_int8(w->dtype))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (" WHAT "): dtypes %s, %s are not supported "
                      "(u8 or i8)", op->name, mace_dtype_name(x->dtype),
                      mace_dtype_name(w->dtype));
  if (x->ndim != 4 || w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): X and W must have rank 4, have "
                      "%d and %d", op->name, x->ndim, w->ndim);
  if (op->n_inputs > 2)
    MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, WHAT, 2, x->dtype));
  if (op->n_inputs > 3) {
    const mace_tensor *z = op->inputs[3];
    if (z->dtype != w->dtype || (mace_tensor_numel(z) != 1 && mace_tensor_numel(z) != w->dims[0]))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): w_zero_point '%s' must be %s "
                        "with 1 or %lld values", op->name, z->name, mace_dtype_name(w->dtype),
                        (long long)w->dims[0]);
  }
  mace_conv_integer_shape *s = &st->shape;
  const int64_t g = st->group;
  if (x->dims[1] % g || w->dims[0] % g || w->dims[1] * g != x->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): X has %lld channels, W is "
                      "[%lld, %lld, ...], group %lld", op->name, (long long)x->dims[1],
                      (long long)w->dims[0], (long long)w->dims[1], (long long)g);
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  *s = (mace_conv_integer_shape){.batch = x->dims[0], .in_c = x->dims[1], .in_h = x->dims[2],
                                 .in_w = x->dims[3], .out_c = w->dims[0], .k_h = w->dims[2],
                                 .k_w = w->dims[3], .stride_h = st->strides[0],
                                 .stride_w = st->strides[1], .dilation_h = st->dilations[0],
                                 .dilation_w = st->dilations[1], .group = g};
  s->out_h = mace_window_out_size(s->in_h, s->k_h, s->stride_h, s->dilation_h, st->mode, 0,
                                  &pads[0], &pads[2]);
  s->out_w = mace_window_out_size(s->in_w, s->k_w, s->stride_w, s->dilation_w, st->mode, 0,
                                  &pads[1], &pads[3]);
  if (s->out_h <= 0 || s->out_w <= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): output size %lldx%lld is not "
                      "positive", op->name, (long long)s->out_h, (long long)s->out_w);
  s->pad_top = pads[0];
  s->pad_left = pads[1];
  const int64_t dims[4] = {s->batch, s->out_c, s->out_h, s->out_w};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I32, dims, 4));
  op->macs = s->batch * s->out_c * s->out_h * s->out_w * w->dims[1] * s->k_h * s->k_w;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_conv_integer_shape *s;
  mace_q8_operand x, w;
  int32_t *y;
} conv_integer_job;

static void conv_integer_range(void *ctx, int64_t begin, int64_t end) {
  const conv_integer_job *j = (const conv_integer_job *)ctx;
  mace_q8_conv_integer__ref(j->s, &j->x, &j->w, j->y, begin, end);
}

static mace_status conv_integer_run(mace_op *op) {
  const conv_integer_state *st = (const conv_integer_state *)op->state;
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *xz = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *wz = op->n_inputs > 3 ? op->inputs[3] : NULL;
  conv_integer_job job = {&st->shape,
                          {x->data, x->dtype == MACE_DT_I8, xz ? xz->data : NULL, 1},
                          {w->data, w->dtype == MACE_DT_I8, wz ? wz->data : NULL,
                           wz ? mace_tensor_numel(wz) : 1},
                          (int32_t *)op->outputs[0]->data};
  const int64_t planes = st->shape.batch * st->shape.out_c;
  if (planes > 0) mace_threadpool_parallel_for(op->pool, planes, 1, conv_integer_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_conv_integer = {.type = "ConvInteger", .device = MACE_DEVICE_CPU,
                                           .dtype = MACE_DT_INVALID,
                                           .state_size = sizeof(conv_integer_state),
                                           .init = conv_integer_init,
                                           .infer = conv_integer_infer, .run = conv_integer_run};
