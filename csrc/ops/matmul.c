/* MatMul: batched matrix product with NumPy broadcasting of batch dims (ONNX MatMul), f32, on the CPU. */
/*
 * Inputs:  0 a  [..., M, K] (or [K, M] when transpose_a); rank 1 [K] is a row vector
 *          1 b  [..., K, N] (or [N, K] when transpose_b); rank 1 [K] is a column vector
 *          2 bias [N] (optional, f32): added to every row before the activation (the
 *               converter folds MatMul -> Add(constant [N]) into it)
 * Output:  0 y  [broadcast(a batch dims, b batch dims)..., M, N], without the M (N) axis when
 *               a (b) has rank 1, as numpy.matmul
 * Arguments:
 *   transpose_a, transpose_b  int 0 (default) | 1; ignored for a rank-1 operand
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                             the fused activation (ops/fused_activation.h)
 */
#include "core/op.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/ref/gemm.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/gemm_dispatch.h"

#define MATMUL_BLOCK_N 64

typedef struct matmul_state {
  int transpose_a, transpose_b;
  mace_activation act;
  int64_t m, n, k, n_blocks, batch;
  int nb;                                  /* number of output batch dims */
  int64_t out_batch[MACE_MAX_DIMS];
  int64_t a_bstride[MACE_MAX_DIMS], b_bstride[MACE_MAX_DIMS];  /* 0 where broadcast */
  int64_t a_rs, a_cs, b_rs, b_cs;
  const mace_gemm_family *gemm; /* NULL: reference kernel */
  float *packed_b;              /* owned: a constant, unbatched b packed once */
  int64_t packed_k, packed_n;
  int b_broadcast;              /* every b batch stride is 0 */
  int64_t slots;                /* >0: batches split over this many threads, each with its own
                                   scratch slot of slot_bytes (else one GEMM at a time) */
  size_t slot_bytes;
} matmul_state;

/* Below this many multiply-adds per matrix the packing does not pay: reference kernel. */
#define MATMUL_GEMM_MIN_MACS 4096
/* Below this many per matrix, batches are split over threads rather than each GEMM. */
#define MATMUL_SMALL_MACS (1 << 18)

static void matmul_release(mace_op *op) {
  matmul_state *st = op->state;
  mace_aligned_free(st->packed_b);
  st->packed_b = NULL;
}

