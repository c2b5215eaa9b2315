/* Shared engine of the recurrent ops LSTM, GRU and RNN (ONNX semantics), f32. */
/*
 * Inputs:  0 X  f32 [S, B, I] (layout 1: [B, S, I])
 *          1 W  f32 [D, G*H, I]   (gates in ONNX order: LSTM i,o,f,c; GRU z,r,h; RNN one)
 *          2 R  f32 [D, G*H, H]
 *          then, in this order, those whose has_* argument is 1:
 *            B  f32 [D, 2*G*H] (W biases then R biases)          has_bias
 *            sequence_lens i32 or i64 [B] (values in [1, S])     has_sequence_lens
 *            initial_h f32 [D, B, H] (layout 1: [B, D, H])       has_initial_h
 *            initial_c f32 like initial_h (LSTM)                 has_initial_c
 *            P  f32 [D, 3*H] peepholes i, o, f (LSTM)            has_peepholes
 * Outputs: 0 Y [S, D, B, H] (layout 1: [B, S, D, H]); steps past a row's sequence length are 0
 *          1 Y_h [D, B, H] (layout 1: [B, D, H]), the last valid step's hidden state
 *          2 Y_c like Y_h, the cell state (LSTM); 1 to 3 (LSTM) / 2 outputs may be given.
 * Arguments:
 *   hidden_size          int H (required)
 *   direction            int 0 forward, 1 reverse, 2 bidirectional (D = 2) (default 0)
 *   layout               int 0|1 (default 0)
 *   clip                 float > 0: activation inputs clipped to [-clip, clip] (default 0: none)
 *   activations          ints, mace_rnn_act_type per activation, n per direction (LSTM f,g,h;
 *                        GRU f,g; RNN f), D*n values (default: LSTM sigmoid,tanh,tanh;
 *                        GRU sigmoid,tanh; RNN tanh, for every direction)
 *   activation_alpha     floats parallel to activations (default 0)
 *   activation_beta      floats parallel to activations (default 0)
 *   linear_before_reset  int 0|1 (GRU) (default 0)
 *   input_forget         int 0|1 (LSTM): f = 1 - i (default 0)
 *   has_bias, has_sequence_lens, has_initial_h, has_initial_c, has_peepholes  int 0|1 (default 0)
 */
#include "ops/recurrent_op.h"

#include <string.h>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/ref/gemm.h"

#define REC_GRAIN_ROWS 4

