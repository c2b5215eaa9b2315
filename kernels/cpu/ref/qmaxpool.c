/* Reference (portable C) build of the separable int8 max pooling (kernels/cpu/qmaxpool.h). */
#define MACE_SIMD_FN(name) name##__ref
#include "kernels/cpu/simd/qmaxpool_impl.inc"
