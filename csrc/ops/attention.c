/* Attention: ONNX Attention (opset 23/24) scaled dot-product attention, f32. */
/*
 * Inputs:  0 Q  f32 [B, Hq, L, E] or 3-D [B, L, Hq*E]
 *          1 K  f32 [B, Hkv, Skv, E] or 3-D [B, Skv, Hkv*E]
 *          2 V  f32 [B, Hkv, Skv, Ev] or 3-D [B, Skv, Hkv*Ev]
 *          then, in this order, those whose has_* argument is 1:
 *            attn_mask  f32 or bool, broadcastable to [B, Hq, L, M], M <= S (keys past M
 *                       are masked)                                        has_attn_mask
 *            past_key [B, Hkv, P, E], past_value [B, Hkv, P, Ev] (S = P + Skv)  has_past
 *            nonpad_kv_seqlen i64 [B] (valid keys per batch; no past)   has_nonpad_kv_seqlen
 * Outputs: 0 Y [B, Hq, L, Ev] (3-D input: [B, L, Hq*Ev]);
 *          1 present_key [B, Hkv, S, E], 2 present_value [B, Hkv, S, Ev],
 *          3 qk_matmul_output [B, Hq, L, S]; 1 to 4 outputs may be given.
 * Arguments:
 *   q_num_heads, kv_num_heads  int, head counts of 3-D inputs (required for them)
 *   scale                  float, 0: 1/sqrt(E) (default 0)
 *   softcap                float > 0: scores -> softcap * tanh(scores / softcap) (default 0)
 *   is_causal              int 0|1: key j allowed for query i iff j <= i + P (with
 *                          nonpad_kv_seqlen: j <= i + nonpad[b] - L) (default 0)
 *   qk_matmul_output_mode  int 0: scale * Q K^T, 1: after softcap, 2: plus mask/causal
 *                          bias, 3: softmax probabilities (default 0)
 *   has_attn_mask, has_past, has_nonpad_kv_seqlen  int 0|1 (default 0)
 */
#include <math.h>
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/attention.h"
#include "ops/attention_state.h"

#define ATTN_GRAIN_ROWS 4

static mace_status attention_init(mace_op *op) {
  attention_state *s = (attention_state *)op->state;
  int next = 3;
  s->q_heads = mace_op_arg_int(op, "q_num_heads", 0);
  s->kv_heads = mace_op_arg_int(op, "kv_num_heads", 0);
  s->is_causal = mace_op_arg_int(op, "is_causal", 0) != 0;
  s->qk_mode = mace_op_arg_int(op, "qk_matmul_output_mode", 0);
  s->scale = mace_op_arg_float(op, "scale", 0.0f);
  s->softcap = mace_op_arg_float(op, "softcap", 0.0f);
  s->in_mask = mace_op_arg_int(op, "has_attn_mask", 0) ? next++ : -1;
  s->in_pk = s->in_pv = -1;
  if (mace_op_arg_int(op, "has_past", 0)) {
    s->in_pk = next++;
    s->in_pv = next++;
  }
  s->in_nonpad = mace_op_arg_int(op, "has_nonpad_kv_seqlen", 0) ? next++ : -1;
  if (s->qk_mode < 0 || s->qk_mode > 3)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Attention): qk_matmul_output_mode %lld",
                      op->name, (long long)s->qk_mode);
  return MACE_OK;
}

static mace_status bad(const mace_op *op, const char *what) {
  return mace_error(MACE_INVALID_MODEL, "op '%s' (Attention): %s", op->name, what);
}

