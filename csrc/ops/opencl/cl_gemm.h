/* The tiled GEMM launch shared by the GPU Conv2D, FullyConnected and MatMul kinds
 * (kernels/opencl/gemm.cl): Y[z] = act(A[z] B[z] + bias + residual) over a batch of up to 4
 * broadcast dims, A and B at any element strides, or B gathered from a convolution's input
 * (implicit GEMM). The kind fills the problem (mace_cl_gemm, zeroed first), calls
 * mace_cl_gemm_prepare at infer (tile and split-K choice, split-K scratch, conv table) and
 * mace_cl_gemm_run at run (programs are built at the first). */
#ifndef MACE_OPS_OPENCL_CL_GEMM_H_
#define MACE_OPS_OPENCL_CL_GEMM_H_

#include "kernels/cpu/ref/activation.h"
#include "ops/opencl/cl_op.h"

typedef struct mace_cl_gemm {
  /* The problem, set by the kind. */
  int64_t m, n, k;
  int32_t zdims[4];            /* batch dims, innermost last (1 where unused) */
  int32_t a_zs[4], b_zs[4], y_zs[4], bias_zs[4];  /* their element strides per operand */
  int64_t a_rs, a_cs, b_rs, b_cs, ldy;  /* A[m, k] at m*a_rs + k*a_cs; B likewise; Y m*ldy + n */
  int bias_mode;               /* 0: none, 1: bias[m], 2: bias[n] */
  int conv;                    /* B is the implicit im2col of a convolution's input (the
                                  window's extent (k - 1) * dil under 32768 high, 65536 wide): */
  int64_t in_h, in_w, out_w, k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
  /* The plan, set by mace_cl_gemm_prepare. */
  int tile;                    /* the variant: 64 (large), 32 (small), 16 (skinny), 1 (GEMV) */
  int splits;                  /* split-K factor, 1: none */
  int64_t kchunk;              /* K per split, a multiple of the K step */
  void *part;                  /* owned: the split-K partial sums (float) */
  size_t part_bytes;
  void *ktab;                  /* owned, conv: per k, the input offset and window position */
  size_t ktab_bytes;
} mace_cl_gemm;

/* The variant and split-K factor for an M x N x K product over `batch` items on a device of
 * `compute_units`. `force` (the MACE_CL_GEMM environment variable; NULL or "auto": choose)
 * is "64", "32" or "16", optionally ":SPLITS": a fixed variant, for tests and measurements. */
mace_status mace_cl_gemm_choose(int64_t m, int64_t n, int64_t k, int64_t batch,
                                int compute_units, const char *force, int *tile, int *splits);

/* At infer: the plan, the split-K scratch and the implicit GEMM's table (re)allocated. */
mace_status mace_cl_gemm_prepare(mace_op *op, mace_cl_gemm *g);
/* Launches the product (and the split-K reduction): a, b device tensors (for conv: the
 * filter and the input), bias and res NULL when absent. */
mace_status mace_cl_gemm_run(mace_op *op, const mace_cl_gemm *g, const mace_tensor *a,
                             const mace_tensor *b, const mace_tensor *bias,
                             const mace_tensor *res, const mace_tensor *y,
                             const mace_activation *act);
void mace_cl_gemm_release(mace_op *op, mace_cl_gemm *g);

#endif /* MACE_OPS_OPENCL_CL_GEMM_H_ */
