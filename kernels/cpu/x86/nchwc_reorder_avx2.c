/* NCHW <-> NCHWc reorders, block 8, AVX2 (simd/nchwc_reorder_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/nchwc_reorder_impl.inc"
