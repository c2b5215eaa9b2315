/* f32 direct KxK convolution on the NCHWc layout, NEON (simd/nchwc_convkxk_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_convkxk_impl.inc"
