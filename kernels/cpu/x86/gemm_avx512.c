/* f32 GEMM microkernels for AVX-512 (this file is compiled with -mavx512f -mavx512bw -mfma):
 * 14x32, its first 8 and 4 rows, and 14x16 over the first 16 columns of a 32-wide panel. */
#include <immintrin.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ukernels.h"

#define MR 14
#define NR 32

/* Writes row i of the tile: + C (accumulate), + bias and the clamp (ep), then masked stores
 * (partial tiles, nr < NR). */
#define STORE_ROW(i, v0, v1)                                              \
  do {                                                                    \
    float *row_ = c + (i) * ldc;                                          \
    __m512 x0_ = (v0), x1_ = (v1);                                        \
    if (accumulate) {                                                     \
      x0_ = _mm512_add_ps(x0_, _mm512_maskz_loadu_ps(m0, row_));          \
      x1_ = _mm512_add_ps(x1_, _mm512_maskz_loadu_ps(m1, row_ + 16));     \
    }                                                                     \
    if (ep) {                                                             \
      if (row_bias) {                                                     \
        const __m512 rb_ = _mm512_set1_ps(row_bias[i]);                   \
        x0_ = _mm512_add_ps(x0_, rb_);                                    \
        x1_ = _mm512_add_ps(x1_, rb_);                                    \
      } else {                                                            \
        x0_ = _mm512_add_ps(x0_, cb0);                                    \
        x1_ = _mm512_add_ps(x1_, cb1);                                    \
      }                                                                   \
      if (clamp) {                                                        \
        x0_ = _mm512_max_ps(zero, x0_); /* x second: kept when NaN */     \
        x1_ = _mm512_max_ps(zero, x1_);                                   \
        if (clamp == 2) {                                                 \
          x0_ = _mm512_min_ps(hi, x0_);                                   \
          x1_ = _mm512_min_ps(hi, x1_);                                   \
        }                                                                 \
      }                                                                   \
    }                                                                     \
    _mm512_mask_storeu_ps(row_, m0, x0_);                                 \
    _mm512_mask_storeu_ps(row_ + 16, m1, x1_);                            \
  } while (0)

/* One K step of a 32-wide kernel: its prefetches, then B's two vectors b0, b1.
 * - The next B panel (at b + NR * kc in a packed B) into L2, a line a K step, while this one is
 *   in use: a weights panel is streamed from memory on its first tile, at the compute rate,
 *   unless it is already on its way (into L1 instead was slower).
 * - The A panel (weights, often streamed from memory) 64 K steps ahead (16, 32, 64, 128 steps
 *   tried; a prefetch never faults).
 * - And the B panel 32 K steps ahead: MatMul's B is the weights, packed at load and streamed
 *   from memory on its first tile (8, 16, 32, 64 steps tried on a chain of MatMuls). */
#define K_STEP_LOAD()                                                     \
  _mm_prefetch((const char *)b_next, _MM_HINT_T1);                        \
  b_next += NR;                                                           \
  _mm_prefetch((const char *)(a + MR * 64), _MM_HINT_T0);                 \
  _mm_prefetch((const char *)(b + NR * 32), _MM_HINT_T0);                 \
  _mm_prefetch((const char *)(b + NR * 32 + 16), _MM_HINT_T0);            \
  const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16)

/* Row i of the tile: (v0, v1) += a[i] * (b0, b1). */
#define FMA_ROW(i, v0, v1)                                                \
  do {                                                                    \
    const __m512 av_ = _mm512_set1_ps(a[i]);                              \
    v0 = _mm512_fmadd_ps(av_, b0, v0);                                    \
    v1 = _mm512_fmadd_ps(av_, b1, v1);                                    \
  } while (0)

/* What STORE_ROW reads, for a tile of nr columns: the column masks, a per-row bias (broadcast
 * per row) or a per-column one (loaded once; zero if none), the clamp (a local: c's stores
 * could alias *ep). */
#define EPILOGUE_SETUP()                                                          \
  const int64_t n0 = nr < 16 ? nr : 16, n1 = nr > 16 ? nr - 16 : 0;              \
  const __mmask16 m0 = (__mmask16)((1u << n0) - 1u), m1 = (__mmask16)((1u << n1) - 1u); \
  const float *row_bias = ep && ep->bias && ep->bias_per_row ? ep->bias : NULL;  \
  const __m512 zero = _mm512_setzero_ps(), hi = _mm512_set1_ps(ep ? ep->hi : 0.0f); \
  const int clamp = ep ? ep->clamp : 0;                                          \
  __m512 cb0 = zero, cb1 = zero;                                                 \
  if (ep && ep->bias && !ep->bias_per_row) {                                     \
    cb0 = _mm512_maskz_loadu_ps(m0, ep->bias);                                   \
    cb1 = _mm512_maskz_loadu_ps(m1, ep->bias + 16);                              \
  }

