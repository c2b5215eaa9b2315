/* Conv2D on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): group 1 and
 * depthwise (group = C = OC) windows of any size, stride, dilation and padding, with the CPU
 * kind's bias, fused residual and activation (ops/conv2d.c); kernels/opencl/image_conv.cl.
 * The bias stays the uploaded buffer; the filter is packed once, at the first run after infer,
 * into a float4-block buffer the op owns (float in both precisions). Other groupings take the
 * buffer kind. */
#include "core/op.h"
#include "ops/conv_pad.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_image_op.h"

typedef struct conv2d_image_state {
  mace_cl_shadow shadow;
  int64_t strides[2], dilations[2], pads[4], group;
  mace_pad_mode mode;
  mace_activation act;
  int64_t pad_t, pad_l;      /* resolved at infer */
  int depthwise;
  void *packed;              /* owned cl_mem: the packed filter (kernels/opencl/image_conv.cl) */
  size_t packed_bytes;
  int packed_ready;          /* packed from the current filter */
} conv2d_image_state;

static mace_status conv2d_image_init(mace_op *op) {
  conv2d_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  st->strides[0] = st->strides[1] = 1;
  st->dilations[0] = st->dilations[1] = 1;
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "strides", 2, st->strides, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "dilations", 2, st->dilations, 1));
  MACE_RETURN_IF_ERROR(mace_conv_read_ints(op, "padding_values", 4, st->pads, 0));
  mace_pad_mode_parse(mace_op_arg_str(op, "padding", "EXPLICIT"), &st->mode);
  st->group = mace_op_arg_int(op, "group", 1);
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status conv2d_image_infer(mace_op *op) {
  conv2d_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  MACE_RETURN_IF_ERROR(mace_cl_image_check(op, 1u | 1u << 3));  /* x and the residual */
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1], *y = op->outputs[0];
  const int64_t c = x->dims[1], oc = y->dims[1];
  st->depthwise = st->group == c && st->group == oc && st->group > 1;
  if (st->group != 1 && !st->depthwise)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Conv2D): group %lld of %lld channels has no "
                      "image kernel", op->name, (long long)st->group, (long long)c);
  int64_t pads[4] = {st->pads[0], st->pads[1], st->pads[2], st->pads[3]};
  mace_window_out_size(x->dims[2], w->dims[2], st->strides[0], st->dilations[0], st->mode, 0,
                       &pads[0], &pads[2]);
  mace_window_out_size(x->dims[3], w->dims[3], st->strides[1], st->dilations[1], st->mode, 0,
                       &pads[1], &pads[3]);
  st->pad_t = pads[0];
  st->pad_l = pads[1];
  const int64_t kk = w->dims[2] * w->dims[3];
  const size_t bytes = (size_t)(st->depthwise ? (c + 3) / 4 * kk
                                              : (oc + 3) / 4 * ((c + 3) / 4) * kk * 4) *
                       4 * sizeof(float);
  st->packed_ready = 0;
  if (bytes != st->packed_bytes) {
    if (st->packed) mace_cl_free(op->cl, st->packed);
    st->packed = NULL;
    st->packed_bytes = 0;
    MACE_RETURN_IF_ERROR(mace_cl_alloc(op->cl, bytes ? bytes : 16, &st->packed));
    st->packed_bytes = bytes;
  }
  return MACE_OK;
}

/* The filter into st->packed (once per infer: the filter is a constant). */
static mace_status conv2d_image_pack(mace_op *op, conv2d_image_state *st, mace_cl_runtime *rt) {
  const mace_tensor *w = op->inputs[1];
  const int64_t kk = w->dims[2] * w->dims[3], oc = w->dims[0], c = op->inputs[0]->dims[1];
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(
      rt, "image_conv", st->depthwise ? "pack_dw_filter" : "pack_conv_filter", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 2, st->packed));
  int a = 3;
  if (!st->depthwise) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, oc));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, c));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, kk));
  const size_t gws[1] = {st->packed_bytes / (4 * sizeof(float))};
  MACE_RETURN_IF_ERROR(mace_cl_launch(rt, k, 1, gws, NULL, op->name));
  st->packed_ready = 1;
  return MACE_OK;
}

static mace_status conv2d_image_run(mace_op *op) {
  conv2d_image_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1], *y = op->outputs[0];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *r = op->n_inputs > 3 ? op->inputs[3] : NULL;
  if (!mace_tensor_numel(y)) return MACE_OK;
  if (!st->packed_ready) MACE_RETURN_IF_ERROR(conv2d_image_pack(op, st, rt));
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_conv",
                                          st->depthwise ? "depthwise_image" : "conv2d_image", "",
                                          &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 1, st->packed));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, b ? b : w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, b != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 5, op, r ? r : x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, r != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 7, op, y));
  const int64_t args[] = {x->dims[1], x->dims[2], x->dims[3], y->dims[1], y->dims[2], y->dims[3],
                          w->dims[2], w->dims[3], st->strides[0], st->strides[1],
                          st->dilations[0], st->dilations[1], st->pad_t, st->pad_l,
                          x->dims[0], st->act.kind};
  int a = 8;
  for (int i = 0; i < 16; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, args[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.beta));
  size_t gws[3];
  mace_cl_image_gws(y, gws);
  gws[0] = (gws[0] + 3) / 4; /* 4 pixels a work item */
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void conv2d_image_release(mace_op *op) {
  conv2d_image_state *st = op->state;
  if (st->packed) mace_cl_free(op->cl, st->packed);
  st->packed = NULL;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_conv2d_image = {.type = "Conv2D", .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_F32, .cl_image = 1,
                                           .state_size = sizeof(conv2d_image_state),
                                           .init = conv2d_image_init,
                                           .infer = conv2d_image_infer,
                                           .run = conv2d_image_run,
                                           .release = conv2d_image_release};
