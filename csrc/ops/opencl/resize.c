/* ResizeNearestNeighbor (f32, any rank), ResizeBilinear and ResizeBicubic on the GPU (OpenCL),
 * with the CPU kinds' arguments and coordinates (ops/resize.c): the CPU kind's infer works out
 * the output size and scales (ops/resize_params.h), its table functions the source indices and
 * weights (bicubic: 4 taps an output index, Keys' a, exclude_outside), which infer uploads to a
 * device buffer the op owns; kernels/opencl/resize.cl. Output dims equal to the input's copy
 * the input, as the CPU kinds do. */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "ops/opencl/cl_op.h"
#include "ops/resize_params.h"

typedef struct resize_cl_state {
  mace_cl_shadow shadow;
  int bilinear, bicubic;
  int copy;                   /* output dims == input dims */
  void *itab, *ftab;          /* owned device buffers: int32 indices, fp32 weights */
  size_t itab_bytes, ftab_bytes;
  int32_t dims[8], in_dims[8], table_off[8];
} resize_cl_state;

static void resize_cl_free_tables(mace_op *op, resize_cl_state *st) {
  mace_cl_free(op->cl, st->itab);
  mace_cl_free(op->cl, st->ftab);
  st->itab = st->ftab = NULL;
  st->itab_bytes = st->ftab_bytes = 0;
}

static void resize_cl_release(mace_op *op) {
  resize_cl_state *st = op->state;
  resize_cl_free_tables(op, st);
  mace_cl_shadow_release(op, &st->shadow);
}

static mace_status resize_cl_init(mace_op *op) {
  resize_cl_state *st = op->state;
  st->bilinear = strcmp(op->type, "ResizeBilinear") == 0;
  st->bicubic = strcmp(op->type, "ResizeBicubic") == 0;
  return mace_cl_shadow_init(op, &st->shadow);
}

/* Uploads `bytes` of host data into *mem, (re)allocated when too small. */
static mace_status upload(mace_op *op, void **mem, size_t *cap, const void *data, size_t bytes) {
  if (*cap < bytes) {
    mace_cl_free(op->cl, *mem);
    *mem = NULL;
    *cap = 0;
    MACE_RETURN_IF_ERROR(mace_cl_alloc(op->cl, bytes, mem));
    *cap = bytes;
  }
  return mace_cl_write(op->cl, *mem, 0, data, bytes, 0);
}

static mace_status resize_cl_infer(mace_op *op) {
  resize_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_resize_params *p = st->shadow.state;
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  const int nd = x->ndim;
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s on the GPU (f32 only)", op->name,
                      op->type, mace_dtype_name(x->dtype));
  if (!op->cl)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): no OpenCL runtime at infer", op->name,
                      op->type);
  st->copy = mace_dims_equal(x->dims, nd, y->dims, y->ndim);
  if (st->copy || mace_tensor_numel(y) == 0) return MACE_OK;
  int64_t total = 0;
  for (int d = 0; d < nd; ++d) total += y->dims[d];
  /* Host tables as the CPU kind builds them (int64), narrowed to the kernels' int32. */
  int64_t *t64 = malloc((size_t)(total * 4 + 2) * sizeof(int64_t));
  int32_t *t32 = malloc((size_t)(total * 4 + 2) * sizeof(int32_t));
  float *w = malloc((size_t)(total * 4 + 2) * sizeof(float));
  mace_status status = MACE_OK;
  if (!t64 || !t32 || !w) {
    status = mace_error(MACE_OUT_OF_RESOURCES, "op '%s': no memory for resize tables", op->name);
    goto done;
  }
  size_t ni = 0, nf = 0;
  if (st->bicubic) {  /* itab = yidx[4 oh] xidx[4 ow], ftab = yw[4 oh] xw[4 ow] */
    const int64_t oh = y->dims[nd - 2], ow = y->dims[nd - 1];
    mace_resize_cubic_table(p->coord, p->scales[nd - 2], oh, x->dims[nd - 2], p->cubic_a,
                            p->exclude_outside, t64, w);
    mace_resize_cubic_table(p->coord, p->scales[nd - 1], ow, x->dims[nd - 1], p->cubic_a,
                            p->exclude_outside, t64 + 4 * oh, w + 4 * oh);
    ni = nf = (size_t)(4 * (oh + ow));
  } else if (!st->bilinear) {
    for (int k = 0; k < 8; ++k) {
      const int d = k - (8 - nd);
      st->dims[k] = d >= 0 ? (int32_t)y->dims[d] : 1;
      st->in_dims[k] = d >= 0 ? (int32_t)x->dims[d] : 1;
      st->table_off[k] = (int32_t)ni;
      if (d < 0) {
        t64[ni++] = 0;  /* a unit dim reads index 0 */
        continue;
      }
      mace_resize_nearest_table(p->coord, p->rounding, p->scales[d], y->dims[d], x->dims[d],
                                t64 + ni);
      ni += (size_t)y->dims[d];
    }
  } else {
    const int64_t oh = y->dims[nd - 2], ow = y->dims[nd - 1];
    mace_resize_linear_table(p->coord, p->scales[nd - 2], oh, x->dims[nd - 2], t64, t64 + oh, w,
                             w + oh);
    mace_resize_linear_table(p->coord, p->scales[nd - 1], ow, x->dims[nd - 1], t64 + 2 * oh,
                             t64 + 2 * oh + ow, w + 2 * oh, w + 2 * oh + ow);
    ni = nf = (size_t)(2 * (oh + ow));
  }
  for (size_t i = 0; i < ni; ++i) t32[i] = (int32_t)t64[i];
  status = upload(op, &st->itab, &st->itab_bytes, t32, ni * sizeof(int32_t));
  if (status == MACE_OK && nf)
    status = upload(op, &st->ftab, &st->ftab_bytes, w, nf * sizeof(float));
