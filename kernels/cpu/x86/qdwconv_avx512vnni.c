/* AVX-512 VNNI int8 depthwise convolution of a plane (kernels/cpu/qdwconv.h): vpdpbusd over
 * four horizontal taps at a time, bit-identical to the reference. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/qdwconv.h"
#include "kernels/cpu/ref/requant.h"
#include "kernels/cpu/ukernels.h"

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
 * lanes interleaved by 4 (2), put back in order by a transpose before the output stage.
 *
 * Stride 1 runs over the padded plane flat: output (oy, ox) is at flat position oy * pw + ox of
 * a grid as wide as the padded rows (pw = out_w + k_w - 1), its tap (ky, kx) at flat position
 * + ky * pw + kx of the buffer, so one run covers several short rows (7x7 and 14x14 planes) and
 * only the pw - out_w columns of each row past out_w are computed and dropped. Stride 2 runs
 * along each output row, 32 outputs at a time.
 */

#define QDWV_PAD_BYTES 32768 /* the padded plane, on the stack */
#define QDWV_SLACK 128       /* bytes past the last row that runs read (weights 0 or dropped) */
#define QDWV_ACC 4096        /* int32 accumulators of a band of output rows */
#define QDWV_MAX_K 8         /* taps along a row: two groups of four */

typedef struct qdwv_geom {
  int64_t pw, ph;   /* padded plane: columns (a row's stride in the buffer) and rows */
  int64_t groups;   /* groups of four taps along a row */
  int32_t zp;       /* x's zero point on the u8 scale */
  uint8_t flip;     /* 0x80 for an i8 plane */
  int32_t bias_adj;
  __m512i wv[QDWV_MAX_K * 2]; /* [ky][g]: four taps' i8 weights in every dword */
} qdwv_geom;

/* The plane copied into pad (pw x ph, then QDWV_SLACK bytes), padding and slack zp. */
static void qdwv_pad(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *x,
                     uint8_t *pad) {
  int64_t lo = a->pad_left, hi = a->pad_left + a->in_w;
  if (lo > gm->pw) lo = gm->pw;
  if (hi > gm->pw) hi = gm->pw;
  memset(pad, (uint8_t)gm->zp, (size_t)(gm->ph * gm->pw + QDWV_SLACK));
  for (int64_t r = 0; r < gm->ph; ++r) {
    const int64_t iy = r - a->pad_top;
    uint8_t *d = pad + r * gm->pw;
    const uint8_t *s;
    if (iy < 0 || iy >= a->in_h || hi <= lo) continue;
    s = x + iy * a->in_w + (lo - a->pad_left);
    if (!gm->flip) {
      memcpy(d + lo, s, (size_t)(hi - lo));
    } else {
      for (int64_t q = 0; q < hi - lo; ++q) d[lo + q] = (uint8_t)(s[q] ^ 0x80);
    }
  }
}

/* A band of nrows output rows, row r's accumulators at acc + r * astride, requantized as one
 * run (the columns between rows too, then dropped) and copied into y's rows. */
static void qdwv_out(const mace_q8_dwconv_args *a, const int32_t *acc, int64_t astride,
                     int64_t nrows, uint8_t *y) {
  uint8_t tmp[QDWV_ACC + 64];
  const int64_t n = (nrows - 1) * astride + a->out_w;
  if (a->requant) {
    const int32_t zero = 0;
    a->requant(acc, n, 1, n, &zero, &a->mult, &a->shift, &a->out, tmp, n, 1);
  } else {
    for (int64_t i = 0; i < n; ++i)
      tmp[i] = (uint8_t)mace_requant(acc[i], a->mult, a->shift, a->out.zp, a->out.lo,
                                     a->out.hi);
  }
  if (astride == a->out_w) {
    memcpy(y, tmp, (size_t)n);
    return;
  }
  for (int64_t r = 0; r < nrows; ++r)
    memcpy(y + r * a->out_w, tmp + r * astride, (size_t)a->out_w);
}

