/* Reduce on the GPU (OpenCL, f32): every reduce_type of the CPU kind (ops/reduce.c) over axes
 * from the argument or input 1, keepdims, noop_with_empty_axes; kernels/opencl/reduce.cl. */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/reduce.h"
#include "ops/opencl/cl_op.h"

typedef struct reduce_cl_state {
  mace_cl_shadow shadow;
  int type;
  int32_t kept_dims[8], kept_strides[8], red_dims[8], red_strides[8];
  int64_t count;
} reduce_cl_state;

static const struct {
  const char *name;
  mace_reduce_type type;
} kTypes[] = {  /* ops/reduce.c's names (checked by the shadow's init) */
    {"MEAN", MACE_REDUCE_MEAN}, {"MAX", MACE_REDUCE_MAX}, {"MIN", MACE_REDUCE_MIN},
    {"SUM", MACE_REDUCE_SUM},   {"PROD", MACE_REDUCE_PROD},
    {"SUM_SQUARE", MACE_REDUCE_SUM_SQUARE}, {"L1", MACE_REDUCE_L1}, {"L2", MACE_REDUCE_L2},
    {"LOG_SUM", MACE_REDUCE_LOG_SUM}, {"LOG_SUM_EXP", MACE_REDUCE_LOG_SUM_EXP},
};

static mace_status reduce_cl_init(mace_op *op) {
  reduce_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  const mace_arg *t = mace_op_arg(op, "reduce_type");
  if (t && t->has_s) {
    size_t i = 0;
    while (i < sizeof(kTypes) / sizeof(kTypes[0]) && strcmp(t->s, kTypes[i].name) != 0) ++i;
    if (i == sizeof(kTypes) / sizeof(kTypes[0]))
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Reduce): %s has no GPU kernel", op->name,
                        t->s);
    st->type = kTypes[i].type;
  } else {
    st->type = t ? (int)t->i : MACE_REDUCE_MEAN;  /* MACE's numbers, checked by the shadow */
  }
  return MACE_OK;
}

static void pad8(const int64_t *dims, const int64_t *strides, int n, int32_t *d, int32_t *s) {
  for (int k = 0; k < 8; ++k) {
    const int src = k - (8 - n);
    d[k] = src >= 0 ? (int32_t)dims[src] : 1;
    s[k] = src >= 0 ? (int32_t)strides[src] : 0;
  }
}

static mace_status reduce_cl_infer(mace_op *op) {
  reduce_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks axes, dtype */
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Reduce): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(x->dtype));
  int64_t axes[MACE_MAX_DIMS];
  int n_axes = 0;
  if (op->n_inputs == 2) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, axes, MACE_MAX_DIMS, &n_axes));
  } else {
    const int64_t *a;
    const int n = mace_op_arg_ints(op, "axis", &a);
    for (int i = 0; i < n; ++i) axes[n_axes++] = a[i];
  }
  int reduced[MACE_MAX_DIMS] = {0};
  const int noop = mace_op_arg_int(op, "noop_with_empty_axes", 0) != 0;
  for (int d = 0; d < x->ndim && n_axes == 0; ++d) reduced[d] = !noop;
  for (int i = 0; i < n_axes; ++i) reduced[axes[i] < 0 ? axes[i] + x->ndim : axes[i]] = 1;
  mace_reduce_shape s;
  mace_reduce_shape_init(&s, x->dims, x->ndim, reduced);
  pad8(s.kept_dims, s.kept_strides, s.n_kept, st->kept_dims, st->kept_strides);
  pad8(s.red_dims, s.red_strides, s.n_red, st->red_dims, st->red_strides);
  st->count = s.red_count;
  return MACE_OK;
}

static mace_status reduce_cl_run(mace_op *op) {
  reduce_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "reduce", "reduce", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, st->count));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, st->type));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 7, st->kept_dims, sizeof(st->kept_dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 8, st->kept_strides, sizeof(st->kept_strides)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 9, st->red_dims, sizeof(st->red_dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 10, st->red_strides, sizeof(st->red_strides)));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void reduce_cl_release(mace_op *op) {
  reduce_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_reduce_cl = {.type = "Reduce", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(reduce_cl_state),
                                        .value_inputs = 0x2u, /* axes */
                                        .init = reduce_cl_init, .infer = reduce_cl_infer,
                                        .run = reduce_cl_run, .release = reduce_cl_release};
