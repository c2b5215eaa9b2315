/* f32 activations, avx2 (simd/activation_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/activation_impl.inc"
