/* GroupNorm (also ONNX InstanceNormalization) on NCHW buffers (ops/opencl/group_norm.c), as
 * kernels/cpu/ref/group_norm.c: each (image, group) row of cpg channels x hw pixels (contiguous)
 * normalized by its mean and biased variance, then each channel's scale and bias (the group's
 * with per_group). Row-parallel: one work-group per row (a power of two of items), the mean and
 * then the variance reduced in local memory (two passes, in float). Offsets are in elements. */
__kernel void group_norm_rows(__global const DATA_T *x, int x_off, __global DATA_T *y,
                              int y_off, __global const DATA_T *scale, int s_off,
                              __global const DATA_T *bias, int b_off, int groups, int cpg,
                              int hw, int per_group, float eps, __local float *scratch) {
  const int l = get_local_id(0), n = get_local_size(0), q = MACE_GROUP_ID(0);
  const int len = cpg * hw, base = q * len, g = q % groups;
  float mean = 0.0f;
  for (int k = l; k < len; k += n) mean += LOAD(x, x_off + base + k);
  mean = mace_group_reduce(mean, scratch, 0) / (float)len;
  float var = 0.0f;
  for (int k = l; k < len; k += n) {
    const float d = LOAD(x, x_off + base + k) - mean;
    var += d * d;
  }
  var = mace_group_reduce(var, scratch, 0);
  const float inv = 1.0f / sqrt(var / (float)len + eps);
  for (int k = l; k < len; k += n) {
    const int i = per_group ? g : g * cpg + k / hw;
    const float a = inv * LOAD(scale, s_off + i);
    STORE(y, y_off + base + k, (LOAD(x, x_off + base + k) - mean) * a + LOAD(bias, b_off + i));
  }
}
