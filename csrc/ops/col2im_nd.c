/* Col2Im: ONNX Col2Im, column blocks [N, C * prod(block), L] summed into an N-D image (f32). */
/*
 * Inputs:  0 x            [N, C * prod(block_shape), L] (f32)
 *          1 image_shape  i32/i64 [nd], read during infer (constant or computed)
 *          2 block_shape  i32/i64 [nd], read during infer
 * Output:  0 y            [N, C, image_shape...]
 * Arguments:
 *   strides, dilations  ints [nd], default 1
 *   pads                ints [nd begin..., nd end...], default 0
 *   L must be the number of block positions, prod over d of
 *   (image + pad_begin + pad_end - dilation * (block - 1) - 1) / stride + 1.
 */
#include "core/op.h"
#include "kernels/cpu/ref/col2im_nd.h"

typedef struct col2im_nd_state {
  mace_col2im_nd g;
} col2im_nd_state;

static mace_status col2im_nd_infer(mace_op *op) {
  col2im_nd_state *s = (col2im_nd_state *)op->state;
  mace_col2im_nd *g = &s->g;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  int n_img = 0, n_blk = 0;
  MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, g->image, MACE_COL2IM_MAX_DIMS, &n_img));
  MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 2, g->block, MACE_COL2IM_MAX_DIMS, &n_blk));
  const int64_t *st = NULL, *dl = NULL, *pd = NULL;
  const int ns = mace_op_arg_ints(op, "strides", &st), ndl = mace_op_arg_ints(op, "dilations", &dl);
  const int np = mace_op_arg_ints(op, "pads", &pd);
  const int nd = n_img;
  if (x->ndim != 3 || nd < 1 || n_blk != nd || (ns >= 0 && ns != nd) || (ndl >= 0 && ndl != nd) ||
      (np >= 0 && np != 2 * nd) || 2 + nd > MACE_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Col2Im): input '%s' must be [N, C * K, L] and "
                      "image_shape, block_shape, strides and dilations hold one value per spatial "
                      "dim (pads two)", op->name, x->name);
  g->nd = nd;
  int64_t kvol = 1, lvol = 1, dims[MACE_MAX_DIMS] = {x->dims[0], 0};
  for (int d = 0; d < nd; ++d) {
    g->stride[d] = ns > 0 ? st[d] : 1;
    g->dilation[d] = ndl > 0 ? dl[d] : 1;
    g->pad_begin[d] = np > 0 ? pd[d] : 0;
    const int64_t pad_end = np > 0 ? pd[d + nd] : 0;
    if (g->image[d] < 1 || g->block[d] < 1 || g->stride[d] < 1 || g->dilation[d] < 1 ||
        g->pad_begin[d] < 0 || pad_end < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Col2Im): spatial dim %d: image %lld, block "
                        "%lld, stride, dilation or pads out of range", op->name, d,
                        (long long)g->image[d], (long long)g->block[d]);
    const int64_t span = g->image[d] + g->pad_begin[d] + pad_end -
                         g->dilation[d] * (g->block[d] - 1) - 1;
    if (span < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Col2Im): the block is larger than the padded "
                        "image along dim %d", op->name, d);
    g->count[d] = span / g->stride[d] + 1;
    kvol *= g->block[d];
    lvol *= g->count[d];
    dims[2 + d] = g->image[d];
  }
  if (x->dims[1] % kvol != 0 || x->dims[2] != lvol)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Col2Im): input '%s' is [%lld, %lld, %lld]; "
                      "blocks of %lld elements at %lld positions are expected", op->name, x->name,
                      (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2],
                      (long long)kvol, (long long)lvol);
  dims[1] = x->dims[1] / kvol;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 2 + nd));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const col2im_nd_state *s;
  const mace_op *op;
} col2im_nd_job;

static void col2im_nd_range(void *ctx, int64_t begin, int64_t end) {
  const col2im_nd_job *j = (const col2im_nd_job *)ctx;
  mace_f32_col2im_nd__ref((const float *)j->op->inputs[0]->data,
                          (float *)j->op->outputs[0]->data, &j->s->g, begin, end);
}

static mace_status col2im_nd_run(mace_op *op) {
  const col2im_nd_state *s = (const col2im_nd_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  col2im_nd_job job = {s, op};
  const int64_t planes = y->dims[0] * y->dims[1];
  if (planes > 0 && mace_tensor_numel(y) > 0)
    mace_threadpool_parallel_for(op->pool, planes, 1, col2im_nd_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_col2im_nd_f32 = {.type = "Col2Im", .device = MACE_DEVICE_CPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(col2im_nd_state),
                                            .value_inputs = (1u << 1) | (1u << 2),
                                            .infer = col2im_nd_infer, .run = col2im_nd_run};
