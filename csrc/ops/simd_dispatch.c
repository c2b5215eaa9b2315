/* Dispatched f32 SIMD kernels (not an op): per-ISA tables, chosen once from cpu_features. */
#include "ops/simd_dispatch.h"

#include <pthread.h>

/* Best first. */
static const mace_simd_kernels g_all[] = {
#if defined(__x86_64__) || defined(_M_X64)
    {.name = "avx512", .isa = MACE_ISA_AVX512,
     .activation = mace_f32_activation__avx512,
     .vbinary = mace_f32_vbinary__avx512,
     .eltwise_binary = mace_f32_eltwise_binary__avx512,
     .softmax_rows = mace_f32_softmax_rows__avx512,
     .softmax_inner = mace_f32_softmax_inner__avx512,
     .layer_norm = mace_f32_layer_norm__avx512,
     .layer_norm_inner = mace_f32_layer_norm_inner__avx512,
     .nchwc_layer_norm = mace_f32_nchwc_layer_norm__avx512,
     .reduce_rows = mace_f32_reduce_rows__avx512,
     .reduce_cols = mace_f32_reduce_cols__avx512,
     .transpose2d = mace_x32_transpose2d__avx512,
     .maxpool2d = mace_f32_maxpool2d__avx512,
     .avgpool2d = mace_f32_avgpool2d__avx512,
     .dwconv = mace_f32_dwconv__avx512,
     .directconv = mace_f32_directconv__avx512,
     .nchwc_block = 16,
     .nchwc_conv1x1 = mace_f32_nchwc_conv1x1__avx512,
     .nchwc_dwconv = mace_f32_nchwc_dwconv__avx512,
     .nchwc_convkxk = mace_f32_nchwc_convkxk__avx512,
     .nchwc_wino_input = mace_f32_nchwc_wino_input__avx512,
     .nchwc_wino_output = mace_f32_nchwc_wino_output__avx512,
     .nchw_to_nchwc = mace_f32_nchw_to_nchwc__avx512,
     .nchwc_to_nchw = mace_f32_nchwc_to_nchw__avx512,
     .nchwc_pool2d = mace_f32_nchwc_pool2d__avx512,
     .nchwc_global_pool = mace_f32_nchwc_global_pool__avx512,
     .nchwc_binary = mace_f32_nchwc_binary__avx512},
    {.name = "avx2", .isa = MACE_ISA_AVX2,
     .activation = mace_f32_activation__avx2,
     .vbinary = mace_f32_vbinary__avx2,
     .eltwise_binary = mace_f32_eltwise_binary__avx2,
     .softmax_rows = mace_f32_softmax_rows__avx2,
     .softmax_inner = mace_f32_softmax_inner__avx2,
     .layer_norm = mace_f32_layer_norm__avx2,
     .layer_norm_inner = mace_f32_layer_norm_inner__avx2,
     .nchwc_layer_norm = mace_f32_nchwc_layer_norm__avx2,
     .reduce_rows = mace_f32_reduce_rows__avx2,
     .reduce_cols = mace_f32_reduce_cols__avx2,
     .transpose2d = mace_x32_transpose2d__avx2,
     .maxpool2d = mace_f32_maxpool2d__avx2,
     .avgpool2d = mace_f32_avgpool2d__avx2,
     .dwconv = mace_f32_dwconv__avx2,
     .directconv = mace_f32_directconv__avx2,
     .nchwc_block = 8,
     .nchwc_conv1x1 = mace_f32_nchwc_conv1x1__avx2,
     .nchwc_dwconv = mace_f32_nchwc_dwconv__avx2,
     .nchwc_convkxk = mace_f32_nchwc_convkxk__avx2,
     .nchwc_wino_input = mace_f32_nchwc_wino_input__avx2,
     .nchwc_wino_output = mace_f32_nchwc_wino_output__avx2,
     .nchw_to_nchwc = mace_f32_nchw_to_nchwc__avx2,
     .nchwc_to_nchw = mace_f32_nchwc_to_nchw__avx2,
     .nchwc_pool2d = mace_f32_nchwc_pool2d__avx2,
     .nchwc_global_pool = mace_f32_nchwc_global_pool__avx2,
     .nchwc_binary = mace_f32_nchwc_binary__avx2},
#endif
#if defined(__aarch64__)
    {.name = "neon", .isa = MACE_ISA_NEON,
     .activation = mace_f32_activation__neon,
     .vbinary = mace_f32_vbinary__neon,
     .eltwise_binary = mace_f32_eltwise_binary__neon,
     .softmax_rows = mace_f32_softmax_rows__neon,
     .softmax_inner = mace_f32_softmax_inner__neon,
     .layer_norm = mace_f32_layer_norm__neon,
     .layer_norm_inner = mace_f32_layer_norm_inner__neon,
     .nchwc_layer_norm = mace_f32_nchwc_layer_norm__neon,
     .reduce_rows = mace_f32_reduce_rows__neon,
     .reduce_cols = mace_f32_reduce_cols__neon,
     .transpose2d = mace_x32_transpose2d__neon,
     .maxpool2d = mace_f32_maxpool2d__neon,
     .avgpool2d = mace_f32_avgpool2d__neon,
     .dwconv = mace_f32_dwconv__neon,
     .directconv = mace_f32_directconv__neon,
     .nchwc_block = 4,
     .nchwc_conv1x1 = mace_f32_nchwc_conv1x1__neon,
     .nchwc_dwconv = mace_f32_nchwc_dwconv__neon,
     .nchwc_convkxk = mace_f32_nchwc_convkxk__neon,
     .nchwc_wino_input = mace_f32_nchwc_wino_input__neon,
     .nchwc_wino_output = mace_f32_nchwc_wino_output__neon,
     .nchw_to_nchwc = mace_f32_nchw_to_nchwc__neon,
     .nchwc_to_nchw = mace_f32_nchwc_to_nchw__neon,
     .nchwc_pool2d = mace_f32_nchwc_pool2d__neon,
     .nchwc_global_pool = mace_f32_nchwc_global_pool__neon,
     .nchwc_binary = mace_f32_nchwc_binary__neon},
#endif
    {.name = "ref", .isa = MACE_ISA_REF,
     .activation = mace_f32_activation__ref,
     .maxpool2d = mace_f32_maxpool2d__ref,
     .avgpool2d = mace_f32_avgpool2d__ref}};

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

void mace_f32_activation(const mace_activation *act, const float *in, float *out, int64_t n) {
  mace_simd_active()->activation(act, in, out, n);
}
