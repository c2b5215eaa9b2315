/* Deconv2D: grouped 2-D transposed convolution (ONNX ConvTranspose) with a fused activation, f32, NCHW, on the CPU. */
/*
 * Inputs:  0 x       [N, C_in, H, W]
 *          1 filter  [C_in, C_out / group, kH, kW] (ONNX ConvTranspose layout, unchanged)
 *          2 bias    [C_out] (optional)
 * Output:  0 y       [N, C_out, H_out, W_out]
 * Arguments:
 *   strides         ints [sH, sW], default [1, 1]
 *   dilations       ints [dH, dW], default [1, 1]
 *   padding_values  ints [top, left, bottom, right], default zeros (used when EXPLICIT
 *                   and no output_shape)
 *   output_padding  ints [h, w], default [0, 0]: extra rows/columns at the end
 *   output_shape    ints [H_out, W_out] (optional): the pads are then derived from it
 *   padding         "EXPLICIT" (default) | "SAME_UPPER" | "SAME_LOWER" | "VALID"
 *   group           int, default 1
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                   the fused activation (ops/fused_activation.h)
 * Sizes follow ONNX Runtime: full = stride * (in - 1) + output_padding + dilation * (k - 1) + 1;
 * EXPLICIT: out = full - pad_begin - pad_end. SAME_*: out = min(in * stride, full). With an out given
 * (output_shape or SAME), total = full - out is split with the odd pixel at the end for
 * SAME_UPPER and at the start otherwise.
 *
 * With a SIMD GEMM family (runtime/cpu/gemm_dispatch.h), per image and group the GEMM computes
 * cols[C_out/g * kH * kW, H * W] = W_g^T [C_out/g * kH * kW, C_in/g] x X_g [C_in/g, H * W]
 * (a constant filter is packed once at infer), then col2im adds every (oc, ky, kx) row of cols
 * into output plane oc at its strided positions, bias first and the activation last; threads
 * own whole output planes. cols and the GEMM's scratch come from op->scratch. MACE_CPU_ISA=ref
 * runs the reference scatter kernel (kernels/cpu/ref/deconv2d.c).
 */
#include "core/op.h"
#include "kernels/cpu/col2im.h"
#include "kernels/cpu/ref/deconv2d.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/gemm_dispatch.h"
#include "runtime/cpu/simd_dispatch.h"

/* `shape` comes first: the GPU kinds (ops/opencl/deconv2d.c) read the geometry infer worked
 * out from this state (their shadow's, this kind's or DepthwiseDeconv2d's) as a
 * mace_deconv2d_shape. */
typedef struct deconv2d_state {
  mace_deconv2d_shape shape;
  int64_t strides[2], dilations[2], pads[4], out_pad[2], out_shape[2], group;
  int has_out_shape;
  mace_pad_mode mode;
  mace_activation act;
  const mace_gemm_family *gemm; /* NULL: reference scatter kernel */
  int64_t gm, gn, gk;           /* per image and group: C_out/g*kH*kW, H*W, C_in/g */
  float *packed_w;              /* owned: constant filter, per group packed GEMM A panels */
  int64_t packed_group_floats;
  size_t cols_bytes;            /* cols of all groups of one image, at the scratch's start */
} deconv2d_state;

static void deconv2d_release(mace_op *op) {
  deconv2d_state *st = op->state;
  mace_aligned_free(st->packed_w);
  st->packed_w = NULL;
}

static mace_status deconv2d_init(mace_op *op) {
  deconv2d_state *st = op->state;
  const int64_t *v;
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "output_padding", 2, st->out_pad, 0));
  if (mace_op_arg_ints(op, "output_shape", &v) >= 0) {
    st->has_out_shape = 1;
    MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "output_shape", 2, st->out_shape, 1));
  }
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): unknown padding \"%s\"", op->name,
                      pad);
  st->group = mace_op_arg_int(op, "group", 1);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): group %lld must be >= 1",
                      op->name, (long long)st->group);
  return mace_fused_activation_parse(op, &st->act);
}

/* One spatial axis: output size and the begin padding (-1 size when inconsistent). */
static int64_t deconv_axis(const deconv2d_state *st, int a, int64_t in, int64_t k,
                           int64_t *pad_begin) {
  const int64_t s = st->strides[a];
  const int64_t full = s * (in - 1) + st->out_pad[a] + st->dilations[a] * (k - 1) + 1;
  int64_t out;
  if (st->has_out_shape) out = st->out_shape[a];
  else if (st->mode == MACE_PAD_SAME_UPPER || st->mode == MACE_PAD_SAME_LOWER)
    out = in * s < full ? in * s : full;  /* never negative padding (ONNX Runtime) */
  else if (st->mode == MACE_PAD_VALID) out = full;
  else {
    *pad_begin = st->pads[a];
    return full - st->pads[a] - st->pads[a + 2];
  }
  const int64_t total = full - out;
  if (total < 0) {  /* output_shape beyond the full extent: extra rows at the end, as
                     * output_padding would give (the ONNX backend tests expect this) */
    *pad_begin = 0;
    return out;
  }
  *pad_begin = st->mode == MACE_PAD_SAME_UPPER ? total / 2 : total - total / 2;
  return out;
}

