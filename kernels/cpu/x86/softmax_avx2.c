/* f32 softmax along the last axis, avx2 (simd/softmax_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/softmax_impl.inc"
