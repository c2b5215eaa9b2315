/* AVX-512 VNNI int8 depthwise convolution of a plane (kernels/cpu/qdwconv.h): vpdpbusd over
 * four horizontal taps at a time, bit-identical to the reference. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/qdwconv.h"
#include "kernels/cpu/ref/requant.h"
#include "kernels/cpu/ukernels.h"
#include "kernels/cpu/x86/requant_avx512.h"

/*
 * The plane is copied once into a buffer padded with x's zero point (u8: an i8 plane is flipped
 * with ^ 0x80 and its zero point raised by 128, as the int8 GEMM's packer does), so that every
 * window lies inside it; a padding tap then adds w * zp, which bias_adj = bias - zp * sum(w)
 * takes back: the same int32 sum as the reference's (whose padding taps add nothing), modulo
 * 2^32 like it. vpdpbusd multiplies four u8 by four i8 and adds the four products to an int32
 * lane exactly (no saturation), so the four taps kx = 4g .. 4g + 3 of a filter row (weights past
 * k_w are 0) are one instruction: the dword at byte b of the row holds the taps of the output
 * whose window starts at b. A 64-byte load at b gives the outputs at b, b + 4, ..., b + 60; four
 * loads at b .. b + 3 (stride 1) or two at b, b + 2 (stride 2) give every output of a run, in
 * lanes interleaved by 4 (2).
 *
 * Both strides run flat: output (oy, ox) is flat output f = oy * opw + ox of a grid opw wide,
 * and its tap (ky, kx) is at byte s * f + off(ky) + kx of the buffer. Stride 1: the buffer is
 * the padded plane with rows pw = out_w + k_w - 1 bytes apart, opw = pw, off(ky) = ky * pw.
 * Stride 2: the padded rows are split by parity into two phase planes (padded row r is row r / 2
 * of phase r % 2), rows pw bytes apart, pw even, opw = pw / 2, off(ky) = phase (ky % 2)'s start
 * + (ky / 2) * pw: then 2 * f = oy * pw + 2 * ox. So one run covers several short rows (7x7 and
 * 14x14 planes) and only the opw - out_w outputs of each grid row past out_w are computed and
 * dropped. Each run's outputs are requantized in registers (kernels/cpu/x86/requant_avx512.h),
 * packed to bytes and put in order (vpackssdw, vpackuswb / vpacksswb, then vpshufb within the
 * 128-bit lanes), and each grid row's part of the run stored with a byte mask at its place in y.
 * The plane's requant member (another family's output stage) is not used: the formula is the
 * same.
 */

#define QDWV_PAD_BYTES 32768 /* the padded plane, on the stack */
#define QDWV_SLACK 192       /* bytes past a phase plane's rows that runs read or stores touch */
#define QDWV_MAX_K 8         /* taps along a row: two groups of four */

typedef struct qdwv_geom {
  int64_t s;          /* the stride (1 or 2) */
  int64_t pw;         /* a buffer row's bytes */
  int64_t opw;        /* the flat grid's row (outputs) */
  int64_t rows;       /* rows of each phase plane */
  int64_t phase_off;  /* stride 2: phase 1's start in the buffer */
  int64_t groups;     /* groups of four taps along a row */
  int32_t zp;         /* x's zero point on the u8 scale */
  uint8_t flip;       /* 0x80 for an i8 plane */
  int32_t bias_adj;
  int64_t tap[QDWV_MAX_K * 2];  /* [ky][g]: the taps' byte offset (times s: a flat output) */
  __m512i wv[QDWV_MAX_K * 2];   /* [ky][g]: four taps' i8 weights in every dword */
} qdwv_geom;

/* Phase p's rows from the plane (buffer row q is padded row q * s + p), every other byte of
 * the phase plane and its slack the zero point. Rows up to 64 bytes are stored as whole
 * vectors of 16, 32 or 64 bytes in increasing order (each overwriting the start of the next
 * rows, which are stored after it); wider ones with memset and memcpy. */
