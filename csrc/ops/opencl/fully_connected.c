/* FullyConnected on the GPU (OpenCL, f32): y = act(x W^T + bias), x of rank > 2 flattened, as the
 * CPU kind (ops/fully_connected.c); kernels/opencl/matmul.cl. */
#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_op.h"

typedef struct fc_cl_state {
  mace_cl_shadow shadow;
  mace_activation act;
} fc_cl_state;

static mace_status fc_cl_init(mace_op *op) {
  fc_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status fc_cl_infer(mace_op *op) {
  fc_cl_state *st = op->state;
  return mace_cl_shadow_infer(op, &st->shadow);
}

static mace_status fc_cl_run(mace_op *op) {
  fc_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1], *y = op->outputs[0];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const int64_t m = y->dims[0], n = y->dims[1], k = m ? mace_tensor_numel(x) / m : 0;
  mace_cl_kernel *kr;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "matmul", "fully_connected", "", &kr));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(kr, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(kr, 2, op, w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(kr, 4, op, b ? b : w));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(kr, 6, b != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(kr, 7, op, y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(kr, 9, m));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(kr, 10, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(kr, 11, k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(kr, 12, st->act.kind));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(kr, 13, st->act.alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(kr, 14, st->act.beta));
  const size_t gws[2] = {(size_t)((n + 3) / 4), (size_t)m};
  return mace_cl_launch(rt, kr, 2, gws, NULL, op->name);
}

static void fc_cl_release(mace_op *op) {
  fc_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_fully_connected_cl = {.type = "FullyConnected",
                                                 .device = MACE_DEVICE_GPU,
                                                 .dtype = MACE_DT_F32,
                                                 .state_size = sizeof(fc_cl_state),
                                                 .init = fc_cl_init, .infer = fc_cl_infer,
                                                 .run = fc_cl_run, .release = fc_cl_release};
