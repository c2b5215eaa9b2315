/* f32 softmax along the last axis, avx512 (simd/softmax_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/softmax_impl.inc"
