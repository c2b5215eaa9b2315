/* The kernel-level interface the micro-benchmarks (mace_bench_gemm, mace_bench_qgemm,
 * mace_bench_simd, mace_bench_winograd) time directly, below the public API: the dispatch tables and the GEMM
 * driver, the Winograd driver, the reference kernels they compare against, the CPU features,
 * the thread pool and aligned buffers. Internal and unstable (not installed, no ABI): tools
 * that need more than mace/mace.h include this header and nothing from csrc/core or csrc/ops,
 * so what they reach is listed here, in one place. CMakeLists.txt gives a tool that includes it
 * the library's internal include path. */
#ifndef MACE_TOOLS_MACE_KERNELS_H_
#define MACE_TOOLS_MACE_KERNELS_H_

#include "runtime/cpu/cpu_features.h"     /* mace_cpu_isa_active / _detected / _name, mace_cpu_features */
#include "core/tensor.h"           /* mace_aligned_alloc / mace_aligned_free */
#include "core/threadpool.h"       /* mace_threadpool_create / _size / _parallel_for / _destroy */
#include "kernels/cpu/nchwc_convkxk.h"
#include "kernels/cpu/ref/conv2d.h"
#include "kernels/cpu/ref/eltwise.h"
#include "kernels/cpu/ref/gemm.h"
#include "kernels/cpu/ref/requant.h"
#include "kernels/cpu/ref/softmax.h"
#include "runtime/cpu/gemm_dispatch.h"     /* mace_gemm_families, mace_gemm_run, packing */
#include "runtime/cpu/qgemm_dispatch.h"    /* mace_qgemm_families, mace_qgemm_run, packing (int8) */
#include "runtime/cpu/simd_dispatch.h"     /* mace_simd_variants / mace_simd_active */
#include "ops/winograd_conv.h"     /* mace_winograd_conv_plan / _run / _free */

#endif /* MACE_TOOLS_MACE_KERNELS_H_ */
