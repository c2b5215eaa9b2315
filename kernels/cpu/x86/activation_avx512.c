/* f32 activations, avx512 (simd/activation_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/activation_impl.inc"
