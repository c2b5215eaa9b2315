/* BatchToSpaceND and SpaceToBatchND on the GPU (OpenCL, f32): as the CPU kinds
 * (ops/batch_to_space.c, ops/space_to_batch.c, whose infer on the shadow checks the block,
 * the crops or paddings and sizes the output), one gather each (kernels/opencl/space_batch.cl). */
#include <string.h>

#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct space_batch_cl_state {
  mace_cl_shadow shadow;
  int64_t bh, bw, top, left;  /* the block; the crop (BatchToSpace) or pad (SpaceToBatch) */
} space_batch_cl_state;

static mace_status space_batch_cl_init(mace_op *op) {
  space_batch_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status space_batch_cl_infer(mace_op *op) {
  space_batch_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->inputs[0]->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s on the GPU (f32 only)", op->name,
                      op->type, mace_dtype_name(op->inputs[0]->dtype));
  const int64_t *bs = NULL, *e = NULL;
  mace_op_arg_ints(op, "block_shape", &bs);  /* 2 ints, checked by the CPU kind */
  st->bh = bs[0];
  st->bw = bs[1];
  const int b2s = strcmp(op->type, "BatchToSpaceND") == 0;
  const int ne = mace_op_arg_ints(op, b2s ? "crops" : "paddings", &e);  /* 0 or 4 */
  st->top = ne == 4 ? e[0] : 0;
  st->left = ne == 4 ? e[2] : 0;
  return MACE_OK;
}

static mace_status space_batch_cl_run(mace_op *op) {
  space_batch_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  const int b2s = strcmp(op->type, "BatchToSpaceND") == 0;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "space_batch",
                                          b2s ? "batch_to_space" : "space_to_batch", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, y));
  const int64_t images = b2s ? y->dims[0] : x->dims[0];
  const int64_t ints[] = {images,    x->dims[1], x->dims[2], x->dims[3], y->dims[2],
                          y->dims[3], st->bh,    st->bw,     st->top,    st->left};
  for (int i = 0; i < 10; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4 + i, ints[i]));
  const size_t gws[3] = {(size_t)y->dims[3], (size_t)y->dims[2],
                         (size_t)(y->dims[0] * y->dims[1])};
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void space_batch_cl_release(mace_op *op) {
  space_batch_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_batch_to_space_cl = {.type = "BatchToSpaceND",
                                                .device = MACE_DEVICE_GPU, .dtype = MACE_DT_F32,
                                                .state_size = sizeof(space_batch_cl_state),
                                                .init = space_batch_cl_init,
                                                .infer = space_batch_cl_infer,
                                                .run = space_batch_cl_run,
                                                .release = space_batch_cl_release};

const mace_op_kind mace_op_space_to_batch_cl = {.type = "SpaceToBatchND",
                                                .device = MACE_DEVICE_GPU, .dtype = MACE_DT_F32,
                                                .state_size = sizeof(space_batch_cl_state),
                                                .init = space_batch_cl_init,
                                                .infer = space_batch_cl_infer,
                                                .run = space_batch_cl_run,
                                                .release = space_batch_cl_release};
