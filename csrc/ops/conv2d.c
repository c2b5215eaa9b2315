/* Conv2D: grouped 2-D convolution (ONNX Conv) with a fused activation, f32, NCHW, on the CPU. */
/*
 * Inputs:  0 x       [N, C_in, H, W]
 *          1 filter  [C_out, C_in / group, kH, kW] (OIHW, as ONNX)
 *          2 bias    [C_out] (optional; required with a residual)
 *          3 residual [N, C_out, H_out, W_out] (optional): a fused residual Add (ResNet's and
 *                    MobileNetV2's shortcut), y = act(conv(x) + bias + residual)
 * Output:  0 y       [N, C_out, H_out, W_out]
 * Arguments:
 *   strides         ints [sH, sW], default [1, 1]
 *   dilations       ints [dH, dW], default [1, 1]
 *   padding_values  ints [top, left, bottom, right], default zeros (used when EXPLICIT)
 *   padding         "EXPLICIT" (default) | "SAME_UPPER" | "SAME_LOWER" | "VALID";
 *                   SAME_* are resolved from the input shape at infer time
 *   group           int, default 1 (C_in and C_out both divisible by it; depthwise = C_in)
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                   the fused activation (ops/fused_activation.h), applied in the output write
 *   winograd        int: 0 off, 2 = F(2x2, 3x3), 4 = F(4x4, 3x3); absent: automatic, with a SIMD
 *                   GEMM family when C_in and C_out >= 16 and the output is at least 7x7: F(4,3)
 *                   for outputs of enough 4x4 tiles, else F(2,3) (mace_winograd_conv_auto_m);
 *                   on the blocked layout at 1-2 threads, planes under 25 F(2,3) tiles run
 *                   direct (direct_beats_winograd).
 *                   Applies to 3x3, stride 1, dilation 1, group 1 convolutions with a constant
 *                   filter; elsewhere the paths below are used.
 *                   No F(6,3): 64 products a tile for 36 outputs (1.78 a pixel against F(4,3)'s
 *                   2.25) did not pay on the blocked path: a prototype was slower than F(4,3) on
 *                   ResNet layers, gained little on wide VGG-like ones, and had a larger error
 *                   (benchmarks/HISTORY.md). Tiles per block in L2 fall to 36/64, and few-tile
 *                   planes fill fewer of the pointwise kernel's 14-pixel register tiles.
 *
 * With a SIMD GEMM family (runtime/cpu/gemm_dispatch.h) and more than one input channel per group (not
 * depthwise), each image and group is one GEMM on NCHW: y[oc, oh*ow] = W[oc, ic*kh*kw] x
 * X'[ic*kh*kw, oh*ow], where X' is the input itself for 1x1 / stride 1 / no padding and
 * otherwise its im2col, written in the scratch straight in the GEMM's packed B layout; a
 * constant filter is packed once at infer. Depthwise convolutions and MACE_CPU_ISA=ref use
 * the reference direct convolution.
 * On the blocked layout (ops/conv2d_nchwc.h), where the layout pass put the convolution in a
 * chain (conv2d_accepts_nchwc): pointwise, depthwise, Winograd, and the direct KxK kernel, the
 * last also for dilated and grouped convolutions (direct_nchwc_pays).
 * First layers (group 1, C_in <= 4, KxK with K <= 7, stride 1 or 2, dilation 1, a constant
 * filter) with a SIMD family use the direct SIMD convolution (kernels/cpu/directconv.h) instead
 * of im2col + GEMM: the filter is packed once at infer; work items are blocks of output rows.
 * Winograd (ops/winograd_conv.h, when chosen): the filter is transformed once at infer into the op
 * state; per block of tiles, input transform, the 16 / 36 products on the same GEMM, output
 * transform with bias and activation.
 * A residual goes into the GEMM's output tiles before the first K block's product is added
 * (gemm_dispatch.h, mace_gemm_args.res): no pass of its own. The other paths (Winograd, direct,
 * depthwise, reference) compute bias only, then add it and apply the activation in one pass.
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/compiler.h"
#include "kernels/cpu/dwconv_strides.h"
#include "kernels/cpu/ref/conv2d.h"
#include "ops/conv2d_nchwc.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/gemm_dispatch.h"
#include "runtime/cpu/simd_dispatch.h"
#include "ops/winograd_conv.h"

typedef struct conv2d_state {
  /* Set by the first run: from then on a blocked direct convolution keeps the Winograd tile
   * (or none) of its plan at other input sizes, packing nothing again from its filter, whose
   * bytes the net may have given back (conv2d_input_packed). */
  int ran;
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_activation act;
  mace_conv2d_shape shape;
  const mace_gemm_family *gemm; /* NULL: reference direct convolution */
  int direct_b;                 /* 1x1, stride 1, no padding: the input is the GEMM's B */
  int64_t gm, gn, gk;           /* per image and group: C_out/g, H_out*W_out, C_in/g*kH*kW */
  float *packed_w;              /* owned: constant filter, per group packed GEMM A panels */
  int64_t packed_group_floats;
  int64_t winograd_arg;         /* -1 automatic, 0 off, 2 or 4 */
  int64_t winograd_m;           /* 0: not used for the current shape */
  mace_winograd_conv wino;      /* owns the transformed filter */
  mace_f32_directconv_fn direct; /* non-NULL: direct SIMD convolution with direct_w */
  float *direct_w;               /* owned: constant filter packed for it */
  mace_conv_nchwc nchwc;         /* kind != NONE: the input is blocked (owns its filter) */
} conv2d_state;

