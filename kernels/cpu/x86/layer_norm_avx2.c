/* f32 layer / RMS normalization, avx2 (simd/layer_norm_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/layer_norm_impl.inc"