mace_status mace_recurrent_init(mace_op *op, int cell) {
  mace_recurrent_state *s = (mace_recurrent_state *)op->state;
  static const int def_acts[3][3] = {{MACE_RNN_ACT_TANH, 0, 0},
                                     {MACE_RNN_ACT_SIGMOID, MACE_RNN_ACT_TANH, 0},
                                     {MACE_RNN_ACT_SIGMOID, MACE_RNN_ACT_TANH, MACE_RNN_ACT_TANH}};
  const int64_t *acts;
  const float *alphas, *betas;
  int n, na, nb, next;
  s->cell = cell;
  s->gates = cell == MACE_CELL_LSTM ? 4 : (cell == MACE_CELL_GRU ? 3 : 1);
  s->n_acts = cell == MACE_CELL_LSTM ? 3 : (cell == MACE_CELL_GRU ? 2 : 1);
  s->hidden = mace_op_arg_int(op, "hidden_size", -1);
  s->direction = mace_op_arg_int(op, "direction", 0);
  s->layout = mace_op_arg_int(op, "layout", 0);
  s->clip = mace_op_arg_float(op, "clip", 0.0f);
  s->linear_before_reset = mace_op_arg_int(op, "linear_before_reset", 0) != 0;
  s->input_forget = mace_op_arg_int(op, "input_forget", 0) != 0;
  if (s->hidden <= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): hidden_size must be > 0", op->name,
                      op->type);
  if (s->direction < 0 || s->direction > 2 || (s->layout != 0 && s->layout != 1))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): bad direction %lld or layout %lld",
                      op->name, op->type, (long long)s->direction, (long long)s->layout);
  s->D = s->direction == 2 ? 2 : 1;
  n = mace_op_arg_ints(op, "activations", &acts);
  na = mace_op_arg_floats(op, "activation_alpha", &alphas);
  nb = mace_op_arg_floats(op, "activation_beta", &betas);
  if (n >= 0 && n != s->D * s->n_acts)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %d activations, expected %d", op->name,
                      op->type, n, (int)(s->D * s->n_acts));
  for (int k = 0; k < s->D * s->n_acts; ++k) {
    mace_rnn_act *a = &s->acts[k];
    a->type = n >= 0 ? (int)acts[k] : def_acts[s->n_acts - 1][k % s->n_acts];
    if (a->type < 0 || a->type >= MACE_RNN_ACT_COUNT)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): unknown activation %d", op->name,
                        op->type, a->type);
    a->alpha = k < na ? alphas[k] : 0.0f;
    a->beta = k < nb ? betas[k] : 0.0f;
  }
  next = 3;
  s->in_b = mace_op_arg_int(op, "has_bias", 0) ? next++ : -1;
  s->in_seq = mace_op_arg_int(op, "has_sequence_lens", 0) ? next++ : -1;
  s->in_h0 = mace_op_arg_int(op, "has_initial_h", 0) ? next++ : -1;
  s->in_c0 = mace_op_arg_int(op, "has_initial_c", 0) ? next++ : -1;
  s->in_p = mace_op_arg_int(op, "has_peepholes", 0) ? next++ : -1;
  if (cell != MACE_CELL_LSTM && (s->in_c0 >= 0 || s->in_p >= 0))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): initial_c/peepholes are LSTM inputs",
                      op->name, op->type);
  s->vector_cells = s->in_p < 0;
  for (int k = 0; k < s->D * s->n_acts; ++k) {
    mace_activation *v = &s->vacts[k];
    v->alpha = v->beta = 0.0f;
    switch (s->acts[k].type) {
      case MACE_RNN_ACT_SIGMOID: v->kind = MACE_ACT_SIGMOID; break;
      case MACE_RNN_ACT_TANH: v->kind = MACE_ACT_TANH; break;
      case MACE_RNN_ACT_RELU: v->kind = MACE_ACT_RELU; break;
      default: s->vector_cells = 0; break;
    }
  }
  return MACE_OK;
}

static mace_status check_shape(const mace_op *op, int idx, const char *what, const int64_t *want,
                               int nd) {
  const mace_tensor *t = op->inputs[idx];
  char b1[96], b2[96];
  if (!mace_dims_equal(t->dims, t->ndim, want, nd))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %s has shape %s, expected %s", op->name,
                      op->type, what, mace_dims_str(t->dims, t->ndim, b1, sizeof b1),
                      mace_dims_str(want, nd, b2, sizeof b2));
  return MACE_OK;
}

void mace_recurrent_release(mace_op *op) {
  mace_recurrent_state *s = (mace_recurrent_state *)op->state;
  for (int d = 0; d < 2; ++d) {
    mace_aligned_free(s->packed_w[d]);
    mace_aligned_free(s->packed_r[d]);
    mace_aligned_free(s->packed_rh[d]);
    s->packed_w[d] = s->packed_r[d] = s->packed_rh[d] = NULL;
  }
  s->gemm = NULL;
}

/* Columns of the per-step R product: 2H for a GRU with linear_before_reset 0 (R_h goes apart,
 * after the reset gate), else G*H. */
static int64_t rec_r_cols(const mace_recurrent_state *s) {
  return s->cell == MACE_CELL_GRU && !s->linear_before_reset ? 2 * s->hidden
                                                              : s->gates * s->hidden;
}

/* B = M^T packed for the GEMM, M [n, k] row-major at m: B[kk, j] = M[j, kk]. */
static float *rec_pack_t(const mace_gemm_family *f, const float *m, int64_t n, int64_t k) {
  float *p = mace_filter_alloc((size_t)mace_gemm_packed_b_floats(f, k, n) * sizeof(float));
  if (p) mace_gemm_pack_b(f, k, n, m, 1, k, p, 0, (n + f->nr - 1) / f->nr);
  return p;
}