static mace_status matmul_init(mace_op *op) {
  matmul_state *st = op->state;
  st->transpose_a = mace_op_arg_int(op, "transpose_a", 0) != 0;
  st->transpose_b = mace_op_arg_int(op, "transpose_b", 0) != 0;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status matmul_infer(mace_op *op) {
  matmul_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  const mace_tensor *bias = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, a, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (bias) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, bias, MACE_DT_F32));
  if (a->ndim < 1 || b->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (MatMul): operands must have rank >= 1",
                      op->name);
  int64_t ka, kb;
  if (a->ndim == 1) {
    st->m = 1;
    ka = a->dims[0];
    st->a_rs = ka;
    st->a_cs = 1;
  } else {
    const int64_t r = a->dims[a->ndim - 2], c = a->dims[a->ndim - 1];
    st->m = st->transpose_a ? c : r;
    ka = st->transpose_a ? r : c;
    st->a_rs = st->transpose_a ? 1 : c;
    st->a_cs = st->transpose_a ? c : 1;
  }
  if (b->ndim == 1) {
    st->n = 1;
    kb = b->dims[0];
    st->b_rs = 1;
    st->b_cs = 1;
  } else {
    const int64_t r = b->dims[b->ndim - 2], c = b->dims[b->ndim - 1];
    st->n = st->transpose_b ? r : c;
    kb = st->transpose_b ? c : r;
    st->b_rs = st->transpose_b ? 1 : c;
    st->b_cs = st->transpose_b ? c : 1;
  }
  if (ka != kb)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (MatMul): inner dimensions differ (%lld vs %lld)", op->name,
                      (long long)ka, (long long)kb);
  st->k = ka;
  if (bias && (bias->ndim != 1 || bias->dims[0] != st->n))
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (MatMul): bias has %lld values (rank %d), expects [%lld]",
                      op->name, (long long)mace_tensor_numel(bias), bias->ndim,
                      (long long)st->n);
  const int abd = a->ndim > 2 ? a->ndim - 2 : 0, bbd = b->ndim > 2 ? b->ndim - 2 : 0;
  st->nb = abd > bbd ? abd : bbd;
  int64_t a_mat = a->ndim == 1 ? ka : a->dims[a->ndim - 2] * a->dims[a->ndim - 1];
  int64_t b_mat = b->ndim == 1 ? kb : b->dims[b->ndim - 2] * b->dims[b->ndim - 1];
  /* Walk batch dims from the innermost outwards, aligning them at the right. */
  st->batch = 1;
  for (int i = st->nb - 1; i >= 0; --i) {
    const int ai = i - (st->nb - abd), bi = i - (st->nb - bbd);
    const int64_t ad = ai >= 0 ? a->dims[ai] : 1, bd = bi >= 0 ? b->dims[bi] : 1;
    if (ad != bd && ad != 1 && bd != 1) {
      char sa[96], sb[96];
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (MatMul): batch dims of %s and %s do not broadcast", op->name,
                        mace_dims_str(a->dims, a->ndim, sa, sizeof(sa)),
                        mace_dims_str(b->dims, b->ndim, sb, sizeof(sb)));
    }
    st->out_batch[i] = ad == 1 ? bd : ad;
    st->a_bstride[i] = ad == 1 ? 0 : a_mat;
    st->b_bstride[i] = bd == 1 ? 0 : b_mat;
    a_mat *= ad;
    b_mat *= bd;
    st->batch *= st->out_batch[i];
  }
  int64_t dims[MACE_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < st->nb; ++i) dims[nd++] = st->out_batch[i];
  if (a->ndim > 1) dims[nd++] = st->m;
  if (b->ndim > 1) dims[nd++] = st->n;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, nd));
  st->n_blocks = (st->n + MATMUL_BLOCK_N - 1) / MATMUL_BLOCK_N;
  op->macs = st->batch * st->m * st->n * st->k;
  op->scratch_bytes = 0;
  st->gemm = mace_gemm_family_active();
  /* Once b is packed the GEMM runs at every shape, small ones too: the packed copy is then
   * all the op reads of b (matmul_input_packed). */
  if (!st->gemm || (st->m * st->n * st->k < MATMUL_GEMM_MIN_MACS && !st->packed_b)) {
    st->gemm = NULL;
    return MACE_OK;
  }
  st->b_broadcast = 1;
  for (int i = 0; i < st->nb; ++i)
    if (st->b_bstride[i] != 0) st->b_broadcast = 0;
  /* One b for every batch of a row-major a that is not broadcast itself (a transformer's
   * [batch, seq, D] times a weight [D, N]): the batches are consecutive rows of one
   * [batch * M, K] product, one GEMM instead of a GEMM a batch. */
  int a_whole = a->ndim > 2 && !st->transpose_a;
  for (int i = 0; i < st->nb; ++i)
    if (st->a_bstride[i] == 0 && st->out_batch[i] > 1) a_whole = 0;
  if (st->b_broadcast && a_whole && st->batch > 1) {
    st->m *= st->batch;
    st->batch = 1;
    st->nb = 0;
  }
  if (st->packed_b && (st->packed_k != st->k || st->packed_n != st->n)) matmul_release(op);
  if (b->role == MACE_TENSOR_CONST && b->data && st->b_broadcast && !st->packed_b) {
    const int64_t floats = mace_gemm_packed_b_floats(st->gemm, st->k, st->n);
    /* On huge pages, as the convolutions' packed filters: BERT's weights streamed from 4 KB
     * pages miss the TLB (benchmarks/HISTORY.md). */
    st->packed_b = mace_filter_alloc((size_t)floats * sizeof(float));
    if (!st->packed_b)
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (MatMul): no memory for the packed b "
                        "(%lld floats)", op->name, (long long)floats);
    mace_gemm_pack_b(st->gemm, st->k, st->n, b->data, st->b_rs, st->b_cs, st->packed_b, 0,
                     (st->n + st->gemm->nr - 1) / st->gemm->nr);
    st->packed_k = st->k;
    st->packed_n = st->n;
  }
  /* Many small products: one thread per share of the batches (a GEMM each, single-threaded)
   * costs less than spreading every small GEMM over all threads. */
  const int threads = mace_threadpool_size(op->pool);
  op->scratch_bytes = mace_gemm_scratch_bytes(st->gemm, st->m, st->n, st->k, 0,
                                              st->packed_b != NULL, threads);
  st->slots = 0;
  if (threads > 1 && st->batch > 1 &&
      (st->batch % threads == 0 || st->batch >= 4 * threads ||
       st->m * st->n * st->k < MATMUL_SMALL_MACS)) {
    st->slots = st->batch < threads ? st->batch : threads;
    st->slot_bytes = mace_gemm_scratch_bytes(st->gemm, st->m, st->n, st->k, 0,
                                             st->packed_b != NULL, 1);
    op->scratch_bytes = st->slot_bytes * (size_t)st->slots;
  }
  return MACE_OK;
}

typedef struct matmul_ctx {
  const matmul_state *st;
  const float *a, *b, *bias; /* bias: NULL or [n] */
  float *y;
} matmul_ctx;

