/* Dispatched int8 GEMM (not an op): family table, packing, zero-point folding, threading. */
#include "runtime/cpu/qgemm_dispatch.h"

#include <pthread.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "kernels/cpu/ukernels.h"

/* A thread's share should hold at least this many multiply-adds. */
#define QGEMM_MIN_MACS_PER_JOB 65536
#define QGEMM_L2_BYTES (512 * 1024) /* a core's share of L2 the packed operands may fill */
#define QGEMM_TILE_MAX (64 * 64) /* MR * NR of any family: the accumulator tile is on the stack */

#if MACE_ENABLE_AVX512
static int has_vnni(void) { return mace_cpu_features_get()->avx512vnni; }
#endif
#if MACE_ENABLE_NEON
static int has_dotprod(void) { return mace_cpu_features_get()->dotprod; }
#endif

/* A manifest ISA's level and extra feature (kernels/cpu/manifest.inc, MACE_QGEMM_FAMILY). */
#define QGEMM_ISA_avx512vnni MACE_ISA_AVX512
#define QGEMM_ISA_avx2 MACE_ISA_AVX2
#define QGEMM_ISA_neondot MACE_ISA_NEON
#define QGEMM_ISA_neon MACE_ISA_NEON
#define QGEMM_SUPPORTED_avx512vnni has_vnni
#define QGEMM_SUPPORTED_avx2 NULL
#define QGEMM_SUPPORTED_neondot has_dotprod
#define QGEMM_SUPPORTED_neon NULL
#define QGEMM_OUT_avx512vnni mace_qgemm_16x16_out__avx512vnni
#define QGEMM_OUT_avx2 NULL
#define QGEMM_OUT_neondot NULL
#define QGEMM_OUT_neon NULL

/* Best first (the manifest's order, for the ISAs this build compiles); the reference family
 * last (always there). */
static const mace_qgemm_family g_all[] = {
#define MACE_QGEMM_FAMILY(isa_, unit, function, mr_, nr_, ku_, b_signed_, requant_)         \
  MACE_IF_##isa_({.name = #mr_ "x" #nr_ "__" #isa_, .isa = QGEMM_ISA_##isa_,                \
                  .supported = QGEMM_SUPPORTED_##isa_, .mr = mr_, .nr = nr_, .ku = ku_,     \
                  .b_signed = b_signed_, .ukernel = MACE_UKERNEL_NAME(function, isa_),      \
                  .requant = requant_, .ukernel_out = QGEMM_OUT_##isa_}, )
#include "kernels/cpu/manifest.inc"
    {.name = "4x8__ref", .isa = MACE_ISA_REF, .mr = MACE_QGEMM_REF_MR, .nr = MACE_QGEMM_REF_NR,
     .ku = MACE_QGEMM_REF_KU, .b_signed = 0, .ukernel = mace_qgemm_4x8__ref,
     .requant = mace_qgemm_requant__ref},
};
#define QGEMM_N_ALL ((int)(sizeof(g_all) / sizeof(g_all[0])))

static const mace_qgemm_family *g_supported[QGEMM_N_ALL];
static int g_n_supported;
static const mace_qgemm_family *g_active;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int isa_allows(mace_cpu_isa active, mace_cpu_isa isa) {
  if (isa == MACE_ISA_REF || isa == active) return 1;
  return active != MACE_ISA_REF && isa != MACE_ISA_NEON && active != MACE_ISA_NEON &&
         isa < active;
}

static void choose_once(void) {
  const mace_cpu_isa active = mace_cpu_isa_active();
  for (int i = 0; i < QGEMM_N_ALL; ++i) {
    const mace_qgemm_family *f = &g_all[i];
    if (!mace_cpu_isa_supported(f->isa) || (f->supported && !f->supported())) continue;
    g_supported[g_n_supported++] = f;
    if (!g_active && isa_allows(active, f->isa)) g_active = f;
  }
}

int mace_qgemm_families(const mace_qgemm_family *const **list) {
  pthread_once(&g_once, choose_once);
  *list = g_supported;
  return g_n_supported;
}