static void conv2d_release(mace_op *op) {
  conv2d_state *st = op->state;
  mace_aligned_free(st->packed_w);
  st->packed_w = NULL;
  mace_aligned_free(st->direct_w);
  st->direct_w = NULL;
  mace_winograd_conv_free(&st->wino);
  mace_conv_nchwc_free(&st->nchwc);
}

static mace_status conv2d_init(mace_op *op) {
  conv2d_state *st = op->state;
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  const char *pad = mace_op_arg_str(op, "padding", "EXPLICIT");
  if (!mace_pad_mode_parse(pad, &st->mode))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): unknown padding \"%s\"", op->name,
                      pad);
  st->group = mace_op_arg_int(op, "group", 1);
  if (st->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): group %lld must be >= 1", op->name,
                      (long long)st->group);
  st->winograd_arg = mace_op_arg_int(op, "winograd", -1);
  if (st->winograd_arg != -1 && st->winograd_arg != 0 && st->winograd_arg != 2 &&
      st->winograd_arg != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): winograd %lld is not 0, 2 or 4",
                      op->name, (long long)st->winograd_arg);
  return mace_fused_activation_parse(op, &st->act);
}

/* Where the blocked direct KxK convolution (kernels/cpu/nchwc_convkxk.h) is worth a place in
 * a chain: more than 4 input channels, and either a dilated or grouped convolution, or at least
 * half a block of them and a window other than 3x3 stride 1 (which Winograd takes, below) or,
 * for 3x3 stride 1, few of them, C_in <= 16.
 * With C_in <= 16 it runs at the FMA peak, so it beats Winograd F(4,3) where the transforms
 * dominate short products. Stride-2 3x3s run blocked too: even where the plain GEMM is faster
 * (512 on 14x14, 7x7 out: half a register tile a row), the chain then needs no Reorders.
 * The other windows and the dilated and grouped convolutions went through im2col + GEMM (a
 * GEMM per group) between Reorders, slower than this kernel; the plain path's per-group GEMMs
 * did not run on 2 threads. With C_in <= 4 the first-layer NCHW direct kernel is better and a
 * blocked copy of the input pads 4x. Measurements: benchmarks/HISTORY.md. */
static int direct_nchwc_pays(const mace_conv2d_shape *s, int block) {
  if (s->in_c <= 4) return 0;
  if (s->group > 1 || s->dilation_h > 1 || s->dilation_w > 1) return 1;
  if (2 * s->in_c <= block) return 0;
  return s->in_c <= 16 || s->out_c < 16 || !(s->k_h == 3 && s->k_w == 3 && s->stride_h == 1);
}

/* A 3x3 stride-1 convolution of more input channels runs blocked by Winograd
 * (ops/winograd_nchwc.h; F(m,3) by the plain path's automatic rule, or the winograd argument;
 * 0 keeps it plain). Its transforms work on whole vectors of channels and its products read
 * the transformed tiles as they are, where the plain path gathers 8 tiles a vector and packs
 * them for the GEMM; and with the whole network blocked its Reorders are gone
 * (benchmarks/HISTORY.md). */
static int winograd_nchwc_pays(const mace_conv2d_shape *s, int64_t winograd_arg) {
  return winograd_arg != 0 && s->in_c > 16 && s->out_c >= 16 &&
         mace_winograd_conv_applies(s->k_h, s->k_w, s->stride_h, s->stride_w, s->dilation_h,
                                    s->dilation_w, s->group);
}

/* At 1 or 2 threads, a plane of fewer than 25 F(2,3) tiles (ResNet's 7x7 stage 4) runs direct
 * when the winograd argument leaves the choice: there Winograd's transformed filter (16/9 of
 * the filter, per multiply-add 3x the bytes) streams from memory slower than the cores do the
 * direct kernel's multiply-adds, whose passes prefetch the weights ahead
 * (simd/nchwc_convkxk_impl.inc).
 * Whether Winograd wins at 2 threads depends on the 16.8 MB transformed filter staying in the
 * shared cache from one run to the next; the direct kernel's time does not. Measured on a
 * 2-vCPU and a 16-core Xeon, direct won or tied at 2 threads; with more cores Winograd's
 * fewer multiply-adds win, so not above 2 threads (benchmarks/HISTORY.md). */
