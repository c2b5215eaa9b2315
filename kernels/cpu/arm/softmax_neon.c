/* f32 softmax along the last axis, NEON (simd/softmax_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/softmax_impl.inc"
