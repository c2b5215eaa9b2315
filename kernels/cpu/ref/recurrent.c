/* Reference (portable C) f32 cells of ONNX LSTM, GRU and RNN: one time step of one batch row. */
#include "kernels/cpu/ref/recurrent.h"

#include <math.h>

static float act_apply(const mace_rnn_act *a, float x) {
  switch (a->type) {
    case MACE_RNN_ACT_SIGMOID:
      return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    case MACE_RNN_ACT_TANH: return tanhf(x);
    case MACE_RNN_ACT_RELU: return x < 0.0f ? 0.0f : x; /* NaN kept */
    case MACE_RNN_ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
    case MACE_RNN_ACT_SOFTPLUS: return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case MACE_RNN_ACT_AFFINE: return a->alpha * x + a->beta;
    case MACE_RNN_ACT_LEAKYRELU: return x >= 0.0f ? x : a->alpha * x;
    case MACE_RNN_ACT_THRESHOLDEDRELU: return x > a->alpha ? x : 0.0f;
    case MACE_RNN_ACT_SCALEDTANH: return a->alpha * tanhf(a->beta * x);
    case MACE_RNN_ACT_HARDSIGMOID: {
      float v = a->alpha * x + a->beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case MACE_RNN_ACT_ELU: return x >= 0.0f ? x : a->alpha * (expf(x) - 1.0f);
    default: return x;
  }
}

static float clipv(float x, float clip) {
  if (clip > 0.0f) {
    if (x > clip) return clip;
    if (x < -clip) return -clip;
  }
  return x;
}

static float pre(const float *xw, const float *hr, const float *wb, const float *rb, int64_t k) {
  float v = xw[k] + hr[k];
  if (wb) v += wb[k];
  if (rb) v += rb[k];
  return v;
}

void mace_f32_lstm_cell__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                             const float *p, float *h, float *c, float *y, int64_t H, float clip,
                             int input_forget, const mace_rnn_act act[3], int64_t begin,
                             int64_t end) {
  for (int64_t j = begin; j < end; ++j) {
    const float cp = c[j];
    float vi = pre(xw, hr, wb, rb, j);
    float vo = pre(xw, hr, wb, rb, H + j);
    float vf = pre(xw, hr, wb, rb, 2 * H + j);
    float vc = pre(xw, hr, wb, rb, 3 * H + j);
    if (p) {
      vi += p[j] * cp;
      vf += p[2 * H + j] * cp;
    }
    const float gi = act_apply(&act[0], clipv(vi, clip));
    const float gf = input_forget ? 1.0f - gi : act_apply(&act[0], clipv(vf, clip));
    const float gc = act_apply(&act[1], clipv(vc, clip));
    const float ct = gf * cp + gi * gc;
    if (p) vo += p[H + j] * ct;
    const float go = act_apply(&act[0], clipv(vo, clip));
    const float ht = go * act_apply(&act[2], ct);
    c[j] = ct;
    h[j] = ht;
    if (y) y[j] = ht;
  }
}

void mace_f32_gru_gates__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                             const float *h, float *zr, float *rh, int64_t H, float clip,
                             const mace_rnn_act *f, int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) {
    const float z = act_apply(f, clipv(pre(xw, hr, wb, rb, j), clip));
    const float r = act_apply(f, clipv(pre(xw, hr, wb, rb, H + j), clip));
    zr[j] = z;
    zr[H + j] = r;
    if (rh) rh[j] = r * h[j];
  }
}

void mace_f32_gru_cell__ref(const float *xw, const float *hr, const float *rhr, const float *wb,
                            const float *rb, const float *zr, float *h, float *y, int64_t H,
                            float clip, int linear_before_reset, const mace_rnn_act *g,
                            int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) {
    const int64_t k = 2 * H + j;
    const float rbh = rb ? rb[k] : 0.0f;
    float v = xw[k] + (wb ? wb[k] : 0.0f);
    if (linear_before_reset)
      v += zr[H + j] * (hr[k] + rbh);
    else
      v += rhr[j] + rbh;
    const float hh = act_apply(g, clipv(v, clip));
    const float z = zr[j];
    const float ht = (1.0f - z) * hh + z * h[j];
    h[j] = ht;
    if (y) y[j] = ht;
  }
}

void mace_f32_rnn_cell__ref(const float *xw, const float *hr, const float *wb, const float *rb,
                            float *h, float *y, float clip, const mace_rnn_act *f,
                            int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) {
    const float ht = act_apply(f, clipv(pre(xw, hr, wb, rb, j), clip));
    h[j] = ht;
    if (y) y[j] = ht;
  }
}