/* Packs constant W and R once, at the first shape inference (the input projection and every
 * step's hidden projection run on the dispatched GEMM; the reference GEMM, a scalar loop, took
 * half of an LSTM's time). A
 * later inference (another sequence length or batch) only resizes the GEMM's scratch: W and R
 * and their shapes, checked above, do not change. */
static mace_status rec_pack(mace_op *op) {
  mace_recurrent_state *s = (mace_recurrent_state *)op->state;
  const mace_tensor *w = op->inputs[1], *r = op->inputs[2];
  const int64_t H = s->hidden, GH = s->gates * H, I = s->I, nr = rec_r_cols(s);
  const mace_gemm_family *f = mace_gemm_family_active();
  s->gemm_scratch = 0;
  if (!f || w->role != MACE_TENSOR_CONST || r->role != MACE_TENSOR_CONST || !w->data ||
      !r->data || GH == 0 || I == 0)
    return MACE_OK;
  if (!s->gemm) {
    for (int64_t d = 0; d < s->D; ++d) {
      const float *wd = (const float *)w->data + d * GH * I;
      const float *rd = (const float *)r->data + d * GH * H;
      s->packed_w[d] = rec_pack_t(f, wd, GH, I);
      s->packed_r[d] = rec_pack_t(f, rd, nr, H);
      if (nr < GH) s->packed_rh[d] = rec_pack_t(f, rd + 2 * H * H, H, H);
      if (!s->packed_w[d] || !s->packed_r[d] || (nr < GH && !s->packed_rh[d])) {
        mace_recurrent_release(op);
        return mace_error(MACE_OUT_OF_RESOURCES,
                          "op '%s' (%s): no memory for the packed weights", op->name, op->type);
      }
    }
    s->gemm = f;
  }
  const int threads = mace_threadpool_size(op->pool);
  size_t a = mace_gemm_scratch_bytes(f, s->S * s->B, GH, I, 0, 1, threads);
  const size_t b = mace_gemm_scratch_bytes(f, s->B, nr, H, 0, 1, threads);
  s->gemm_scratch = a > b ? a : b;
  op->scratch_bytes += s->gemm_scratch;
  return MACE_OK;
}

mace_status mace_recurrent_infer(mace_op *op) {
  mace_recurrent_state *s = (mace_recurrent_state *)op->state;
  const int n_in = 3 + (s->in_b >= 0) + (s->in_seq >= 0) + (s->in_h0 >= 0) + (s->in_c0 >= 0) +
                   (s->in_p >= 0);
  const int max_out = s->cell == MACE_CELL_LSTM ? 3 : 2;
  const mace_tensor *x;
  int64_t H = s->hidden, G = s->gates, S, B, I, D = s->D, dims[4];
  if (op->n_inputs != n_in || op->n_outputs < 1 || op->n_outputs > max_out)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %d inputs and %d outputs, expected %d "
                      "and 1..%d", op->name, op->type, op->n_inputs, op->n_outputs, n_in, max_out);
  x = op->inputs[0];
  for (int i = 0; i < n_in; ++i)
    if (i != s->in_seq) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, op->inputs[i], MACE_DT_F32));
  if (x->ndim != 3)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): X must have rank 3", op->name, op->type);
  S = s->layout ? x->dims[1] : x->dims[0];
  B = s->layout ? x->dims[0] : x->dims[1];
  I = x->dims[2];
  s->S = S;
  s->B = B;
  s->I = I;
  dims[0] = D; dims[1] = G * H; dims[2] = I;
  MACE_RETURN_IF_ERROR(check_shape(op, 1, "W", dims, 3));
  dims[2] = H;
  MACE_RETURN_IF_ERROR(check_shape(op, 2, "R", dims, 3));
  if (s->in_b >= 0) {
    dims[1] = 2 * G * H;
    MACE_RETURN_IF_ERROR(check_shape(op, s->in_b, "B", dims, 2));
  }
  if (s->in_seq >= 0) {
    const mace_tensor *t = op->inputs[s->in_seq];
    if (t->dtype != MACE_DT_I32 && t->dtype != MACE_DT_I64)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): sequence_lens must be int32/int64",
                        op->name, op->type);
    MACE_RETURN_IF_ERROR(check_shape(op, s->in_seq, "sequence_lens", &B, 1));
  }
  if (s->layout) { dims[0] = B; dims[1] = D; } else { dims[0] = D; dims[1] = B; }
  dims[2] = H;
  if (s->in_h0 >= 0) MACE_RETURN_IF_ERROR(check_shape(op, s->in_h0, "initial_h", dims, 3));
  if (s->in_c0 >= 0) MACE_RETURN_IF_ERROR(check_shape(op, s->in_c0, "initial_c", dims, 3));
  for (int o = 1; o < op->n_outputs; ++o)
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, o, MACE_DT_F32, dims, 3));
  if (s->in_p >= 0) {
    int64_t pd[2] = {D, 3 * H};
    MACE_RETURN_IF_ERROR(check_shape(op, s->in_p, "P", pd, 2));
  }
  if (s->layout) { dims[0] = B; dims[1] = S; dims[2] = D; }
  else { dims[0] = S; dims[1] = D; dims[2] = B; }
  dims[3] = H;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = D * S * B * G * H * (I + H);
  /* lens (B int64) | xw (S*B*G*H) | hr (B*G*H) | h, c, rh, rhr (B*H each) | zr (B*2H) */
  op->scratch_bytes = (size_t)B * sizeof(int64_t) +
                      (size_t)(S * B * G * H + B * G * H + 6 * B * H) * sizeof(float);
  op->scratch_bytes = (op->scratch_bytes + 63) / 64 * 64;
  return rec_pack(op);
}

