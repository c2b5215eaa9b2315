/* f32 2-D max / average pooling on NCHW rows, NEON (simd/pooling_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/pooling_impl.inc"