static int direct_beats_winograd(const mace_conv2d_shape *s, int threads) {
  return threads <= 2 && (s->out_h + 1) / 2 * ((s->out_w + 1) / 2) < 25;
}

/* A first convolution (C_in <= 4, read plain) writing the blocked layout, where the NCHW
 * direct kernel's output went through a Reorder into the chain behind it. The blocked kernel
 * is a little slower than the NCHW one but saves the Reorder and runs the max pool after it
 * blocked, which gains more. Not with more than 1/8 of the output channels padding
 * (ShuffleNetV2's 24 in blocks of 16): the slower stem ate the gain there. */
static int first_nchwc_pays(const mace_conv2d_shape *s, int block) {
  return s->in_c <= 4 && MACE_NCHWC_PADDED(s->out_c, block) * 8 <= s->out_c * 9;
}

/* Blocked: a pointwise, depthwise or direct KxK convolution (ops/conv2d_nchwc.h) of any
 * channel counts (padded to the block) with a constant f32 filter and bias; a residual for
 * pointwise and direct.
 * Pointwise needs no padding whatever the input size: explicit zeros, VALID, or SAME (zero
 * for 1x1 stride 1). */
static int conv2d_accepts_nchwc(mace_op *op, int block) {
  if (conv2d_init(op) != MACE_OK || op->n_inputs < 2 || op->n_inputs > 4) return MACE_NCHWC_NO;
  const conv2d_state *st = op->state;
  const mace_tensor *w = op->inputs[1];
  if (!w || w->dtype != MACE_DT_F32 || w->ndim != 4 || op->inputs[0]) return MACE_NCHWC_NO;
  if (op->n_inputs > 2 && (!op->inputs[2] || op->inputs[2]->dtype != MACE_DT_F32))
    return MACE_NCHWC_NO;
  if (op->n_inputs > 3 && op->inputs[3]) return MACE_NCHWC_NO;  /* a constant residual */
  const int explicit_zero = st->mode != MACE_PAD_EXPLICIT ||
                            (st->pads[0] == 0 && st->pads[1] == 0 && st->pads[2] == 0 &&
                             st->pads[3] == 0);
  const mace_conv2d_shape s = {.in_c = w->dims[1] * st->group, .out_c = w->dims[0],
                               .k_h = w->dims[2], .k_w = w->dims[3],
                               .stride_h = st->strides[0], .stride_w = st->strides[1],
                               .dilation_h = st->dilations[0], .dilation_w = st->dilations[1],
                               .group = st->group};
  const int kind = mace_conv_nchwc_kind(&s, block);
  /* Dilated, grouped and wide-window (over 9 taps, C_in > 16) ones gain enough to run blocked
   * alone, between two Reorders: on NCHW they are im2col + a GEMM per group, or for a dilated
   * depthwise the scalar reference, several times slower (benchmarks/HISTORY.md). */
  const int alone = s.dilation_h > 1 || s.dilation_w > 1 || s.group > 1 ||
                    (s.in_c > 16 && s.k_h * s.k_w > 9);
  if (kind == MACE_CONV_NCHWC_POINTWISE && explicit_zero) return MACE_NCHWC_CONV;
  if (kind == MACE_CONV_NCHWC_DEPTHWISE && op->n_inputs < 4)
    return s.dilation_h > 1 ? MACE_NCHWC_ALONE : MACE_NCHWC_CONV;
  if (kind == MACE_CONV_NCHWC_DIRECT && direct_nchwc_pays(&s, block))
    return alone ? MACE_NCHWC_ALONE : MACE_NCHWC_CONV;
  if (kind == MACE_CONV_NCHWC_DIRECT && winograd_nchwc_pays(&s, st->winograd_arg))
    return MACE_NCHWC_CONV;
  if (kind == MACE_CONV_NCHWC_DIRECT && first_nchwc_pays(&s, block) && op->n_inputs < 4)
    return MACE_NCHWC_FIRST;
  return MACE_NCHWC_NO;
}

/* Input blocked (or plain, x_plain, for a first convolution giving `block`): the NCHWc
 * kernels, or an error naming why not (the layout pass asked conv2d_accepts_nchwc, so this is
 * a model whose shapes contradict its arguments). */
