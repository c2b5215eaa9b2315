/* GroupNorm: group normalization of [N, C, ...] tensors; groups = C is instance normalization (f32). */
/*
 * Inputs:  0 X (f32, [N, C, spatial...], rank >= 2)
 *          1 scale (f32), C elements (one per channel) or `groups` elements when per_group
 *          2 bias (f32), element count as scale
 * Output:  0 Y, shape of X: each (n, group) of C / groups channels is normalized over its
 *          channels and spatial elements, y = (x - mean) / sqrt(var + epsilon) * scale + bias.
 * Arguments:
 *   groups     int (default 0 = C: ONNX InstanceNormalization); must divide C
 *   epsilon    float (default 1e-5)
 *   per_group  int 0|1 (default 0): scale/bias hold one value per group (ONNX
 *              GroupNormalization opset 18) instead of one per channel (opset 21)
 */
#include "core/op.h"
#include "kernels/cpu/ref/group_norm.h"
#include "runtime/cpu/simd_dispatch.h"

#define GROUP_NORM_GRAIN 16384

typedef struct group_norm_state {
  int64_t groups_arg;
  float eps;
  int per_group;
  int64_t rows, groups, cpg, hw;
} group_norm_state;

static mace_status group_norm_init(mace_op *op) {
  group_norm_state *s = (group_norm_state *)op->state;
  s->groups_arg = mace_op_arg_int(op, "groups", 0);
  s->eps = mace_op_arg_float(op, "epsilon", 1e-5f);
  s->per_group = mace_op_arg_int(op, "per_group", 0) != 0;
  if (s->groups_arg < 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GroupNorm): groups %lld is negative",
                      op->name, (long long)s->groups_arg);
  return MACE_OK;
}

static mace_status group_norm_infer(mace_op *op) {
  group_norm_state *s = (group_norm_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GroupNorm): input '%s' has rank %d, needs "
                      "[N, C, ...]", op->name, x->name, x->ndim);
  const int64_t c = x->dims[1];
  s->groups = s->groups_arg ? s->groups_arg : c;
  if (s->groups == 0 || c % s->groups != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GroupNorm): %lld groups do not divide %lld "
                      "channels", op->name, (long long)s->groups, (long long)c);
  s->cpg = c / s->groups;
  s->rows = x->dims[0] * s->groups;
  s->hw = 1;
  for (int d = 2; d < x->ndim; ++d) s->hw *= x->dims[d];
  const int64_t want = s->per_group ? s->groups : c;
  for (int i = 1; i < 3; ++i) {
    const mace_tensor *t = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, t, MACE_DT_F32));
    if (mace_tensor_numel(t) != want)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (GroupNorm): '%s' has %lld elements, "
                        "needs %lld", op->name, t->name, (long long)mace_tensor_numel(t),
                        (long long)want);
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = 4 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const group_norm_state *s;
  const float *x, *scale, *bias;
  float *y;
  mace_f32_layer_norm_fn ln; /* the active ISA's LayerNorm kernel, or NULL: the reference */
} group_norm_job;

/* A (n, group) row is a LayerNorm row of cpg * hw elements: the SIMD LayerNorm kernel computes
 * it, with the group's (or the channel's, one channel a group) scale and bias as shared
 * values, or with 1 and none and then each channel's scale and bias over its plane. The
 * reference (statistics in double, one element at a time) is several times slower. */
static void group_norm_simd(const group_norm_job *j, int64_t begin, int64_t end) {
  const group_norm_state *s = j->s;
  const int64_t len = s->cpg * s->hw;
  static const float one = 1.0f;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t g = r % s->groups;
    if (s->per_group || s->cpg == 1) {
      const int64_t i = s->per_group ? g : g * s->cpg;
      j->ln(j->x, j->y, len, j->scale + i, 0, j->bias + i, 0, s->eps, 0, NULL, NULL, r, r + 1);
      continue;
    }
    j->ln(j->x, j->y, len, &one, 0, NULL, 0, s->eps, 0, NULL, NULL, r, r + 1);
    for (int64_t c = 0; c < s->cpg; ++c) {
      float *yc = j->y + r * len + c * s->hw;
      const float sc = j->scale[g * s->cpg + c], b = j->bias[g * s->cpg + c];
      for (int64_t k = 0; k < s->hw; ++k) yc[k] = yc[k] * sc + b;
    }
  }
}

static void group_norm_range(void *ctx, int64_t begin, int64_t end) {
  const group_norm_job *j = (const group_norm_job *)ctx;
  if (j->ln) {
    group_norm_simd(j, begin, end);
    return;
  }
  mace_f32_group_norm__ref(j->x, j->y, j->s->groups, j->s->cpg, j->s->hw, j->scale, j->bias,
                           j->s->per_group, j->s->eps, begin, end);
}

static mace_status group_norm_run(mace_op *op) {
  const group_norm_state *s = (const group_norm_state *)op->state;
  group_norm_job job = {s, (const float *)op->inputs[0]->data,
                        (const float *)op->inputs[1]->data,
                        (const float *)op->inputs[2]->data, (float *)op->outputs[0]->data,
                        mace_simd_active()->layer_norm};
  const int64_t len = s->cpg * s->hw;
  if (s->rows == 0 || len == 0) return MACE_OK;
  const int64_t grain = GROUP_NORM_GRAIN / len;
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, group_norm_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_group_norm_f32 = {.type = "GroupNorm", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(group_norm_state),
                                             .init = group_norm_init,
                                             .infer = group_norm_infer, .run = group_norm_run};
