/* RotaryEmbedding on the GPU (OpenCL, f32 stored fp32 or fp16): as the CPU kind
 * (ops/rotary_embedding.c, whose infer on the shadow checks the shapes and caches), 3-D or 4-D
 * input, interleaved or not, a partial rotary_embedding_dim, caches [B, L, R/2] or [1, L, R/2]
 * (what the converter's rotary fusion writes); kernels/opencl/rotary.cl. With position_ids
 * (int64, read per row) it runs on the CPU (MACE_UNSUPPORTED). */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct rotary_cl_state {
  mace_cl_shadow shadow;
  int64_t hn, len, d, rdim, st[3];
  int interleaved, bcast;
} rotary_cl_state;

static mace_status rotary_cl_init(mace_op *op) {
  rotary_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status rotary_cl_infer(mace_op *op) {
  rotary_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->n_inputs > 3)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (RotaryEmbedding): position_ids on the GPU",
                      op->name);
  const mace_tensor *x = op->inputs[0], *c = op->inputs[1];
  const int64_t b = x->dims[0];
  if (x->ndim == 4) {
    st->hn = x->dims[1];
    st->len = x->dims[2];
    st->d = x->dims[3];
    st->st[0] = st->hn * st->len * st->d;
    st->st[1] = st->len * st->d;
    st->st[2] = st->d;
  } else {  /* 3-D [B, L, Hn * D], num_heads checked by the CPU kind */
    st->hn = mace_op_arg_int(op, "num_heads", 0);
    st->len = x->dims[1];
    st->d = x->dims[2] / st->hn;
    st->st[0] = st->len * st->hn * st->d;
    st->st[1] = st->d;
    st->st[2] = st->hn * st->d;
  }
  const int64_t rdim = mace_op_arg_int(op, "rotary_embedding_dim", 0);
  st->rdim = rdim > 0 ? rdim : st->d;
  st->interleaved = mace_op_arg_int(op, "interleaved", 0) != 0;
  st->bcast = c->dims[0] == 1 && b > 1;
  return MACE_OK;
}

static mace_status rotary_cl_run(mace_op *op) {
  rotary_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t rows = op->inputs[0]->dims[0] * st->hn * st->len;
  if (rows == 0 || st->d == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "rotary", "rotary_embedding", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4, op, op->inputs[1]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 6, op, op->inputs[2]));
  const int64_t ints[] = {rows,      st->hn,    st->len,   st->d,           st->rdim,
                          st->st[0], st->st[1], st->st[2], st->interleaved, st->bcast};
  for (int i = 0; i < 10; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8 + i, ints[i]));
  const size_t gws[2] = {(size_t)st->d, (size_t)rows};
  return mace_cl_launch(rt, k, 2, gws, NULL, op->name);
}

static void rotary_cl_release(mace_op *op) {
  rotary_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_rotary_embedding_cl = {.type = "RotaryEmbedding",
                                                  .device = MACE_DEVICE_GPU,
                                                  .dtype = MACE_DT_F32,
                                                  .state_size = sizeof(rotary_cl_state),
                                                  .init = rotary_cl_init,
                                                  .infer = rotary_cl_infer,
                                                  .run = rotary_cl_run,
                                                  .release = rotary_cl_release};
