/* AVX-512 requantization of 16 int32 lanes to u8/i8 values (docs/int8.md, "Requantization"),
 * shared by the VNNI int8 GEMM's output stages and the VNNI depthwise kernel. */
#ifndef MACE_KERNELS_CPU_X86_REQUANT_AVX512_H_
#define MACE_KERNELS_CPU_X86_REQUANT_AVX512_H_

#include <immintrin.h>
#include <stdint.h>

#include "kernels/cpu/qgemm.h"

/* The largest right shift whose rounding constant can carry the zero point (see
 * mace_qgemm_requant__avx512vnni, kernels/cpu/x86/qgemm_avx512vnni.c). */
#define MACE_QGEMM_ZP_FOLD_MAX_SHIFT 22

/* The output stage's constants: the clamp both before adding the zero point (lo, hi: [lo - zp,
 * hi - zp]) and after it (zlo, zhi), the zero point as a vector and as a scalar. */
typedef struct mace_q8_requant_consts {
  __m512i lo, hi, zlo, zhi, zp;
  int64_t zp1;
} mace_q8_requant_consts;

static inline mace_q8_requant_consts mace_q8_requant_consts_make(const mace_qgemm_out *q) {
  mace_q8_requant_consts r;
  r.lo = _mm512_set1_epi32(q->lo - q->zp);
  r.hi = _mm512_set1_epi32(q->hi - q->zp);
  r.zlo = _mm512_set1_epi32(q->lo);
  r.zhi = _mm512_set1_epi32(q->hi);
  r.zp = _mm512_set1_epi32(q->zp);
  r.zp1 = q->zp;
  return r;
}

/* One row of requant.h's formula on 16 lanes, x = the accumulators with the bias added (see the
 * comment at mace_qgemm_requant__avx512vnni, kernels/cpu/x86/qgemm_avx512vnni.c). */
static inline __m512i mace_q8_requant_row__avx512(__m512i x, int32_t mult, int32_t shift,
                                                  const mace_q8_requant_consts *c) {
  const int right = shift > 0 ? shift : 0;
  const __m512i m = _mm512_set1_epi32(mult);
  __m512i t;
  if (right >= 1 && right <= MACE_QGEMM_ZP_FOLD_MAX_SHIFT) {
    /* the zero point folded into the rounding constant */
    const __m512i round = _mm512_set1_epi64(((int64_t)1 << 30) + ((int64_t)1 << (30 + right)) +
                                            c->zp1 * ((int64_t)1 << (31 + right)));
    const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, m), round);
    const __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), m), round);
    t = _mm512_mask_shuffle_epi32(po, (__mmask16)0x5555, pe, (_MM_PERM_ENUM)0xF5);
    t = _mm512_sra_epi32(t, _mm_cvtsi32_si128(right - 1));
    return _mm512_min_epi32(_mm512_max_epi32(t, c->zlo), c->zhi);
  }
  {
    const __m512i round =
        _mm512_set1_epi64(((int64_t)1 << 30) + (right > 0 ? (int64_t)1 << (30 + right) : 0));
    if (shift < 0) x = _mm512_sll_epi32(x, _mm_cvtsi32_si128(-shift));
    const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, m), round);
    const __m512i po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), m), round);
    if (right > 0) {
      /* the high halves of pe (even lanes, moved down by vpshufd) and po (odd lanes) */
      t = _mm512_mask_shuffle_epi32(po, (__mmask16)0x5555, pe, (_MM_PERM_ENUM)0xF5);
      t = _mm512_sra_epi32(t, _mm_cvtsi32_si128(right - 1));
    } else {
      t = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 31),
                                  _mm512_slli_epi64(po, 1));
    }
    return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(t, c->lo), c->hi), c->zp);
  }
}

#endif /* MACE_KERNELS_CPU_X86_REQUANT_AVX512_H_ */
