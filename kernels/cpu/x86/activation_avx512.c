/* f32 activations, avx512 (kernels/cpu/simd/activation_impl.inc on vec_avx512.h). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/activation_impl.inc"