typedef struct rec_job {
  const mace_recurrent_state *s;
  const float *x, *w, *r, *wb, *rb, *p;
  const mace_rnn_act *acts;
  const int64_t *lens;
  float *xw, *hr, *h, *c, *rh, *rhr, *zr, *y;
  int64_t step, d, reverse, K, ncols; /* K / ncols: the current gemm's inner size / columns */
} rec_job;

/* XW = X @ W^T over rows [begin, end) of X viewed as [S*B, I]. */
static void rec_input_proj(void *ctx, int64_t begin, int64_t end) {
  const rec_job *j = (const rec_job *)ctx;
  const int64_t GH = j->s->gates * j->s->hidden, I = j->s->I;
  mace_f32_gemm__ref(I, j->x, I, 1, j->w, 1, I, j->xw, GH, begin, end, 0, GH);
}

/* HR = H @ R^T (first ncols columns) over batch rows [begin, end). */
static void rec_hidden_proj(void *ctx, int64_t begin, int64_t end) {
  const rec_job *j = (const rec_job *)ctx;
  const int64_t H = j->s->hidden, GH = j->s->gates * H;
  mace_f32_gemm__ref(H, j->h, H, 1, j->r, 1, H, j->hr, GH, begin, end, 0, j->ncols);
}

/* RHR = (r * H) @ Rh^T over batch rows [begin, end) (GRU, linear_before_reset 0). */
static void rec_reset_proj(void *ctx, int64_t begin, int64_t end) {
  const rec_job *j = (const rec_job *)ctx;
  const int64_t H = j->s->hidden;
  mace_f32_gemm__ref(H, j->rh, H, 1, j->r + 2 * H * H, 1, H, j->rhr, H, begin, end, 0, H);
}

/* The time index batch row b processes at this step, or -1 when its sequence is over. */
static int64_t rec_time(const rec_job *j, int64_t b) {
  const int64_t len = j->lens[b];
  if (j->step >= len) return -1;
  return j->reverse ? len - 1 - j->step : j->step;
}

static int64_t rec_xrow(const mace_recurrent_state *s, int64_t t, int64_t b) {
  return s->layout ? b * s->S + t : t * s->B + b;
}

static float *rec_yrow(const rec_job *j, int64_t t, int64_t b) {
  const mace_recurrent_state *s = j->s;
  if (!j->y) return NULL;
  if (s->layout) return j->y + ((b * s->S + t) * s->D + j->d) * s->hidden;
  return j->y + ((t * s->D + j->d) * s->B + b) * s->hidden;
}

