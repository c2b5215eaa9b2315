/* Deconv2D and DepthwiseDeconv2d on the GPU (OpenCL, f32 stored fp32 or fp16): the CPU kinds'
 * arguments and semantics (ops/deconv2d.c: groups, strides, dilations, EXPLICIT/SAME/VALID
 * padding, output_padding, output_shape, bias, fused activation), whose infer (on the shadow)
 * works out the geometry. Two paths, both gathering per output pixel (kernels/opencl/deconv.cl):
 * - GEMM + col2im, for groups with at least DECONV_GEMM_MIN_IC input channels: per (image,
 *   group) the tiled GEMM (ops/opencl/cl_gemm.c) computes cols [C_out/g * kH * kW, H * W] =
 *   W_g^T X_g with W_g read in place ([C_in/g, C_out/g * kH * kW] as stored), into a scratch
 *   buffer the op owns; deconv2d_col2im sums each output pixel's taps, adds the bias and applies
 *   the activation;
 * - the direct kernel for depthwise and narrow groups (a GEMM with K this small would multiply
 *   mostly padding).
 * MACE_CL_DECONV=gemm|direct fixes the path (tests); any other value but auto fails infer. */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/deconv2d.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_gemm.h"
#include "ops/opencl/cl_op.h"

/* Under half the GEMM's K step (16), the direct kernel. */
#define DECONV_GEMM_MIN_IC 8

typedef struct deconv2d_cl_state {
  mace_cl_shadow shadow;
  mace_activation act;
  mace_deconv2d_shape s;     /* the CPU kind's, after infer */
  int use_gemm;              /* else the direct kernel */
  mace_cl_gemm gemm;
  void *cols;                /* owned: the GEMM's columns, every image and group */
  size_t cols_bytes;
} deconv2d_cl_state;

static mace_status deconv2d_cl_init(mace_op *op) {
  deconv2d_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  return mace_fused_activation_parse(op, &st->act);
}

/* MACE_CL_DECONV: -1 automatic, 0 direct, 1 GEMM. */
static mace_status forced_path(const mace_op *op, int *path) {
  const char *v = getenv("MACE_CL_DECONV");
  *path = -1;
  if (!v || !*v || strcmp(v, "auto") == 0) return MACE_OK;
  if (strcmp(v, "direct") == 0) *path = 0;
  else if (strcmp(v, "gemm") == 0) *path = 1;
  else
    return mace_error(MACE_INVALID_ARGS, "op '%s' (%s): MACE_CL_DECONV='%s': expected auto, "
                      "direct or gemm", op->name, op->type, v);
  return MACE_OK;
}

static mace_status deconv2d_cl_infer(mace_op *op) {
  deconv2d_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  /* deconv2d_state starts with its mace_deconv2d_shape (ops/deconv2d.c). */
  st->s = *(const mace_deconv2d_shape *)st->shadow.state;
  const mace_deconv2d_shape *s = &st->s;
  int path;
  MACE_RETURN_IF_ERROR(forced_path(op, &path));
  const int64_t icg = s->in_c / s->group, ocg = s->out_c / s->group;
  const int64_t gm = ocg * s->k_h * s->k_w, gn = s->in_h * s->in_w;
  st->use_gemm = path >= 0 ? path : icg >= DECONV_GEMM_MIN_IC;
  if (s->batch == 0 || gn == 0) st->use_gemm = 0;  /* the direct kernel writes bias only */
  const int64_t cols = s->batch * s->group * gm * gn;
  if (st->use_gemm && cols >= INT_MAX) {
    if (path == 1)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %lld GEMM columns exceed the GPU "
                        "kernels' int indices", op->name, op->type, (long long)cols);
    st->use_gemm = 0;
  }
  if (!st->use_gemm) return MACE_OK;
  mace_cl_gemm *gm_ = &st->gemm;
  memset(gm_, 0, offsetof(mace_cl_gemm, tile));  /* the problem; the plan's buffers are kept */
  /* Batch z = (image, group): A = W_g^T [gm, icg] read in place from w [icg, gm] of the group,
   * B the group's input channels [icg, gn], Y its columns [gm, gn]. */
  gm_->m = gm;
  gm_->n = gn;
  gm_->k = icg;
  const int32_t zd[4] = {1, 1, (int32_t)s->batch, (int32_t)s->group};
  const int32_t azs[4] = {0, 0, 0, (int32_t)(icg * gm)};
  const int32_t bzs[4] = {0, 0, (int32_t)(s->in_c * gn), (int32_t)(icg * gn)};
  const int32_t yzs[4] = {0, 0, (int32_t)(s->group * gm * gn), (int32_t)(gm * gn)};
  memcpy(gm_->zdims, zd, sizeof(zd));
  memcpy(gm_->a_zs, azs, sizeof(azs));
  memcpy(gm_->b_zs, bzs, sizeof(bzs));
  memcpy(gm_->y_zs, yzs, sizeof(yzs));
  gm_->a_rs = 1;
  gm_->a_cs = gm;
  gm_->b_rs = gn;
  gm_->b_cs = 1;
  gm_->ldy = gn;
  MACE_RETURN_IF_ERROR(mace_cl_gemm_prepare(op, gm_));
  const size_t bytes = (size_t)cols * mace_cl_runtime_elem_size(op->cl);
  if (st->cols_bytes < bytes) {
    mace_cl_free(op->cl, st->cols);
    st->cols = NULL;
    st->cols_bytes = 0;
    MACE_RETURN_IF_ERROR(mace_cl_alloc(op->cl, bytes, &st->cols));
    st->cols_bytes = bytes;
  }
  return MACE_OK;
}

