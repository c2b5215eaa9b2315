/* Reference (portable C) resize: N-d nearest (dtype-generic), bilinear and bicubic (f32),
 * with ONNX Resize's coordinate transformation and nearest rounding modes. */
#ifndef MACE_KERNELS_CPU_REF_RESIZE_H_
#define MACE_KERNELS_CPU_REF_RESIZE_H_

#include <stddef.h>
#include <stdint.h>

typedef enum mace_resize_coord {
  MACE_RESIZE_HALF_PIXEL = 0,          /* (x + 0.5) / scale - 0.5 */
  MACE_RESIZE_ASYMMETRIC = 1,          /* x / scale */
  MACE_RESIZE_ALIGN_CORNERS = 2,       /* x * (in - 1) / (out - 1), 0 when out == 1 */
  MACE_RESIZE_PYTORCH_HALF_PIXEL = 3,  /* half_pixel, 0 when out == 1 */
  MACE_RESIZE_TF_HALF_PIXEL_FOR_NN = 4,/* (x + 0.5) / scale */
  MACE_RESIZE_HALF_PIXEL_SYMMETRIC = 5 /* ONNX opset 18 */
} mace_resize_coord;

typedef enum mace_resize_nearest {
  MACE_NEAREST_ROUND_PREFER_FLOOR = 0,
  MACE_NEAREST_ROUND_PREFER_CEIL = 1,
  MACE_NEAREST_FLOOR = 2,
  MACE_NEAREST_CEIL = 3,
  MACE_NEAREST_SIMPLE = 4              /* ONNX Upsample / Resize-10: trunc, ceil when scale < 1 */
} mace_resize_nearest;

/* Source coordinate (float, as ONNX Runtime computes it) of output index x. */
float mace_resize_source_coord(mace_resize_coord mode, float x, float scale, int64_t out_len,
                               int64_t in_len);

/* Fills index[0..out_len) with the nearest source index of every output index. */
void mace_resize_nearest_table(mace_resize_coord mode, mace_resize_nearest rounding,
                               float scale, int64_t out_len, int64_t in_len, int64_t *index);

/* Fills i0/i1 (source indices) and w0/w1 (their weights) for every output index. */
void mace_resize_linear_table(mace_resize_coord mode, float scale, int64_t out_len,
                              int64_t in_len, int64_t *i0, int64_t *i1, float *w0, float *w1);

/* out[o] = in[index_0[o_0], ..., index_{n-1}[o_{n-1}]] over dense row-major tensors of ndim
 * 1..8; index[k] has out_dims[k] entries. Computes output rows [begin, end) (innermost dim). */
void mace_x_resize_nearest__ref(const void *in, const int64_t *in_dims, int ndim,
                                const int64_t *out_dims, const int64_t *const *index,
                                size_t esize, void *out, int64_t begin, int64_t end);

/* Bilinear over planes of [ih, iw] -> [oh, ow] with per-row (y) and per-column (x) tables
 * from mace_resize_linear_table. Computes output rows [begin, end) of all planes
 * (row r is row r % oh of plane r / oh). */
void mace_f32_resize_bilinear__ref(const float *in, int64_t ih, int64_t iw, int64_t oh,
                                   int64_t ow, const int64_t *y0, const int64_t *y1,
                                   const float *wy0, const float *wy1, const int64_t *x0,
                                   const int64_t *x1, const float *wx0, const float *wx1,
                                   float *out, int64_t begin, int64_t end);

/* Bicubic taps (Keys, coefficient a; ONNX Runtime's arithmetic) for every output index:
 * idx[4o..4o+4) are the source indices (clamped into [0, in_len)), w[4o..4o+4) their weights;
 * with exclude_outside, taps outside the input get weight 0 and the rest are renormalized. */
void mace_resize_cubic_table(mace_resize_coord mode, float scale, int64_t out_len,
                             int64_t in_len, float a, int exclude_outside, int64_t *idx,
                             float *w);

/* Bicubic over planes of [ih, iw] -> [oh, ow] with tables from mace_resize_cubic_table.
 * Computes output rows [begin, end) of all planes (row r is row r % oh of plane r / oh). */
void mace_f32_resize_bicubic__ref(const float *in, int64_t ih, int64_t iw, int64_t oh,
                                  int64_t ow, const int64_t *yidx, const float *yw,
                                  const int64_t *xidx, const float *xw, float *out,
                                  int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_RESIZE_H_ */
