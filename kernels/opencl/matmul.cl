/* Matrix products on NCHW (row-major) buffers: FullyConnected (ops/opencl/fully_connected.c,
 * y = act(x W^T + bias)) and batched MatMul (ops/opencl/matmul.c) with element strides per
 * operand, batch strides 0 where broadcast. Accumulates in float. */

/* Work item (n4, m): outputs n4*4 .. +3 of row m. */
__kernel void fully_connected(__global const DATA_T *x, int x_off, __global const DATA_T *w,
                              int w_off, __global const DATA_T *b, int b_off, int has_bias,
                              __global DATA_T *y, int y_off, int m_rows, int n_out, int k_in,
                              int act, float alpha, float beta) {
  const int n0 = get_global_id(0) * 4, m = get_global_id(1);
  if (n0 >= n_out || m >= m_rows) return;
  const int nn = min(4, n_out - n0);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int xr = x_off + m * k_in;
  for (int k = 0; k < k_in; ++k) {
    const float xv = LOAD(x, xr + k);
    for (int j = 0; j < 4; ++j)
      if (j < nn) acc[j] += xv * LOAD(w, w_off + (n0 + j) * k_in + k);
  }
  for (int j = 0; j < nn; ++j) {
    const float v = acc[j] + (has_bias ? LOAD(b, b_off + n0 + j) : 0.0f);
    STORE(y, y_off + m * n_out + n0 + j, mace_act(v, act, alpha, beta));
  }
}

/* Work item (n, m, batch): y[batch, m, n] = act(sum_k a[m, k] b[k, n] + bias[n]). The batch
 * index is decomposed over up to 4 broadcast batch dims (outermost first). */
__kernel void matmul(__global const DATA_T *a, int a_off, __global const DATA_T *b, int b_off,
                     __global const DATA_T *bias, int bias_off, int has_bias,
                     __global DATA_T *y, int y_off, int m_rows, int n_cols, int k_in,
                     int a_rs, int a_cs, int b_rs, int b_cs, int batch, int4 out_batch,
                     int4 a_bstride, int4 b_bstride, int act, float alpha, float beta) {
  const int n = get_global_id(0), m = get_global_id(1), bi = get_global_id(2);
  if (n >= n_cols || m >= m_rows || bi >= batch) return;
  const int ob[4] = {out_batch.s0, out_batch.s1, out_batch.s2, out_batch.s3};
  const int as[4] = {a_bstride.s0, a_bstride.s1, a_bstride.s2, a_bstride.s3};
  const int bs[4] = {b_bstride.s0, b_bstride.s1, b_bstride.s2, b_bstride.s3};
  int rem = bi, ao = a_off, bo = b_off;
  for (int d = 3; d >= 0; --d) {
    const int idx = rem % ob[d];
    rem /= ob[d];
    ao += idx * as[d];
    bo += idx * bs[d];
  }
  float acc = 0.0f;
  for (int k = 0; k < k_in; ++k)
    acc += LOAD(a, ao + m * a_rs + k * a_cs) * LOAD(b, bo + k * b_rs + n * b_cs);
  if (has_bias) acc += LOAD(bias, bias_off + n);
  STORE(y, y_off + bi * m_rows * n_cols + m * n_cols + n, mace_act(acc, act, alpha, beta));
}
