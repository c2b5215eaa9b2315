/* NCHW <-> NCHWc reorders, block 16, AVX-512 (simd/nchwc_reorder_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/nchwc_reorder_impl.inc"