static void qdwv_fill(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *x,
                      int64_t p, uint8_t *dst) {
  int64_t lo = a->pad_left, hi = a->pad_left + a->in_w;
  if (lo > gm->pw) lo = gm->pw;
  if (hi > gm->pw) hi = gm->pw;
  if (gm->pw <= 64) {
    const __m512i zv = _mm512_set1_epi8((char)gm->zp), fv = _mm512_set1_epi8((char)gm->flip);
    const __mmask64 m = hi > lo ? (((hi - lo) == 64 ? ~(__mmask64)0
                                                    : (((__mmask64)1 << (hi - lo)) - 1))
                                   << lo)
                                : 0;
    /* each row as a vector of 16, 32 or 64 bytes, the narrowest that holds pw */
#define QDWV_FILL_ROWS(W, T, CAST, LOADZ, XOR, BLEND, STORE, MT)                                \
  for (int64_t q = 0; q < gm->rows; ++q) {                                                         \
    const int64_t iy = q * gm->s + p - a->pad_top;                                                 \
    T v = CAST(zv);                                                                                \
    if (iy >= 0 && iy < a->in_h && m) {                                                            \
      /* byte b of the row is s[b] (only bytes in m are read; s may lie before x) */               \
      const void *s = (const void *)((uintptr_t)(x + iy * a->in_w) - (uintptr_t)a->pad_left);      \
      v = BLEND((MT)m, CAST(zv), XOR(LOADZ((MT)m, s), CAST(fv)));                                  \
    }                                                                                              \
    STORE((void *)(dst + q * gm->pw), v);                                                          \
  }                                                                                                \
  last = gm->rows * gm->pw + (W) - gm->pw;
    int64_t last;
    if (gm->pw <= 16) {
      QDWV_FILL_ROWS(16, __m128i, _mm512_castsi512_si128, _mm_maskz_loadu_epi8, _mm_xor_si128,
                     _mm_mask_blend_epi8, _mm_storeu_si128, __mmask16)
    } else if (gm->pw <= 32) {
      QDWV_FILL_ROWS(32, __m256i, _mm512_castsi512_si256, _mm256_maskz_loadu_epi8,
                     _mm256_xor_si256, _mm256_mask_blend_epi8, _mm256_storeu_si256, __mmask32)
    } else {
      QDWV_FILL_ROWS(64, __m512i, , _mm512_maskz_loadu_epi8, _mm512_xor_si512,
                     _mm512_mask_blend_epi8, _mm512_storeu_si512, __mmask64)
    }
#undef QDWV_FILL_ROWS
    for (int64_t b = last; b < gm->rows * gm->pw + QDWV_SLACK; b += 64)
      _mm512_storeu_si512((void *)(dst + b), zv);
    return;
  }
  memset(dst, (uint8_t)gm->zp, (size_t)(gm->rows * gm->pw + QDWV_SLACK));
  for (int64_t q = 0; q < gm->rows; ++q) {
    const int64_t iy = q * gm->s + p - a->pad_top;
    uint8_t *d = dst + q * gm->pw;
    const uint8_t *s;
    if (iy < 0 || iy >= a->in_h || hi <= lo) continue;
    s = x + iy * a->in_w + (lo - a->pad_left);
    if (!gm->flip) {
      memcpy(d + lo, s, (size_t)(hi - lo));
    } else {
      for (int64_t i = 0; i < hi - lo; ++i) d[lo + i] = (uint8_t)(s[i] ^ 0x80);
    }
  }
}

/* Outputs f .. f + n - 1 of the flat grid (bytes 0 .. n - 1 of v), those before count and at a
 * grid column < out_w, stored in y: one masked store per grid row the run touches. */
static inline void qdwv_store(const mace_q8_dwconv_args *a, const qdwv_geom *gm, int64_t count,
                              int64_t f, int64_t n, __m512i v, uint8_t *y) {
  const int64_t lim = count - f < n ? count - f : n;
  int64_t oy = f / gm->opw, start = oy * gm->opw - f; /* v's byte of row oy's column 0 */
  for (; start < lim; start += gm->opw, ++oy) {
    const int64_t lo = start < 0 ? 0 : start;
    const int64_t hi = start + a->out_w < lim ? start + a->out_w : lim;
    if (hi <= lo) continue;
    {
      const __mmask64 m = (hi == 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) &
                          ~(((__mmask64)1 << lo) - 1);
      /* v's byte i to y's byte oy * out_w + i - start (only bytes in m are written) */
      _mm512_mask_storeu_epi8(
          (void *)((uintptr_t)(y + oy * a->out_w) - (uintptr_t)start), m, v);
    }
  }
}

/* Four requantized vectors of int32 (each within the output's byte range) as 64 bytes: within
 * each 128-bit lane, v0's four values, v1's, v2's, v3's. */
static inline __m512i qdwv_pack(__m512i v0, __m512i v1, __m512i v2, __m512i v3, int out_signed) {
  const __m512i w01 = _mm512_packs_epi32(v0, v1), w23 = _mm512_packs_epi32(v2, v3);
  return out_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
}

/* Stride 1: runs of 64 flat outputs. */
static void qdwv_flat1(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *pad,
                       uint8_t *y) {
  const mace_q8_requant_consts rc = mace_q8_requant_consts_make(&a->out);
  /* lane L's byte 4s + q holds output 16L + 4q + s: this puts it at 4q + s */
  const __m512i order = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const int64_t count = a->out_h * gm->opw, nt = a->k_h * gm->groups;
  for (int64_t f = 0; f < count; f += 64) {
    const __m512i b = _mm512_set1_epi32(gm->bias_adj);
    __m512i a0 = b, a1 = b, a2 = b, a3 = b;
    for (int64_t t = 0; t < nt; ++t) {
      const uint8_t *p = pad + f + gm->tap[t];
      const __m512i w = gm->wv[t];
      a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512((const void *)p), w);
      a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512((const void *)(p + 1)), w);
      a2 = _mm512_dpbusd_epi32(a2, _mm512_loadu_si512((const void *)(p + 2)), w);
      a3 = _mm512_dpbusd_epi32(a3, _mm512_loadu_si512((const void *)(p + 3)), w);
    }
    /* a_s[j] is output 4j + s */
    a0 = mace_q8_requant_row__avx512(a0, a->mult, a->shift, &rc);
    a1 = mace_q8_requant_row__avx512(a1, a->mult, a->shift, &rc);
    a2 = mace_q8_requant_row__avx512(a2, a->mult, a->shift, &rc);
    a3 = mace_q8_requant_row__avx512(a3, a->mult, a->shift, &rc);
    qdwv_store(a, gm, count, f, 64,
               _mm512_shuffle_epi8(qdwv_pack(a0, a1, a2, a3, a->out.out_signed), order), y);
  }
}

