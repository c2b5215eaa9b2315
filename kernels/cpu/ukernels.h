/* The per-ISA kernels' prototypes, expanded from the kernel manifest (kernels/cpu/manifest.inc)
 * for the ISAs this build compiles: `mace_f32_activation_ukernel mace_f32_activation__avx2;`
 * and so on. Each kernel's contract is at its function type in the family's header. */
#ifndef MACE_KERNELS_CPU_UKERNELS_H_
#define MACE_KERNELS_CPU_UKERNELS_H_

#include "kernels/cpu/activation.h"
#include "kernels/cpu/col2im.h"
#include "kernels/cpu/directconv.h"
#include "kernels/cpu/dwconv.h"
#include "kernels/cpu/eltwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/layer_norm.h"
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_convkxk.h"
#include "kernels/cpu/nchwc_pool.h"
#include "kernels/cpu/nchwc_winograd.h"
#include "kernels/cpu/pooling.h"
#include "kernels/cpu/qdwconv.h"
#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/qmaxpool.h"
#include "kernels/cpu/qgemm.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/softmax.h"
#include "kernels/cpu/transpose.h"

#define MACE_UKERNEL(isa, unit, field, function) \
  MACE_IF_##isa(function##_ukernel MACE_UKERNEL_NAME(function, isa);)
#define MACE_GEMM_UKERNEL(isa, unit, field, function, type) \
  MACE_IF_##isa(type MACE_UKERNEL_NAME(function, isa);)
#define MACE_QGEMM_FAMILY(isa, unit, function, mr, nr, ku, b_signed, requant) \
  MACE_IF_##isa(mace_qgemm_ukernel MACE_UKERNEL_NAME(function, isa);            \
                mace_qgemm_requant requant;)
#include "kernels/cpu/manifest.inc"

#endif /* MACE_KERNELS_CPU_UKERNELS_H_ */