static mace_status conv2d_infer_nchwc(mace_op *op, const int64_t *pads, int block,
                                      int x_plain) {
  conv2d_state *st = op->state;
  const mace_tensor *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *r = op->n_inputs > 3 ? op->inputs[3] : NULL;
  const mace_conv2d_shape *s = &st->shape;
  const int kind = mace_conv_nchwc_kind(s, block);
  const int ok =
      w->role == MACE_TENSOR_CONST && w->data && kind != MACE_CONV_NCHWC_NONE &&
      (!x_plain || (kind == MACE_CONV_NCHWC_DIRECT && !r)) &&
      (!b || (b->role == MACE_TENSOR_CONST && b->data)) &&
      (kind != MACE_CONV_NCHWC_POINTWISE || (pads[2] == 0 && pads[3] == 0)) &&
      (!r || (kind != MACE_CONV_NCHWC_DEPTHWISE && r->layout == MACE_LAYOUT_NCHWC &&
              r->block == block));
  if (!ok)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): cannot %s the blocked (NCHWc, "
                      "block %d) layout with these shapes (MACE_NCHWC=0 turns it off)", op->name,
                      x_plain ? "write" : "run on", block);
  int64_t wino_m = 0;
  if (ok && kind == MACE_CONV_NCHWC_DIRECT && !x_plain && !direct_nchwc_pays(s, block) &&
      winograd_nchwc_pays(s, st->winograd_arg)) {
    wino_m = st->winograd_arg;
    if (wino_m < 0 && direct_beats_winograd(s, mace_threadpool_size(op->pool))) wino_m = 0;
    if (wino_m < 0)
      wino_m = mace_winograd_conv_auto_m(mace_gemm_family_active(), s->in_c, s->out_c,
                                         s->out_h, s->out_w);
  }
  if (st->ran && st->nchwc.kind == MACE_CONV_NCHWC_DIRECT && kind == MACE_CONV_NCHWC_DIRECT &&
      st->nchwc.block == block && !x_plain)
    wino_m = st->nchwc.wino_m; /* the first run's choice (conv2d_state.ran) */
  if (mace_conv_nchwc_plan(&st->nchwc, s, block, w->data, b ? b->data : NULL, op->pool,
                           x_plain, wino_m))
    return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Conv2D): no memory for the packed filter",
                      op->name);
  op->scratch_bytes = st->nchwc.scratch_bytes;
  op->outputs[0]->layout = MACE_LAYOUT_NCHWC;
  op->outputs[0]->block = block;
  return MACE_OK;
}

