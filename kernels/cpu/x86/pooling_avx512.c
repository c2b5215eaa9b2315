/* f32 2-D max / average pooling on NCHW rows, avx512 (kernels/cpu/simd/pooling_impl.inc on vec_avx512.h). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/pooling_impl.inc"