static mace_status attention_infer(mace_op *op) {
  attention_state *s = (attention_state *)op->state;
  mace_attention_params *p = &s->prm;
  const int n_in = 3 + (s->in_mask >= 0) + 2 * (s->in_pk >= 0) + (s->in_nonpad >= 0);
  const mace_tensor *q, *k, *v;
  int64_t B, Hq, Hkv, L, Skv, E, Ev, P = 0, S, dims[4];
  if (op->n_inputs != n_in || op->n_outputs < 1 || op->n_outputs > 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Attention): %d inputs and %d outputs, "
                      "expected %d and 1..4", op->name, op->n_inputs, op->n_outputs, n_in);
  q = op->inputs[0];
  k = op->inputs[1];
  v = op->inputs[2];
  for (int i = 0; i < 3; ++i) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, op->inputs[i], MACE_DT_F32));
  if (q->ndim != k->ndim || q->ndim != v->ndim || (q->ndim != 3 && q->ndim != 4))
    return bad(op, "Q, K and V must all be 3-D or all 4-D");
  s->rank = q->ndim;
  B = q->dims[0];
  if (k->dims[0] != B || v->dims[0] != B) return bad(op, "batch sizes of Q, K, V differ");
  if (q->ndim == 4) {
    Hq = q->dims[1]; L = q->dims[2]; E = q->dims[3];
    Hkv = k->dims[1]; Skv = k->dims[2];
    if (k->dims[3] != E) return bad(op, "K's head size differs from Q's");
    if (v->dims[1] != Hkv || v->dims[2] != Skv) return bad(op, "V's shape does not fit K's");
    Ev = v->dims[3];
    p->q_st[0] = Hq * L * E; p->q_st[1] = L * E; p->q_st[2] = E;
    p->k_st[0] = Hkv * Skv * E; p->k_st[1] = Skv * E; p->k_st[2] = E;
    p->v_st[0] = Hkv * Skv * Ev; p->v_st[1] = Skv * Ev; p->v_st[2] = Ev;
    p->y_st[0] = Hq * L * Ev; p->y_st[1] = L * Ev; p->y_st[2] = Ev;
  } else {
    Hq = s->q_heads; Hkv = s->kv_heads;
    if (Hq <= 0 || Hkv <= 0) return bad(op, "3-D inputs need q_num_heads and kv_num_heads");
    L = q->dims[1]; Skv = k->dims[1];
    if (v->dims[1] != Skv) return bad(op, "K and V sequence lengths differ");
    if (q->dims[2] % Hq || k->dims[2] % Hkv || v->dims[2] % Hkv)
      return bad(op, "hidden sizes are not multiples of the head counts");
    E = q->dims[2] / Hq; Ev = v->dims[2] / Hkv;
    if (k->dims[2] / Hkv != E) return bad(op, "K's head size differs from Q's");
    p->q_st[0] = L * Hq * E; p->q_st[1] = E; p->q_st[2] = Hq * E;
    p->k_st[0] = Skv * Hkv * E; p->k_st[1] = E; p->k_st[2] = Hkv * E;
    p->v_st[0] = Skv * Hkv * Ev; p->v_st[1] = Ev; p->v_st[2] = Hkv * Ev;
    p->y_st[0] = L * Hq * Ev; p->y_st[1] = Ev; p->y_st[2] = Hq * Ev;
  }
  if (Hkv <= 0 || Hq % Hkv) return bad(op, "q heads must be a multiple of kv heads");
  if (s->in_pk >= 0) {
    const mace_tensor *pk = op->inputs[s->in_pk], *pv = op->inputs[s->in_pv];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, pk, MACE_DT_F32));
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, pv, MACE_DT_F32));
    if (pk->ndim != 4 || pv->ndim != 4 || pk->dims[0] != B || pk->dims[1] != Hkv ||
        pk->dims[3] != E || pv->dims[0] != B || pv->dims[1] != Hkv || pv->dims[2] != pk->dims[2] ||
        pv->dims[3] != Ev)
      return bad(op, "past_key/past_value shapes do not fit K/V");
    P = pk->dims[2];
  }
  S = P + Skv;
  s->P = P;
  s->Skv = Skv;
  p->B = B; p->Hq = Hq; p->Hkv = Hkv; p->L = L; p->S = S; p->E = E; p->Ev = Ev;
  p->scale = s->scale != 0.0f ? s->scale : 1.0f / sqrtf((float)E);
  p->softcap = s->softcap;
  p->is_causal = (int)s->is_causal;
  p->causal_offset = P;
  p->qk_mode = (int)s->qk_mode;
  p->mask_len = S;
  memset(p->mask_st, 0, sizeof p->mask_st);
  if (s->in_mask >= 0) {
    const mace_tensor *m = op->inputs[s->in_mask];
    const int64_t want[4] = {B, Hq, L, -1};
    int64_t st = 1;
    if (m->dtype != MACE_DT_F32 && m->dtype != MACE_DT_BOOL)
      return bad(op, "attn_mask must be float32 or bool");
    if (m->ndim < 1 || m->ndim > 4) return bad(op, "attn_mask rank must be 1..4");
    for (int d = m->ndim - 1; d >= 0; --d) {
      const int ax = 4 - m->ndim + d;
      const int64_t n = m->dims[d];
      if (ax == 3) {
        if (n > S) return bad(op, "attn_mask covers more keys than there are");
        p->mask_len = n;
        p->mask_st[3] = 1;
      } else if (n != 1 && n != want[ax]) {
        return bad(op, "attn_mask does not broadcast to [B, q_num_heads, L, S]");
      } else {
        p->mask_st[ax] = n == 1 ? 0 : st;
      }
      st *= n;
    }
  }
  if (s->in_nonpad >= 0) {
    const mace_tensor *t = op->inputs[s->in_nonpad];
    if (t->dtype != MACE_DT_I64 || t->ndim != 1 || t->dims[0] != B)
      return bad(op, "nonpad_kv_seqlen must be int64 [B]");
    if (s->in_pk >= 0) return bad(op, "nonpad_kv_seqlen cannot be combined with past_key");
  }
  if (s->rank == 4) {
    dims[0] = B; dims[1] = Hq; dims[2] = L; dims[3] = Ev;
  } else {
    dims[0] = B; dims[1] = L; dims[2] = Hq * Ev;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, s->rank));
  dims[0] = B; dims[1] = Hkv; dims[2] = S; dims[3] = E;
  if (op->n_outputs > 1) MACE_RETURN_IF_ERROR(mace_op_set_output(op, 1, MACE_DT_F32, dims, 4));
  dims[3] = Ev;
  if (op->n_outputs > 2) MACE_RETURN_IF_ERROR(mace_op_set_output(op, 2, MACE_DT_F32, dims, 4));
  dims[1] = Hq; dims[2] = L; dims[3] = S;
  if (op->n_outputs > 3) MACE_RETURN_IF_ERROR(mace_op_set_output(op, 3, MACE_DT_F32, dims, 4));
  op->macs = B * Hq * L * S * (E + Ev);
  /* scores (B*Hq*L*S) | with past: K and V concatenated (B*Hkv*S*(E+Ev)) */
  op->scratch_bytes = (size_t)(B * Hq * L * S + (P ? B * Hkv * S * (E + Ev) : 0)) * sizeof(float);
  return MACE_OK;
}

