/* Conv2D on the GPU (OpenCL, f32 stored fp32 or fp16): the CPU kind's arguments and semantics
 * (ops/conv2d.c: groups, strides, dilations, EXPLICIT/SAME/VALID padding, bias, fused residual
 * and activation). Per (image, group) a tiled GEMM (ops/opencl/cl_gemm.c, kernels/opencl/gemm.cl):
 * 1x1 stride-1 unpadded windows as a plain product of the filter and the input, any other
 * window as an implicit GEMM. Depthwise-like groups (one input channel, or fewer than
 * CONV_GEMM_MIN_GROUP_OC outputs a group) take the direct kernel (kernels/opencl/conv2d.cl).
 * No Winograd yet. */
#include <string.h>

#include "core/op.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_gemm.h"
#include "ops/opencl/cl_op.h"

/* Groups with fewer outputs would fill under 1/8 of a GEMM tile's rows. */
#define CONV_GEMM_MIN_GROUP_OC 4

typedef struct conv2d_cl_state {
  mace_cl_shadow shadow;
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_activation act;
  int64_t pad_t, pad_l;      /* resolved at infer */
  int use_gemm;              /* else the direct kernel */
  mace_cl_gemm gemm;
} conv2d_cl_state;

static mace_status conv2d_cl_init(mace_op *op) {
  conv2d_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  /* Parsed (and checked) by the CPU kind's init above; read again for the kernel. */
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  mace_pad_mode_parse(mace_op_arg_str(op, "padding", "EXPLICIT"), &st->mode);
  st->group = mace_op_arg_int(op, "group", 1);
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status conv2d_cl_infer(mace_op *op) {
  conv2d_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  mace_window_out_size(x->dims[2], w->dims[2], st->strides[0], st->dilations[0], st->mode, 0,
                       &pads[0], &pads[2]);
  mace_window_out_size(x->dims[3], w->dims[3], st->strides[1], st->dilations[1], st->mode, 0,
                       &pads[1], &pads[3]);
  st->pad_t = pads[0];
  st->pad_l = pads[1];
  const mace_tensor *y = op->outputs[0];
  const int64_t n = x->dims[0], c = x->dims[1], ih = x->dims[2], iw = x->dims[3];
  const int64_t oc = y->dims[1], oh = y->dims[2], ow = y->dims[3];
  const int64_t kh = w->dims[2], kw = w->dims[3];
  const int64_t g = st->group, icg = c / g, ocg = oc / g;
  st->use_gemm = (g == 1 || (icg > 1 && ocg >= CONV_GEMM_MIN_GROUP_OC)) &&
                 (kh - 1) * st->dilations[0] < 32768 && (kw - 1) * st->dilations[1] < 65536;
  if (!st->use_gemm) return MACE_OK;
  const int pointwise = kh == 1 && kw == 1 && st->strides[0] == 1 && st->strides[1] == 1 &&
                        st->pad_t == 0 && st->pad_l == 0 && oh == ih && ow == iw;
  mace_cl_gemm *gm = &st->gemm;
  /* Batch z = (image, group): A the group's filter rows [ocg, icg*kh*kw], B the group's
   * input channels, Y its output channels [ocg, oh*ow]. */
  gm->m = ocg;
  gm->n = oh * ow;
  gm->k = icg * kh * kw;
  const int32_t zd[4] = {1, 1, (int32_t)n, (int32_t)g};
  const int32_t azs[4] = {0, 0, 0, (int32_t)(ocg * gm->k)};
  const int32_t bzs[4] = {0, 0, (int32_t)(c * ih * iw), (int32_t)(icg * ih * iw)};
  const int32_t yzs[4] = {0, 0, (int32_t)(oc * oh * ow), (int32_t)(ocg * oh * ow)};
  const int32_t bias_zs[4] = {0, 0, 0, (int32_t)ocg};
  memcpy(gm->zdims, zd, sizeof(zd));
  memcpy(gm->a_zs, azs, sizeof(azs));
  memcpy(gm->b_zs, bzs, sizeof(bzs));
  memcpy(gm->y_zs, yzs, sizeof(yzs));
  memcpy(gm->bias_zs, bias_zs, sizeof(bias_zs));
  gm->a_rs = gm->k;
  gm->a_cs = 1;
  gm->b_rs = ih * iw;
  gm->b_cs = 1;
  gm->ldy = oh * ow;
  gm->bias_mode = 1;
  gm->conv = !pointwise;
  gm->in_h = ih;
  gm->in_w = iw;
  gm->out_w = ow;
  gm->k_h = kh;
  gm->k_w = kw;
  gm->stride_h = st->strides[0];
  gm->stride_w = st->strides[1];
  gm->dil_h = st->dilations[0];
  gm->dil_w = st->dilations[1];
  gm->pad_t = st->pad_t;
  gm->pad_l = st->pad_l;
  return mace_cl_gemm_prepare(op, gm);
}

static mace_status conv2d_cl_run(mace_op *op) {
  conv2d_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1], *y = op->outputs[0];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *r = op->n_inputs > 3 ? op->inputs[3] : NULL;
  if (st->use_gemm) return mace_cl_gemm_run(op, &st->gemm, w, x, b, r, y, &st->act);
  const int64_t n = x->dims[0], c = x->dims[1], ih = x->dims[2], iw = x->dims[3];
  const int64_t oc = y->dims[1], oh = y->dims[2], ow = y->dims[3];
  const int64_t kh = w->dims[2], kw = w->dims[3];
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "conv2d", "conv2d_direct", "", &k));
  int a = 0;
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, a, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, a + 2, op, w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, a + 4, op, b ? b : w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a + 6, b != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, a + 7, op, r ? r : w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a + 9, r != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, a + 10, op, y));
  a = 12;
  const int64_t args[] = {c, ih, iw, oc, oh, ow, kh, kw, st->strides[0], st->strides[1],
                          st->dilations[0], st->dilations[1], st->pad_t, st->pad_l,
                          c / st->group, oc / st->group, n};
  for (int i = 0; i < 17; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, args[i]));
  const size_t gws[3] = {(size_t)((ow + 3) / 4), (size_t)oh, (size_t)(n * oc)};
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, st->act.kind));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.beta));
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void conv2d_cl_release(mace_op *op) {
  conv2d_cl_state *st = op->state;
  mace_cl_gemm_release(op, &st->gemm);
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_conv2d_cl = {.type = "Conv2D", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(conv2d_cl_state),
                                        .init = conv2d_cl_init, .infer = conv2d_cl_infer,
                                        .run = conv2d_cl_run, .release = conv2d_cl_release};