/* v[k] = xw[k] + hr[k] (+ wb[k] + rb[k]), clipped, for k < n: a step's pre-activations. */
static void rec_pre_row(float *v, const float *xw, const float *hr, const float *wb,
                        const float *rb, float clip, int64_t n) {
  for (int64_t k = 0; k < n; ++k) v[k] = xw[k] + hr[k];
  if (wb)
    for (int64_t k = 0; k < n; ++k) v[k] += wb[k] + rb[k];
  if (clip > 0.0f)
    for (int64_t k = 0; k < n; ++k) v[k] = v[k] > clip ? clip : (v[k] < -clip ? -clip : v[k]);
}

/* Phase 1 of a step with vector_cells: the gates' pre-activations as rows (in hr, which the
 * step's R product filled and no one reads after), each gate's activation over its row with
 * the SIMD kernels, then the cell's element-wise update. The scalar cells (libm's tanhf and
 * expf an element) took a large share of an LSTM's time once its products ran on the GEMM. */
static void rec_cell_vector(const rec_job *j, int64_t b, int64_t t) {
  const mace_recurrent_state *s = j->s;
  const int64_t H = s->hidden, GH = s->gates * H;
  const mace_activation *va = &s->vacts[j->d * s->n_acts];
  float *v = j->hr + b * GH, *h = j->h + b * H, *y = rec_yrow(j, t, b);
  const float *xw = j->xw + rec_xrow(s, t, b) * GH;
  if (s->cell == MACE_CELL_LSTM) { /* gates i, o, f, c */
    rec_pre_row(v, xw, v, j->wb, j->rb, s->clip, GH);
    mace_f32_activation(&va[0], v, v, s->input_forget ? 2 * H : 3 * H);
    mace_f32_activation(&va[1], v + 3 * H, v + 3 * H, H);
    float *c = j->c + b * H, *tc = j->rh + b * H; /* rh: unused by an LSTM */
    for (int64_t k = 0; k < H; ++k) {
      const float gi = v[k], gf = s->input_forget ? 1.0f - gi : v[2 * H + k];
      c[k] = gf * c[k] + gi * v[3 * H + k];
    }
    mace_f32_activation(&va[2], c, tc, H);
    for (int64_t k = 0; k < H; ++k) h[k] = v[H + k] * tc[k];
  } else if (s->cell == MACE_CELL_RNN) {
    rec_pre_row(v, xw, v, j->wb, j->rb, s->clip, H);
    mace_f32_activation(&va[0], v, h, H);
  } else { /* GRU gates z, r; the candidate in rec_gru_cell */
    rec_pre_row(v, xw, v, j->wb, j->rb, s->clip, 2 * H);
    mace_f32_activation(&va[0], v, j->zr + b * 2 * H, 2 * H);
    if (!s->linear_before_reset) {
      const float *r = j->zr + b * 2 * H + H;
      float *rh = j->rh + b * H;
      for (int64_t k = 0; k < H; ++k) rh[k] = r[k] * h[k];
    }
    return;
  }
  if (y) memcpy(y, h, (size_t)H * sizeof(float));
}

/* Phase 1 of a step: LSTM/RNN cells, or GRU gates. */
static void rec_cell(void *ctx, int64_t begin, int64_t end) {
  const rec_job *j = (const rec_job *)ctx;
  const mace_recurrent_state *s = j->s;
  const int64_t H = s->hidden, GH = s->gates * H;
  for (int64_t b = begin; b < end; ++b) {
    if (s->vector_cells) {
      const int64_t t = rec_time(j, b);
      if (t >= 0) rec_cell_vector(j, b, t);
      continue;
    }
    const int64_t t = rec_time(j, b);
    if (t < 0) continue;
    const float *xw = j->xw + rec_xrow(s, t, b) * GH, *hr = j->hr + b * GH;
    float *h = j->h + b * H;
    if (s->cell == MACE_CELL_LSTM)
      mace_f32_lstm_cell__ref(xw, hr, j->wb, j->rb, j->p, h, j->c + b * H, rec_yrow(j, t, b), H,
                              s->clip, s->input_forget, j->acts, 0, H);
    else if (s->cell == MACE_CELL_RNN)
      mace_f32_rnn_cell__ref(xw, hr, j->wb, j->rb, h, rec_yrow(j, t, b), s->clip, j->acts, 0, H);
    else
      mace_f32_gru_gates__ref(xw, hr, j->wb, j->rb, h, j->zr + b * 2 * H,
                              s->linear_before_reset ? NULL : j->rh + b * H, H, s->clip, j->acts,
                              0, H);
  }
}