static mace_status deconv2d_infer(mace_op *op) {
  deconv2d_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  if (b) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): input has rank %d, expects 4 (NCHW)", op->name,
                      x->ndim);
  if (w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): filter has rank %d, expects 4 [C_in, C_out/group, kH, kW]",
                      op->name, w->ndim);
  const int64_t n = x->dims[0], c = x->dims[1], g = st->group;
  const int64_t oc = w->dims[1] * g;
  if (w->dims[0] != c || c % g != 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): input has %lld channels, filter is [%lld, %lld, ...] "
                      "with group %lld (needs filter[0] = C_in, C_in %% group == 0)",
                      op->name, (long long)c, (long long)w->dims[0], (long long)w->dims[1],
                      (long long)g);
  if (w->dims[1] < 1 || w->dims[2] < 1 || w->dims[3] < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv2D): empty filter", op->name);
  if (b && (b->ndim != 1 || b->dims[0] != oc))
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): bias has %lld values (rank %d), expects [%lld]",
                      op->name, (long long)mace_tensor_numel(b), b->ndim, (long long)oc);
  for (int a = 0; a < 2; ++a)
    if (st->out_pad[a] >= st->strides[a] && st->out_pad[a] >= st->dilations[a])
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (Deconv2D): output_padding %lld must be smaller than the "
                        "stride or the dilation", op->name, (long long)st->out_pad[a]);
  int64_t pt = 0, pl = 0;
  const int64_t oh = deconv_axis(st, 0, x->dims[2], w->dims[2], &pt);
  const int64_t ow = deconv_axis(st, 1, x->dims[3], w->dims[3], &pl);
  if (oh <= 0 || ow <= 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Deconv2D): output size %lldx%lld is not positive or does not fit "
                      "the input %lldx%lld, kernel %lldx%lld and strides",
                      op->name, (long long)oh, (long long)ow, (long long)x->dims[2],
                      (long long)x->dims[3], (long long)w->dims[2], (long long)w->dims[3]);
  st->shape = (mace_deconv2d_shape){.batch = n, .in_c = c, .in_h = x->dims[2],
                                    .in_w = x->dims[3], .out_c = oc, .out_h = oh, .out_w = ow,
                                    .k_h = w->dims[2], .k_w = w->dims[3],
                                    .stride_h = st->strides[0], .stride_w = st->strides[1],
                                    .dilation_h = st->dilations[0],
                                    .dilation_w = st->dilations[1], .pad_top = pt,
                                    .pad_left = pl, .group = g};
  const int64_t dims[4] = {n, oc, oh, ow};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = n * c * x->dims[2] * x->dims[3] * (oc / g) * w->dims[2] * w->dims[3];
  op->scratch_bytes = 0;
  st->gemm = mace_gemm_family_active();
  if (!st->gemm) return MACE_OK;
  const int64_t kk = w->dims[2] * w->dims[3];
  st->gm = w->dims[1] * kk;
  st->gn = x->dims[2] * x->dims[3];
  st->gk = c / g;
  if (n == 0 || st->gn == 0) {  /* nothing to compute: the reference loop handles it */
    st->gemm = NULL;
    return MACE_OK;
  }
  if (w->role == MACE_TENSOR_CONST && w->data && !st->packed_w) {
    st->packed_group_floats = mace_gemm_packed_a_floats(st->gemm, st->gm, st->gk);
    st->packed_w = mace_filter_alloc((size_t)(st->packed_group_floats * g) * sizeof(float));
    if (!st->packed_w)
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Deconv2D): no memory for the packed "
                        "filter (%lld floats)", op->name,
                        (long long)(st->packed_group_floats * g));
    const float *wd = w->data;
    /* A = W_g^T: A[r, icg] = w[(gi * C_in/g + icg) * gm + r], r = (ocg, ky, kx). */
    for (int64_t gi = 0; gi < g; ++gi)
      mace_gemm_pack_a(st->gemm, st->gm, st->gk, wd + gi * st->gk * st->gm, 1, st->gm,
                       st->packed_w + gi * st->packed_group_floats, 0,
                       (st->gm + st->gemm->mr - 1) / st->gemm->mr);
  }
  st->cols_bytes = ((size_t)(g * st->gm * st->gn) * sizeof(float) + 63) / 64 * 64;
  op->scratch_bytes = st->cols_bytes + mace_gemm_scratch_bytes(st->gemm, st->gm, st->gn, st->gk,
                                                                st->packed_w != NULL, 0,
                                                                mace_threadpool_size(op->pool));
  return MACE_OK;
}