done:
  free(t64);
  free(t32);
  free(w);
  return status;
}

static mace_status resize_cl_run(mace_op *op) {
  resize_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  const int64_t n = mace_tensor_numel(y);
  if (n == 0) return MACE_OK;
  mace_cl_kernel *k;
  if (st->copy) {
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "copy_slice", "", &k));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
    const int64_t ints[] = {1, n, n, 0};
    for (int i = 0; i < 4; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4 + i, ints[i]));
    const size_t gws[1] = {(size_t)n};
    return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
  }
  if (!st->bilinear && !st->bicubic) {
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "resize", "resize_nearest", "", &k));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, n));
    MACE_RETURN_IF_ERROR(mace_cl_arg(k, 5, st->dims, sizeof(st->dims)));
    MACE_RETURN_IF_ERROR(mace_cl_arg(k, 6, st->in_dims, sizeof(st->in_dims)));
    MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 7, st->itab));
    MACE_RETURN_IF_ERROR(mace_cl_arg(k, 8, st->table_off, sizeof(st->table_off)));
    const size_t gws[1] = {(size_t)n};
    return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
  }
  const int nd = x->ndim;
  const int64_t ih = x->dims[nd - 2], iw = x->dims[nd - 1], oh = y->dims[nd - 2],
                ow = y->dims[nd - 1], planes = n / (oh * ow);
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "resize",
                                          st->bicubic ? "resize_bicubic" : "resize_bilinear", "",
                                          &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
  const int64_t ints[] = {planes, ih, iw, oh, ow};
  for (int i = 0; i < 5; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4 + i, ints[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 9, st->itab));
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, 10, st->ftab));
  const size_t gws[3] = {(size_t)ow, (size_t)oh, (size_t)planes};
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

const mace_op_kind mace_op_resize_nearest_cl = {.type = "ResizeNearestNeighbor",
                                                .device = MACE_DEVICE_GPU,
                                                .dtype = MACE_DT_F32,
                                                .state_size = sizeof(resize_cl_state),
                                                .value_inputs = 1u << 1, /* as ops/resize.c */
                                                .init = resize_cl_init, .infer = resize_cl_infer,
                                                .run = resize_cl_run,
                                                .release = resize_cl_release};
const mace_op_kind mace_op_resize_bilinear_cl = {.type = "ResizeBilinear",
                                                 .device = MACE_DEVICE_GPU,
                                                 .dtype = MACE_DT_F32,
                                                 .state_size = sizeof(resize_cl_state),
                                                 .value_inputs = 1u << 1,
                                                 .init = resize_cl_init,
                                                 .infer = resize_cl_infer,
                                                 .run = resize_cl_run,
                                                 .release = resize_cl_release};
const mace_op_kind mace_op_resize_bicubic_cl = {.type = "ResizeBicubic",
                                                .device = MACE_DEVICE_GPU,
                                                .dtype = MACE_DT_F32,
                                                .state_size = sizeof(resize_cl_state),
                                                .value_inputs = 1u << 1,
                                                .init = resize_cl_init,
                                                .infer = resize_cl_infer,
                                                .run = resize_cl_run,
                                                .release = resize_cl_release};
