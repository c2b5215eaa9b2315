/* Scaled dot-product attention (ops/opencl/attention.c), as kernels/cpu/ref/attention.c: one
 * work-group per query row r = (b * Hq + h) * L + i, the row's scores in local memory. Q, K, V
 * and Y are read through element strides {batch, head, sequence} (.x, .y, .z; the last dim
 * contiguous), so 3-D [B, L, H*E] tensors are read in place; query head h uses kv head
 * h / group. The mask (mask_kind 1: float, added; 2: bool, false masks) has strides mask_st
 * for (b, h, i, j) and covers mask_len keys (later keys are masked); is_causal allows key j
 * iff j <= i + causal_offset. A row with every key masked gives zeros.
 * lmem: S scores, then E of the query row, then the group's reduction scratch. */
__kernel void attention(__global const DATA_T *q, int q_off, __global const DATA_T *k, int k_off,
                        __global const DATA_T *v, int v_off, __global DATA_T *y, int y_off,
                        __global const DATA_T *mf, int mf_off, __global const uchar *mb,
                        int mb_off, int mask_kind, int4 mask_st, int mask_len, int4 q_st,
                        int4 k_st, int4 v_st, int4 y_st, int Hq, int L, int S, int E, int Ev,
                        int group, int is_causal, int causal_offset, float scale,
                        float softcap, __local float *lmem) {
  const int r = MACE_GROUP_ID(0), l = get_local_id(0), n = get_local_size(0);
  const int i = r % L, h = (r / L) % Hq, b = r / (L * Hq), hk = h / group;
  __local float *s = lmem, *qrow = lmem + S, *scratch = lmem + S + E;
  const int qb = q_off + b * q_st.x + h * q_st.y + i * q_st.z;
  for (int e = l; e < E; e += n) qrow[e] = LOAD(q, qb + e);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int kb = k_off + b * k_st.x + hk * k_st.y, vb = v_off + b * v_st.x + hk * v_st.y;
  const int causal_limit = is_causal ? i + causal_offset + 1 : S;
  float mx = -INFINITY;
  for (int j = l; j < S; j += n) {
    const int kr = kb + j * k_st.z;
    float acc = 0.0f;
    for (int e = 0; e < E; ++e) acc += qrow[e] * LOAD(k, kr + e);
    acc *= scale;
    if (softcap > 0.0f) acc = softcap * tanh(acc / softcap);
    int masked = j >= causal_limit;
    float bias = 0.0f;
    if (mask_kind) {
      if (j >= mask_len) {
        masked = 1;
      } else {
        const int mo = b * mask_st.x + h * mask_st.y + i * mask_st.z + j * mask_st.w;
        if (mask_kind == 2) {
          if (!mb[mb_off + mo]) masked = 1;
        } else {
          bias = LOAD(mf, mf_off + mo);
          if (bias == -INFINITY) masked = 1;
        }
      }
    }
    acc = masked ? -INFINITY : acc + bias;
    s[j] = acc;
    mx = fmax(mx, acc);
  }
  mx = mace_group_reduce(mx, scratch, 1);  /* its barriers publish s too */
  float sum = 0.0f;
  for (int j = l; j < S; j += n) {
    const float p = mx == -INFINITY ? 0.0f : exp(s[j] - mx);
    s[j] = p;
    sum += p;
  }
  sum = mace_group_reduce(sum, scratch, 0);
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  const int yb = y_off + b * y_st.x + h * y_st.y + i * y_st.z;
  for (int d = l; d < Ev; d += n) {
    float acc = 0.0f;
    for (int j = 0; j < S; ++j) {
      const float p = s[j];
      if (p != 0.0f) acc += p * LOAD(v, vb + j * v_st.z + d);
    }
    STORE(y, yb + d, acc * inv);
  }
}
