/* f32 vector primitives (aarch64 NEON) for the SIMD kernel templates simd/FAMILY_impl.inc. */
#ifndef MACE_KERNELS_CPU_SIMD_VEC_NEON_H_
#define MACE_KERNELS_CPU_SIMD_VEC_NEON_H_

#include <arm_neon.h>

/* Same semantics as kernels/cpu/simd/vec_avx2.h (see there). FMAX/FMIN differ from the x86
 * max/min on NaN and signed zeros, so VMAX/VMIN are a compare and a select. */
#define MACE_SIMD_ISA neon /* the manifest's name of this ISA */
#define MACE_SIMD_FN(name) name##__neon
#define VW 4
typedef float32x4_t VF;
#define VLOAD(p) vld1q_f32(p)
#define VSTORE(p, v) vst1q_f32((p), (v))
#define VSET1(x) vdupq_n_f32(x)
#define VADD(a, b) vaddq_f32((a), (b))
#define VSUB(a, b) vsubq_f32((a), (b))
#define VMUL(a, b) vmulq_f32((a), (b))
#define VDIV(a, b) vdivq_f32((a), (b))
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b))
#define VROUND(x) vrndnq_f32(x)
#define VABS(x) vabsq_f32(x)
#define VNABS(x) \
  vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u)))

static inline VF VMAX(VF a, VF b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
static inline VF VMIN(VF a, VF b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
static inline VF VSEL_GE(VF x, VF y, VF a, VF b) { return vbslq_f32(vcgeq_f32(x, y), a, b); }
static inline VF VSEL_LT(VF x, VF y, VF a, VF b) { return vbslq_f32(vcltq_f32(x, y), a, b); }
static inline int VANY_LT(VF x, VF y) { return vmaxvq_u32(vcltq_f32(x, y)) != 0; }

static inline VF VMAXNAN(VF m, VF v) {
  const uint32x4_t take = vorrq_u32(vcgtq_f32(v, m), vmvnq_u32(vceqq_f32(v, v)));
  return vbslq_f32(take, v, m);
}

static inline VF VSCALE2N(VF p, VF n) {
  const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(e));
}

static inline VF VLOAD_EVEN(const float *p) { return vld2q_f32(p).val[0]; }

#endif /* MACE_KERNELS_CPU_SIMD_VEC_NEON_H_ */
