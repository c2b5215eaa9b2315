/* Element-wise ops on NCHW buffers: Eltwise's binary and unary types with NumPy broadcasting
 * (ops/opencl/eltwise.c) and Activation (ops/opencl/activation.c: PRELU as a broadcast binary
 * type, the others as type -1, the identity, followed by the fused activation). The type
 * numbers are kernels/cpu/ref/eltwise.h's; the broadcast is its mace_eltwise_shape (up to 8
 * merged dims, strides 0 where an operand is broadcast). */

float mace_softplus(float x) { return x > 0.0f ? x + log1p(exp(-x)) : log1p(exp(x)); }

float mace_eltwise_op(int type, float a, float b) {
  switch (type) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return b < a ? b : a;
    case 5: return b > a ? b : a;
    case 6: return -a;
    case 7: return a < 0.0f ? -a : a;
    case 8: { const float d = a - b; return d * d; }
    case 9: return pow(a, b);
    case 13: return (float)((a > 0.0f) - (a < 0.0f));
    case 100: return a >= 0.0f ? a : a * b;
    case 101: return exp(a);
    case 102: return log(a);
    case 103: return sqrt(a);
    case 104: return rsqrt(a);
    case 105: return 1.0f / a;
    case 106: return floor(a);
    case 107: return ceil(a);
    case 108: return rint(a);
    case 109: return erf(a);
    case 110: return sin(a);
    case 111: return cos(a);
    case 112: return mace_softplus(a);
    case 113: return a / (1.0f + fabs(a));
    case 114: return 0.5f * a * erfc(-a * 0.70710678118654752f);
    case 115: {
      const float u = 0.79788456080286535588f * (a + 0.044715f * a * a * a);
      return a / (1.0f + exp(-2.0f * u));
    }
    case 116: return a * tanh(mace_softplus(a));
    default: return a;
  }
}

/* One output element per work item; n = the output's element count. */
__kernel void eltwise(__global const DATA_T *a, int a_off, __global const DATA_T *b, int b_off,
                      int has_b, __global DATA_T *y, int y_off, int n, int type, int ndim,
                      int8 dims, int8 a_strides, int8 b_strides, int act, float alpha,
                      float beta) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int d[8] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5, dims.s6, dims.s7};
  const int sa[8] = {a_strides.s0, a_strides.s1, a_strides.s2, a_strides.s3,
                     a_strides.s4, a_strides.s5, a_strides.s6, a_strides.s7};
  const int sb[8] = {b_strides.s0, b_strides.s1, b_strides.s2, b_strides.s3,
                     b_strides.s4, b_strides.s5, b_strides.s6, b_strides.s7};
  int rem = i, oa = 0, ob = 0;
  for (int k = ndim - 1; k >= 0; --k) {
    const int idx = rem % d[k];
    rem /= d[k];
    oa += idx * sa[k];
    ob += idx * sb[k];
  }
  const float av = LOAD(a, a_off + oa);
  const float bv = has_b ? LOAD(b, b_off + ob) : 0.0f;
  STORE(y, y_off + i, mace_act(mace_eltwise_op(type, av, bv), act, alpha, beta));
}