static mace_status set_ints(mace_cl_kernel *k, int *a, const int64_t *v, int n) {
  for (int i = 0; i < n; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, (*a)++, v[i]));
  return MACE_OK;
}

static mace_status set_act(mace_cl_kernel *k, int *a, const mace_activation *act) {
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, (*a)++, act->kind));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, (*a)++, act->alpha));
  return mace_cl_arg_float(k, (*a)++, act->beta);
}

static mace_status deconv2d_cl_run(mace_op *op) {
  deconv2d_cl_state *st = op->state;
  const mace_deconv2d_shape *s = &st->s;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1], *y = op->outputs[0];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  const size_t gws[3] = {(size_t)s->out_w, (size_t)s->out_h, (size_t)(s->batch * s->out_c)};
  mace_cl_kernel *k;
  int a;
  if (st->use_gemm) {
    /* The columns as a device tensor at offset 0 of the op's scratch buffer. */
    mace_tensor cols;
    memset(&cols, 0, sizeof(cols));
    cols.name = "deconv columns";
    cols.dtype = MACE_DT_F32;
    cols.storage = MACE_STORAGE_CL_BUFFER;
    cols.cl_mem = st->cols;
    const mace_activation none = {.kind = MACE_ACT_NONE};
    MACE_RETURN_IF_ERROR(mace_cl_gemm_run(op, &st->gemm, w, x, NULL, NULL, &cols, &none));
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "deconv", "deconv2d_col2im", "", &k));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, &cols));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, b ? b : y));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, b != NULL));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 5, op, y));
    a = 7;
    const int64_t ints[] = {s->in_h,     s->in_w,     s->out_c,      s->out_h,
                            s->out_w,    s->k_h,      s->k_w,        s->stride_h,
                            s->stride_w, s->dilation_h, s->dilation_w, s->pad_top,
                            s->pad_left, s->batch};
    MACE_RETURN_IF_ERROR(set_ints(k, &a, ints, 14));
  } else {
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "deconv", "deconv2d_direct", "", &k));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, w));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4, op, b ? b : w));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, b != NULL));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 7, op, y));
    a = 9;
    const int64_t ints[] = {s->in_c,     s->in_h,       s->in_w,       s->out_c,
                            s->out_h,    s->out_w,      s->k_h,        s->k_w,
                            s->stride_h, s->stride_w,   s->dilation_h, s->dilation_w,
                            s->pad_top,  s->pad_left,   s->in_c / s->group,
                            s->out_c / s->group,        s->batch};
    MACE_RETURN_IF_ERROR(set_ints(k, &a, ints, 17));
  }
  MACE_RETURN_IF_ERROR(set_act(k, &a, &st->act));
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void deconv2d_cl_release(mace_op *op) {
  deconv2d_cl_state *st = op->state;
  mace_cl_gemm_release(op, &st->gemm);
  mace_cl_free(op->cl, st->cols);
  st->cols = NULL;
  st->cols_bytes = 0;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_deconv2d_cl = {.type = "Deconv2D", .device = MACE_DEVICE_GPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(deconv2d_cl_state),
                                          .init = deconv2d_cl_init, .infer = deconv2d_cl_infer,
                                          .run = deconv2d_cl_run,
                                          .release = deconv2d_cl_release};

/* The seed's name for a Deconv2D whose group is the input channels; the shadow is the CPU
 * DepthwiseDeconv2d kind, which checks that. */
const mace_op_kind mace_op_depthwise_deconv2d_cl = {
    .type = "DepthwiseDeconv2d", .device = MACE_DEVICE_GPU, .dtype = MACE_DT_F32,
    .state_size = sizeof(deconv2d_cl_state), .init = deconv2d_cl_init,
    .infer = deconv2d_cl_infer, .run = deconv2d_cl_run, .release = deconv2d_cl_release};
