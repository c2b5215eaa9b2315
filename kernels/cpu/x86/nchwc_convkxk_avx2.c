/* f32 direct KxK convolution on the NCHWc layout, avx2 (simd/nchwc_convkxk_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/nchwc_convkxk_impl.inc"
