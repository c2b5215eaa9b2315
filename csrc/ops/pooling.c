/* Pooling: 2-D max / average pooling (ONNX MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool), f32 (MAX also u8/i8), NCHW or NCHWc, on the CPU. */
/*
 * Inputs:  0 x  [N, C, H, W]
 * Output:  0 y  [N, C, H_out, W_out], x's dtype
 * dtypes:  f32 (NCHW or NCHWc); MAX also u8 and i8 (NCHW; an empty window gives the lowest
 *          value), which keep the input's scale and zero point (docs/int8.md)
 * Arguments:
 *   pooling_type       "MAX" | "AVG" (required)
 *   kernels            ints [kH, kW] (required unless global)
 *   strides            ints [sH, sW], default [1, 1]
 *   dilations          ints [dH, dW], default [1, 1]
 *   padding_values     ints [top, left, bottom, right], default zeros (used when EXPLICIT)
 *   padding            "EXPLICIT" (default) | "SAME_UPPER" | "SAME_LOWER" | "VALID"
 *   count_include_pad  int 0 (default) | 1: AVG divides by the window size including padding
 *   ceil_mode          int 0 (default) | 1: output size rounded up (a last window starting
 *                      in the end padding is dropped, as ONNX Runtime does)
 *   global             int 0 (default) | 1: one window over the whole plane (1x1 output);
 *                      the other geometry arguments are then ignored
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/pooling.h"
#include "kernels/cpu/ref/qlinear_pool.h"
#include "runtime/cpu/nchwc_split.h"
#include "ops/pool_geometry.h"
#include "ops/q8_scalar.h"
#include "runtime/cpu/simd_dispatch.h"

typedef struct pooling_state {
  mace_pool_args a;
  mace_pool2d_shape shape;
} pooling_state;

static mace_status pooling_init(mace_op *op) {
  pooling_state *st = op->state;
  const char *type = mace_op_arg_str(op, "pooling_type", "");
  if (strcmp(type, "MAX") == 0) st->a.is_max = 1;
  else if (strcmp(type, "AVG") != 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Pooling): pooling_type \"%s\", expects \"MAX\" or \"AVG\"",
                      op->name, type);
  return mace_pool_args_parse(op, "Pooling", &st->a);
}

static mace_status pooling_infer(mace_op *op) {
  pooling_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && (!st->a.is_max || !mace_q8_is_int8(x->dtype) ||
                                  x->layout == MACE_LAYOUT_NCHWC))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Pooling): %s %s is not supported (f32; MAX "
                      "also u8 and i8, AVG of those is QLinearAveragePool)", op->name,
                      st->a.is_max ? "MAX" : "AVG", mace_dtype_name(x->dtype));
  MACE_RETURN_IF_ERROR(mace_pool_shape_infer(op, "Pooling", &st->a, x, &st->shape));
  const mace_pool2d_shape *s = &st->shape;
  const int64_t dims[4] = {s->batch, s->channels, s->out_h, s->out_w};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->outputs[0]->layout = x->layout;
  op->outputs[0]->block = x->block;
  op->macs = s->batch * s->channels * s->out_h * s->out_w * s->k_h * s->k_w;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct pooling_ctx {
  const pooling_state *st;
  const float *x;
  float *y;
  int block;     /* NCHWc: channels per block; 0: NCHW */
  int64_t bands; /* NCHWc, > 0: items are (image, row band, block) */
} pooling_ctx;

/* Global pooling: each plane is one contiguous run, reduced with 16 independent partial
 * results (the compiler keeps them in vector registers) instead of the window kernels' single
 * running sum, a dependent add per pixel (EfficientNet-B0's 17 squeeze-excite pools).
 * The summation order differs from the reference window kernel, so the mean may differ in
 * the last bits; the maximum is exact, NaN propagated. */
