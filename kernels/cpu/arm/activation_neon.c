/* f32 activations, NEON (simd/activation_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/activation_impl.inc"
