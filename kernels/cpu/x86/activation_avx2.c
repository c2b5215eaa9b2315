/* f32 activations, avx2 (kernels/cpu/simd/activation_impl.inc on vec_avx2.h). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/activation_impl.inc"
