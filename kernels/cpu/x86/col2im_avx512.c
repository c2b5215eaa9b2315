/* col2im of a transposed convolution, f32, compiled for AVX-512 (kernels/cpu/col2im.h). */
#define MACE_COL2IM_NAME mace_f32_col2im__avx512
#include "kernels/cpu/col2im_impl.inc"
