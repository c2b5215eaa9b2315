/* Dispatched f32 SIMD kernels other than GEMM (activation, eltwise, softmax, layer norm,
 * reduce, transpose, pooling, depthwise, NCHWc, col2im, int8 depthwise and
 * element-wise, fp16/bf16 conversion): one table of function pointers per
 * ISA, filled from the kernel manifest (kernels/cpu/manifest.inc), the active one chosen once
 * from the CPU's features. */
#ifndef MACE_RUNTIME_CPU_SIMD_DISPATCH_H_
#define MACE_RUNTIME_CPU_SIMD_DISPATCH_H_

#include "runtime/cpu/cpu_features.h"
#include "kernels/cpu/ukernels.h"

/* One ISA's kernels: each field is filled by the manifest's MACE_UKERNEL line of that ISA and
 * field. A NULL entry means "no fast path": the op runs its reference kernel. The "ref" table
 * has the reference activation and pooling (drop-ins) and NULL elsewhere. */
typedef struct mace_simd_kernels {
  const char *name;  /* "avx512", "avx2", "neon", "ref" */
  mace_cpu_isa isa;
  mace_f32_activation_fn activation;
  mace_f32_vbinary_fn vbinary;
  mace_f32_eltwise_binary_fn eltwise_binary;
  mace_f32_softmax_rows_fn softmax_rows;
  mace_f32_softmax_inner_fn softmax_inner;
  mace_f32_layer_norm_fn layer_norm;
  mace_f32_layer_norm_inner_fn layer_norm_inner;     /* over a middle axis (NCHW channels) */
  mace_f32_nchwc_layer_norm_fn nchwc_layer_norm;     /* over a blocked pixel's channels */
  mace_f32_reduce_rows_fn reduce_rows;  /* MAX/MIN/SUM/MEAN (kernels/cpu/reduce.h) */
  mace_f32_reduce_cols_fn reduce_cols;
  mace_x32_transpose2d_fn transpose2d; /* [B, R, C] -> [B, C, R], strips of nchwc_block rows */
  mace_f32_maxpool2d_fn maxpool2d;
  mace_f32_avgpool2d_fn avgpool2d;
  mace_f32_dwconv_fn dwconv;  /* depthwise KxK, K <= 7 */
  mace_f32_directconv_fn directconv;  /* group 1, in_c <= 4, KxK, K <= 7 (first layers) */
  /* NCHWc kernels (kernels/cpu/nchwc.h) on blocks of nchwc_block channels (the vector width;
   * runtime/cpu/layout.h's mace_nchwc_block gives the same number for the active ISA). */
  int nchwc_block;
  mace_f32_nchwc_conv1x1_fn nchwc_conv1x1;
  mace_f32_nchwc_dwconv_fn nchwc_dwconv;
  mace_f32_nchwc_convkxk_fn nchwc_convkxk;  /* group 1 KxK, stride 1 or 2 */
  mace_f32_nchwc_wino_input_fn nchwc_wino_input;  /* kernels/cpu/nchwc_winograd.h */
  mace_f32_nchwc_wino_output_fn nchwc_wino_output;
  mace_f32_nchwc_reorder_fn nchw_to_nchwc, nchwc_to_nchw;
  mace_f32_nchwc_pool2d_fn nchwc_pool2d;  /* kernels/cpu/nchwc_pool.h */
  mace_f32_nchwc_global_pool_fn nchwc_global_pool;
  mace_f32_nchwc_binary_fn nchwc_binary;
  mace_f32_col2im_fn col2im;  /* Deconv2D's col2im (kernels/cpu/col2im.h) */
  mace_q8_dwconv_fn q8_dwconv;  /* int8 depthwise plane (kernels/cpu/qdwconv.h) */
  mace_q8_add_fn q8_add;  /* int8 QLinearAdd / QLinearMul runs (kernels/cpu/qeltwise.h) */
  mace_q8_mul_fn q8_mul;
  mace_q8_maxpool2d_fn q8_maxpool2d;  /* int8 max pooling (kernels/cpu/qmaxpool.h) */
  mace_f16_to_f32_fn f16_to_f32;  /* kernels/cpu/half.h */
  mace_bf16_to_f32_fn bf16_to_f32;
  mace_f32_to_f16_fn f32_to_f16;
} mace_simd_kernels;

/* The tables this CPU supports (whatever MACE_CPU_ISA says), best first, "ref" last; returns
 * the count and points *list at them. For tests and benchmarks. */
int mace_simd_variants(const mace_simd_kernels *const **list);

/* The table ops use: the best one the active ISA (MACE_CPU_ISA) allows ("ref" at worst). */
const mace_simd_kernels *mace_simd_active(void);

/* The int8 depthwise kernel ops use: the active table's q8_dwconv, or, when that is AVX-512's
 * and the CPU has VNNI, mace_q8_dwconv__avx512vnni (a sub-ISA variant dispatched on the extra
 * feature, as the int8 GEMM's families are). */
mace_q8_dwconv_fn mace_q8_dwconv_active(void);

#endif /* MACE_RUNTIME_CPU_SIMD_DISPATCH_H_ */
