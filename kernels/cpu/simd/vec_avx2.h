/* f32 vector primitives (AVX2 + FMA) for the SIMD kernel templates simd/FAMILY_impl.inc. */
#ifndef MACE_KERNELS_CPU_SIMD_VEC_AVX2_H_
#define MACE_KERNELS_CPU_SIMD_VEC_AVX2_H_

#include <immintrin.h>

/* Semantics every vec_*.h provides, so that the templates give the same bits on every ISA:
 *   VMAX(a, b) = a > b ? a : b,  VMIN(a, b) = a < b ? a : b  (lane-wise, NaN/-0 as written)
 *   VSEL_GE(x, y, a, b) = x >= y ? a : b,  VSEL_LT(x, y, a, b) = x < y ? a : b
 *   VMAXNAN(m, v) = (v > m || v != v) ? v : m   (max that keeps the first NaN)
 *   VNABS(x) = -|x| (the sign bit set);  VFMA(a, b, c) = a * b + c fused;  VROUND: to nearest
 *   even;  VSCALE2N(p, n) = p * 2^n for integral n in [-126, 127];  VLOAD_EVEN(p) = p[0],
 *   p[2], ..., p[2 * (VW - 1)] (reads p[0 .. 2 * VW - 1]). */
#define MACE_SIMD_ISA avx2 /* the manifest's name of this ISA */
#define MACE_SIMD_FN(name) name##__avx2
#define VW 8
typedef __m256 VF;
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VSET1(x) _mm256_set1_ps(x)
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VDIV(a, b) _mm256_div_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VSEL_GE(x, y, a, b) _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), (y), _CMP_GE_OQ))
#define VSEL_LT(x, y, a, b) _mm256_blendv_ps((b), (a), _mm256_cmp_ps((x), (y), _CMP_LT_OQ))
#define VROUND(x) _mm256_round_ps((x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VABS(x) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x))
#define VNABS(x) _mm256_or_ps(_mm256_set1_ps(-0.0f), (x))
#define VANY_LT(x, y) (_mm256_movemask_ps(_mm256_cmp_ps((x), (y), _CMP_LT_OQ)) != 0)

static inline VF VMAXNAN(VF m, VF v) {
  const __m256 take =
      _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_blendv_ps(m, v, take);
}

static inline VF VSCALE2N(VF p, VF n) {
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline VF VLOAD_EVEN(const float *p) {
  const __m256 t =
      _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

#endif /* MACE_KERNELS_CPU_SIMD_VEC_AVX2_H_ */