const mace_qgemm_family *mace_qgemm_family_active(void) {
  pthread_once(&g_once, choose_once);
  return g_active;
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

size_t mace_qgemm_packed_a_bytes(const mace_qgemm_family *f, int64_t m, int64_t k) {
  return (size_t)(round_up(m, f->mr) * round_up(k, f->ku));
}

void mace_qgemm_pack_a(const mace_qgemm_family *f, int64_t m, int64_t k, const int8_t *a,
                       int64_t a_rs, int64_t a_cs, int8_t *dst, int32_t *row_sums) {
  const int64_t mr = f->mr, ku = f->ku, kp = round_up(k, ku);
  for (int64_t p = 0; p < round_up(m, mr) / mr; ++p) {
    int8_t *d = dst + p * mr * kp;
    for (int64_t i = 0; i < mr; ++i) {
      const int64_t row = p * mr + i;
      int32_t sum = 0;
      for (int64_t kk = 0; kk < kp; ++kk) {
        const int8_t v = (row < m && kk < k) ? a[row * a_rs + kk * a_cs] : 0;
        d[(kk / ku) * mr * ku + i * ku + kk % ku] = v;
        sum += v;
      }
      if (row < m && row_sums) row_sums[row] = sum;
    }
  }
}

/* One k-group of a panel whose KU rows of B are contiguous (b_cs 1): rows[u] + j is B[k0 + u,
 * col0 + j]; writes d[j * ku + u] = rows[u][j] ^ flip for j < cols. Baseline SIMD of the
 * architecture (SSE2, NEON) interleaves 16 (NEON: and 8) columns at a time; byte moves and
 * xors only, so exact. */
static void interleave_rows(const uint8_t *const *rows, int64_t ku, int64_t cols, uint8_t flip,
                            uint8_t *d) {
  int64_t j = 0;
#if defined(__SSE2__)
  const __m128i vf = _mm_set1_epi8((char)flip);
  if (ku == 4) {
    for (; j + 16 <= cols; j += 16) {
      const __m128i r0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[0] + j)), vf);
      const __m128i r1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[1] + j)), vf);
      const __m128i r2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[2] + j)), vf);
      const __m128i r3 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[3] + j)), vf);
      const __m128i l01 = _mm_unpacklo_epi8(r0, r1), h01 = _mm_unpackhi_epi8(r0, r1);
      const __m128i l23 = _mm_unpacklo_epi8(r2, r3), h23 = _mm_unpackhi_epi8(r2, r3);
      _mm_storeu_si128((__m128i *)(d + j * 4), _mm_unpacklo_epi16(l01, l23));
      _mm_storeu_si128((__m128i *)(d + j * 4 + 16), _mm_unpackhi_epi16(l01, l23));
      _mm_storeu_si128((__m128i *)(d + j * 4 + 32), _mm_unpacklo_epi16(h01, h23));
      _mm_storeu_si128((__m128i *)(d + j * 4 + 48), _mm_unpackhi_epi16(h01, h23));
    }
  } else if (ku == 2) {
    for (; j + 16 <= cols; j += 16) {
      const __m128i r0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[0] + j)), vf);
      const __m128i r1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[1] + j)), vf);
      _mm_storeu_si128((__m128i *)(d + j * 2), _mm_unpacklo_epi8(r0, r1));
      _mm_storeu_si128((__m128i *)(d + j * 2 + 16), _mm_unpackhi_epi8(r0, r1));
    }
  }
#elif defined(__ARM_NEON)
  const uint8x16_t vf = vdupq_n_u8(flip);
  if (ku == 4) {
    for (; j + 16 <= cols; j += 16) {
      uint8x16x4_t v;
      v.val[0] = veorq_u8(vld1q_u8(rows[0] + j), vf);
      v.val[1] = veorq_u8(vld1q_u8(rows[1] + j), vf);
      v.val[2] = veorq_u8(vld1q_u8(rows[2] + j), vf);
      v.val[3] = veorq_u8(vld1q_u8(rows[3] + j), vf);
      vst4q_u8(d + j * 4, v);
    }
    for (; j + 8 <= cols; j += 8) {
      uint8x8x4_t v;
      v.val[0] = veor_u8(vld1_u8(rows[0] + j), vget_low_u8(vf));
      v.val[1] = veor_u8(vld1_u8(rows[1] + j), vget_low_u8(vf));
      v.val[2] = veor_u8(vld1_u8(rows[2] + j), vget_low_u8(vf));
      v.val[3] = veor_u8(vld1_u8(rows[3] + j), vget_low_u8(vf));
      vst4_u8(d + j * 4, v);
    }
  } else if (ku == 2) {
    for (; j + 16 <= cols; j += 16) {
      uint8x16x2_t v;
      v.val[0] = veorq_u8(vld1q_u8(rows[0] + j), vf);
      v.val[1] = veorq_u8(vld1q_u8(rows[1] + j), vf);
      vst2q_u8(d + j * 2, v);
    }
    for (; j + 8 <= cols; j += 8) {
      uint8x8x2_t v;
      v.val[0] = veor_u8(vld1_u8(rows[0] + j), vget_low_u8(vf));
      v.val[1] = veor_u8(vld1_u8(rows[1] + j), vget_low_u8(vf));
      vst2_u8(d + j * 2, v);
    }
  }
