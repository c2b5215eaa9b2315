/* Shared by the QLinear* ops with int8 weights (QLinearConv2D, QLinearMatMul): reading constant
 * scales and zero points, and the per-channel requantization parameters (docs/int8.md). */
#ifndef MACE_OPS_QLINEAR_H_
#define MACE_OPS_QLINEAR_H_

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/op.h"
#include "kernels/cpu/qgemm.h"
#include "kernels/cpu/ref/activation.h"
#include "kernels/cpu/ref/requant.h"
#include "ops/q8_scalar.h"

/* Input k, a constant of one value: a scale (f32, positive and finite) or a zero point (of
 * dtype zp_dtype). The values are read once at infer (ops/q8_scalar.h reads them per run for
 * the ops that take computed scales). */
static inline mace_status mace_qlinear_const(const mace_op *op, int k, const char *what) {
  const mace_tensor *t = op->inputs[k];
  if (t->role != MACE_TENSOR_CONST || !t->data)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s (input %d) must be a constant",
                      op->name, op->type, what, k);
  return MACE_OK;
}

static inline mace_status mace_qlinear_scale(const mace_op *op, int k, const char *what,
                                             double *out) {
  MACE_RETURN_IF_ERROR(mace_qlinear_const(op, k, what));
  MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, op->type, k));
  return mace_q8_scale(op, op->type, k, out);
}

static inline mace_status mace_qlinear_zp(const mace_op *op, int k, const char *what,
                                          mace_dtype zp_dtype, int32_t *out) {
  MACE_RETURN_IF_ERROR(mace_qlinear_const(op, k, what));
  MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, op->type, k, zp_dtype));
  *out = mace_q8_zp(op, k);
  return MACE_OK;
}

/* The int8 weights' per-channel scales (input ks: 1 value or `channels` f32 values, written to
 * scales[0..channels)) and the check that their zero points (input kz, i8) are all 0. */
static inline mace_status mace_qlinear_weight_scales(const mace_op *op, int ks, int kz,
                                                     int64_t channels, double *scales) {
  const mace_tensor *s = op->inputs[ks], *z = op->inputs[kz];
  const int64_t ns = mace_tensor_numel(s), nz = mace_tensor_numel(z);
  if (s->role != MACE_TENSOR_CONST || z->role != MACE_TENSOR_CONST || s->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): the weight scale and zero point must be "
                      "f32 and i8 constants", op->name, op->type);
  if ((ns != 1 && ns != channels) || (nz != 1 && nz != channels))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): weight scale has %lld values and zero "
                      "point %lld; need 1 or %lld (one per output channel)", op->name, op->type,
                      (long long)ns, (long long)nz, (long long)channels);
  if (z->dtype != MACE_DT_I8)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): weights must be i8 (zero point is %s)",
                      op->name, op->type, mace_dtype_name(z->dtype));
  for (int64_t i = 0; i < nz; ++i)
    if (((const int8_t *)z->data)[i] != 0)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): weights must be symmetric (zero point "
                        "%d at channel %lld)", op->name, op->type, ((const int8_t *)z->data)[i],
                        (long long)i);
  for (int64_t c = 0; c < channels; ++c) {
    scales[c] = ((const float *)s->data)[ns == 1 ? 0 : c];
    if (!(scales[c] > 0.0 && isfinite(scales[c])))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): weight scale %g at channel %lld is "
                        "not a positive finite number", op->name, op->type, scales[c],
                        (long long)c);
  }
  return MACE_OK;
}

/* The output stage: zero point, clamp of the output dtype narrowed by the fused activation
 * (NOOP, RELU, RELUX), for y_scale. */
static inline mace_status mace_qlinear_out(const mace_op *op, const mace_activation *act,
                                           mace_dtype y_dtype, double y_scale, int32_t y_zp,
                                           mace_qgemm_out *q) {
  q->out_signed = y_dtype == MACE_DT_I8;
  q->zp = y_zp;
  if (act->kind != MACE_ACT_NONE && act->kind != MACE_ACT_RELU && act->kind != MACE_ACT_RELUX)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): fused activation %d is not supported on "
                      "int8 (NOOP, RELU or RELUX)", op->name, op->type, (int)act->kind);
  mace_q8_range(y_dtype, act->kind != MACE_ACT_NONE, y_zp, &q->lo, &q->hi);
  if (act->kind == MACE_ACT_RELUX) {
    const double top = (double)y_zp + nearbyint((double)act->beta / y_scale);
    if (top < q->hi) q->hi = (int32_t)(top < q->lo ? q->lo : top);
  }
  return MACE_OK;
}

/* An optional i32 bias (input k, `channels` values) copied to out, or zeros. */
static inline mace_status mace_qlinear_bias(const mace_op *op, int k, int64_t channels,
                                            int32_t *out) {
  const mace_tensor *b = op->n_inputs > k ? op->inputs[k] : NULL;
  for (int64_t c = 0; c < channels; ++c) out[c] = 0;
  if (!b) return MACE_OK;
  if (b->dtype != MACE_DT_I32 || b->role != MACE_TENSOR_CONST || mace_tensor_numel(b) != channels)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): bias must be an i32 constant of %lld "
                      "values", op->name, op->type, (long long)channels);
  for (int64_t c = 0; c < channels; ++c) out[c] = ((const int32_t *)b->data)[c];
  return MACE_OK;
}

#endif /* MACE_OPS_QLINEAR_H_ */
