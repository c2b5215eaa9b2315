/* MatMul on the GPU (OpenCL, f32): batched products with NumPy broadcasting of up to 4 batch
 * dims, transpose_a/b, rank-1 operands, bias and fused activation, as the CPU kind
 * (ops/matmul.c); the tiled GEMM of ops/opencl/cl_gemm.c (operands read in place at their
 * strides, the batch dims as its z). */
#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_gemm.h"
#include "ops/opencl/cl_op.h"

#define MATMUL_CL_MAX_BATCH_DIMS 4

typedef struct matmul_cl_state {
  mace_cl_shadow shadow;
  int transpose_a, transpose_b;
  mace_activation act;
  int64_t m, n, k, batch;
  int32_t out_batch[4], a_bstride[4], b_bstride[4];  /* innermost last; 1 / 0 padding first */
  int64_t a_rs, a_cs, b_rs, b_cs;
  mace_cl_gemm gemm;
} matmul_cl_state;

static mace_status matmul_cl_init(mace_op *op) {
  matmul_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  st->transpose_a = mace_op_arg_int(op, "transpose_a", 0) != 0;
  st->transpose_b = mace_op_arg_int(op, "transpose_b", 0) != 0;
  return mace_fused_activation_parse(op, &st->act);
}

/* The operands' element strides and batch strides for the kernel. The CPU kind's infer (run
 * first) checked the shapes; this lays the same geometry out as ops/matmul.c does. */
static mace_status matmul_cl_infer(mace_op *op) {
  matmul_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  if (a->ndim == 1) {
    st->m = 1;
    st->k = a->dims[0];
    st->a_rs = st->k;
    st->a_cs = 1;
  } else {
    const int64_t r = a->dims[a->ndim - 2], c = a->dims[a->ndim - 1];
    st->m = st->transpose_a ? c : r;
    st->k = st->transpose_a ? r : c;
    st->a_rs = st->transpose_a ? 1 : c;
    st->a_cs = st->transpose_a ? c : 1;
  }
  if (b->ndim == 1) {
    st->n = 1;
    st->b_rs = st->b_cs = 1;
  } else {
    const int64_t r = b->dims[b->ndim - 2], c = b->dims[b->ndim - 1];
    st->n = st->transpose_b ? r : c;
    st->b_rs = st->transpose_b ? 1 : c;
    st->b_cs = st->transpose_b ? c : 1;
  }
  const int abd = a->ndim > 2 ? a->ndim - 2 : 0, bbd = b->ndim > 2 ? b->ndim - 2 : 0;
  const int nb = abd > bbd ? abd : bbd;
  if (nb > MATMUL_CL_MAX_BATCH_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (MatMul): %d batch dims on the GPU (at most %d)",
                      op->name, nb, MATMUL_CL_MAX_BATCH_DIMS);
  int64_t a_mat = a->ndim == 1 ? st->k : a->dims[a->ndim - 2] * a->dims[a->ndim - 1];
  int64_t b_mat = b->ndim == 1 ? st->k : b->dims[b->ndim - 2] * b->dims[b->ndim - 1];
  for (int i = 0; i < 4; ++i) {
    st->out_batch[i] = 1;
    st->a_bstride[i] = st->b_bstride[i] = 0;
  }
  st->batch = 1;
  for (int i = nb - 1; i >= 0; --i) {
    const int ai = i - (nb - abd), bi = i - (nb - bbd), slot = 4 - nb + i;
    const int64_t ad = ai >= 0 ? a->dims[ai] : 1, bd = bi >= 0 ? b->dims[bi] : 1;
    st->out_batch[slot] = (int32_t)(ad == 1 ? bd : ad);
    st->a_bstride[slot] = (int32_t)(ad == 1 ? 0 : a_mat);
    st->b_bstride[slot] = (int32_t)(bd == 1 ? 0 : b_mat);
    a_mat *= ad;
    b_mat *= bd;
    st->batch *= st->out_batch[slot];
  }
  /* B shared by every batch (a weight) and A's matrices back to back in memory: one GEMM of
   * batch * m rows, not `batch` GEMMs of m rows that each read all of B (an exporter's
   * [seq, 1, d] x [d, 3d] projection would otherwise be seq GEMVs). */
  int fold = !st->transpose_a && a->ndim >= 2 && st->batch > 1;
  for (int i = 0; i < 4 && fold; ++i)
    fold = st->b_bstride[i] == 0 && (st->out_batch[i] == 1 || st->a_bstride[i] != 0);
  mace_cl_gemm *g = &st->gemm;
  g->m = fold ? st->m * st->batch : st->m;
  g->n = st->n;
  g->k = st->k;
  int64_t ys = st->m * st->n;
  for (int i = 3; i >= 0; --i) {
    g->zdims[i] = fold ? 1 : st->out_batch[i];
    g->a_zs[i] = fold ? 0 : st->a_bstride[i];
    g->b_zs[i] = fold ? 0 : st->b_bstride[i];
    g->y_zs[i] = (int32_t)ys;
    g->bias_zs[i] = 0;
    ys *= st->out_batch[i];
  }
  g->a_rs = st->a_rs;
  g->a_cs = st->a_cs;
  g->b_rs = st->b_rs;
  g->b_cs = st->b_cs;
  g->ldy = st->n;
  g->bias_mode = 2;
  return mace_cl_gemm_prepare(op, g);
}

static mace_status matmul_cl_run(mace_op *op) {
  matmul_cl_state *st = op->state;
  const mace_tensor *bias = op->n_inputs > 2 ? op->inputs[2] : NULL;
  return mace_cl_gemm_run(op, &st->gemm, op->inputs[0], op->inputs[1], bias, NULL,
                          op->outputs[0], &st->act);
}

static void matmul_cl_release(mace_op *op) {
  matmul_cl_state *st = op->state;
  mace_cl_gemm_release(op, &st->gemm);
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_matmul_cl = {.type = "MatMul", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(matmul_cl_state),
                                        .init = matmul_cl_init, .infer = matmul_cl_infer,
                                        .run = matmul_cl_run, .release = matmul_cl_release};