/* A tile's rows as an X-macro, X(row, accumulator of columns 0-15, of columns 16-31): the
 * kernels below are one body over the first 4, 8 or 14 rows, each accumulator its own
 * variable (written out: an array of accumulators is not kept in registers at -O2). */
#define ROWS4_(X) X(0, c00, c01) X(1, c10, c11) X(2, c20, c21) X(3, c30, c31)
#define ROWS8_(X) ROWS4_(X) X(4, c40, c41) X(5, c50, c51) X(6, c60, c61) X(7, c70, c71)
#define ROWS14_(X)                                                                        \
  ROWS8_(X) X(8, c80, c81) X(9, c90, c91) X(10, c100, c101) X(11, c110, c111)             \
      X(12, c120, c121) X(13, c130, c131)
#define DECL_(i, v0, v1) __m512 v0 = _mm512_setzero_ps(), v1 = _mm512_setzero_ps();
#define FMA_(i, v0, v1) FMA_ROW(i, v0, v1);
#define STORE_(i, v0, v1) \
  if (mr > (i)) STORE_ROW(i, v0, v1);

/* The tile of the rows ROWS lists, over a 14-row A panel and a 32-wide B panel. */
#define TILE32_(ROWS)                                                   \
  ROWS(DECL_)                                                           \
  const float *b_next = b + NR * kc;                                    \
  for (int64_t k = 0; k < kc; ++k) {                                    \
    K_STEP_LOAD();                                                      \
    ROWS(FMA_)                                                          \
    a += MR;                                                            \
    b += NR;                                                            \
  }                                                                     \
  EPILOGUE_SETUP();                                                     \
  ROWS(STORE_)

/* 28 accumulators + 2 B vectors + 1 broadcast = 31 of the 32 zmm registers. */
void mace_f32_gemm_14x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                 const mace_gemm_tile_ep *ep) {
  TILE32_(ROWS14_)
}

/* The first 8 rows of a 14-row tile (A panels stay 14 rows wide; the last one is zero-padded):
 * a last panel of 5-8 rows. 16 accumulators still cover the FMA latency, so it runs at about
 * 8/14 of the full tile's time, where the full tile cost as much as 14 rows (M = 36 = 14 + 14
 * + 8 took as long as 42). */
void mace_f32_gemm_8x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep) {
  TILE32_(ROWS8_)
}

/* The first 4 rows of a 14-row tile: a last panel of 3-4 rows. 8 accumulators, as many as
 * the two FMA ports' latency needs; the one-row kernel took each row at about twice a tile
 * row's time. */
void mace_f32_gemm_4x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep) {
  TILE32_(ROWS4_)
}

/* The same tile with only the first 16 columns of the (32-wide) B panel: the last panel of a
 * matrix with N mod 32 in [1, 16] (N = 196 for 14x14 planes: 224 columns computed for 196 with
 * the full kernel, 208 with this one). */
#define STORE_ROW16(i, v0)                                                \
  do {                                                                    \
    float *row_ = c + (i) * ldc;                                          \
    __m512 x0_ = (v0);                                                    \
    if (accumulate) x0_ = _mm512_add_ps(x0_, _mm512_maskz_loadu_ps(m0, row_)); \
    if (ep) {                                                             \
      x0_ = _mm512_add_ps(x0_, row_bias ? _mm512_set1_ps(row_bias[i]) : cb0); \
      if (clamp) {                                                        \
        x0_ = _mm512_max_ps(zero, x0_); /* x second: kept when NaN */     \
        if (clamp == 2) x0_ = _mm512_min_ps(hi, x0_);                     \
      }                                                                   \
    }                                                                     \
    _mm512_mask_storeu_ps(row_, m0, x0_);                                 \
  } while (0)

