/* f32 layer / RMS normalization, avx512 (simd/layer_norm_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/layer_norm_impl.inc"