#endif
  for (; j < cols; ++j)
    for (int64_t u = 0; u < ku; ++u) d[j * ku + u] = (uint8_t)(rows[u][j] ^ flip);
}

/* One k-group of a whole 16-column panel at KU 4 (the VNNI and sdot families): rows r0..r3
 * (16 bytes each) interleaved into d[j * 4 + u], flipped; interleave_rows' SSE2 body, inline. */
#if defined(__SSE2__)
static inline void interleave4x16(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                  const uint8_t *r3, __m128i vf, uint8_t *d) {
  const __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r0), vf);
  const __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r1), vf);
  const __m128i c = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r2), vf);
  const __m128i e = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r3), vf);
  const __m128i l01 = _mm_unpacklo_epi8(a, b), h01 = _mm_unpackhi_epi8(a, b);
  const __m128i l23 = _mm_unpacklo_epi8(c, e), h23 = _mm_unpackhi_epi8(c, e);
  _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(l01, l23));
  _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(l01, l23));
  _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(h01, h23));
  _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(h01, h23));
}
#endif

/* B's panels [p_begin, p_end) packed at dst (panel p at dst + p * NR * kp), each element flipped
 * with ^ 0x80 where the stored signedness is not the family's; columns past N and k past K are
 * the zero point (a K pad row meets A's zero pad; a column pad is never stored). Row-contiguous
 * B (b_cs 1, Conv2D) interleaves KU rows at a time; column-contiguous B (b_rs 1, MatMul) copies
 * each column's KU adjacent k; anything else, and K's last partial group, goes element by
 * element. */
#define QGEMM_MAX_KU 16
#define QGEMM_MAX_NR 64
static void pack_b_conv(const mace_qgemm_args *g, uint8_t *dst, int64_t p_begin, int64_t p_end);
static int64_t conv_flat_pitch(const mace_qgemm_conv *cv);
static void pack_b_flat(const mace_qgemm_args *g, const int64_t *koff, int64_t ncols,
                        uint8_t *dst, int64_t p_begin, int64_t p_end);
