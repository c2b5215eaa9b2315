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

/* The work-group's index along d counting the launch's global work offset: a launch split into
 * chunks (limit_opencl_kernel_time, runtime/opencl/cl_enqueue.c) starts each chunk at an offset
 * that is a multiple of the work-group size, which get_group_id does not count. */
#define MACE_GROUP_ID(d) ((int)(get_group_id(d) + get_global_offset(d) / get_local_size(d)))

/* The work-group's reduction of v (sum, or max when is_max) through scratch (one float per
 * work item; the group size a power of two); every item gets the result. Call from every item
 * of the group. */
float mace_group_reduce(float v, __local float *scratch, int is_max) {
  const int l = get_local_id(0), n = get_local_size(0);
  scratch[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] = is_max ? fmax(scratch[l], scratch[l + s]) : scratch[l] + scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  /* scratch is reused by the next reduction */
  return r;
}