static mace_status conv2d_infer(mace_op *op) {
  conv2d_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 4, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *r = op->n_inputs > 3 ? op->inputs[3] : NULL;
  if (r) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, r, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  if (b) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): input has rank %d, expects 4 (NCHW)",
                      op->name, x->ndim);
  if (w->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): filter has rank %d, expects 4 (OIHW)",
                      op->name, w->ndim);
  const int64_t n = x->dims[0], c = x->dims[1], g = st->group, oc = w->dims[0];
  if (c % g != 0 || oc % g != 0 || w->dims[1] * g != c)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Conv2D): input has %lld channels, filter is [%lld, %lld, ...] "
                      "with group %lld (needs C_in = filter[1] * group and C_out %% group == 0)",
                      op->name, (long long)c, (long long)oc, (long long)w->dims[1], (long long)g);
  if (w->dims[2] < 1 || w->dims[3] < 1 || oc < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): empty filter", op->name);
  if (b && (b->ndim != 1 || b->dims[0] != oc))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): bias has %lld values (rank %d), "
                      "expects [%lld]", op->name, (long long)mace_tensor_numel(b), b->ndim,
                      (long long)oc);
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  const int64_t oh = mace_window_out_size(x->dims[2], w->dims[2], st->strides[0],
                                          st->dilations[0], st->mode, 0, &pads[0], &pads[2]);
  const int64_t ow = mace_window_out_size(x->dims[3], w->dims[3], st->strides[1],
                                          st->dilations[1], st->mode, 0, &pads[1], &pads[3]);
  if (oh <= 0 || ow <= 0)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Conv2D): output size %lldx%lld is not positive (input %lldx%lld, "
                      "kernel %lldx%lld)", op->name, (long long)oh, (long long)ow,
                      (long long)x->dims[2], (long long)x->dims[3], (long long)w->dims[2],
                      (long long)w->dims[3]);
  mace_conv2d_shape *s = &st->shape;
  *s = (mace_conv2d_shape){.batch = n, .in_c = c, .in_h = x->dims[2], .in_w = x->dims[3],
                           .out_c = oc, .out_h = oh, .out_w = ow,
                           .k_h = w->dims[2], .k_w = w->dims[3],
                           .stride_h = st->strides[0], .stride_w = st->strides[1],
                           .dilation_h = st->dilations[0], .dilation_w = st->dilations[1],
                           .pad_top = pads[0], .pad_left = pads[1], .group = g};
  const int64_t dims[4] = {n, oc, oh, ow};
  if (r && !mace_dims_equal(r->dims, r->ndim, dims, 4)) {
    char b1[128], b2[128];
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Conv2D): residual is %s, expects the output's shape %s", op->name,
                      mace_dims_str(r->dims, r->ndim, b1, sizeof(b1)),
                      mace_dims_str(dims, 4, b2, sizeof(b2)));
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = n * oc * oh * ow * (c / g) * s->k_h * s->k_w;
  op->scratch_bytes = 0;
  if (x->layout == MACE_LAYOUT_NCHWC) return conv2d_infer_nchwc(op, pads, x->block, 0);
  const int64_t out_block = mace_op_arg_int(op, MACE_NCHWC_OUT_ARG, 0);
  if (out_block < 0 || out_block > 64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Conv2D): argument %s = %lld is not a block "
                      "of 1 to 64 channels", op->name, MACE_NCHWC_OUT_ARG, (long long)out_block);
  if (out_block > 0) return conv2d_infer_nchwc(op, pads, (int)out_block, 1);
  st->gemm = mace_gemm_family_active();
  st->winograd_m = 0;
  if (w->role == MACE_TENSOR_CONST && w->data &&
      mace_winograd_conv_applies(s->k_h, s->k_w, s->stride_h, s->stride_w, s->dilation_h,
                                 s->dilation_w, g)) {
    int64_t m = st->winograd_arg;
    if (m < 0) m = mace_winograd_conv_auto_m(st->gemm, c, oc, oh, ow);
    if (m) {
      if (mace_winograd_conv_plan(&st->wino, m, n, c, s->in_h, s->in_w, oc, oh, ow, pads[0],
                                  pads[1], w->data, st->gemm,
                                  mace_threadpool_size(op->pool)) != 0)
        return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Conv2D): no memory for the "
                          "Winograd filter", op->name);
      st->winograd_m = m;
      op->scratch_bytes = st->wino.scratch_bytes;
      return MACE_OK;
    }
  }
  st->direct = NULL;
  const mace_f32_directconv_fn dc = mace_simd_active()->directconv;
  if (st->gemm && dc && w->role == MACE_TENSOR_CONST && w->data &&
      mace_f32_directconv_applies(s)) {
    if (!st->direct_w) {
      const int64_t nf = mace_f32_directconv_packed_floats(s);
      st->direct_w = mace_filter_alloc((size_t)nf * sizeof(float));
      if (!st->direct_w)
        return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Conv2D): no memory for the packed "
                          "filter (%lld floats)", op->name, (long long)nf);
      mace_f32_directconv_pack(s, w->data, st->direct_w);
    }
    st->direct = dc;
    st->gemm = NULL;
    return MACE_OK;
  }
  if (!st->gemm || (g > 1 && w->dims[1] == 1)) {  /* depthwise: reference kernel */
    st->gemm = NULL;
    return MACE_OK;
  }
  st->gm = oc / g;
  st->gn = oh * ow;
  st->gk = (c / g) * s->k_h * s->k_w;
  st->direct_b = s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
                 pads[0] == 0 && pads[1] == 0 && oh == s->in_h && ow == s->in_w;
  if (w->role == MACE_TENSOR_CONST && w->data && !st->packed_w) {
    st->packed_group_floats = mace_gemm_packed_a_floats(st->gemm, st->gm, st->gk);
    st->packed_w = mace_filter_alloc((size_t)(st->packed_group_floats * g) * sizeof(float));
    if (!st->packed_w)
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Conv2D): no memory for the packed "
                        "filter (%lld floats)", op->name,
                        (long long)(st->packed_group_floats * g));
    const float *wd = w->data;
    for (int64_t gi = 0; gi < g; ++gi)
      mace_gemm_pack_a(st->gemm, st->gm, st->gk, wd + gi * st->gm * st->gk, st->gk, 1,
                       st->packed_w + gi * st->packed_group_floats, 0,
                       (st->gm + st->gemm->mr - 1) / st->gemm->mr);
  }
  /* The packed B (the input, or its im2col written straight in the packed layout) and, for a
   * filter given at run time, the packed A. */
  op->scratch_bytes = mace_gemm_scratch_bytes(st->gemm, st->gm, st->gn, st->gk,
                                              st->packed_w != NULL, 0,
                                              mace_threadpool_size(op->pool));
  return MACE_OK;
}

/* im2col of one image and group, written straight into the GEMM's packed B layout
 * (runtime/cpu/gemm_dispatch.h): row r = (ic, ky, kx) of X'[gk, oh*ow] holds the input pixel each
 * output position reads through that filter tap, 0 in the padding; columns past oh*ow (the
 * last panel's tail) are 0. */
typedef struct im2col_ctx {
  const mace_conv2d_shape *s;
  const float *x;            /* the group's first input channel */
  int64_t nr, npad, k;       /* panel width, padded columns, rows (gk) */
} im2col_ctx;

/* A gather row prefetches the input pixels and the packed row this many rows ahead: the rows
 * of one tap read a plane apart and are written khw rows apart, strides the hardware
 * prefetcher did not follow. */
#define IM2COL_PF_ROWS 8

/* Columns one tap table covers: a wider panel is done in chunks of this many. */
#define IM2COL_MAX_COLS 64

/* Where each of a chunk's columns reads for one filter tap (ky, kx): off[t] is the offset of
 * its input pixel in a channel plane, mask[t] all ones, or 0 (and off[t] 0) in the padding
 * and past oh*ow. The same for every input channel, so built once per tap and K block and
 * used for all of that block's rows of the tap. */
