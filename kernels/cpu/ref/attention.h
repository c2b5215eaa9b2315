/* Reference (portable C) f32 scaled dot-product attention (ONNX Attention), one query row at a time. */
#ifndef MACE_KERNELS_CPU_REF_ATTENTION_H_
#define MACE_KERNELS_CPU_REF_ATTENTION_H_

#include <stdint.h>

/* Q is [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev], Y [B, Hq, L, Ev] as seen through
 * element strides {batch, head, sequence} (the last dim is contiguous), so 3-D [B, L, H*E]
 * tensors are read and written in place. Query head h uses kv head h / (Hq / Hkv).
 * Score s = scale * q.k, then softcap * tanh(s / softcap) when softcap > 0; the bias adds
 * the mask (float: added; bool: 0 where true, -inf where false; keys j >= mask_len: -inf),
 * the causal limit (key j allowed iff j <= i + offset, offset = causal_offset or, with
 * nonpad, nonpad[b] - L) and the padding limit (j < nonpad[b]). A row whose bias is all
 * -inf gets zero probabilities (so Y = 0). */
typedef struct mace_attention_params {
  int64_t B, Hq, Hkv, L, S, E, Ev;
  int64_t q_st[3], k_st[3], v_st[3], y_st[3];
  float scale, softcap;
  int is_causal;
  int64_t causal_offset;
  const int64_t *nonpad;        /* [B] or NULL */
  const float *mask_f;          /* one of mask_f / mask_b or neither */
  const uint8_t *mask_b;
  int64_t mask_st[4];           /* element strides for (b, h, i, j); 0 broadcasts */
  int64_t mask_len;             /* keys the mask covers */
  int qk_mode;                  /* what qk_out gets: 0 scale * q.k, 1 after softcap,
                                 * 2 plus the bias, 3 probabilities */
  float *qk_out;                /* [B, Hq, L, S] or NULL */
} mace_attention_params;

/* Rows r in [begin, end) of [0, B * Hq * L), r = (b * Hq + h) * L + i. scores: scratch of
 * B * Hq * L * S floats (row r uses scores[r * S, (r + 1) * S)). */
void mace_f32_attention__ref(const mace_attention_params *p, const float *q, const float *k,
                             const float *v, float *y, float *scores, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ATTENTION_H_ */
