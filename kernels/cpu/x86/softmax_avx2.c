/* f32 softmax along the last axis, avx2 (kernels/cpu/simd/softmax_impl.inc on vec_avx2.h). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/softmax_impl.inc"
