/* Reference (portable C) resize: N-d nearest (dtype-generic), bilinear and bicubic (f32). */
#include "kernels/cpu/ref/resize.h"

#include <math.h>
#include <string.h>

float mace_resize_source_coord(mace_resize_coord mode, float x, float scale, int64_t out_len,
                               int64_t in_len) {
  switch (mode) {
    case MACE_RESIZE_ASYMMETRIC:
      return x / scale;
    case MACE_RESIZE_ALIGN_CORNERS:
      return out_len == 1 ? 0.0f : x * (float)(in_len - 1) / (float)(out_len - 1);
    case MACE_RESIZE_PYTORCH_HALF_PIXEL:
      return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case MACE_RESIZE_TF_HALF_PIXEL_FOR_NN:
      return (x + 0.5f) / scale;
    case MACE_RESIZE_HALF_PIXEL_SYMMETRIC: {
      /* ONNX Runtime evaluates the last step in double. */
      const float out_width = scale * (float)in_len;
      const float adjustment = (float)out_len / out_width;
      const float center = (float)in_len / 2.0f;
      const float offset = center * (1.0f - adjustment);
      return (float)(offset + ((double)x + 0.5) / scale - 0.5);
    }
    case MACE_RESIZE_HALF_PIXEL:
    default:
      return (x + 0.5f) / scale - 0.5f;
  }
}

static int64_t nearest_round(mace_resize_nearest rounding, float x, int down) {
  switch (rounding) {
    case MACE_NEAREST_ROUND_PREFER_CEIL:
      return (int64_t)roundf(x);
    case MACE_NEAREST_FLOOR:
      return (int64_t)floorf(x);
    case MACE_NEAREST_CEIL:
      return (int64_t)ceilf(x);
    case MACE_NEAREST_SIMPLE:
      return down ? (int64_t)ceilf(x) : (int64_t)x;
    case MACE_NEAREST_ROUND_PREFER_FLOOR:
    default:
      if (x == (float)(int64_t)x + 0.5f) return (int64_t)floorf(x);
      return (int64_t)roundf(x);
  }
}

void mace_resize_nearest_table(mace_resize_coord mode, mace_resize_nearest rounding,
                               float scale, int64_t out_len, int64_t in_len, int64_t *index) {
  for (int64_t o = 0; o < out_len; ++o) {
    const float x = mace_resize_source_coord(mode, (float)o, scale, out_len, in_len);
    int64_t i = nearest_round(rounding, x, scale < 1.0f);
    if (i > in_len - 1) i = in_len - 1;
    if (i < 0) i = 0;
    index[o] = i;
  }
}

void mace_resize_linear_table(mace_resize_coord mode, float scale, int64_t out_len,
                              int64_t in_len, int64_t *i0, int64_t *i1, float *w0, float *w1) {
  for (int64_t o = 0; o < out_len; ++o) {
    float x = mace_resize_source_coord(mode, (float)o, scale, out_len, in_len);
    if (x > (float)(in_len - 1)) x = (float)(in_len - 1);
    if (x < 0.0f) x = 0.0f;
    int64_t a = (int64_t)x;
    if (a > in_len - 1) a = in_len - 1;
    const int64_t b = a + 1 < in_len ? a + 1 : in_len - 1;
    float da = fabsf(x - (float)a), db = fabsf(x - (float)b);
    if (a == b) da = db = 0.5f;
    i0[o] = a;
    i1[o] = b;
    w0[o] = db;  /* the closer a is, the larger its weight */
    w1[o] = da;
  }
}

