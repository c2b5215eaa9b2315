/* f32 softmax along the last axis, avx512 (kernels/cpu/simd/softmax_impl.inc on vec_avx512.h). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/softmax_impl.inc"
