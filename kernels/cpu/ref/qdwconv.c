/* Reference (portable C) int8 depthwise convolution of one plane (kernels/cpu/qdwconv.h). */
#define MACE_SIMD_FN(name) name##__ref
#include "kernels/cpu/simd/qdwconv_impl.inc"