/* koff: a flat convolution's row offsets (flat_offsets), else unused. */
static void pack_b(const mace_qgemm_args *g, const int64_t *koff, uint8_t *dst, int64_t p_begin,
                   int64_t p_end) {
  const mace_qgemm_family *f = g->f;
  const int64_t nr = f->nr, ku = f->ku, kp = round_up(g->k, ku);
  const uint8_t flip = (g->b_signed != f->b_signed) ? 0x80 : 0;
  const uint8_t pad = (uint8_t)((uint8_t)g->b_zp ^ flip);
  const uint8_t *b = (const uint8_t *)g->b;
  if (g->conv) {
    if (conv_flat_pitch(g->conv))
      pack_b_flat(g, koff, mace_qgemm_conv_columns(g->conv), dst, p_begin, p_end);
    else
      pack_b_conv(g, dst, p_begin, p_end);
    return;
  }
  for (int64_t p = p_begin; p < p_end; ++p) {
    const int64_t col0 = p * nr, cols = g->n - col0 < nr ? g->n - col0 : nr;
    int64_t k0 = 0;
#if defined(__SSE2__)
    if (ku == 4 && cols == 16 && nr == 16 && g->b_cs == 1) { /* a whole VNNI panel: inline */
      const __m128i vf = _mm_set1_epi8((char)flip);
      const uint8_t *r = b + col0;
      for (; k0 + 4 <= g->k; k0 += 4, r += 4 * g->b_rs)
        interleave4x16(r, r + g->b_rs, r + 2 * g->b_rs, r + 3 * g->b_rs, vf,
                       dst + p * nr * kp + k0 * nr);
    }
#endif
    for (; k0 < kp; k0 += ku) {
      uint8_t *d = dst + p * nr * kp + k0 * nr;
      const int full_k = k0 + ku <= g->k;
      if (full_k && g->b_cs == 1 && ku <= QGEMM_MAX_KU) {
        const uint8_t *rows[QGEMM_MAX_KU];
        for (int64_t u = 0; u < ku; ++u) rows[u] = b + (k0 + u) * g->b_rs + col0;
        interleave_rows(rows, ku, cols, flip, d);
      } else if (full_k && g->b_rs == 1 && ku == 4) {
        const uint32_t f4 = flip * 0x01010101u;
        for (int64_t j = 0; j < cols; ++j) {
          uint32_t v;
          memcpy(&v, b + (col0 + j) * g->b_cs + k0, sizeof(v));
          v ^= f4;
          memcpy(d + j * 4, &v, sizeof(v));
        }
      } else if (full_k && g->b_rs == 1 && ku == 2) {
        const uint16_t f2 = (uint16_t)(flip * 0x0101u);
        for (int64_t j = 0; j < cols; ++j) {
          uint16_t v;
          memcpy(&v, b + (col0 + j) * g->b_cs + k0, sizeof(v));
          v ^= f2;
          memcpy(d + j * 2, &v, sizeof(v));
        }
      } else {
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t u = 0; u < ku; ++u)
            d[j * ku + u] = k0 + u < g->k
                                ? (uint8_t)(b[(k0 + u) * g->b_rs + (col0 + j) * g->b_cs] ^ flip)
                                : pad;
      }
      if (cols < nr) memset(d + cols * ku, pad, (size_t)((nr - cols) * ku));
    }
  }
}

/* One row of a convolution's virtual B (mace_qgemm_conv), input channel c and filter tap (ky,
 * kx), over the panel's columns: iy0[j], ix0[j] are column j's window origin (oy * sh - pt,
 * ox * sw - pl). When the panel lies in one output row (run) and the row's taps are inside the
 * plane: a pointer straight into x at stride 1, a strided copy into tmp at stride 2; else the
 * row gathered into tmp with the zero point zp outside the plane. */