void mace_f32_gemm_14x16__avx512(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                 const mace_gemm_tile_ep *ep) {
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0;
  __m512 c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0;
  for (int64_t k = 0; k < kc; ++k) {
    _mm_prefetch((const char *)(a + MR * 64), _MM_HINT_T0);
    _mm_prefetch((const char *)(b + NR * 32), _MM_HINT_T0);
    const __m512 b0 = _mm512_loadu_ps(b);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), b0, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), b0, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), b0, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), b0, c3);
    c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), b0, c4);
    c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), b0, c5);
    c6 = _mm512_fmadd_ps(_mm512_set1_ps(a[6]), b0, c6);
    c7 = _mm512_fmadd_ps(_mm512_set1_ps(a[7]), b0, c7);
    c8 = _mm512_fmadd_ps(_mm512_set1_ps(a[8]), b0, c8);
    c9 = _mm512_fmadd_ps(_mm512_set1_ps(a[9]), b0, c9);
    c10 = _mm512_fmadd_ps(_mm512_set1_ps(a[10]), b0, c10);
    c11 = _mm512_fmadd_ps(_mm512_set1_ps(a[11]), b0, c11);
    c12 = _mm512_fmadd_ps(_mm512_set1_ps(a[12]), b0, c12);
    c13 = _mm512_fmadd_ps(_mm512_set1_ps(a[13]), b0, c13);
    a += MR;
    b += NR;
  }
  const int64_t n0 = nr < 16 ? nr : 16;
  const __mmask16 m0 = (__mmask16)((1u << n0) - 1u);
  const float *row_bias = ep && ep->bias && ep->bias_per_row ? ep->bias : NULL;
  const __m512 zero = _mm512_setzero_ps(), hi = _mm512_set1_ps(ep ? ep->hi : 0.0f);
  const int clamp = ep ? ep->clamp : 0; /* a local: c's stores could alias *ep */
  const __m512 cb0 = ep && ep->bias && !ep->bias_per_row ? _mm512_maskz_loadu_ps(m0, ep->bias)
                                                         : zero;
  if (mr > 0) STORE_ROW16(0, c0);
  if (mr > 1) STORE_ROW16(1, c1);
  if (mr > 2) STORE_ROW16(2, c2);
  if (mr > 3) STORE_ROW16(3, c3);
  if (mr > 4) STORE_ROW16(4, c4);
  if (mr > 5) STORE_ROW16(5, c5);
  if (mr > 6) STORE_ROW16(6, c6);
  if (mr > 7) STORE_ROW16(7, c7);
  if (mr > 8) STORE_ROW16(8, c8);
  if (mr > 9) STORE_ROW16(9, c9);
  if (mr > 10) STORE_ROW16(10, c10);
  if (mr > 11) STORE_ROW16(11, c11);
  if (mr > 12) STORE_ROW16(12, c12);
  if (mr > 13) STORE_ROW16(13, c13);
}

/* Columns [0, kl) of `rows` rows one masked gather a column: the tail of the transposing
 * pack below. */
static void pack_cols_gather(int64_t kl, const float *src, int64_t src_rs, int64_t rows,
                             float *dst) {
  const __m512i idx = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32((int)src_rs));
  const __mmask16 live = (__mmask16)((1u << rows) - 1u), panel = (__mmask16)((1u << MR) - 1u);
  for (int64_t kk = 0; kk < kl; ++kk, dst += MR)
    _mm512_mask_storeu_ps(dst, panel,
                          _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, idx, src + kk, 4));
}

/* 16 columns at a time: each row's 16 floats loaded whole (rows past `rows` are zeros) and the
 * 16 x 16 block transposed in registers, then one masked store of MR floats per column. A
 * gather per column cost several times as much (a 16-lane gather issues a load per lane), a
 * visible share of a small MatMul, whose A is packed on every run (benchmarks/RESULTS.md,
 * transformers). */
void mace_f32_gemm_pack_cols_14__avx512(int64_t kl, const float *src, int64_t src_rs,
                                        int64_t rows, float *dst) {
  const __mmask16 panel = (__mmask16)((1u << MR) - 1u);
  int64_t kk = 0;
  for (; kk + 16 <= kl; kk += 16, dst += 16 * MR) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_loadu_ps(src + i * src_rs + kk) : _mm512_setzero_ps();
    for (int i = 0; i < 8; ++i) { /* pairs of rows interleaved */
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int q = 0; q < 4; ++q) { /* r[4q + j]: in 128-bit lane L, column 4L + j, rows 4q.. */
      const __m512d a = _mm512_castps_pd(t[4 * q]), b = _mm512_castps_pd(t[4 * q + 1]);
      const __m512d c = _mm512_castps_pd(t[4 * q + 2]), d = _mm512_castps_pd(t[4 * q + 3]);
      r[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      r[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      r[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      r[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int j = 0; j < 4; ++j) { /* 128-bit lanes regrouped: rows 0-7 / 8-15, lanes 0,2 / 1,3 */
      t[4 * j + 0] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
      t[4 * j + 1] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
      t[4 * j + 2] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
      t[4 * j + 3] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; ++j) { /* column 4L + j: all 16 rows */
      _mm512_mask_storeu_ps(dst + (0 + j) * MR, panel,
                            _mm512_shuffle_f32x4(t[4 * j], t[4 * j + 2], 0x88));
      _mm512_mask_storeu_ps(dst + (4 + j) * MR, panel,
                            _mm512_shuffle_f32x4(t[4 * j + 1], t[4 * j + 3], 0x88));
      _mm512_mask_storeu_ps(dst + (8 + j) * MR, panel,
                            _mm512_shuffle_f32x4(t[4 * j], t[4 * j + 2], 0xdd));
      _mm512_mask_storeu_ps(dst + (12 + j) * MR, panel,
                            _mm512_shuffle_f32x4(t[4 * j + 1], t[4 * j + 3], 0xdd));
    }
  }
  if (kk < kl) pack_cols_gather(kl - kk, src + kk, src_rs, rows, dst);
}

void mace_f32_gemm_pack_rows_32__avx512(int64_t kl, const float *src, int64_t src_rs,
                                        float *dst) {
  for (int64_t kk = 0; kk < kl; ++kk, src += src_rs, dst += 32) {
    _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
    _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(src + 16));
  }
}
