/* f32 softmax along the last axis, NEON (kernels/cpu/simd/softmax_impl.inc on vec_neon.h). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/softmax_impl.inc"
