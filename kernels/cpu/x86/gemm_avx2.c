/* f32 GEMM microkernels for AVX2 + FMA (this file is compiled with -mavx2 -mfma): 6x16, its
 * first 4 rows, and 6x8 over the first 8 columns of a 16-wide panel. */
#include <immintrin.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ukernels.h"

#define MR 6
#define NR 16

/* The lanes j < n of a vector of 8 (n in [0, 8]). */
static inline __m256i lanes_below_(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* One 8-column half of row i of the tile: + C (accumulate), + bias and the clamp (ep), then the
 * store; `full` half: plain load / store, else masked by m (nr < NR: a matrix's last panel). */
#define STORE_HALF(i, v, off, cb, m, full)                                       \
  do {                                                                           \
    float *p_ = c + (i) * ldc + (off);                                           \
    __m256 x_ = (v);                                                             \
    if (accumulate)                                                              \
      x_ = _mm256_add_ps(x_, (full) ? _mm256_loadu_ps(p_) : _mm256_maskload_ps(p_, m)); \
    if (ep) {                                                                    \
      x_ = _mm256_add_ps(x_, row_bias ? _mm256_broadcast_ss(row_bias + (i)) : (cb)); \
      if (clamp) {                                                                  \
        x_ = _mm256_max_ps(zero, x_); /* x second: maxps keeps it when NaN */    \
        if (clamp == 2) x_ = _mm256_min_ps(hi, x_);                              \
      }                                                                          \
    }                                                                            \
    if (full)                                                                    \
      _mm256_storeu_ps(p_, x_);                                                  \
    else                                                                         \
      _mm256_maskstore_ps(p_, m, x_);                                            \
  } while (0)

/* The epilogue's constants: the per-row bias pointer (broadcast per row) or the per-column
 * bias vectors (masked loads: zeros past nr), the clamp bounds, the column masks. */
#define EPILOGUE_SETUP(n0, n1)                                                   \
  const __m256i m0 = lanes_below_(n0), m1 = lanes_below_(n1);                    \
  const int full0 = (n0) == 8, full1 = (n1) == 8;                                \
  const float *row_bias = ep && ep->bias && ep->bias_per_row ? ep->bias : NULL;  \
  const __m256 zero = _mm256_setzero_ps(), hi = _mm256_set1_ps(ep ? ep->hi : 0.0f); \
  const int clamp = ep ? ep->clamp : 0;                                          \
  __m256 cb0 = zero, cb1 = zero;                                                 \
  if (ep && ep->bias && !ep->bias_per_row) {                                     \
    cb0 = _mm256_maskload_ps(ep->bias, m0);                                      \
    cb1 = _mm256_maskload_ps(ep->bias + 8, m1);                                  \
  }                                                                              \
  (void)cb1; (void)full1

#define STORE_ROW(i, v0, v1)                                                     \
  do {                                                                           \
    STORE_HALF(i, v0, 0, cb0, m0, full0);                                        \
    if (n1 > 0) STORE_HALF(i, v1, 8, cb1, m1, full1);                            \
  } while (0)

/* One K step of a 16-wide kernel: its prefetches (the next B panel into L2, the A panel and
 * the B panel ahead, as in gemm_avx512.c and for the same reasons), then B's two vectors b0,
 * b1. */
#define K_STEP_LOAD()                                                     \
  _mm_prefetch((const char *)b_next, _MM_HINT_T1);                        \
  b_next += NR;                                                           \
  _mm_prefetch((const char *)(a + MR * 64), _MM_HINT_T0);                 \
  _mm_prefetch((const char *)(b + NR * 32), _MM_HINT_T0);                 \
  const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8)

/* Row i of the tile: (v0, v1) += a[i] * (b0, b1). */
#define FMA_ROW(i, v0, v1)                                                \
  do {                                                                    \
    const __m256 av_ = _mm256_broadcast_ss(a + (i));                      \
    v0 = _mm256_fmadd_ps(av_, b0, v0);                                    \
    v1 = _mm256_fmadd_ps(av_, b1, v1);                                    \
  } while (0)

/* A tile's rows as an X-macro, X(row, accumulator of columns 0-7, of columns 8-15), as in
 * gemm_avx512.c: the kernels below are one body over the first 4 or 6 rows. */
#define ROWS4_(X) X(0, c00, c01) X(1, c10, c11) X(2, c20, c21) X(3, c30, c31)
#define ROWS6_(X) ROWS4_(X) X(4, c40, c41) X(5, c50, c51)
#define DECL_(i, v0, v1) __m256 v0 = _mm256_setzero_ps(), v1 = _mm256_setzero_ps();
#define FMA_(i, v0, v1) FMA_ROW(i, v0, v1);
#define STORE_(i, v0, v1) \
  if (mr > (i)) STORE_ROW(i, v0, v1);

/* The tile of the rows ROWS lists, over a 6-row A panel and a 16-wide B panel. */
#define TILE16_(ROWS)                                                   \
  ROWS(DECL_)                                                           \
  const float *b_next = b + NR * kc;                                    \
  for (int64_t k = 0; k < kc; ++k) {                                    \
    K_STEP_LOAD();                                                      \
    ROWS(FMA_)                                                          \
    a += MR;                                                            \
    b += NR;                                                            \
  }                                                                     \
  const int64_t n0 = nr < 8 ? nr : 8, n1 = nr > 8 ? nr - 8 : 0;         \
  EPILOGUE_SETUP(n0, n1);                                               \
  ROWS(STORE_)

/* Every tile, partial ones too (mr < MR rows, nr < NR columns), is written from registers:
 * the rows below mr are skipped, the columns past nr masked. A scalar path for the edges was
 * a visible cost where M is not a multiple of MR (M = 16: one tile in three has 4 rows). */
void mace_f32_gemm_6x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep) {
  TILE16_(ROWS6_)
}

