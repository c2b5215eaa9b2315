/* Reference (portable C) col2im of a transposed convolution, f32 (kernels/cpu/col2im.h). */
#define MACE_SIMD_FN(name) name##__ref
#include "kernels/cpu/simd/col2im_impl.inc"
