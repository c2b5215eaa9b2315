/* Pooling's arguments and window geometry, shared by Pooling (f32, u8/i8 MAX) and
 * QLinearAveragePool: parsed once at init, laid onto the input's dims at infer. */
#ifndef MACE_OPS_POOL_GEOMETRY_H_
#define MACE_OPS_POOL_GEOMETRY_H_

#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/pooling.h"
#include "ops/conv_pad.h"

typedef struct mace_pool_args {
  int is_max, global, count_include_pad, ceil_mode;
  int64_t kernels[2], strides[2], dilations[2], pads[4];
  mace_pad_mode mode;
} mace_pool_args;

/* Reads kernels, strides, dilations, padding_values, padding, count_include_pad, ceil_mode and
 * global (pooling.c lists them); `what` names the op kind in messages. */
static inline mace_status mace_pool_args_parse(const mace_op *op, const char *what,
                                               mace_pool_args *st) {
  st->global = mace_op_arg_int(op, "global", 0) != 0;
  st->count_include_pad = mace_op_arg_int(op, "count_include_pad", 0) != 0;
  st->ceil_mode = mace_op_arg_int(op, "ceil_mode", 0) != 0;
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  if (st->global) return MACE_OK;
  st->kernels[0] = st->kernels[1] = 0;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "kernels", 2, st->kernels, 1));
  if (st->kernels[0] < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): argument kernels [kH, kW] missing",
                      op->name, what);
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): unknown padding \"%s\"", op->name, what,
                      pad);
  return MACE_OK;
}

/* The window geometry of st over x (rank 4, NCHW dims), checked. */
static inline mace_status mace_pool_shape_infer(const mace_op *op, const char *what,
                                                const mace_pool_args *st, const mace_tensor *x,
                                                mace_pool2d_shape *s) {
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input has rank %d, expects 4 (NCHW)",
                      op->name, what, x->ndim);
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  *s = (mace_pool2d_shape){.batch = n, .channels = c, .in_h = h, .in_w = w,
                           .stride_h = st->strides[0], .stride_w = st->strides[1],
                           .dilation_h = st->dilations[0], .dilation_w = st->dilations[1]};
  if (st->global) {
    if (h < 1 || w < 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): global pooling of an empty plane",
                        op->name, what);
    s->k_h = h;
    s->k_w = w;
    s->out_h = s->out_w = 1;
    return MACE_OK;
  }
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  s->k_h = st->kernels[0];
  s->k_w = st->kernels[1];
  s->out_h = mace_window_out_size(h, s->k_h, s->stride_h, s->dilation_h, st->mode,
                                  st->ceil_mode, &pads[0], &pads[2]);
  s->out_w = mace_window_out_size(w, s->k_w, s->stride_w, s->dilation_w, st->mode,
                                  st->ceil_mode, &pads[1], &pads[3]);
  if (s->out_h <= 0 || s->out_w <= 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (%s): output size %lldx%lld is not positive (input "
                      "%lldx%lld, kernel %lldx%lld)", op->name, what, (long long)s->out_h,
                      (long long)s->out_w, (long long)h, (long long)w, (long long)s->k_h,
                      (long long)s->k_w);
  s->pad_top = pads[0];
  s->pad_left = pads[1];
  s->pad_bottom = pads[2];
  s->pad_right = pads[3];
  return MACE_OK;
}

#endif /* MACE_OPS_POOL_GEOMETRY_H_ */
