/* RotaryEmbedding: ONNX RotaryEmbedding (opset 23), f32. */
/*
 * Inputs:  0 X f32 [B, Hn, L, D] or 3-D [B, L, Hn*D]
 *          1 cos_cache f32 [P, R/2] (with position_ids) or [B, L, R/2] (without; also
 *            [1, L, R/2], shared by every batch item, as the converter's rotary fusion
 *            writes for torch's exported rotate_half pattern)
 *          2 sin_cache f32, shape of cos_cache
 *          3 position_ids i64 [B, L], each in [0, P) (optional)
 * Output:  0 Y, shape of X
 * Arguments:
 *   interleaved           int 0|1 (default 0)
 *   rotary_embedding_dim  int R, 0: D (default 0)
 *   num_heads             int Hn, required for 3-D X (default 0)
 */
#include "core/op.h"
#include "kernels/cpu/ref/rotary_embedding.h"

typedef struct rotary_state {
  int64_t interleaved, rdim_arg, num_heads;
  int64_t Hn, L, D, rdim, st[3];
  int bcast;  /* caches [1, L, R/2] shared by a batch of more than one */
} rotary_state;

static mace_status rotary_init(mace_op *op) {
  rotary_state *s = (rotary_state *)op->state;
  s->interleaved = mace_op_arg_int(op, "interleaved", 0) != 0;
  s->rdim_arg = mace_op_arg_int(op, "rotary_embedding_dim", 0);
  s->num_heads = mace_op_arg_int(op, "num_heads", 0);
  return MACE_OK;
}

static mace_status rotary_bad(const mace_op *op, const char *what) {
  return mace_error(MACE_INVALID_MODEL, "op '%s' (RotaryEmbedding): %s", op->name, what);
}

static mace_status rotary_infer(mace_op *op) {
  rotary_state *s = (rotary_state *)op->state;
  const mace_tensor *x, *c, *sn;
  int64_t B, half;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 4, 1));
  x = op->inputs[0];
  c = op->inputs[1];
  sn = op->inputs[2];
  for (int i = 0; i < 3; ++i) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, op->inputs[i], MACE_DT_F32));
  B = x->dims[0];
  if (x->ndim == 4) {
    s->Hn = x->dims[1]; s->L = x->dims[2]; s->D = x->dims[3];
    s->st[0] = s->Hn * s->L * s->D; s->st[1] = s->L * s->D; s->st[2] = s->D;
  } else if (x->ndim == 3) {
    if (s->num_heads <= 0 || x->dims[2] % s->num_heads)
      return rotary_bad(op, "3-D input needs num_heads dividing its last dim");
    s->Hn = s->num_heads; s->L = x->dims[1]; s->D = x->dims[2] / s->Hn;
    s->st[0] = s->L * s->Hn * s->D; s->st[1] = s->D; s->st[2] = s->Hn * s->D;
  } else {
    return rotary_bad(op, "input must be 3-D or 4-D");
  }
  s->rdim = s->rdim_arg > 0 ? s->rdim_arg : s->D;
  if (s->rdim > s->D || s->rdim % 2) return rotary_bad(op, "bad rotary_embedding_dim");
  half = s->rdim / 2;
  if (!mace_dims_equal(c->dims, c->ndim, sn->dims, sn->ndim) || c->ndim < 2 ||
      c->dims[c->ndim - 1] != half)
    return rotary_bad(op, "cos/sin caches must match and end in rotary_embedding_dim / 2");
  if (op->n_inputs == 4) {
    const mace_tensor *p = op->inputs[3];
    if (p->dtype != MACE_DT_I64 || p->ndim != 2 || p->dims[0] != B || p->dims[1] != s->L ||
        c->ndim != 2)
      return rotary_bad(op, "position_ids must be int64 [B, L] with 2-D caches");
  } else if (c->ndim != 3 || (c->dims[0] != B && c->dims[0] != 1) || c->dims[1] != s->L) {
    return rotary_bad(op, "without position_ids the caches must be [B, L, R/2] or [1, L, R/2]");
  }
  s->bcast = op->n_inputs == 3 && c->dims[0] == 1 && B > 1;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = mace_tensor_numel(x) * 2;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct rotary_job {
  const rotary_state *s;
  const float *x, *c, *sn;
  const int64_t *pos;
  float *y;
} rotary_job;

static void rotary_range(void *ctx, int64_t begin, int64_t end) {
  const rotary_job *j = (const rotary_job *)ctx;
  const rotary_state *s = j->s;
  const int64_t per = s->Hn * s->L;
  if (!s->bcast) {
    mace_f32_rotary_embedding__ref(j->x, j->y, j->c, j->sn, j->pos, s->Hn, s->L, s->D, s->rdim,
                                   s->st, (int)s->interleaved, begin, end);
    return;
  }
  /* Shared caches: each batch item's rows as the first item's, at that item's offset. */
  while (begin < end) {
    const int64_t b = begin / per, stop = (b + 1) * per < end ? (b + 1) * per : end;
    mace_f32_rotary_embedding__ref(j->x + b * s->st[0], j->y + b * s->st[0], j->c, j->sn, NULL,
                                   s->Hn, s->L, s->D, s->rdim, s->st, (int)s->interleaved,
                                   begin - b * per, stop - b * per);
    begin = stop;
  }
}

static mace_status rotary_run(mace_op *op) {
  const rotary_state *s = (const rotary_state *)op->state;
  const int64_t rows = op->inputs[0]->dims[0] * s->Hn * s->L;
  rotary_job job = {s, (const float *)op->inputs[0]->data, (const float *)op->inputs[1]->data,
                    (const float *)op->inputs[2]->data, NULL, (float *)op->outputs[0]->data};
  if (op->n_inputs == 4) {
    const int64_t P = op->inputs[1]->dims[0], n = op->inputs[3]->dims[0] * op->inputs[3]->dims[1];
    job.pos = (const int64_t *)op->inputs[3]->data;
    for (int64_t i = 0; i < n; ++i)
      if (job.pos[i] < 0 || job.pos[i] >= P)
        return mace_error(MACE_INVALID_INPUT, "op '%s' (RotaryEmbedding): position id %lld out of "
                          "[0, %lld)", op->name, (long long)job.pos[i], (long long)P);
  }
  if (rows > 0)
    mace_threadpool_parallel_for(op->pool, rows, 16, rotary_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_rotary_embedding_f32 = {.type = "RotaryEmbedding",
                                                   .device = MACE_DEVICE_CPU,
                                                   .dtype = MACE_DT_F32,
                                                   .state_size = sizeof(rotary_state),
                                                   .init = rotary_init, .infer = rotary_infer,
                                                   .run = rotary_run};
