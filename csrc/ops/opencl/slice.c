/* Slice on the GPU (OpenCL, f32): ONNX Slice with starts/ends/axes/steps from arguments or
 * inputs, clamping and negative steps, resolved by the CPU kind's infer (ops/slice.c,
 * ops/slice_params.h); a gather by strides (ops/opencl/cl_permute.h). */
#include "core/op.h"
#include "ops/opencl/cl_permute.h"
#include "ops/slice_params.h"

typedef struct slice_cl_state {
  mace_cl_shadow shadow;
  int nd;
  int64_t dims[MACE_MAX_DIMS], strides[MACE_MAX_DIMS], base;
} slice_cl_state;

static mace_status slice_cl_init(mace_op *op) {
  slice_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status slice_cl_infer(mace_op *op) {
  slice_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_slice_params *p = st->shadow.state;
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Slice): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(x->dtype));
  int64_t stride = 1;
  st->nd = x->ndim;
  st->base = 0;
  for (int d = x->ndim - 1; d >= 0; --d) {
    st->dims[d] = p->out_dims[d];
    st->strides[d] = p->steps[d] * stride;
    st->base += p->starts[d] * stride;
    stride *= x->dims[d];
  }
  return MACE_OK;
}

static mace_status slice_cl_run(mace_op *op) {
  slice_cl_state *st = op->state;
  return mace_cl_permute_launch(op, st->nd, st->dims, st->strides, st->base);
}

static void slice_cl_release(mace_op *op) {
  slice_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_slice_cl = {.type = "Slice", .device = MACE_DEVICE_GPU,
                                       .dtype = MACE_DT_F32, .state_size = sizeof(slice_cl_state),
                                       .value_inputs = 0x1eu, /* inputs 1..4, as ops/slice.c */
                                       .init = slice_cl_init, .infer = slice_cl_infer,
                                       .run = slice_cl_run, .release = slice_cl_release};