/* The first 4 rows of a 6-row tile (A panels stay 6 rows wide): a last panel of 3-4 rows, at
 * about 4/6 of the full tile's time (8 accumulators still cover the FMA latency). */
void mace_f32_gemm_4x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep) {
  TILE16_(ROWS4_)
}

/* The same tile over only the first 8 columns of the 16-wide B panel: the last panel of a
 * matrix with N mod 16 in [1, 8] (N = 49 for 7x7 planes: 56 columns computed instead of 64). */
void mace_f32_gemm_6x8__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  for (int64_t k = 0; k < kc; ++k) {
    _mm_prefetch((const char *)(a + MR * 64), _MM_HINT_T0);
    const __m256 b0 = _mm256_loadu_ps(b);
    c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 0), b0, c0);
    c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 1), b0, c1);
    c2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2), b0, c2);
    c3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3), b0, c3);
    c4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 4), b0, c4);
    c5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 5), b0, c5);
    a += MR;
    b += NR;
  }
  const int64_t n0 = nr < 8 ? nr : 8, n1 = 0;
  EPILOGUE_SETUP(n0, n1);
  if (mr > 0) STORE_HALF(0, c0, 0, cb0, m0, full0);
  if (mr > 1) STORE_HALF(1, c1, 0, cb0, m0, full0);
  if (mr > 2) STORE_HALF(2, c2, 0, cb0, m0, full0);
  if (mr > 3) STORE_HALF(3, c3, 0, cb0, m0, full0);
  if (mr > 4) STORE_HALF(4, c4, 0, cb0, m0, full0);
  if (mr > 5) STORE_HALF(5, c5, 0, cb0, m0, full0);
}

/* Columns [0, kl) of `rows` rows, one masked gather a column: the tail of the transposing
 * pack below. */
static void pack_cols_gather(int64_t kl, const float *src, int64_t src_rs, int64_t rows,
                             float *dst) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i idx = _mm256_mullo_epi32(lane, _mm256_set1_epi32((int)src_rs));
  const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)rows), lane));
  const __m256i panel = _mm256_cmpgt_epi32(_mm256_set1_epi32(MR), lane);
  for (int64_t kk = 0; kk < kl; ++kk, dst += MR)
    _mm256_maskstore_ps(dst, panel,
                        _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src + kk, idx, live, 4));
}

/* 8 columns at a time: each row's 8 floats loaded whole (rows past `rows`, and rows 6-7, are
 * zeros) and the 8 x 8 block transposed in registers, then one masked store of MR floats a
 * column; a gather a column (a load a lane) cost several times as much. */
void mace_f32_gemm_pack_cols_6__avx2(int64_t kl, const float *src, int64_t src_rs, int64_t rows,
                                     float *dst) {
  const __m256i panel =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(MR), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  int64_t kk = 0;
  for (; kk + 8 <= kl; kk += 8, dst += 8 * MR) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i)
      r[i] = i < rows && i < MR ? _mm256_loadu_ps(src + i * src_rs + kk) : _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int q = 0; q < 2; ++q) { /* r[4q + j]: in 128-bit lane L, column 4L + j, rows 4q.. */
      r[4 * q + 0] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
      r[4 * q + 1] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0xee);
      r[4 * q + 2] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
      r[4 * q + 3] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xee);
    }
    for (int j = 0; j < 4; ++j) {
      _mm256_maskstore_ps(dst + j * MR, panel, _mm256_permute2f128_ps(r[j], r[4 + j], 0x20));
      _mm256_maskstore_ps(dst + (4 + j) * MR, panel,
                          _mm256_permute2f128_ps(r[j], r[4 + j], 0x31));
    }
  }
  if (kk < kl) pack_cols_gather(kl - kk, src + kk, src_rs, rows, dst);
}

void mace_f32_gemm_pack_rows_16__avx2(int64_t kl, const float *src, int64_t src_rs, float *dst) {
  for (int64_t kk = 0; kk < kl; ++kk, src += src_rs, dst += 16) {
    _mm256_storeu_ps(dst, _mm256_loadu_ps(src));
    _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(src + 8));
  }
}
