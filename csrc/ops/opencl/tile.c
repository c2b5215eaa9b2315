/* Tile and Expand on the GPU (OpenCL, f32): as the CPU kinds (ops/tile.c, ops/expand.c, whose
 * infer on the shadow checks the repeats or the shape and sizes the output), the gather of
 * ops/opencl/cl_permute.h: each output dim reads its input dim at stride 0 where it was
 * broadcast from 1, and a tiled dim is split into (repeats at stride 0, the input dim). More
 * than 8 dims after that split run on the CPU. */
#include "core/op.h"
#include "ops/opencl/cl_permute.h"

typedef struct tile_cl_state {
  mace_cl_shadow shadow;
  int nd;
  int64_t dims[8], strides[8];  /* the gather's output view and input strides */
} tile_cl_state;

static mace_status tile_cl_init(mace_op *op) {
  tile_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status tile_cl_infer(mace_op *op) {
  tile_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (x->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s on the GPU (f32 only)", op->name,
                      op->type, mace_dtype_name(x->dtype));
  int64_t dims[2 * MACE_MAX_DIMS], strides[2 * MACE_MAX_DIMS], s = 1;
  int nd = 0;
  /* Innermost first, reversed below: input dim d - lead for output dim d (1 where absent). */
  const int lead = y->ndim - x->ndim;
  for (int d = y->ndim - 1; d >= 0; --d) {
    const int64_t in = d >= lead ? x->dims[d - lead] : 1, out = y->dims[d];
    if (in == out) {
      dims[nd] = out;
      strides[nd++] = s;
    } else if (in == 1) {
      dims[nd] = out;
      strides[nd++] = 0;
    } else if (in > 0 && out % in == 0) {  /* Tile: (repeats, in) */
      dims[nd] = in;
      strides[nd++] = s;
      dims[nd] = out / in;
      strides[nd++] = 0;
    } else if (out != 0) {
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): output dim %d (%lld) is no repetition "
                        "of the input's (%lld)", op->name, op->type, d, (long long)out,
                        (long long)in);
    }
    s *= in;
  }
  if (nd > 8)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %d dims after splitting the repeats "
                      "(the GPU gather takes 8)", op->name, op->type, nd);
  st->nd = nd;
  for (int k = 0; k < nd; ++k) {
    st->dims[k] = dims[nd - 1 - k];
    st->strides[k] = strides[nd - 1 - k];
  }
  return MACE_OK;
}

static mace_status tile_cl_run(mace_op *op) {
  tile_cl_state *st = op->state;
  if (mace_tensor_numel(op->outputs[0]) == 0) return MACE_OK;
  return mace_cl_permute_launch(op, st->nd, st->dims, st->strides, 0);
}

static void tile_cl_release(mace_op *op) {
  tile_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_tile_cl = {.type = "Tile", .device = MACE_DEVICE_GPU,
                                      .dtype = MACE_DT_F32, .state_size = sizeof(tile_cl_state),
                                      .value_inputs = 1u << 1, /* repeats, as ops/tile.c */
                                      .init = tile_cl_init, .infer = tile_cl_infer,
                                      .run = tile_cl_run, .release = tile_cl_release};

const mace_op_kind mace_op_expand_cl = {.type = "Expand", .device = MACE_DEVICE_GPU,
                                        .dtype = MACE_DT_F32,
                                        .state_size = sizeof(tile_cl_state),
                                        .value_inputs = 1u << 1, /* shape, as ops/expand.c */
                                        .init = tile_cl_init, .infer = tile_cl_infer,
                                        .run = tile_cl_run, .release = tile_cl_release};