/* Phase 2 of a GRU step. */
static void rec_gru_cell(void *ctx, int64_t begin, int64_t end) {
  const rec_job *j = (const rec_job *)ctx;
  const mace_recurrent_state *s = j->s;
  const int64_t H = s->hidden, GH = 3 * H;
  for (int64_t b = begin; b < end; ++b) {
    const int64_t t = rec_time(j, b);
    if (t < 0) continue;
    if (s->vector_cells) { /* the candidate as a row (in hr's h columns), as rec_cell_vector */
      const float *xw = j->xw + rec_xrow(s, t, b) * GH + 2 * H, *z = j->zr + b * 2 * H;
      const float *wb = j->wb ? j->wb + 2 * H : NULL, *rb = j->rb ? j->rb + 2 * H : NULL;
      const float *rhr = j->rhr + b * H;
      float *v = j->hr + b * GH + 2 * H, *h = j->h + b * H, *y = rec_yrow(j, t, b);
      for (int64_t k = 0; k < H; ++k) {
        const float rbh = rb ? rb[k] : 0.0f;
        float p = xw[k] + (wb ? wb[k] : 0.0f);
        p += s->linear_before_reset ? z[H + k] * (v[k] + rbh) : rhr[k] + rbh;
        if (s->clip > 0.0f) p = p > s->clip ? s->clip : (p < -s->clip ? -s->clip : p);
        v[k] = p;
      }
      mace_f32_activation(&s->vacts[j->d * s->n_acts + 1], v, v, H);
      for (int64_t k = 0; k < H; ++k) h[k] = (1.0f - z[k]) * v[k] + z[k] * h[k];
      if (y) memcpy(y, h, (size_t)H * sizeof(float));
      continue;
    }
    mace_f32_gru_cell__ref(j->xw + rec_xrow(s, t, b) * GH, j->hr + b * GH, j->rhr + b * H, j->wb,
                           j->rb, j->zr + b * 2 * H, j->h + b * H, rec_yrow(j, t, b), H, s->clip,
                           s->linear_before_reset, &j->acts[1], 0, H);
  }
}

/* Offset of (d, b) in initial_h / Y_h (layout-dependent). */
static int64_t rec_state_off(const mace_recurrent_state *s, int64_t d, int64_t b) {
  return (s->layout ? b * s->D + d : d * s->B + b) * s->hidden;
}

