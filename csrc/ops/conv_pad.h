/* Padding and output-size rules (ONNX / ONNX Runtime semantics) shared by Conv2D, Deconv2D and Pooling. */
#ifndef MACE_OPS_CONV_PAD_H_
#define MACE_OPS_CONV_PAD_H_

#include <stdint.h>
#include <string.h>

#include "core/op.h"

/* The "padding" argument: EXPLICIT uses padding_values; SAME_* pad so that
 * out = ceil(in / stride), the odd pixel at the end (UPPER) or the start (LOWER). */
typedef enum mace_pad_mode {
  MACE_PAD_EXPLICIT = 0,
  MACE_PAD_SAME_UPPER,
  MACE_PAD_SAME_LOWER,
  MACE_PAD_VALID
} mace_pad_mode;

/* Returns 0 for an unknown name. */
static inline int mace_pad_mode_parse(const char *s, mace_pad_mode *mode) {
  if (!s || strcmp(s, "EXPLICIT") == 0 || strcmp(s, "NOTSET") == 0) *mode = MACE_PAD_EXPLICIT;
  else if (strcmp(s, "SAME_UPPER") == 0) *mode = MACE_PAD_SAME_UPPER;
  else if (strcmp(s, "SAME_LOWER") == 0) *mode = MACE_PAD_SAME_LOWER;
  else if (strcmp(s, "VALID") == 0) *mode = MACE_PAD_VALID;
  else return 0;
  return 1;
}

/* Output size of a sliding window (conv, pooling) along one axis. For EXPLICIT *pad_begin
 * and *pad_end are read; otherwise they are written. ceil_mode follows ONNX Runtime: a
 * last window that would start inside the end padding is dropped. May return <= 0. */
static inline int64_t mace_window_out_size(int64_t in, int64_t k, int64_t stride,
                                           int64_t dilation, mace_pad_mode mode, int ceil_mode,
                                           int64_t *pad_begin, int64_t *pad_end) {
  const int64_t dk = (k - 1) * dilation + 1;
  if (mode == MACE_PAD_VALID) {
    *pad_begin = *pad_end = 0;
    return in >= dk ? (in - dk) / stride + 1 : 0;
  }
  if (mode == MACE_PAD_SAME_UPPER || mode == MACE_PAD_SAME_LOWER) {
    const int64_t out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + dk - in;
    if (total < 0) total = 0;
    *pad_begin = mode == MACE_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    *pad_end = total - *pad_begin;
    return out;
  }
  const int64_t span = in + *pad_begin + *pad_end - dk;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + *pad_begin) --out;
  return out;
}

/* Reads int-list argument `name` into vals[0..n) when present (else leaves the defaults),
 * checking it has exactly n values, each >= min. */
static inline mace_status mace_conv_read_ints(const mace_op *op, const char *name, int n,
                                              int64_t *vals, int64_t min) {
  const int64_t *v;
  int got = mace_op_arg_ints(op, name, &v);
  if (got < 0) return MACE_OK;
  if (got != n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): argument %s has %d values, expects %d",
                      op->name, op->type, name, got, n);
  for (int i = 0; i < n; ++i) {
    if (v[i] < min)
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (%s): argument %s[%d] = %lld, must be >= %lld", op->name,
                        op->type, name, i, (long long)v[i], (long long)min);
    vals[i] = v[i];
  }
  return MACE_OK;
}

#endif /* MACE_OPS_CONV_PAD_H_ */