typedef struct col2im_ctx {
  const deconv2d_state *st;
  const float *cols, *b;
  float *y;  /* this image's output */
  mace_f32_col2im_fn col2im;
  mace_f32_activation_fn act;
} col2im_ctx;

/* Row buffer of the strided col2im (kernels/cpu/col2im.h); wider rows take its strided path. */
#define DECONV_ROW_BUF_FLOATS 4096

/* Output channels [begin, end) of one image: each channel's kH*kW cols rows added into its
 * plane after the bias, then the activation. */
static void col2im_channels(void *p, int64_t begin, int64_t end) {
  const col2im_ctx *c = p;
  const deconv2d_state *st = c->st;
  const mace_deconv2d_shape *s = &st->shape;
  const int64_t out_plane = s->out_h * s->out_w, kk = s->k_h * s->k_w;
  float buf[DECONV_ROW_BUF_FLOATS];
  float *rb = mace_col2im_buf_floats(s) <= DECONV_ROW_BUF_FLOATS ? buf : NULL;
  for (int64_t oc = begin; oc < end; ++oc) {
    float *out = c->y + oc * out_plane;
    /* oc = gi * C_out/g + ocg: its rows start at (gi * gm + ocg * kk) * gn = oc * kk * gn. */
    c->col2im(s, c->cols + oc * kk * st->gn, c->b ? c->b[oc] : 0.0f, out, rb);
    if (st->act.kind != MACE_ACT_NONE) c->act(&st->act, out, out, out_plane);
  }
}

/* The active ISA's col2im (the same ISA as the GEMM family's; kernels/cpu/manifest.inc), or
 * the reference where that ISA has none. */
static mace_f32_col2im_fn col2im_kernel(void) {
  const mace_f32_col2im_fn k = mace_simd_active()->col2im;
  return k ? k : mace_f32_col2im__ref;
}

static void deconv2d_run_gemm(mace_op *op) {
  const deconv2d_state *st = op->state;
  const mace_deconv2d_shape *s = &st->shape;
  const float *x = op->inputs[0]->data, *w = op->inputs[1]->data;
  float *cols = op->scratch;
  void *gemm_scratch = (char *)op->scratch + st->cols_bytes;
  const int64_t out_plane = s->out_h * s->out_w;
  col2im_ctx cc = {st, cols, op->n_inputs > 2 ? op->inputs[2]->data : NULL, NULL,
                   col2im_kernel(), mace_simd_active()->activation};
  for (int64_t img = 0; img < s->batch; ++img) {
    for (int64_t gi = 0; gi < s->group; ++gi) {
      mace_gemm_args g = {.f = st->gemm, .m = st->gm, .n = st->gn, .k = st->gk,
                          .a = w + gi * st->gk * st->gm, .a_rs = 1, .a_cs = st->gm,
                          .a_packed = st->packed_w ? st->packed_w + gi * st->packed_group_floats
                                                   : NULL,
                          .b = x + (img * s->in_c + gi * st->gk) * st->gn, .b_rs = st->gn,
                          .b_cs = 1, .c = cols + gi * st->gm * st->gn, .ldc = st->gn};
      mace_gemm_run(op->pool, &g, gemm_scratch);
    }
    cc.y = (float *)op->outputs[0]->data + img * s->out_c * out_plane;
    mace_threadpool_parallel_for(op->pool, s->out_c, 1, col2im_channels, &cc);
  }
}

typedef struct deconv2d_ctx {
  const deconv2d_state *st;
  const float *x, *w, *b;
  float *y;
} deconv2d_ctx;

static void deconv2d_range(void *p, int64_t begin, int64_t end) {
  const deconv2d_ctx *c = p;
  mace_f32_deconv2d__ref(&c->st->shape, c->x, c->w, c->b, &c->st->act, c->y, begin, end);
}

static mace_status deconv2d_run(mace_op *op) {
  const deconv2d_state *st = op->state;
  if (st->gemm) {
    deconv2d_run_gemm(op);
    return MACE_OK;
  }
  deconv2d_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
                    op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, st->shape.batch * st->shape.out_c, 1, deconv2d_range,
                               &c);
  return MACE_OK;
}

const mace_op_kind mace_op_deconv2d_f32 = {.type = "Deconv2D",
                                           .device = MACE_DEVICE_CPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(deconv2d_state),
                                           .init = deconv2d_init,
                                           .infer = deconv2d_infer,
                                           .run = deconv2d_run,
                                           .release = deconv2d_release};
