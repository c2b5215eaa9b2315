/* LayerNorm on the GPU (OpenCL, f32): layer or RMS normalization over dims [axis, axis +
 * norm_dims), shared or per-element scale and bias, the optional Mean / InvStdDev outputs, as
 * the CPU kind (ops/layer_norm.c); kernels/opencl/layer_norm.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct layer_norm_cl_state {
  mace_cl_shadow shadow;
  int64_t rows, len, inner;
} layer_norm_cl_state;

static mace_status layer_norm_cl_init(mace_op *op) {
  layer_norm_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status layer_norm_cl_infer(mace_op *op) {
  layer_norm_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks axis, params */
  const mace_tensor *x = op->inputs[0];
  int64_t axis = mace_op_arg_int(op, "axis", -1);
  if (axis < 0) axis += x->ndim;
  const int64_t nd = mace_op_arg_int(op, "norm_dims", 0);
  const int64_t stop = nd ? axis + nd : x->ndim;
  st->rows = st->len = st->inner = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < axis) st->rows *= x->dims[d];
    else if (d < stop) st->len *= x->dims[d];
    else st->inner *= x->dims[d];
  }
  return MACE_OK;
}

/* Arguments 0-16, the same in both kernels: input, output, scale, bias, Mean, InvStdDev (an
 * absent optional output is bound to y and its flag cleared). */
static mace_status set_tensor_args(mace_cl_kernel *k, const mace_op *op, int64_t len) {
  const mace_tensor *y = op->outputs[0];
  const mace_tensor *scale = op->inputs[1], *bias = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *mean = op->n_outputs > 1 ? op->outputs[1] : NULL;
  const mace_tensor *inv = op->n_outputs > 2 ? op->outputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4, op, scale));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, mace_tensor_numel(scale) == len));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 7, op, bias ? bias : scale));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 9, bias && mace_tensor_numel(bias) == len));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 10, bias != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 11, op, mean ? mean : y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 13, mean != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 14, op, inv ? inv : y));
  return mace_cl_arg_int(k, 16, inv != NULL);
}

static mace_status layer_norm_cl_run(mace_op *op) {
  layer_norm_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  if (st->rows == 0 || st->len == 0 || st->inner == 0) return MACE_OK;
  mace_cl_kernel *k;
  const float eps = mace_op_arg_float(op, "epsilon", 1e-5f);
  const int rms = mace_op_arg_int(op, "rms", 0) != 0;
  if (st->inner == 1) {  /* contiguous rows: a work-group per row */
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layer_norm", "layer_norm_rows", "", &k));
    const size_t group = mace_cl_row_group(k, st->len);
    MACE_RETURN_IF_ERROR(set_tensor_args(k, op, st->len));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 17, st->len));
    MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 18, eps));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 19, rms));
    MACE_RETURN_IF_ERROR(mace_cl_arg_local(k, 20, group * sizeof(float)));
    const size_t gws[1] = {(size_t)st->rows * group}, lws[1] = {group};
    return mace_cl_launch(rt, k, 1, gws, lws, op->name);
  }
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layer_norm", "layer_norm", "", &k));
  MACE_RETURN_IF_ERROR(set_tensor_args(k, op, st->len));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 17, st->rows * st->inner));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 18, st->len));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 19, st->inner));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 20, eps));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 21, rms));
  const size_t gws[1] = {(size_t)(st->rows * st->inner)};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void layer_norm_cl_release(mace_op *op) {
  layer_norm_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_layer_norm_cl = {.type = "LayerNorm", .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(layer_norm_cl_state),
                                            .init = layer_norm_cl_init,
                                            .infer = layer_norm_cl_infer,
                                            .run = layer_norm_cl_run,
                                            .release = layer_norm_cl_release};
