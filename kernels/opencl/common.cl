/* Prepended to every OpenCL program (after the runtime's DATA_T/LOAD/STORE preamble): the fused
 * activation of ops/fused_activation.h, kinds numbered as kernels/cpu/ref/activation.h's enum. */
float mace_act(float x, int kind, float alpha, float beta) {
  switch (kind) {
    case 1: return x < 0.0f ? 0.0f : x;                       /* RELU */
    case 2: { float y = x < 0.0f ? 0.0f : x; return y > beta ? beta : y; }  /* RELUX */
    case 3: return x >= 0.0f ? x : alpha * x;                 /* LEAKYRELU */
    case 4: {                                                 /* SIGMOID, split by sign */
      if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));
      const float e = exp(x);
      return e / (1.0f + e);
    }
    case 5: return tanh(x);                                   /* TANH */
    case 6: { float y = alpha * x + beta; return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y); }
    case 7: {                                                 /* HARDSWISH */
      float y = x * (1.0f / 6.0f) + 0.5f;
      return x * (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y));
    }
    case 8: return x >= 0.0f ? x : alpha * expm1(x);          /* ELU */
    case 9: return x / (1.0f + exp(-alpha * x));              /* SWISH */
    case 10: return 0.5f * x * erfc(-x * 0.70710678118654752f);  /* GELU */
    case 11: {                                                /* GELU_TANH */
      const float u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
      return x / (1.0f + exp(-2.0f * u));
    }
    case 12: return x * tanh(log1p(exp(x)));                  /* MISH */
    default: return x;
  }
}
