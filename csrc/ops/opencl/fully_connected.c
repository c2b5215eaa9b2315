/* FullyConnected on the GPU (OpenCL, f32): y = act(x W^T + bias), x of rank > 2 flattened, as the
 * CPU kind (ops/fully_connected.c); the tiled GEMM of ops/opencl/cl_gemm.c with A = x [m, k] and
 * B = W^T (W [n, k] read in place, contiguous along k). */
#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_gemm.h"
#include "ops/opencl/cl_op.h"

typedef struct fc_cl_state {
  mace_cl_shadow shadow;
  mace_activation act;
  mace_cl_gemm gemm;
} fc_cl_state;

static mace_status fc_cl_init(mace_op *op) {
  fc_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status fc_cl_infer(mace_op *op) {
  fc_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  mace_cl_gemm *g = &st->gemm;
  g->m = y->dims[0];
  g->n = y->dims[1];
  g->k = g->m ? mace_tensor_numel(x) / g->m : 0;
  for (int i = 0; i < 4; ++i) {
    g->zdims[i] = 1;
    g->a_zs[i] = g->b_zs[i] = g->y_zs[i] = g->bias_zs[i] = 0;
  }
  g->a_rs = g->k;
  g->a_cs = 1;
  g->b_rs = 1;
  g->b_cs = g->k;
  g->ldy = g->n;
  g->bias_mode = 2;
  return mace_cl_gemm_prepare(op, g);
}

static mace_status fc_cl_run(mace_op *op) {
  fc_cl_state *st = op->state;
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  return mace_cl_gemm_run(op, &st->gemm, op->inputs[0], op->inputs[1], b, NULL, op->outputs[0],
                          &st->act);
}

static void fc_cl_release(mace_op *op) {
  fc_cl_state *st = op->state;
  mace_cl_gemm_release(op, &st->gemm);
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_fully_connected_cl = {.type = "FullyConnected",
                                                 .device = MACE_DEVICE_GPU,
                                                 .dtype = MACE_DT_F32,
                                                 .state_size = sizeof(fc_cl_state),
                                                 .init = fc_cl_init, .infer = fc_cl_infer,
                                                 .run = fc_cl_run, .release = fc_cl_release};