/* Items are (batch, row, block of MATMUL_BLOCK_N columns), row-major in that order. */
static void matmul_range(void *p, int64_t begin, int64_t end) {
  const matmul_ctx *c = p;
  const matmul_state *st = c->st;
  const int64_t per_batch = st->m * st->n_blocks;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t bidx = item / per_batch, r = item % per_batch;
    const int64_t m = r / st->n_blocks;
    const int64_t n0 = (r % st->n_blocks) * MATMUL_BLOCK_N;
    const int64_t n1 = n0 + MATMUL_BLOCK_N < st->n ? n0 + MATMUL_BLOCK_N : st->n;
    int64_t aoff = 0, boff = 0, rem = bidx;
    for (int i = st->nb - 1; i >= 0; --i) {
      const int64_t d = rem % st->out_batch[i];
      rem /= st->out_batch[i];
      aoff += d * st->a_bstride[i];
      boff += d * st->b_bstride[i];
    }
    float *y = c->y + bidx * st->m * st->n;
    mace_f32_gemm__ref(st->k, c->a + aoff, st->a_rs, st->a_cs, c->b + boff, st->b_rs, st->b_cs,
                       y, st->n, m, m + 1, n0, n1);
    float *row = y + m * st->n + n0;
    if (c->bias)
      for (int64_t j = n0; j < n1; ++j) row[j - n0] += c->bias[j];
    if (st->act.kind != MACE_ACT_NONE) mace_f32_activation(&st->act, row, row, n1 - n0);
  }
}

/* The GEMM arguments of output batch bidx. */
static mace_gemm_args matmul_batch_args(const matmul_state *st, const matmul_ctx *c,
                                        int64_t bidx) {
  int64_t aoff = 0, boff = 0, rem = bidx;
  for (int i = st->nb - 1; i >= 0; --i) {
    const int64_t d = rem % st->out_batch[i];
    rem /= st->out_batch[i];
    aoff += d * st->a_bstride[i];
    boff += d * st->b_bstride[i];
  }
  return (mace_gemm_args){.f = st->gemm, .m = st->m, .n = st->n, .k = st->k,
                          .a = c->a + aoff, .a_rs = st->a_rs, .a_cs = st->a_cs,
                          .b = c->b + boff, .b_packed = st->packed_b,
                          .b_rs = st->b_rs, .b_cs = st->b_cs,
                          .c = c->y + bidx * st->m * st->n, .ldc = st->n, .bias = c->bias,
                          .bias_per_row = 0, .act = &st->act};
}

typedef struct matmul_slot_ctx {
  const matmul_ctx *c;
  char *scratch;
} matmul_slot_ctx;

/* Items are scratch slots; slot t computes its share of the batches single-threaded. */
static void matmul_slot_range(void *p, int64_t begin, int64_t end) {
  const matmul_slot_ctx *sc = p;
  const matmul_state *st = sc->c->st;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t b0 = st->batch * t / st->slots, b1 = st->batch * (t + 1) / st->slots;
    for (int64_t bidx = b0; bidx < b1; ++bidx) {
      const mace_gemm_args g = matmul_batch_args(st, sc->c, bidx);
      mace_gemm_run(NULL, &g, sc->scratch + (size_t)t * st->slot_bytes);
    }
  }
}

static mace_status matmul_run_gemm(mace_op *op) {
  const matmul_state *st = op->state;
  const matmul_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
                        op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  if (st->slots > 0) {
    matmul_slot_ctx sc = {&c, op->scratch};
    mace_threadpool_parallel_for(op->pool, st->slots, 1, matmul_slot_range, &sc);
    return MACE_OK;
  }
  for (int64_t bidx = 0; bidx < st->batch; ++bidx) {
    const mace_gemm_args g = matmul_batch_args(st, &c, bidx);
    mace_gemm_run(op->pool, &g, op->scratch);
  }
  return MACE_OK;
}

static mace_status matmul_run(mace_op *op) {
  const matmul_state *st = op->state;
  if (st->gemm) return matmul_run_gemm(op);
  matmul_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
                  op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, st->batch * st->m * st->n_blocks, 1, matmul_range, &c);
  return MACE_OK;
}

/* A constant b, once packed, is read from the packed copy alone: its k and n never change
 * (they are its dims), so infer never packs it again, and the GEMM runs at every shape. */
static int matmul_input_packed(const mace_op *op, int k) {
  const matmul_state *st = op->state;
  return k == 1 && st->packed_b != NULL;
}

const mace_op_kind mace_op_matmul_f32 = {.type = "MatMul",
                                         .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(matmul_state),
                                         .init = matmul_init,
                                         .infer = matmul_infer,
                                         .run = matmul_run,
                                         .release = matmul_release,
                                         .input_packed = matmul_input_packed};