static const uint8_t *conv_row(const mace_qgemm_conv *cv, int64_t c, int64_t ky, int64_t kx,
                               const int32_t *iy0, const int32_t *ix0, const int32_t *off0,
                               int64_t cols, int run, uint8_t zp, uint8_t *tmp) {
  const uint8_t *plane = (const uint8_t *)cv->x + c * cv->h * cv->w;
  const int32_t dy = (int32_t)(ky * cv->dh), dx = (int32_t)(kx * cv->dw);
  const uint32_t h = (uint32_t)cv->h, w = (uint32_t)cv->w;
  if (off0) { /* every window inside the planes: a plain gather */
    const uint8_t *base = plane + dy * cv->w + dx;
    if (run && cv->sw == 1) return base + off0[0];
    for (int64_t j = 0; j < cols; ++j) tmp[j] = base[off0[j]];
    return tmp;
  }
  if (run) {
    const int32_t iy = iy0[0] + dy, ix = ix0[0] + dx;
    if ((uint32_t)iy < h && ix >= 0 && ix + (cols - 1) * cv->sw < (int64_t)w) {
      const uint8_t *src = plane + (int64_t)iy * cv->w + ix;
      if (cv->sw == 1) return src;
      if (cv->sw == 2) { /* a constant stride the vectorizer deinterleaves */
        for (int64_t j = 0; j < cols; ++j) tmp[j] = src[2 * j];
        return tmp;
      }
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    const int32_t iy = iy0[j] + dy, ix = ix0[j] + dx;
    tmp[j] = ((uint32_t)iy < h && (uint32_t)ix < w) ? plane[(int64_t)iy * cv->w + ix] : zp;
  }
  return tmp;
}

/* No window reaches past the planes (no padding, or the op's zero-point-bordered copy). */
static int conv_inside(const mace_qgemm_conv *cv) {
  return cv->pt == 0 && cv->pl == 0 && (cv->oh - 1) * cv->sh + (cv->kh - 1) * cv->dh < cv->h &&
         (cv->ow - 1) * cv->sw + (cv->kw - 1) * cv->dw < cv->w;
}

/* The row pitch of a flat convolution (mace_qgemm_conv_columns), else 0. */
static int64_t conv_flat_pitch(const mace_qgemm_conv *cv) {
  if (cv->phased) return cv->w;
  if (cv->sh != 1 || cv->sw != 1 || !conv_inside(cv)) return 0;
  if ((cv->oh - 1) * cv->w + cv->ow > 2 * cv->oh * cv->ow) return 0;
  return cv->w;
}

int64_t mace_qgemm_conv_columns(const mace_qgemm_conv *cv) {
  const int64_t pitch = conv_flat_pitch(cv);
  return pitch ? (cv->oh - 1) * pitch + cv->ow : cv->oh * cv->ow;
}

/* Row k = (c, ky, kx) of a flat convolution's B is x's bytes from koff[k] + its column on:
 * c's plane (phased: its phase plane) moved by ky * dh / sh rows and kx * dw / sw columns (sh
 * = sw = 1 unphased). Computed once per GEMM, so that packing does no division. */
static void flat_offsets(const mace_qgemm_conv *cv, int64_t k, int64_t *koff) {
  const int64_t sh = cv->phased ? cv->sh : 1, sw = cv->phased ? cv->sw : 1;
  const int64_t plane = cv->h * cv->w;
  int64_t c = 0, ky = 0, kx = 0;
  for (int64_t r = 0; r < k; ++r) {
    const int64_t ry = ky * cv->dh, rx = kx * cv->dw;
    koff[r] = ((c * sh + ry % sh) * sw + rx % sw) * plane + ry / sh * cv->w + rx / sw;
    if (++kx == cv->kw) {
      kx = 0;
      if (++ky == cv->kh) {
        ky = 0;
        ++c;
      }
    }
  }
}

/* pack_b for a flat convolution: row k of the panel is x + koff[k] + the panel's first column
 * on (flat_offsets). */
static void pack_b_flat(const mace_qgemm_args *g, const int64_t *koff, int64_t ncols,
                        uint8_t *dst, int64_t p_begin, int64_t p_end) {
  const mace_qgemm_family *f = g->f;
  const int64_t nr = f->nr, ku = f->ku, kp = round_up(g->k, ku);
  const uint8_t flip = (g->b_signed != f->b_signed) ? 0x80 : 0;
  const uint8_t zp = (uint8_t)g->b_zp, pad = (uint8_t)(zp ^ flip);
  uint8_t tmp[QGEMM_MAX_KU][QGEMM_MAX_NR];
  for (int64_t p = p_begin; p < p_end; ++p) {
    const int64_t col0 = p * nr, cols = ncols - col0 < nr ? ncols - col0 : nr;
    const uint8_t *x = (const uint8_t *)g->conv->x + col0;
    uint8_t *d = dst + p * nr * kp;
    int64_t k0 = 0;
#if defined(__SSE2__)
    if (ku == 4 && cols == 16 && nr == 16) { /* a whole panel of the VNNI family: inline */
      const __m128i vf = _mm_set1_epi8((char)flip);
      for (; k0 + 4 <= g->k; k0 += 4, d += 64)
        interleave4x16(x + koff[k0], x + koff[k0 + 1], x + koff[k0 + 2], x + koff[k0 + 3], vf, d);
    }
#endif
    for (; k0 + ku <= g->k; k0 += ku, d += ku * nr) {
      const uint8_t *rows[QGEMM_MAX_KU];
      for (int64_t u = 0; u < ku; ++u) rows[u] = x + koff[k0 + u];
      interleave_rows(rows, ku, cols, flip, d);
      if (cols < nr) memset(d + cols * ku, pad, (size_t)((nr - cols) * ku));
    }
    if (k0 < kp) { /* K's last partial group: rows past K the zero point */
      const uint8_t *rows[QGEMM_MAX_KU];
      for (int64_t u = 0; u < ku; ++u) {
        if (k0 + u < g->k) {
          rows[u] = x + koff[k0 + u];
        } else {
          memset(tmp[u], zp, (size_t)cols);
          rows[u] = tmp[u];
        }
      }
      interleave_rows(rows, ku, cols, flip, d);
      if (cols < nr) memset(d + cols * ku, pad, (size_t)((nr - cols) * ku));
    }
  }
}

/* pack_b for a convolution's virtual B: KU rows at a time through interleave_rows, rows past K
 * the zero point. */
static void pack_b_conv(const mace_qgemm_args *g, uint8_t *dst, int64_t p_begin, int64_t p_end) {
  const mace_qgemm_family *f = g->f;
  const mace_qgemm_conv *cv = g->conv;
  const int64_t nr = f->nr, ku = f->ku, kp = round_up(g->k, ku);
  const uint8_t flip = (g->b_signed != f->b_signed) ? 0x80 : 0;
  const uint8_t zp = (uint8_t)g->b_zp, pad = (uint8_t)(zp ^ flip);
  uint8_t tmp[QGEMM_MAX_KU][QGEMM_MAX_NR];
  const int inside = conv_inside(cv);
  for (int64_t p = p_begin; p < p_end; ++p) {
    const int64_t col0 = p * nr, cols = g->n - col0 < nr ? g->n - col0 : nr;
    const int run = col0 % cv->ow + cols <= cv->ow;
    int32_t iy0[QGEMM_MAX_NR], ix0[QGEMM_MAX_NR], off0[QGEMM_MAX_NR];
    int64_t c = 0, ky = 0, kx = 0; /* k's position in the filter, stepped along with k */
    for (int64_t j = 0, oy = col0 / cv->ow, ox = col0 % cv->ow; j < cols; ++j) {
      iy0[j] = (int32_t)(oy * cv->sh - cv->pt);
      ix0[j] = (int32_t)(ox * cv->sw - cv->pl);
      off0[j] = (int32_t)(iy0[j] * cv->w + ix0[j]);
      if (++ox == cv->ow) {
        ox = 0;
        ++oy;
      }
    }
    for (int64_t k0 = 0; k0 < kp; k0 += ku) {
      uint8_t *d = dst + p * nr * kp + k0 * nr;
      const uint8_t *rows[QGEMM_MAX_KU];
      for (int64_t u = 0; u < ku; ++u) {
        if (k0 + u >= g->k) {
          memset(tmp[u], zp, (size_t)cols);
          rows[u] = tmp[u];
          continue;
        }
        rows[u] = conv_row(cv, c, ky, kx, iy0, ix0, inside ? off0 : NULL, cols, run, zp, tmp[u]);
        if (++kx == cv->kw) {
          kx = 0;
          if (++ky == cv->kh) {
            ky = 0;
            ++c;
          }
        }
      }
      interleave_rows(rows, ku, cols, flip, d);
      if (cols < nr) memset(d + cols * ku, pad, (size_t)((nr - cols) * ku));
    }
  }
}

size_t mace_qgemm_scratch_bytes(const mace_qgemm_family *f, int64_t m, int64_t n, int64_t k) {
  const size_t packed_b = (size_t)(round_up(n, f->nr) * round_up(k, f->ku));
  const size_t bias = (size_t)m * sizeof(int32_t), koff = (size_t)k * sizeof(int64_t);
  return (size_t)round_up((int64_t)packed_b, 64) + (size_t)round_up((int64_t)bias, 64) +
         (size_t)round_up((int64_t)koff, 64);
}

typedef struct qgemm_job {
  const mace_qgemm_args *g;
  uint8_t *packed_b;
  const int32_t *bias; /* bias - b_zp_internal * row_sums */
  int split_m;         /* jobs are A panels (B packed already), else B panels (packed here) */
  int64_t ncols;       /* the GEMM's columns: g->n, or a flat convolution's (oh - 1) * w + ow */
  int64_t pitch, ow;   /* a flat convolution's row pitch (w) and output width; pitch 0: not flat */
  const int64_t *koff; /* a flat convolution's row offsets (flat_offsets) */
} qgemm_job;

/* C's column of the GEMM's column jf (a flat convolution's, clamped to its row's end). */
static int64_t real_col(const qgemm_job *j, int64_t jf) {
  if (!j->pitch) return jf;
  return jf / j->pitch * j->ow + (jf % j->pitch < j->ow ? jf % j->pitch : j->ow);
}

/* The runs of C's columns (kernels/cpu/qgemm.h) of the GEMM's columns [j0, j0 + cols). */
static void tile_runs(const qgemm_job *j, int64_t j0, int64_t cols, mace_qgemm_runs *r) {
  r->n = 0;
  if (!j->pitch) {
    r->n = 1;
    r->j0[0] = 0;
    r->len[0] = (int32_t)cols;
    r->col[0] = j0;
    return;
  }
  for (int64_t jf = j0; jf < j0 + cols;) {
    const int64_t ox = jf % j->pitch;
    if (ox >= j->ow) { /* a window over the row's end */
      jf += j->pitch - ox;
      continue;
    }
    {
      int64_t len = j->ow - ox;
      if (len > j0 + cols - jf) len = j0 + cols - jf;
      r->j0[r->n] = (int32_t)(jf - j0);
      r->len[r->n] = (int32_t)len;
      r->col[r->n] = jf / j->pitch * j->ow + ox;
      ++r->n;
      jf += len;
    }
  }
}

/* Tile (A panel pa, B panel pb) into C. */
static void compute_tile(const qgemm_job *j, int64_t pa, int64_t pb) {
  const mace_qgemm_args *g = j->g;
  const mace_qgemm_family *f = g->f;
  const int64_t mr = f->mr, nr = f->nr, kp = round_up(g->k, f->ku);
  const int64_t i0 = pa * mr, j0 = pb * nr;
  const int64_t rows = g->m - i0 < mr ? g->m - i0 : mr;
  const int64_t cols = j->ncols - j0 < nr ? j->ncols - j0 : nr;
  int32_t acc[QGEMM_TILE_MAX];
  mace_qgemm_runs runs;
  tile_runs(j, j0, cols, &runs);
  if (runs.n == 0) return; /* only windows over rows' ends */
  if (f->ukernel_out && g->c_cs == 1 && !g->no_fused) {
    f->ukernel_out(kp, g->a_packed + pa * mr * kp, j->packed_b + pb * nr * kp, rows, &runs,
                   j->bias + i0, g->mult + i0, g->shift + i0, &g->out,
                   (uint8_t *)g->c + i0 * g->c_rs, g->c_rs);
    return;
  }
  f->ukernel(kp, g->a_packed + pa * mr * kp, j->packed_b + pb * nr * kp, acc);
  for (int s = 0; s < runs.n; ++s)
    f->requant(acc + runs.j0[s], nr, rows, runs.len[s], j->bias + i0, g->mult + i0,
               g->shift + i0, &g->out, (uint8_t *)g->c + i0 * g->c_rs + runs.col[s] * g->c_cs,
               g->c_rs, g->c_cs);
}

/* The residual add (mace_qgemm_residual) over C's rows [i0, i1) and columns [j0, j1), written
 * already: one run-kernel call per row, or one for the whole block when its rows are
 * contiguous (all of C's columns, c_cs 1), since each call sets up the Add's constants; per
 * element where C's columns are not contiguous. */
static void add_residual(const mace_qgemm_args *g, int64_t i0, int64_t i1, int64_t j0,
                         int64_t j1) {
  const mace_qgemm_residual *r = g->residual;
  if (g->c_cs == 1 && j0 == 0 && j1 == g->n && g->c_rs == g->n) {
    uint8_t *c = (uint8_t *)g->c + i0 * g->n;
    r->add(r->p, r->is_signed, c, 1, (const uint8_t *)r->r + i0 * g->n, 1, c, (i1 - i0) * g->n);
    return;
  }
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t off = i * g->c_rs + j0 * g->c_cs;
    uint8_t *c = (uint8_t *)g->c + off;
    const uint8_t *rr = (const uint8_t *)r->r + off;
    if (g->c_cs == 1) {
      r->add(r->p, r->is_signed, c, 1, rr, 1, c, j1 - j0);
      continue;
    }
    for (int64_t jj = 0; jj < j1 - j0; ++jj)
      r->add(r->p, r->is_signed, c + jj * g->c_cs, 1, rr + jj * g->c_cs, 1, c + jj * g->c_cs, 1);
  }
}