#define GLOBAL_LANES 16
static void global_pool_range(const pooling_ctx *c, int64_t begin, int64_t end) {
  const int64_t plane = c->st->shape.in_h * c->st->shape.in_w;
  for (int64_t item = begin; item < end; ++item) {
    const float *x = c->x + item * plane;
    float acc[GLOBAL_LANES];
    int64_t i = 0;
    int any_nan = 0;
    if (c->st->a.is_max) {
      for (int l = 0; l < GLOBAL_LANES; ++l) acc[l] = -FLT_MAX;
      for (; i + GLOBAL_LANES <= plane; i += GLOBAL_LANES)
        for (int l = 0; l < GLOBAL_LANES; ++l) {
          acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
          any_nan |= x[i + l] != x[i + l];
        }
      float m = -FLT_MAX;
      for (; i < plane; ++i) {
        m = x[i] > m ? x[i] : m;
        any_nan |= x[i] != x[i];
      }
      for (int l = 0; l < GLOBAL_LANES; ++l) m = acc[l] > m ? acc[l] : m;
      c->y[item] = any_nan ? NAN : m;
    } else {
      for (int l = 0; l < GLOBAL_LANES; ++l) acc[l] = 0.0f;
      for (; i + GLOBAL_LANES <= plane; i += GLOBAL_LANES)
        for (int l = 0; l < GLOBAL_LANES; ++l) acc[l] += x[i + l];
      float sum = 0.0f;
      for (; i < plane; ++i) sum += x[i];
      for (int l = 0; l < GLOBAL_LANES; ++l) sum += acc[l];
      c->y[item] = sum / (float)plane;
    }
  }
}

static void pooling_range(void *p, int64_t begin, int64_t end) {
  const pooling_ctx *c = p;
  if (c->st->a.global) {
    global_pool_range(c, begin, end);
    return;
  }
  const mace_simd_kernels *k = mace_simd_active();  /* drop-ins for the reference kernels */
  if (c->st->a.is_max)
    k->maxpool2d(&c->st->shape, c->x, c->y, begin, end);
  else
    k->avgpool2d(&c->st->shape, c->st->a.count_include_pad, c->x, c->y, begin, end);
}

/* Any pooling runs blocked: per pixel a vector max / add over the window, each lane the
 * NCHW kernel's arithmetic. Element-wise as the layout pass counts, not a reason for a chain
 * by itself: per op, blocked pooling is faster than plain, but the gains are small next to a
 * Reorder's cost (benchmarks/HISTORY.md). The tail lanes stay finite (max or mean of
 * finite values; an empty window -FLT_MAX or 0). */
static int pooling_accepts_nchwc(mace_op *op, int block) {
  (void)op;
  (void)block;
  return MACE_NCHWC_ELEMENTWISE;
}

/* Output rows [y0, y1) of one plane (x, y: the plane's) as a pooling of its own: the input
 * from the band's first window row on (a top padding only where that row is above the
 * input), the bottom as it is. */
static void pool_band(const pooling_ctx *c, mace_f32_nchwc_pool2d_fn fn, const float *x,
                      float *y, int64_t y0, int64_t y1) {
  const pooling_state *st = c->st;
  mace_pool2d_shape s = st->shape;
  const int64_t top = y0 * s.stride_h - s.pad_top, r0 = top > 0 ? top : 0;
  s.in_h -= r0;
  s.pad_top = r0 - top;
  s.out_h = y1 - y0;
  fn(&s, st->a.is_max, st->a.count_include_pad, c->block, x + r0 * s.in_w * c->block,
     y + y0 * s.out_w * c->block, 0, 1);
}

