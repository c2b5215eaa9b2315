/* Winograd F(2,3) / F(4,3) input and output transforms for AVX2 + FMA (this file is compiled with
 * -mavx2 -mfma): the portable code of kernels/cpu/ref/winograd_transforms.inc, 8 tiles per vector. */
#include "kernels/cpu/ref/winograd.h"

#define WG_NAME(base) base##__avx2
#include "kernels/cpu/ref/winograd_transforms.inc"