/* With a residual, a thread's chunk of B panels is at least this many columns (the grain), so
 * that each row's add runs over several vectors. */
#define QGEMM_RESIDUAL_COLS 128

static void qgemm_range(void *ctx, int64_t begin, int64_t end) {
  const qgemm_job *j = (const qgemm_job *)ctx;
  const mace_qgemm_args *g = j->g;
  const mace_qgemm_family *f = g->f;
  const int64_t pm = round_up(g->m, f->mr) / f->mr, pn = round_up(j->ncols, f->nr) / f->nr;
  if (j->split_m) {
    /* B is packed and small (it stays in L2): each A panel once, against every B panel */
    for (int64_t pa = begin; pa < end; ++pa) {
      for (int64_t pb = 0; pb < pn; ++pb) compute_tile(j, pa, pb);
      if (g->residual)
        add_residual(g, pa * f->mr, g->m < (pa + 1) * f->mr ? g->m : (pa + 1) * f->mr, 0, g->n);
    }
    return;
  }
  for (int64_t pb = begin; pb < end; ++pb) {
    pack_b(g, j->koff, j->packed_b, pb, pb + 1);
    for (int64_t pa = 0; pa < pm; ++pa) compute_tile(j, pa, pb);
  }
  /* the chunk's columns of every row (one call when the chunk is all of C: one thread) */
  if (g->residual)
    add_residual(g, 0, g->m, real_col(j, begin * f->nr),
                 real_col(j, j->ncols < end * f->nr ? j->ncols : end * f->nr));
}

