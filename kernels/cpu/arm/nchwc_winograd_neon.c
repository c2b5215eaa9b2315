/* f32 Winograd transforms on the NCHWc layout, NEON (simd/nchwc_winograd_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_winograd_impl.inc"