/* Stride 2: runs of 32 flat outputs. */
static void qdwv_flat2(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *pad,
                       uint8_t *y) {
  const mace_q8_requant_consts rc = mace_q8_requant_consts_make(&a->out);
  /* lane L's bytes q and 4 + q hold outputs 8L + 2q and 8L + 2q + 1 */
  const __m512i order = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15));
  const __m512i lanes = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  const int64_t count = a->out_h * gm->opw, nt = a->k_h * gm->groups;
  for (int64_t f = 0; f < count; f += 32) {
    const __m512i b = _mm512_set1_epi32(gm->bias_adj);
    __m512i a0 = b, a1 = b;
    for (int64_t t = 0; t < nt; ++t) {
      const uint8_t *p = pad + 2 * f + gm->tap[t];
      const __m512i w = gm->wv[t];
      a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512((const void *)p), w);
      a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512((const void *)(p + 2)), w);
    }
    /* a_s[j] is output 2j + s */
    a0 = mace_q8_requant_row__avx512(a0, a->mult, a->shift, &rc);
    a1 = mace_q8_requant_row__avx512(a1, a->mult, a->shift, &rc);
    qdwv_store(a, gm, count, f, 32,
               _mm512_permutexvar_epi64(
                   lanes, _mm512_shuffle_epi8(qdwv_pack(a0, a1, a0, a1, a->out.out_signed),
                                              order)),
               y);
  }
}

void mace_q8_dwconv__avx512vnni(const mace_q8_dwconv_args *a, const uint8_t *x, const int8_t *w,
                                uint8_t *y) {
  uint8_t pad[QDWV_PAD_BYTES + 64]; /* + 64: qdwv_fill's last store past the slack */
  qdwv_geom gm;
  const int64_t s = a->stride_w;
  int32_t wsum = 0;
  const int fits = a->stride_h == s && (s == 1 || s == 2) && a->dilation_h == 1 &&
                   a->dilation_w == 1 && a->k_w <= QDWV_MAX_K && a->k_h <= QDWV_MAX_K &&
                   a->pad_top >= 0 && a->pad_left >= 0;
  int64_t plane = 0;
  if (fits) {
    gm.s = s;
    if (s == 1) {
      gm.pw = a->out_w + a->k_w - 1;
      gm.opw = gm.pw;
      gm.rows = a->out_h + a->k_h - 1;
    } else {
      gm.pw = (2 * (a->out_w - 1) + a->k_w + 1) / 2 * 2;
      gm.opw = gm.pw / 2;
      gm.rows = a->out_h + (a->k_h + 1) / 2;
    }
    plane = gm.rows * gm.pw + QDWV_SLACK;
  }
  if (!fits || s * plane > QDWV_PAD_BYTES) {
    mace_q8_dwconv__avx512(a, x, w, y);
    return;
  }
  gm.phase_off = plane;
  gm.groups = (a->k_w + 3) / 4;
  gm.flip = a->x_signed ? 0x80 : 0;
  gm.zp = a->x_signed ? a->x_zp + 128 : a->x_zp;
  /* the copy first: the weights' set-up below gives its stores time to reach the cache before
   * the runs load across several of them (loads that span stores still in flight wait) */
  for (int64_t p = 0; p < s; ++p) qdwv_fill(a, &gm, x, p, pad + p * gm.phase_off);
  for (int64_t ky = 0; ky < a->k_h; ++ky)
    for (int64_t g = 0; g < gm.groups; ++g) {
      int8_t q[4];
      int32_t v;
      for (int u = 0; u < 4; ++u) {
        const int64_t kx = 4 * g + u;
        q[u] = kx < a->k_w ? w[ky * a->k_w + kx] : 0;
        wsum += q[u];
      }
      memcpy(&v, q, sizeof(v));
      gm.wv[ky * gm.groups + g] = _mm512_set1_epi32(v);
      gm.tap[ky * gm.groups + g] =
          s == 1 ? ky * gm.pw + 4 * g : (ky % 2) * gm.phase_off + (ky / 2) * gm.pw + 4 * g;
    }
  gm.bias_adj = (int32_t)((uint32_t)a->bias - (uint32_t)gm.zp * (uint32_t)wsum);
  if (s == 1)
    qdwv_flat1(a, &gm, pad, y);
  else
    qdwv_flat2(a, &gm, pad, y);
}