static void pooling_nchwc_range(void *p, int64_t begin, int64_t end) {
  const pooling_ctx *c = p;
  const pooling_state *st = c->st;
  const mace_simd_kernels *k = mace_simd_active();
  const int b = c->block, fast = k->nchwc_block == b && k->nchwc_pool2d;
  if (st->a.global) {
    (fast ? k->nchwc_global_pool : mace_f32_nchwc_global_pool__ref)(
        st->a.is_max, b, st->shape.in_h * st->shape.in_w, c->x, c->y, begin, end);
    return;
  }
  const mace_f32_nchwc_pool2d_fn fn = fast ? k->nchwc_pool2d : mace_f32_nchwc_pool2d__ref;
  if (c->bands) {
    const mace_pool2d_shape *s = &st->shape;
    const int64_t blocks = MACE_NCHWC_PADDED(s->channels, b) / b;
    for (int64_t it = begin; it < end; ++it) {
      const mace_nchwc_band_item i = mace_nchwc_band_item_at(it, c->bands, blocks, s->out_h);
      const int64_t plane = i.img * blocks + i.block;
      if (i.y0 < i.y1)
        pool_band(c, fn, c->x + plane * s->in_h * s->in_w * b,
                  c->y + plane * s->out_h * s->out_w * b, i.y0, i.y1);
    }
    return;
  }
  fn(&st->shape, st->a.is_max, st->a.count_include_pad, b, c->x, c->y, begin, end);
}

/* MAX of u8 / i8 (bytes compared as they are: the output keeps the input's scale and zero
 * point), planes [begin, end). */
static void maxpool_q8_range(void *p, int64_t begin, int64_t end) {
  const mace_op *op = p;
  const pooling_state *st = op->state;
  mace_simd_active()->q8_maxpool2d(&st->shape, op->inputs[0]->dtype == MACE_DT_I8,
                                   op->inputs[0]->data, op->outputs[0]->data, begin, end);
}

static mace_status pooling_run(mace_op *op) {
  const pooling_state *st = op->state;
  const mace_tensor *x = op->inputs[0];
  if (x->layout == MACE_LAYOUT_NCHWC) {
    /* Row bands where the layer before split its plane into them (runtime/cpu/nchwc_split.h). */
    const mace_pool2d_shape *s = &st->shape;
    const int threads = mace_threadpool_size(op->pool);
    const int64_t blocks = MACE_NCHWC_PADDED(s->channels, x->block) / x->block;
    const int64_t bands =
        !st->a.global && threads > 1 && mace_nchwc_row_split(blocks * x->block, s->in_h * s->in_w)
            ? mace_nchwc_bands(s->out_h, threads)
            : 0;
    pooling_ctx c = {st, x->data, op->outputs[0]->data, x->block, bands};
    const int64_t items = s->batch * (c.bands ? c.bands : 1) * blocks;
    mace_threadpool_parallel_for(op->pool, items, 1, pooling_nchwc_range, &c);
    return MACE_OK;
  }
  if (x->dtype != MACE_DT_F32) {
    mace_threadpool_parallel_for(op->pool, st->shape.batch * st->shape.channels, 1,
                                 maxpool_q8_range, op);
    return MACE_OK;
  }
  pooling_ctx c = {st, x->data, op->outputs[0]->data, 0, 0};
  mace_threadpool_parallel_for(op->pool, st->shape.batch * st->shape.channels, 1, pooling_range,
                               &c);
  return MACE_OK;
}

const mace_op_kind mace_op_pooling_f32 = {.type = "Pooling",
                                          .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(pooling_state),
                                          .init = pooling_init,
                                          .infer = pooling_infer,
                                          .run = pooling_run,
                                          .accepts_nchwc = pooling_accepts_nchwc};
const mace_op_kind mace_op_pooling_u8 = {.type = "Pooling", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_U8, .state_size = sizeof(pooling_state),
                                         .init = pooling_init, .infer = pooling_infer,
                                         .run = pooling_run};
const mace_op_kind mace_op_pooling_i8 = {.type = "Pooling", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_I8, .state_size = sizeof(pooling_state),
                                         .init = pooling_init, .infer = pooling_infer,
                                         .run = pooling_run};