void mace_x_resize_nearest__ref(const void *in, const int64_t *in_dims, int ndim,
                                const int64_t *out_dims, const int64_t *const *index,
                                size_t esize, void *out, int64_t begin, int64_t end) {
  int64_t in_strides[8];
  int64_t s = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    in_strides[k] = s;
    s *= in_dims[k];
  }
  const int last = ndim - 1;
  const int64_t w = out_dims[last];
  const int64_t *xi = index[last];
  const char *src = (const char *)in;
  for (int64_t row = begin; row < end; ++row) {
    int64_t r = row, off = 0;
    for (int k = last - 1; k >= 0; --k) {
      off += index[k][r % out_dims[k]] * in_strides[k];
      r /= out_dims[k];
    }
    const char *srow = src + (size_t)off * esize;
    char *dst = (char *)out + (size_t)(row * w) * esize;
    switch (esize) {
      case 4:
        for (int64_t c = 0; c < w; ++c)
          ((uint32_t *)dst)[c] = ((const uint32_t *)srow)[xi[c]];
        break;
      case 8:
        for (int64_t c = 0; c < w; ++c)
          ((uint64_t *)dst)[c] = ((const uint64_t *)srow)[xi[c]];
        break;
      default:
        for (int64_t c = 0; c < w; ++c)
          memcpy(dst + (size_t)c * esize, srow + (size_t)xi[c] * esize, esize);
        break;
    }
  }
}

void mace_f32_resize_bilinear__ref(const float *in, int64_t ih, int64_t iw, int64_t oh,
                                   int64_t ow, const int64_t *y0, const int64_t *y1,
                                   const float *wy0, const float *wy1, const int64_t *x0,
                                   const int64_t *x1, const float *wx0, const float *wx1,
                                   float *out, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t p = row / oh, y = row % oh;
    const float *plane = in + p * ih * iw;
    const float *r0 = plane + y0[y] * iw, *r1 = plane + y1[y] * iw;
    const float a = wy0[y], b = wy1[y];
    float *dst = out + row * ow;
    for (int64_t x = 0; x < ow; ++x) {
      const float top = wx0[x] * r0[x0[x]] + wx1[x] * r0[x1[x]];
      const float bot = wx0[x] * r1[x0[x]] + wx1[x] * r1[x1[x]];
      dst[x] = a * top + b * bot;
    }
  }
}

void mace_resize_cubic_table(mace_resize_coord mode, float scale, int64_t out_len,
                             int64_t in_len, float a, int exclude_outside, int64_t *idx,
                             float *w) {
  for (int64_t o = 0; o < out_len; ++o) {
    const float x = mace_resize_source_coord(mode, (float)o, scale, out_len, in_len);
    const float fl = floorf(x);
    const int64_t base = (int64_t)fl;
    const float t = fabsf(x - fl);
    float c[4];
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
    float sum = 1.0f;
    if (exclude_outside) {
      sum = 0.0f;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = base - 1 + k;
        if (i < 0 || i >= in_len) c[k] = 0.0f;
        sum += c[k];
      }
    }
    for (int k = 0; k < 4; ++k) {
      int64_t i = base - 1 + k;
      i = i < 0 ? 0 : (i > in_len - 1 ? in_len - 1 : i);
      idx[4 * o + k] = i;
      w[4 * o + k] = c[k] / sum;
    }
  }
}

void mace_f32_resize_bicubic__ref(const float *in, int64_t ih, int64_t iw, int64_t oh,
                                  int64_t ow, const int64_t *yidx, const float *yw,
                                  const int64_t *xidx, const float *xw, float *out,
                                  int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t p = row / oh, y = row % oh;
    const float *plane = in + p * ih * iw;
    float *dst = out + row * ow;
    for (int64_t x = 0; x < ow; ++x) {
      const int64_t *xi = xidx + 4 * x;
      const float *wx = xw + 4 * x;
      float acc = 0.0f;
      for (int k = 0; k < 4; ++k) {
        const float *r = plane + yidx[4 * y + k] * iw;
        const float v = wx[0] * r[xi[0]] + wx[1] * r[xi[1]] + wx[2] * r[xi[2]] + wx[3] * r[xi[3]];
        acc += v * yw[4 * y + k];
      }
      dst[x] = acc;
    }
  }
}
