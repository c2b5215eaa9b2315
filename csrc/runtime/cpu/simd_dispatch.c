/* Dispatched f32 SIMD kernels (not an op): per-ISA tables, chosen once from cpu_features. */
#include "runtime/cpu/simd_dispatch.h"

#include <pthread.h>

/* gen/mace_kernel_selection.h (cmake/op_selection.cmake): in a build that leaves kernel fields out
 * (an op selection whose ops never read them, or MACE_KERNELS_EXCLUDE), MACE_KERNEL_MANIFEST names
 * the manifest cut to the kept lines and MACE_KERNEL_DROPPED_<field> is 1 for each field left out;
 * nothing otherwise. Only this file reads the cut manifest: the prototypes stay whole. */
#include "mace_kernel_selection.h"
#ifndef MACE_KERNEL_MANIFEST
#define MACE_KERNEL_MANIFEST "kernels/cpu/manifest.inc"
#endif
#define MACE_KERNEL_DROPPED(field) MACE_KERNEL_DROPPED_##field

/* One ISA's fields from the manifest: `.activation = mace_f32_activation__avx2,` and so on for
 * its MACE_UKERNEL lines of ISA MACE_TABLE_ISA (the manifest #undefs MACE_UKERNEL after each
 * use, so each table defines it again). */
#define SIMD_FIELD_(isa, unit, field, function) \
  MACE_ISA_SELECT(isa, MACE_TABLE_ISA)(.field = MACE_UKERNEL_NAME(function, isa), )

/* Best first; an ISA the build does not compile (MACE_ENABLE_<ISA> 0) has no table. */
static const mace_simd_kernels g_all[] = {
#if MACE_ENABLE_AVX512
#define MACE_TABLE_ISA avx512
#define MACE_UKERNEL SIMD_FIELD_
    {.name = "avx512", .isa = MACE_ISA_AVX512, .nchwc_block = 16,
#include MACE_KERNEL_MANIFEST
    },
#undef MACE_TABLE_ISA
#endif
#if MACE_ENABLE_AVX2
#define MACE_TABLE_ISA avx2
#define MACE_UKERNEL SIMD_FIELD_
    {.name = "avx2", .isa = MACE_ISA_AVX2, .nchwc_block = 8,
#include MACE_KERNEL_MANIFEST
    },
#undef MACE_TABLE_ISA
#endif
#if MACE_ENABLE_NEON
#define MACE_TABLE_ISA neon
#define MACE_UKERNEL SIMD_FIELD_
    {.name = "neon", .isa = MACE_ISA_NEON, .nchwc_block = 4,
#include MACE_KERNEL_MANIFEST
    },
#undef MACE_TABLE_ISA
#endif
    {.name = "ref", .isa = MACE_ISA_REF,
     .activation = mace_f32_activation__ref,
#if !MACE_KERNEL_DROPPED(maxpool2d)
     .maxpool2d = mace_f32_maxpool2d__ref,
#endif
#if !MACE_KERNEL_DROPPED(avgpool2d)
     .avgpool2d = mace_f32_avgpool2d__ref,
#endif
#if !MACE_KERNEL_DROPPED(q8_dwconv)
     .q8_dwconv = mace_q8_dwconv__ref,
#endif
#if !MACE_KERNEL_DROPPED(q8_add)
     .q8_add = mace_q8_add__ref,
#endif
#if !MACE_KERNEL_DROPPED(q8_mul)
     .q8_mul = mace_q8_mul__ref,
#endif
#if !MACE_KERNEL_DROPPED(q8_maxpool2d)
     .q8_maxpool2d = mace_q8_maxpool2d__ref,
#endif
    }};

#define N_ALL ((int)(sizeof(g_all) / sizeof(g_all[0])))

static const mace_simd_kernels *g_supported[N_ALL];
static int g_n_supported;
static const mace_simd_kernels *g_active;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Whether the active level allows `isa`: the same rule as the GEMM families. */
static int isa_allowed(mace_cpu_isa isa, mace_cpu_isa active) {
  if (isa == MACE_ISA_REF) return 1;
  if (active == MACE_ISA_REF) return 0;
  return isa == active || (isa != MACE_ISA_NEON && active != MACE_ISA_NEON && isa < active);
}

static void choose_once(void) {
  const mace_cpu_isa active = mace_cpu_isa_active();
  for (int i = 0; i < N_ALL; ++i) {
    const mace_simd_kernels *k = &g_all[i];
    if (!mace_cpu_isa_supported(k->isa)) continue;
    g_supported[g_n_supported++] = k;
    if (!g_active && isa_allowed(k->isa, active)) g_active = k;  /* best first */
  }
}

int mace_simd_variants(const mace_simd_kernels *const **list) {
  pthread_once(&g_once, choose_once);
  *list = g_supported;
  return g_n_supported;
}

const mace_simd_kernels *mace_simd_active(void) {
  pthread_once(&g_once, choose_once);
  return g_active;
}

mace_q8_dwconv_fn mace_q8_dwconv_active(void) {
  const mace_simd_kernels *k = mace_simd_active();
#if MACE_ENABLE_AVX512
  if (k->isa == MACE_ISA_AVX512 && mace_cpu_features_get()->avx512vnni)
    return mace_q8_dwconv__avx512vnni;
#endif
  return k->q8_dwconv ? k->q8_dwconv : mace_q8_dwconv__ref;
}

void mace_f32_activation(const mace_activation *act, const float *in, float *out, int64_t n) {
  mace_simd_active()->activation(act, in, out, n);
}
