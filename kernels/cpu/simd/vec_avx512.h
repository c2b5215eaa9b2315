/* f32 vector primitives (AVX-512F) for the SIMD kernel templates simd/FAMILY_impl.inc. */
#ifndef MACE_KERNELS_CPU_SIMD_VEC_AVX512_H_
#define MACE_KERNELS_CPU_SIMD_VEC_AVX512_H_

#include <immintrin.h>

/* Same semantics as kernels/cpu/simd/vec_avx2.h (see there). */
#define MACE_SIMD_ISA avx512 /* the manifest's name of this ISA */
#define MACE_SIMD_FN(name) name##__avx512
#define VW 16
typedef __m512 VF;
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VSET1(x) _mm512_set1_ps(x)
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VDIV(a, b) _mm512_div_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
#define VSEL_GE(x, y, a, b) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (y), _CMP_GE_OQ), (b), (a))
#define VSEL_LT(x, y, a, b) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (y), _CMP_LT_OQ), (b), (a))
#define VROUND(x) _mm512_roundscale_ps((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VABS(x) _mm512_abs_ps(x)
#define VNABS(x) \
  _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000)))
#define VANY_LT(x, y) (_mm512_cmp_ps_mask((x), (y), _CMP_LT_OQ) != 0) /* some lane x < y */

static inline VF VMAXNAN(VF m, VF v) {
  const __mmask16 take =
      _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(take, m, v);
}

/* One instruction where building 2^n and multiplying took four, for the same correctly rounded
 * p * 2^n (see vswish_ in simd/activation_impl.inc for what it gained). */
#define VSCALE2N(p, n) _mm512_scalef_ps((p), (n))

static inline VF VLOAD_EVEN(const float *p) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
}

#endif /* MACE_KERNELS_CPU_SIMD_VEC_AVX512_H_ */
