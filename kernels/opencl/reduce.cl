/* Reduce over a set of axes of a row-major buffer (ops/opencl/reduce.c), the shape of
 * kernels/cpu/ref/reduce.h (kept dims index the output, reduced dims iterated, both with
 * input strides; up to 8 each, unused dims 1 with stride 0, innermost last). One work item per
 * output element; accumulates in float. Types are mace_reduce_type's numbers. */

int mace_reduce_offset(int i, const int *dims, const int *strides) {
  int off = 0;
  for (int k = 7; k >= 0; --k) {
    off += (i % dims[k]) * strides[k];
    i /= dims[k];
  }
  return off;
}

__kernel void reduce(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                     int n_out, int count, int type, int8 kept_dims, int8 kept_strides,
                     int8 red_dims, int8 red_strides) {
  const int o = get_global_id(0);
  if (o >= n_out) return;
  const int kd[8] = {kept_dims.s0, kept_dims.s1, kept_dims.s2, kept_dims.s3,
                     kept_dims.s4, kept_dims.s5, kept_dims.s6, kept_dims.s7};
  const int ks[8] = {kept_strides.s0, kept_strides.s1, kept_strides.s2, kept_strides.s3,
                     kept_strides.s4, kept_strides.s5, kept_strides.s6, kept_strides.s7};
  const int rd[8] = {red_dims.s0, red_dims.s1, red_dims.s2, red_dims.s3,
                     red_dims.s4, red_dims.s5, red_dims.s6, red_dims.s7};
  const int rs[8] = {red_strides.s0, red_strides.s1, red_strides.s2, red_strides.s3,
                     red_strides.s4, red_strides.s5, red_strides.s6, red_strides.s7};
  const int base = x_off + mace_reduce_offset(o, kd, ks);
  float shift = 0.0f;  /* LOG_SUM_EXP: shifted by the max when it is finite */
  if (type == 104) {
    float mx = -INFINITY;
    for (int r = 0; r < count; ++r) {
      const float v = LOAD(x, base + mace_reduce_offset(r, rd, rs));
      mx = v > mx || isnan(v) ? v : mx;
    }
    if (isfinite(mx)) shift = mx;
  }
  float acc = type == 1 ? INFINITY : (type == 2 ? -INFINITY : (type == 3 ? 1.0f : 0.0f));
  for (int r = 0; r < count; ++r) {
    const float v = LOAD(x, base + mace_reduce_offset(r, rd, rs));
    switch (type) {
      case 1: acc = v < acc || isnan(v) ? v : acc; break;
      case 2: acc = v > acc || isnan(v) ? v : acc; break;
      case 3: acc *= v; break;
      case 100: case 102: acc += v * v; break;
      case 101: acc += fabs(v); break;
      case 104: acc += exp(v - shift); break;
      default: acc += v; break;
    }
  }
  float out = acc;
  if (type == 0) out = acc / (float)count;
  if (type == 102) out = sqrt(acc);
  if (type == 103) out = log(acc);
  if (type == 104) out = shift + log(acc);
  STORE(y, y_off + o, out);
}