typedef struct attention_job {
  const mace_attention_params *p;
  const float *q, *k, *v;
  float *y, *scores;
} attention_job;

static void attention_range(void *ctx, int64_t begin, int64_t end) {
  const attention_job *j = (const attention_job *)ctx;
  mace_f32_attention__ref(j->p, j->q, j->k, j->v, j->y, j->scores, begin, end);
}

/* dst [B, H, S, D] = past [B, H, P, D] (or none) followed by src's rows (strides st). */
static void attention_concat(float *dst, const float *past, const float *src, const int64_t *st,
                             int64_t B, int64_t H, int64_t P, int64_t Sn, int64_t D) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      float *o = dst + (b * H + h) * (P + Sn) * D;
      if (P) memcpy(o, past + (b * H + h) * P * D, (size_t)(P * D) * sizeof(float));
      for (int64_t t = 0; t < Sn; ++t)
        memcpy(o + (P + t) * D, src + b * st[0] + h * st[1] + t * st[2], (size_t)D * sizeof(float));
    }
}

static mace_status attention_run(mace_op *op) {
  attention_state *s = (attention_state *)op->state;
  mace_attention_params p = s->prm;
  const int64_t B = p.B, Hkv = p.Hkv, S = p.S, E = p.E, Ev = p.Ev;
  float *scores = (float *)op->scratch;
  attention_job job;
  const float *k = (const float *)op->inputs[1]->data, *v = (const float *)op->inputs[2]->data;
  if (s->in_mask >= 0) {
    const mace_tensor *m = op->inputs[s->in_mask];
    p.mask_f = m->dtype == MACE_DT_F32 ? (const float *)m->data : NULL;
    p.mask_b = m->dtype == MACE_DT_BOOL ? (const uint8_t *)m->data : NULL;
  }
  if (s->in_nonpad >= 0) p.nonpad = (const int64_t *)op->inputs[s->in_nonpad]->data;
  p.qk_out = op->n_outputs > 3 ? (float *)op->outputs[3]->data : NULL;
  if (s->P) {
    float *kc = scores + p.B * p.Hq * p.L * S, *vc = kc + B * Hkv * S * E;
    attention_concat(kc, (const float *)op->inputs[s->in_pk]->data, k, p.k_st, B, Hkv, s->P,
                     s->Skv, E);
    attention_concat(vc, (const float *)op->inputs[s->in_pv]->data, v, p.v_st, B, Hkv, s->P,
                     s->Skv, Ev);
    k = kc;
    v = vc;
    p.k_st[0] = Hkv * S * E; p.k_st[1] = S * E; p.k_st[2] = E;
    p.v_st[0] = Hkv * S * Ev; p.v_st[1] = S * Ev; p.v_st[2] = Ev;
  }
  if (op->n_outputs > 1)
    attention_concat((float *)op->outputs[1]->data, NULL, k, p.k_st, B, Hkv, 0, S, E);
  if (op->n_outputs > 2)
    attention_concat((float *)op->outputs[2]->data, NULL, v, p.v_st, B, Hkv, 0, S, Ev);
  job.p = &p;
  job.q = (const float *)op->inputs[0]->data;
  job.k = k;
  job.v = v;
  job.y = (float *)op->outputs[0]->data;
  job.scores = scores;
  if (p.B * p.Hq * p.L > 0)
    mace_threadpool_parallel_for(op->pool, p.B * p.Hq * p.L, ATTN_GRAIN_ROWS, attention_range,
                                 &job);
  return MACE_OK;
}

const mace_op_kind mace_op_attention_f32 = {.type = "Attention", .device = MACE_DEVICE_CPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(attention_state),
                                            .init = attention_init, .infer = attention_infer,
                                            .run = attention_run};
