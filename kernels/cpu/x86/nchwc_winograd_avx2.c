/* f32 Winograd transforms on the NCHWc layout, avx2 (simd/nchwc_winograd_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/nchwc_winograd_impl.inc"
