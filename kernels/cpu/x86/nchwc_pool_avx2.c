/* f32 NCHWc pooling and per-channel binary ops, avx2 (simd/nchwc_pool_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/nchwc_pool_impl.inc"
