/* f32 Winograd transforms on the NCHWc layout, avx512 (simd/nchwc_winograd_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/nchwc_winograd_impl.inc"
