/* LpPool: Lp-norm pooling over 1 to 3 spatial dims of [N, C, spatial...] tensors (ONNX LpPool), f32. */
/*
 * Inputs:  0 X (f32, [N, C, spatial...] with 1 to 3 spatial dims)
 * Output:  0 Y, [N, C, out...]: each output is (sum |x|^p)^(1/p) over its window's elements
 *          inside X (padding adds nothing).
 * Arguments (one value per spatial dim; ONNX meanings):
 *   kernels    ints (required)
 *   strides    ints (default 1s)
 *   dilations  ints (default 1s)
 *   pads       ints, begins then ends (default 0s); ignored unless auto_pad is NOTSET
 *   auto_pad   string "NOTSET" (default) | "VALID" | "SAME_UPPER" | "SAME_LOWER"
 *   ceil_mode  int 0|1 (default 0): a last partial window counts unless it starts in the
 *              end padding
 *   p          int >= 1 (default 2)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/lp_pool.h"

#define LP_POOL_GRAIN 1024

typedef struct lp_pool_state {
  int n;  /* spatial dims */
  int64_t kernel[3], stride[3], dilation[3], pads[6];
  int auto_pad;  /* 0 NOTSET, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER */
  int ceil_mode;
  float p;
  mace_lp_pool_geom g;
  int64_t total;
} lp_pool_state;

static mace_status lp_pool_ints(mace_op *op, const char *name, int n, int64_t dflt, int64_t *out,
                                int64_t min) {
  const int64_t *v = NULL;
  const int cnt = mace_op_arg_ints(op, name, &v);
  for (int i = 0; i < n; ++i) out[i] = dflt;
  if (cnt < 0) return MACE_OK;
  if (cnt != n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): %s has %d values, needs %d",
                      op->name, name, cnt, n);
  for (int i = 0; i < n; ++i) {
    if (v[i] < min)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): %s value %lld is below %lld",
                        op->name, name, (long long)v[i], (long long)min);
    out[i] = v[i];
  }
  return MACE_OK;
}

static mace_status lp_pool_init(mace_op *op) {
  lp_pool_state *s = (lp_pool_state *)op->state;
  const int64_t *k = NULL;
  s->n = mace_op_arg_ints(op, "kernels", &k);
  if (s->n < 1 || s->n > 3)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): kernels must name 1 to 3 dims",
                      op->name);
  MACE_RETURN_IF_ERROR(lp_pool_ints(op, "kernels", s->n, 1, s->kernel, 1));
  MACE_RETURN_IF_ERROR(lp_pool_ints(op, "strides", s->n, 1, s->stride, 1));
  MACE_RETURN_IF_ERROR(lp_pool_ints(op, "dilations", s->n, 1, s->dilation, 1));
  MACE_RETURN_IF_ERROR(lp_pool_ints(op, "pads", 2 * s->n, 0, s->pads, 0));
  static const char *const modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
  const char *ap = mace_op_arg_str(op, "auto_pad", "NOTSET");
  s->auto_pad = -1;
  for (int i = 0; i < 4; ++i) {
    if (strcmp(ap, modes[i]) == 0) s->auto_pad = i;
  }
  if (s->auto_pad < 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): unknown auto_pad '%s'", op->name,
                      ap);
  s->ceil_mode = mace_op_arg_int(op, "ceil_mode", 0) != 0;
  const int64_t p = mace_op_arg_int(op, "p", 2);
  if (p < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): p %lld must be >= 1", op->name,
                      (long long)p);
  s->p = (float)p;
  return MACE_OK;
}

static mace_status lp_pool_infer(mace_op *op) {
  lp_pool_state *s = (lp_pool_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim != s->n + 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): input '%s' has rank %d, needs %d "
                      "for a %d-D window", op->name, x->name, x->ndim, s->n + 2, s->n);
  int64_t dims[MACE_MAX_DIMS];
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  mace_lp_pool_geom *g = &s->g;
  const int off = 3 - s->n;
  for (int i = 0; i < 3; ++i) {
    g->in[i] = g->out[i] = g->kernel[i] = g->stride[i] = g->dilation[i] = 1;
    g->pad_begin[i] = 0;
  }
  s->total = x->dims[0] * x->dims[1];
  for (int i = 0; i < s->n; ++i) {
    const int64_t in = x->dims[i + 2], st = s->stride[i];
    const int64_t dk = (s->kernel[i] - 1) * s->dilation[i] + 1;
    int64_t pb = s->pads[i], pe = s->pads[i + s->n], out;
    if (s->auto_pad == 1) {
      pb = pe = 0;
    } else if (s->auto_pad >= 2) {
      const int64_t o = (in + st - 1) / st;
      int64_t total = (o - 1) * st + dk - in;
      if (total < 0) total = 0;
      pb = s->auto_pad == 2 ? total / 2 : total - total / 2;
      pe = total - pb;
    }
    const int64_t span = in + pb + pe - dk;
    if (span < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (LpPool): window %lld is larger than the "
                        "padded input %lld", op->name, (long long)dk, (long long)(in + pb + pe));
    if (s->auto_pad >= 2) {
      out = (in + st - 1) / st;
    } else if (s->ceil_mode && s->auto_pad == 0) {
      out = (span + st - 1) / st + 1;
      if ((out - 1) * st >= in + pb) --out;
    } else {
      out = span / st + 1;
    }
    dims[i + 2] = out;
    g->in[off + i] = in;
    g->out[off + i] = out;
    g->kernel[off + i] = s->kernel[i];
    g->stride[off + i] = st;
    g->dilation[off + i] = s->dilation[i];
    g->pad_begin[off + i] = pb;
    s->total *= out;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, x->ndim));
  op->macs = s->total * s->kernel[0] * (s->n > 1 ? s->kernel[1] : 1) *
             (s->n > 2 ? s->kernel[2] : 1);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const lp_pool_state *s;
  const float *x;
  float *y;
} lp_pool_job;

static void lp_pool_range(void *ctx, int64_t begin, int64_t end) {
  const lp_pool_job *j = (const lp_pool_job *)ctx;
  mace_f32_lp_pool__ref(j->x, j->y, &j->s->g, j->s->p, begin, end);
}

static mace_status lp_pool_run(mace_op *op) {
  const lp_pool_state *s = (const lp_pool_state *)op->state;
  lp_pool_job job = {s, (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  if (s->total == 0) return MACE_OK;
  mace_threadpool_parallel_for(op->pool, s->total, LP_POOL_GRAIN, lp_pool_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_lp_pool_f32 = {.type = "LpPool", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(lp_pool_state),
                                          .init = lp_pool_init, .infer = lp_pool_infer,
                                          .run = lp_pool_run};
