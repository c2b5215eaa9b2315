/* NCHW <-> NCHWc reorders, block 4, NEON (simd/nchwc_reorder_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_reorder_impl.inc"
