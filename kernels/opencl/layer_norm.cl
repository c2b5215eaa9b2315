/* LayerNorm / RMSNorm (ops/opencl/layer_norm.c), as kernels/cpu/ref/layer_norm.c: one work item
 * per position (row, inner index), its `len` values `inner` apart; two passes in float.
 * scale/bias steps are 1 (one value per normalized element) or 0 (one shared value). */
__kernel void layer_norm(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                         __global const DATA_T *scale, int s_off, int s_step,
                         __global const DATA_T *bias, int b_off, int b_step, int has_bias,
                         __global DATA_T *mean_out, int m_off, int has_mean,
                         __global DATA_T *inv_out, int i_off, int has_inv, int positions,
                         int len, int inner, float eps, int rms) {
  const int q = get_global_id(0);
  if (q >= positions) return;
  const int base = q / inner * len * inner + q % inner;
  float mean = 0.0f, var = 0.0f;
  if (!rms) {
    for (int k = 0; k < len; ++k) mean += LOAD(x, x_off + base + k * inner);
    mean /= (float)len;
  }
  for (int k = 0; k < len; ++k) {
    const float d = LOAD(x, x_off + base + k * inner) - mean;
    var += d * d;
  }
  const float inv = 1.0f / sqrt(var / (float)len + eps);
  if (has_mean) STORE(mean_out, m_off + q, mean);
  if (has_inv) STORE(inv_out, i_off + q, inv);
  for (int k = 0; k < len; ++k) {
    float v = (LOAD(x, x_off + base + k * inner) - mean) * inv * LOAD(scale, s_off + k * s_step);
    if (has_bias) v += LOAD(bias, b_off + k * b_step);
    STORE(y, y_off + base + k * inner, v);
  }
}

/* The same over contiguous rows (inner 1), row-parallel: one work-group per row (a power of
 * two of items), the mean and then the variance reduced in local memory (two passes, as
 * above). */
__kernel void layer_norm_rows(__global const DATA_T *x, int x_off, __global DATA_T *y,
                              int y_off, __global const DATA_T *scale, int s_off, int s_step,
                              __global const DATA_T *bias, int b_off, int b_step, int has_bias,
                              __global DATA_T *mean_out, int m_off, int has_mean,
                              __global DATA_T *inv_out, int i_off, int has_inv, int len,
                              float eps, int rms, __local float *scratch) {
  const int l = get_local_id(0), n = get_local_size(0), q = MACE_GROUP_ID(0);
  const int base = q * len;
  float mean = 0.0f;
  if (!rms) {
    for (int k = l; k < len; k += n) mean += LOAD(x, x_off + base + k);
    mean = mace_group_reduce(mean, scratch, 0) / (float)len;
  }
  float var = 0.0f;
  for (int k = l; k < len; k += n) {
    const float d = LOAD(x, x_off + base + k) - mean;
    var += d * d;
  }
  var = mace_group_reduce(var, scratch, 0);
  const float inv = 1.0f / sqrt(var / (float)len + eps);
  if (l == 0 && has_mean) STORE(mean_out, m_off + q, mean);
  if (l == 0 && has_inv) STORE(inv_out, i_off + q, inv);
  for (int k = l; k < len; k += n) {
    float v = (LOAD(x, x_off + base + k) - mean) * inv * LOAD(scale, s_off + k * s_step);
    if (has_bias) v += LOAD(bias, b_off + k * b_step);
    STORE(y, y_off + base + k, v);
  }
}