mace_status mace_recurrent_run(mace_op *op) {
  const mace_recurrent_state *s = (const mace_recurrent_state *)op->state;
  const int64_t S = s->S, B = s->B, H = s->hidden, G = s->gates, GH = G * H, I = s->I;
  char *sp = (char *)op->scratch;
  void *gemm_scratch = sp + (op->scratch_bytes - s->gemm_scratch);
  int64_t *lens = (int64_t *)sp;
  float *f = (float *)(sp + (size_t)B * sizeof(int64_t));
  rec_job j;
  int padded = 0;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.lens = lens;
  j.x = (const float *)op->inputs[0]->data;
  j.xw = f;
  j.hr = j.xw + S * B * GH;
  j.h = j.hr + B * GH;
  j.c = j.h + B * H;
  j.rh = j.c + B * H;
  j.rhr = j.rh + B * H;
  j.zr = j.rhr + B * H;
  j.y = (float *)op->outputs[0]->data;
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = S;
    if (s->in_seq >= 0) {
      const mace_tensor *t = op->inputs[s->in_seq];
      len = t->dtype == MACE_DT_I32 ? ((const int32_t *)t->data)[b] : ((const int64_t *)t->data)[b];
      if (len < 0 || len > S)
        return mace_error(MACE_INVALID_INPUT, "op '%s' (%s): sequence_lens[%lld] = %lld outside "
                          "[0, %lld]", op->name, op->type, (long long)b, (long long)len,
                          (long long)S);
    }
    lens[b] = len;
    if (len < S) padded = 1;
  }
  if (padded) memset(j.y, 0, mace_tensor_nbytes(op->outputs[0]));
  for (int64_t d = 0; d < s->D; ++d) {
    j.d = d;
    j.reverse = s->direction == 1 || d == 1;
    j.acts = &s->acts[d * s->n_acts];
    j.w = (const float *)op->inputs[1]->data + d * GH * I;
    j.r = (const float *)op->inputs[2]->data + d * GH * H;
    if (s->in_b >= 0) {
      j.wb = (const float *)op->inputs[s->in_b]->data + d * 2 * GH;
      j.rb = j.wb + GH;
    }
    if (s->in_p >= 0) j.p = (const float *)op->inputs[s->in_p]->data + d * 3 * H;
    for (int64_t b = 0; b < B; ++b) {
      if (s->in_h0 >= 0)
        memcpy(j.h + b * H, (const float *)op->inputs[s->in_h0]->data + rec_state_off(s, d, b),
               (size_t)H * sizeof(float));
      else
        memset(j.h + b * H, 0, (size_t)H * sizeof(float));
      if (s->in_c0 >= 0)
        memcpy(j.c + b * H, (const float *)op->inputs[s->in_c0]->data + rec_state_off(s, d, b),
               (size_t)H * sizeof(float));
      else
        memset(j.c + b * H, 0, (size_t)H * sizeof(float));
    }
    if (s->gemm) {
      const mace_gemm_args g = {.f = s->gemm, .m = S * B, .n = GH, .k = I, .a = j.x,
                                .a_rs = I, .a_cs = 1, .b_packed = s->packed_w[d], .c = j.xw,
                                .ldc = GH};
      if (S * B > 0) mace_gemm_run(op->pool, &g, gemm_scratch);
    } else if (S * B > 0 && GH > 0) {
      mace_threadpool_parallel_for(op->pool, S * B, REC_GRAIN_ROWS, rec_input_proj, &j);
    }
    for (int64_t step = 0; step < S; ++step) {
      j.step = step;
      j.ncols = rec_r_cols(s);
      if (s->gemm) {
        const mace_gemm_args g = {.f = s->gemm, .m = B, .n = j.ncols, .k = H, .a = j.h,
                                  .a_rs = H, .a_cs = 1, .b_packed = s->packed_r[d], .c = j.hr,
                                  .ldc = GH};
        mace_gemm_run(op->pool, &g, gemm_scratch);
      } else {
        mace_threadpool_parallel_for(op->pool, B, 1, rec_hidden_proj, &j);
      }
      mace_threadpool_parallel_for(op->pool, B, 1, rec_cell, &j);
      if (s->cell == MACE_CELL_GRU) {
        if (!s->linear_before_reset) {
          if (s->gemm) {
            const mace_gemm_args g = {.f = s->gemm, .m = B, .n = H, .k = H, .a = j.rh,
                                      .a_rs = H, .a_cs = 1, .b_packed = s->packed_rh[d],
                                      .c = j.rhr, .ldc = H};
            mace_gemm_run(op->pool, &g, gemm_scratch);
          } else {
            mace_threadpool_parallel_for(op->pool, B, 1, rec_reset_proj, &j);
          }
        }
        mace_threadpool_parallel_for(op->pool, B, 1, rec_gru_cell, &j);
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      const int64_t off = rec_state_off(s, d, b);
      if (op->n_outputs > 1)
        memcpy((float *)op->outputs[1]->data + off, j.h + b * H, (size_t)H * sizeof(float));
      if (op->n_outputs > 2)
        memcpy((float *)op->outputs[2]->data + off, j.c + b * H, (size_t)H * sizeof(float));
    }
  }
  return MACE_OK;
}
