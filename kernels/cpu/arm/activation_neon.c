/* f32 activations, NEON (kernels/cpu/simd/activation_impl.inc on vec_neon.h). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/activation_impl.inc"
