/* f32 layer / RMS normalization, NEON (simd/layer_norm_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/layer_norm_impl.inc"
