/* f32 2-D max / average pooling on NCHW rows, avx2 (simd/pooling_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/pooling_impl.inc"
