/* f32 NCHWc pooling and per-channel binary ops, NEON (simd/nchwc_pool_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_pool_impl.inc"
