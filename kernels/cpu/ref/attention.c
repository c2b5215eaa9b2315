/* Reference (portable C) f32 scaled dot-product attention (ONNX Attention), one query row at a time. */
#include "kernels/cpu/ref/attention.h"

#include <math.h>

void mace_f32_attention__ref(const mace_attention_params *p, const float *q, const float *k,
                             const float *v, float *y, float *scores, int64_t begin, int64_t end) {
  const int64_t S = p->S, E = p->E, Ev = p->Ev, group = p->Hq / p->Hkv;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t i = r % p->L, h = (r / p->L) % p->Hq, b = r / (p->L * p->Hq);
    const int64_t hk = h / group;
    const float *qrow = q + b * p->q_st[0] + h * p->q_st[1] + i * p->q_st[2];
    const float *kb = k + b * p->k_st[0] + hk * p->k_st[1];
    const float *vb = v + b * p->v_st[0] + hk * p->v_st[1];
    float *yrow = y + b * p->y_st[0] + h * p->y_st[1] + i * p->y_st[2];
    float *s = scores + r * S;
    float *qk = p->qk_out ? p->qk_out + r * S : 0;
    int64_t limit = S, causal_limit = S;
    int any_allowed = 0;
    float mx = -INFINITY, sum = 0.0f;
    if (p->nonpad) limit = p->nonpad[b] < S ? p->nonpad[b] : S;
    if (p->is_causal) {
      const int64_t off = p->nonpad ? p->nonpad[b] - p->L : p->causal_offset;
      causal_limit = i + off + 1;
    }
    for (int64_t j = 0; j < S; ++j) {
      const float *krow = kb + j * p->k_st[2];
      float acc = 0.0f, bias = 0.0f;
      int masked = j >= limit || j >= causal_limit;
      for (int64_t e = 0; e < E; ++e) acc += qrow[e] * krow[e];
      acc *= p->scale;
      if (qk && p->qk_mode == 0) qk[j] = acc;
      if (p->softcap > 0.0f) acc = p->softcap * tanhf(acc / p->softcap);
      if (p->mask_f || p->mask_b) {
        if (j >= p->mask_len) {
          masked = 1;
        } else {
          const int64_t mo = b * p->mask_st[0] + h * p->mask_st[1] + i * p->mask_st[2] +
                             j * p->mask_st[3];
          if (p->mask_b) {
            if (!p->mask_b[mo]) masked = 1;
          } else {
            bias = p->mask_f[mo];
            if (bias == -INFINITY) masked = 1;
          }
        }
      }
      if (qk && p->qk_mode == 1) qk[j] = acc;
      acc = masked ? -INFINITY : acc + bias;
      if (qk && p->qk_mode == 2) qk[j] = acc;
      if (!masked) any_allowed = 1;
      s[j] = acc;
      if (acc > mx) mx = acc;
    }
    if (!any_allowed || mx == -INFINITY) {
      for (int64_t j = 0; j < S; ++j) s[j] = 0.0f;
    } else {
      for (int64_t j = 0; j < S; ++j) {
        s[j] = expf(s[j] - mx);
        sum += s[j];
      }
      for (int64_t j = 0; j < S; ++j) s[j] /= sum;
    }
    if (qk && p->qk_mode == 3)
      for (int64_t j = 0; j < S; ++j) qk[j] = s[j];
    for (int64_t e = 0; e < Ev; ++e) yrow[e] = 0.0f;
    for (int64_t j = 0; j < S; ++j) {
      const float pj = s[j];
      const float *vrow = vb + j * p->v_st[2];
      if (pj == 0.0f) continue;
      for (int64_t e = 0; e < Ev; ++e) yrow[e] += pj * vrow[e];
    }
  }
}