void mace_qgemm_run(mace_threadpool *pool, const mace_qgemm_args *g, void *scratch) {
  const mace_qgemm_family *f = g->f;
  const int64_t ncols = g->conv ? mace_qgemm_conv_columns(g->conv) : g->n;
  const int64_t pm = round_up(g->m, f->mr) / f->mr, pn = round_up(ncols, f->nr) / f->nr;
  const int64_t kp = round_up(g->k, f->ku);
  const int threads = pool ? mace_threadpool_size(pool) : 1;
  const size_t packed_b = (size_t)round_up(pn * f->nr * kp, 64);
  int32_t *bias = (int32_t *)((uint8_t *)scratch + packed_b);
  /* The zero point in the packed B's terms: a flip to u8 adds 128, a flip to i8 subtracts it. */
  int32_t zp = g->b_zp;
  qgemm_job job;
  int64_t grain;
  if (g->b_signed != f->b_signed) zp += f->b_signed ? -128 : 128;
  for (int64_t i = 0; i < g->m; ++i)
    bias[i] = (int32_t)((uint32_t)(g->bias ? g->bias[i] : 0) -
                        (uint32_t)zp * (uint32_t)g->a_row_sums[i]);
  job.g = g;
  job.packed_b = (uint8_t *)scratch;
  job.bias = bias;
  job.ncols = ncols;
  job.pitch = g->conv ? conv_flat_pitch(g->conv) : 0;
  job.ow = g->conv ? g->conv->ow : 0;
  job.koff = (const int64_t *)((uint8_t *)bias + round_up(g->m * (int64_t)sizeof(int32_t), 64));
  if (job.pitch) flat_offsets(g->conv, g->k, (int64_t *)job.koff);
  /* Along A's panels when B has too few panels for the threads, or when all of packed B fits
   * in L2 while A does not: then A is read once instead of once per B panel. */
  job.split_m = (pn < 2 * threads && pm > pn) ||
                (packed_b <= QGEMM_L2_BYTES && (size_t)(pm * f->mr * kp) > QGEMM_L2_BYTES / 2 &&
                 pm >= threads);
  if (job.split_m) {
    pack_b(g, job.koff, job.packed_b, 0, pn);
    grain = QGEMM_MIN_MACS_PER_JOB / (f->mr * kp * pn * f->nr) + 1;
    mace_threadpool_parallel_for(pool, pm, grain, qgemm_range, &job);
  } else {
    grain = QGEMM_MIN_MACS_PER_JOB / (f->nr * kp * pm * f->mr) + 1;
    if (g->residual && grain * f->nr < QGEMM_RESIDUAL_COLS) /* rows of a chunk (qgemm_range) */
      grain = (QGEMM_RESIDUAL_COLS + f->nr - 1) / f->nr;
    mace_threadpool_parallel_for(pool, pn, grain, qgemm_range, &job);
  }
}