typedef struct im2col_tap {
  int64_t off[IM2COL_MAX_COLS];
  uint32_t mask[IM2COL_MAX_COLS];
} im2col_tap;

enum { IM2COL_ZERO, IM2COL_CONTIG, IM2COL_GATHER };

/* Fills the table for the tap; iy0 / ix0 are each column's input position for tap (0, 0)
 * (far out of the image past oh*ow). Returns how the rows are copied: all zero, one
 * contiguous run (off[t] = off[0] + t, nothing masked), or a masked gather. */
static int im2col_tap_build(const mace_conv2d_shape *s, const int64_t *iy0, const int64_t *ix0,
                            int64_t cols, int64_t ky, int64_t kx, im2col_tap *tb) {
  const int64_t dy = ky * s->dilation_h, dx = kx * s->dilation_w;
  int64_t nvalid = 0, contig = 1;
  for (int64_t t = 0; t < cols; ++t) {
    const int64_t iy = iy0[t] + dy, ix = ix0[t] + dx;
    const int valid = iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w;
    tb->off[t] = valid ? iy * s->in_w + ix : 0;
    tb->mask[t] = valid ? ~0u : 0u;
    nvalid += valid;
    contig &= tb->off[t] == tb->off[0] + t;
  }
  if (nvalid == 0) return IM2COL_ZERO;
  return nvalid == cols && contig ? IM2COL_CONTIG : IM2COL_GATHER;
}

/* Writes rows of cols floats, row i at d + i * d_stride from input channel plane
 * x + i * x_stride, as the table says. Inlined with a constant cols for the GEMM's panel
 * widths, so the loops unroll and the contiguous copy is a few vector moves. The gather
 * copies bits (AND with the mask): a padded 0 is +0 and a pixel, NaN or -0 included, is
 * copied as it is. */
MACE_INLINE void im2col_tap_rows(const im2col_tap *tb, int kind, int64_t cols, const float *x,
                                   int64_t x_stride, int64_t rows, float *d, int64_t d_stride) {
  if (kind == IM2COL_ZERO) {
    for (int64_t i = 0; i < rows; ++i) memset(d + i * d_stride, 0, (size_t)cols * sizeof(float));
  } else if (kind == IM2COL_CONTIG) {
    const float *src = x + tb->off[0];
    for (int64_t i = 0; i < rows; ++i)
      memcpy(d + i * d_stride, src + i * x_stride, (size_t)cols * sizeof(float));
  } else {
    for (int64_t i = 0; i < rows; ++i) {
      const float *src = x + i * x_stride;
      float *dd = d + i * d_stride;
      if (i + IM2COL_PF_ROWS < rows) {
        MACE_PREFETCH(src + IM2COL_PF_ROWS * x_stride + tb->off[0]);
        MACE_PREFETCH(src + IM2COL_PF_ROWS * x_stride + tb->off[cols - 1]);
        MACE_PREFETCHW(dd + IM2COL_PF_ROWS * d_stride);
      }
      for (int64_t t = 0; t < cols; ++t) {
        uint32_t v;
        memcpy(&v, src + tb->off[t], sizeof v);
        v &= tb->mask[t];
        memcpy(dd + t, &v, sizeof v);
      }
    }
  }
}

static void im2col_tap_rows_any(const im2col_tap *tb, int kind, int64_t cols, const float *x,
                                int64_t x_stride, int64_t rows, float *d, int64_t d_stride) {
  switch (cols) {  /* the GEMM families' NR */
    case 8: im2col_tap_rows(tb, kind, 8, x, x_stride, rows, d, d_stride); break;
    case 16: im2col_tap_rows(tb, kind, 16, x, x_stride, rows, d, d_stride); break;
    case 32: im2col_tap_rows(tb, kind, 32, x, x_stride, rows, d, d_stride); break;
    default: im2col_tap_rows(tb, kind, cols, x, x_stride, rows, d, d_stride); break;
  }
}

/* Panels [begin, end), K blocks k_lo to k_hi, of the packed B at dst (block k0 at
 * dst + (k0 - k_lo) * npad): the GEMM's pack_b_fn. Per panel (or chunk of IM2COL_MAX_COLS
 * columns of it) and K block, each filter tap's table is built once and its rows (one per
 * input channel, khw rows apart) are written from it: the bounds, padding and output-row wraps
 * are worked out per tap instead of per row and piece (ResNet's 3x3 512 on 7x7 had 18432 rows
 * of up to 3 pieces of <= 7 floats per run), and each row is one branch-free pass of NR loads
 * and stores. */
