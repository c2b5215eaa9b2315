/* Per-channel affine maps on [N, C, inner] buffers: BatchNorm (ops/opencl/batch_norm.c) and
 * BiasAdd (ops/opencl/bias_add.c). y = act(x * scale[c] + offset[c]); mode 0: scale and
 * offset given (p0, p1), 1: BiasAdd (p0 the bias, scale 1), 2: ONNX statistics (p0 gamma,
 * p1 beta, p2 mean, p3 var: scale = gamma / sqrt(var + eps), offset = beta - mean * scale). */
__kernel void channel_affine(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                             __global const DATA_T *p0, int p0_off, __global const DATA_T *p1,
                             int p1_off, __global const DATA_T *p2, int p2_off,
                             __global const DATA_T *p3, int p3_off, int n, int channels,
                             int inner, int mode, float eps, int act, float alpha, float beta) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int c = (i / inner) % channels;
  float scale, offset;
  if (mode == 1) {
    scale = 1.0f;
    offset = LOAD(p0, p0_off + c);
  } else if (mode == 2) {
    scale = LOAD(p0, p0_off + c) / sqrt(LOAD(p3, p3_off + c) + eps);
    offset = LOAD(p1, p1_off + c) - LOAD(p2, p2_off + c) * scale;
  } else {
    scale = LOAD(p0, p0_off + c);
    offset = LOAD(p1, p1_off + c);
  }
  const float v = mode == 1 ? LOAD(x, x_off + i) + offset : LOAD(x, x_off + i) * scale + offset;
  STORE(y, y_off + i, mace_act(v, act, alpha, beta));
}
