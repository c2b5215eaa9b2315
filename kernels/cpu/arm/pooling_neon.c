/* f32 2-D max / average pooling on NCHW rows, NEON (kernels/cpu/simd/pooling_impl.inc on vec_neon.h). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/pooling_impl.inc"