static void im2col_pack(void *p, float *dst, int64_t begin, int64_t end, int64_t k_lo,
                        int64_t k_hi) {
  const im2col_ctx *c = p;
  const mace_conv2d_shape *s = c->s;
  const int64_t nr = c->nr, ow = s->out_w, ohw = s->out_h * ow, khw = s->k_h * s->k_w;
  const int64_t in_plane = s->in_h * s->in_w;
  /* Past oh*ow: an input row no tap reaches. */
  const int64_t far = -(s->in_h + 1 + (s->k_h - 1) * s->dilation_h);
  int64_t iy0[IM2COL_MAX_COLS], ix0[IM2COL_MAX_COLS];
  im2col_tap tb;
  for (int64_t panel = begin; panel < end; ++panel) {
    for (int64_t c0 = 0; c0 < nr; c0 += IM2COL_MAX_COLS) {
      const int64_t cols = nr - c0 < IM2COL_MAX_COLS ? nr - c0 : IM2COL_MAX_COLS;
      const int64_t j0 = panel * nr + c0;
      int64_t oy = j0 / ow, ox = j0 - oy * ow;
      for (int64_t t = 0; t < cols; ++t) {
        if (j0 + t < ohw) {
          iy0[t] = oy * s->stride_h - s->pad_top;
          ix0[t] = ox * s->stride_w - s->pad_left;
          if (++ox == ow) {
            ox = 0;
            ++oy;
          }
        } else {
          iy0[t] = far;
          ix0[t] = 0;
        }
      }
      for (int64_t k0 = k_lo; k0 < k_hi; k0 += MACE_GEMM_KC) {
        const int64_t kl = c->k - k0 < MACE_GEMM_KC ? c->k - k0 : MACE_GEMM_KC;
        float *d = dst + (k0 - k_lo) * c->npad + panel * nr * kl + c0;
        /* Row kk of the block is tap (k0 + kk) % khw of channel (k0 + kk) / khw. */
        const int64_t ntaps = kl < khw ? kl : khw;
        for (int64_t kk = 0; kk < ntaps; ++kk) {
          const int64_t tap = (k0 + kk) % khw, ic = (k0 + kk) / khw;
          const int kind = im2col_tap_build(s, iy0, ix0, cols, tap / s->k_w, tap % s->k_w, &tb);
          im2col_tap_rows_any(&tb, kind, cols, c->x + ic * in_plane, in_plane,
                              (kl - kk + khw - 1) / khw, d + kk * nr, khw * nr);
        }
      }
    }
  }
}

static void conv2d_run_gemm(mace_op *op) {
  const conv2d_state *st = op->state;
  const mace_conv2d_shape *s = &st->shape;
  const float *x = op->inputs[0]->data, *w = op->inputs[1]->data;
  const float *bias = op->n_inputs > 2 ? op->inputs[2]->data : NULL;
  const float *res = op->n_inputs > 3 ? op->inputs[3]->data : NULL;
  float *y = op->outputs[0]->data;
  const int64_t icg = s->in_c / s->group, in_plane = s->in_h * s->in_w;
  for (int64_t img = 0; img < s->batch; ++img) {
    for (int64_t gi = 0; gi < s->group; ++gi) {
      const float *xg = x + (img * s->in_c + gi * icg) * in_plane;
      mace_gemm_args g = {.f = st->gemm, .m = st->gm, .n = st->gn, .k = st->gk,
                          .a = w + gi * st->gm * st->gk, .a_rs = st->gk, .a_cs = 1,
                          .a_packed = st->packed_w ? st->packed_w + gi * st->packed_group_floats
                                                   : NULL,
                          .b = xg, .b_rs = st->gn, .b_cs = 1,
                          .c = y + (img * s->out_c + gi * st->gm) * st->gn, .ldc = st->gn,
                          .bias = bias ? bias + gi * st->gm : NULL, .bias_per_row = 1,
                          .act = &st->act,
                          .res = res ? res + (img * s->out_c + gi * st->gm) * st->gn : NULL};
      const int64_t nr = st->gemm->nr;
      im2col_ctx ic = {s, xg, nr, (st->gn + nr - 1) / nr * nr, st->gk};
      if (!st->direct_b) {
        g.b = NULL;
        g.pack_b_fn = im2col_pack;
        g.pack_b_ctx = &ic;
      }
      mace_gemm_run(op->pool, &g, op->scratch);
    }
  }
}

typedef struct conv2d_ctx {
  const conv2d_state *st;
  const mace_activation *act;
  const float *x, *w, *b;
  float *y;
} conv2d_ctx;

static void conv2d_range(void *p, int64_t begin, int64_t end) {
  const conv2d_ctx *c = p;
  /* Depthwise KxK (K <= 7, stride 1 or 2): the SIMD kernel covers the same window (batch * C
   * planes). */
  const mace_f32_dwconv_fn dw = mace_simd_active()->dwconv;
  if (dw && (mace_f32_dwconv_applies(&c->st->shape) ||
             mace_f32_dwconv_applies_unequal(&c->st->shape))) {
    dw(&c->st->shape, c->x, c->w, c->b, c->act, c->y, begin, end);
    return;
  }
  mace_f32_conv2d__ref(&c->st->shape, c->x, c->w, c->b, c->act, c->y, begin, end);
}