/* Stride 1 (module comment): runs of 64 flat outputs from position f of the padded plane. */
static void qdwv_flat(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *pad,
                      uint8_t *y) {
  int32_t acc[QDWV_ACC + 64];
  const int64_t pw = gm->pw, nb_max = QDWV_ACC / pw;
  for (int64_t r0 = 0; r0 < a->out_h; r0 += nb_max) {
    const int64_t nb = a->out_h - r0 < nb_max ? a->out_h - r0 : nb_max;
    const int64_t f_begin = r0 * pw, count = nb * pw;
    for (int64_t f = 0; f < count; f += 64) {
      const __m512i b = _mm512_set1_epi32(gm->bias_adj);
      __m512i a0 = b, a1 = b, a2 = b, a3 = b;
      for (int64_t ky = 0; ky < a->k_h; ++ky)
        for (int64_t g = 0; g < gm->groups; ++g) {
          const uint8_t *p = pad + f_begin + f + ky * pw + 4 * g;
          const __m512i w = gm->wv[ky * 2 + g];
          a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512((const void *)p), w);
          a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512((const void *)(p + 1)), w);
          a2 = _mm512_dpbusd_epi32(a2, _mm512_loadu_si512((const void *)(p + 2)), w);
          a3 = _mm512_dpbusd_epi32(a3, _mm512_loadu_si512((const void *)(p + 3)), w);
        }
      {
        /* a_s[j] is output 4j + s: 4x4 transposes of dwords within each 128-bit lane (r_m's lane
         * L: outputs 16L + 4m .. + 3), then of the lanes */
        const __m512i t0 = _mm512_unpacklo_epi32(a0, a1), t1 = _mm512_unpackhi_epi32(a0, a1);
        const __m512i t2 = _mm512_unpacklo_epi32(a2, a3), t3 = _mm512_unpackhi_epi32(a2, a3);
        const __m512i r0v = _mm512_unpacklo_epi64(t0, t2), r1v = _mm512_unpackhi_epi64(t0, t2);
        const __m512i r2v = _mm512_unpacklo_epi64(t1, t3), r3v = _mm512_unpackhi_epi64(t1, t3);
        const __m512i u0 = _mm512_shuffle_i32x4(r0v, r1v, _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i u1 = _mm512_shuffle_i32x4(r2v, r3v, _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i u2 = _mm512_shuffle_i32x4(r0v, r1v, _MM_SHUFFLE(3, 2, 3, 2));
        const __m512i u3 = _mm512_shuffle_i32x4(r2v, r3v, _MM_SHUFFLE(3, 2, 3, 2));
        _mm512_storeu_si512((void *)(acc + f),
                            _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm512_storeu_si512((void *)(acc + f + 16),
                            _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
        _mm512_storeu_si512((void *)(acc + f + 32),
                            _mm512_shuffle_i32x4(u2, u3, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm512_storeu_si512((void *)(acc + f + 48),
                            _mm512_shuffle_i32x4(u2, u3, _MM_SHUFFLE(3, 1, 3, 1)));
      }
    }
    qdwv_out(a, acc, pw, nb, y + r0 * a->out_w);
  }
}

/* Stride 2 (module comment): each output row in runs of 32 outputs. */
static void qdwv_rows2(const mace_q8_dwconv_args *a, const qdwv_geom *gm, const uint8_t *pad,
                       uint8_t *y) {
  int32_t acc[QDWV_ACC + 32];
  const int64_t ow32 = (a->out_w + 31) / 32 * 32, nb_max = QDWV_ACC / ow32;
  for (int64_t r0 = 0; r0 < a->out_h; r0 += nb_max) {
    const int64_t nb = a->out_h - r0 < nb_max ? a->out_h - r0 : nb_max;
    for (int64_t oy = r0; oy < r0 + nb; ++oy)
      for (int64_t ox0 = 0; ox0 < a->out_w; ox0 += 32) {
        const __m512i b = _mm512_set1_epi32(gm->bias_adj);
        __m512i a0 = b, a1 = b;
        int32_t *ac = acc + (oy - r0) * ow32 + ox0;
        for (int64_t ky = 0; ky < a->k_h; ++ky)
          for (int64_t g = 0; g < gm->groups; ++g) {
            const uint8_t *p = pad + (oy * a->stride_h + ky) * gm->pw + 2 * ox0 + 4 * g;
            const __m512i w = gm->wv[ky * 2 + g];
            a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512((const void *)p), w);
            a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512((const void *)(p + 2)), w);
          }
        {
          /* a_s[j] is output 2j + s: lo's lane L holds outputs 8L .. 8L + 3, hi's 8L + 4 .. */
          const __m512i lo = _mm512_unpacklo_epi32(a0, a1), hi = _mm512_unpackhi_epi32(a0, a1);
          const __m512i u0 = _mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(1, 0, 1, 0));
          const __m512i u1 = _mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(3, 2, 3, 2));
          _mm512_storeu_si512((void *)ac, _mm512_shuffle_i32x4(u0, u0, _MM_SHUFFLE(3, 1, 2, 0)));
          _mm512_storeu_si512((void *)(ac + 16),
                              _mm512_shuffle_i32x4(u1, u1, _MM_SHUFFLE(3, 1, 2, 0)));
        }
      }
    qdwv_out(a, acc, ow32, nb, y + r0 * a->out_w);
  }
}

void mace_q8_dwconv__avx512vnni(const mace_q8_dwconv_args *a, const uint8_t *x, const int8_t *w,
                                uint8_t *y) {
  uint8_t pad[QDWV_PAD_BYTES];
  qdwv_geom gm;
  const int64_t s = a->stride_w;
  int32_t wsum = 0;
  const int fits = a->stride_h == s && (s == 1 || s == 2) && a->dilation_h == 1 &&
                   a->dilation_w == 1 && a->k_w <= QDWV_MAX_K && a->k_h <= QDWV_MAX_K &&
                   a->pad_top >= 0 && a->pad_left >= 0;
  if (fits) {
    /* stride 1: the flat grid's rows; stride 2: every run of 32 outputs and its 64-byte loads */
    gm.pw = s == 1 ? a->out_w + a->k_w - 1 : 2 * ((a->out_w + 31) / 32 * 32) + 64;
    gm.ph = (a->out_h - 1) * s + a->k_h;
  }
  if (!fits || gm.pw > QDWV_ACC / 2 || gm.ph * gm.pw + QDWV_SLACK > QDWV_PAD_BYTES) {
    mace_q8_dwconv__avx512(a, x, w, y);
    return;
  }
  gm.groups = (a->k_w + 3) / 4;
  gm.flip = a->x_signed ? 0x80 : 0;
  gm.zp = a->x_signed ? a->x_zp + 128 : a->x_zp;
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
      gm.wv[ky * 2 + g] = _mm512_set1_epi32(v);
    }
  gm.bias_adj = (int32_t)((uint32_t)a->bias - (uint32_t)gm.zp * (uint32_t)wsum);
  qdwv_pad(a, &gm, x, pad);
  if (s == 1)
    qdwv_flat(a, &gm, pad, y);
  else
    qdwv_rows2(a, &gm, pad, y);
}
