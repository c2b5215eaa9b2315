/* f32 NCHWc pooling and per-channel binary ops, avx512 (simd/nchwc_pool_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/nchwc_pool_impl.inc"