static void conv2d_direct_range(void *p, int64_t begin, int64_t end) {
  const conv2d_ctx *c = p;
  c->st->direct(&c->st->shape, c->x, c->st->direct_w, c->b, c->act, c->y, begin, end);
}

/* y = act(y + residual) over blocks [begin, end) of RESIDUAL_BLOCK elements, each block's add
 * and activation while it is in cache. */
#define RESIDUAL_BLOCK 4096

typedef struct residual_ctx {
  const mace_activation *act;
  const float *r;
  float *y;
  int64_t n;
} residual_ctx;

static void residual_range(void *p, int64_t begin, int64_t end) {
  const residual_ctx *c = p;
  const mace_f32_vbinary_fn add = mace_simd_active()->vbinary;
  const int64_t hi = end * RESIDUAL_BLOCK < c->n ? end * RESIDUAL_BLOCK : c->n;
  for (int64_t i0 = begin * RESIDUAL_BLOCK; i0 < hi; i0 += RESIDUAL_BLOCK) {
    const int64_t len = hi - i0 < RESIDUAL_BLOCK ? hi - i0 : RESIDUAL_BLOCK;
    float *y = c->y + i0;
    const float *r = c->r + i0;
    if (add) {
      add(MACE_ELTWISE_ADD, y, 1, r, 1, y, len);
    } else {
      for (int64_t i = 0; i < len; ++i) y[i] += r[i];
    }
    mace_f32_activation(c->act, y, y, len);
  }
}

static mace_status conv2d_run(mace_op *op) {
  conv2d_state *st = op->state;
  st->ran = 1;
  const int has_res = op->n_inputs > 3;
  /* Paths other than the GEMM's leave the activation to the residual pass. */
  static const mace_activation no_act = {.kind = MACE_ACT_NONE};
  const int gemm_path = st->gemm && !st->winograd_m;
  const mace_activation *act = has_res && !gemm_path ? &no_act : &st->act;
  if (st->nchwc.kind != MACE_CONV_NCHWC_NONE) {
    mace_conv_nchwc_run(&st->nchwc, op->pool, op->inputs[0]->data,
                        has_res ? op->inputs[3]->data : NULL, &st->act, op->outputs[0]->data,
                        op->scratch);
    return MACE_OK;
  }
  if (st->winograd_m) {
    mace_winograd_conv_run(&st->wino, op->pool, op->inputs[0]->data,
                           op->n_inputs > 2 ? op->inputs[2]->data : NULL, act,
                           op->outputs[0]->data, op->scratch);
  } else if (st->gemm) {
    conv2d_run_gemm(op);
    return MACE_OK;
  } else {
    conv2d_ctx c = {st, act, op->inputs[0]->data, op->inputs[1]->data,
                    op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
    if (st->direct)
      mace_threadpool_parallel_for(op->pool, mace_f32_directconv_window(&st->shape), 1,
                                   conv2d_direct_range, &c);
    else
      mace_threadpool_parallel_for(op->pool, mace_f32_conv2d_window__ref(&st->shape), 1,
                                   conv2d_range, &c);
  }
  if (has_res) {
    const mace_tensor *y = op->outputs[0];
    const int64_t n = mace_tensor_numel(y);
    residual_ctx rc = {&st->act, op->inputs[3]->data, y->data, n};
    mace_threadpool_parallel_for(op->pool, (n + RESIDUAL_BLOCK - 1) / RESIDUAL_BLOCK, 4,
                                 residual_range, &rc);
  }
  return MACE_OK;
}

/* On blocked input (or output, a first convolution) a convolution reads its filter from the
 * packed copy alone: the layout is fixed at net build, and the kind, block, channels and window
 * do not depend on the input's height and width. A pointwise or depthwise convolution is
 * planned once and for all; a direct one chooses its Winograd tile (or none) by the input
 * size until its first run, and keeps that choice after it (conv2d_state.ran). Plain-layout
 * kernels (Winograd, direct, im2col + GEMM) may change with the shape and pack again. */
static int conv2d_input_packed(const mace_op *op, int k) {
  const conv2d_state *st = op->state;
  const mace_conv_nchwc *c = &st->nchwc;
  if (k != 1 || (!c->packed && !c->wino.u)) return 0;
  if (c->kind == MACE_CONV_NCHWC_POINTWISE || c->kind == MACE_CONV_NCHWC_DEPTHWISE)
    return !c->x_plain && !c->subsample && !c->wino_m;
  return c->kind == MACE_CONV_NCHWC_DIRECT && st->ran;
}

const mace_op_kind mace_op_conv2d_f32 = {.type = "Conv2D",
                                         .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(conv2d_state),
                                         .init = conv2d_init,
                                         .infer = conv2d_infer,
                                         .run = conv2d_run,
                                         .release = conv2d_release,
                                         .accepts_nchwc = conv2d_accepts_nchwc,
                                         .input_packed = conv2d_input_packed};
