/* Deconv3D: grouped 3-D transposed convolution over NCDHW (ONNX ConvTranspose, 5-D), f32. */
/*
 * Inputs:  0 x     [N, C_in, D, H, W] (f32)
 *          1 w     [C_in, C_out / group, kD, kH, kW] (f32)
 *          2 bias  [C_out] (f32), optional
 * Output:  0 y     [N, C_out, D_out, H_out, W_out],
 *                  D_out = stride * (D - 1) + output_padding + (kD - 1) * dilation + 1 - pads
 * Arguments:
 *   group                       int, default 1
 *   strides, dilations          ints [D, H, W], default 1
 *   padding_values              ints [d, h, w begin, d, h, w end], default 0: cropped from
 *                               the full output (the converter resolves output_shape and
 *                               auto_pad into these)
 *   output_padding              ints [D, H, W], default 0: added at the end
 * The kernel is the direct reference loop (kernels/cpu/ref/window3d.h) over output rows.
 */
#include "core/op.h"
#include "kernels/cpu/ref/window3d.h"

#define DECONV3D_GRAIN 16384

typedef struct deconv3d_state {
  int64_t group;
  mace_window3d g;
} deconv3d_state;

static mace_status deconv3d_infer(mace_op *op) {
  deconv3d_state *s = (deconv3d_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  s->group = mace_op_arg_int(op, "group", 1);
  if (w->ndim != 5 || x->ndim != 5 || s->group < 1 || x->dims[1] % s->group != 0 ||
      w->dims[0] != x->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv3D): input '%s' (rank %d), filter '%s' "
                      "(rank %d) and group %lld do not fit: the filter must be [C_in, C_out / "
                      "group, kD, kH, kW]", op->name, x->name, x->ndim, w->name, w->ndim,
                      (long long)s->group);
  const int64_t c_out = w->dims[1] * s->group;
  if (b != NULL) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
    if (mace_tensor_numel(b) != c_out)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv3D): bias '%s' has %lld values for "
                        "%lld output channels", op->name, b->name,
                        (long long)mace_tensor_numel(b), (long long)c_out);
  }
  const int64_t *st = NULL, *dl = NULL, *pd = NULL, *opd = NULL;
  const int ns = mace_op_arg_ints(op, "strides", &st), nd = mace_op_arg_ints(op, "dilations", &dl);
  const int np = mace_op_arg_ints(op, "padding_values", &pd);
  const int no = mace_op_arg_ints(op, "output_padding", &opd);
  if ((ns >= 0 && ns != 3) || (nd >= 0 && nd != 3) || (np >= 0 && np != 6) ||
      (no >= 0 && no != 3))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv3D): strides, dilations and "
                      "output_padding need 3 values and padding_values 6", op->name);
  mace_window3d *g = &s->g;
  int64_t dims[5] = {x->dims[0], c_out};
  for (int a = 0; a < 3; ++a) {
    g->in[a] = x->dims[a + 2];
    g->k[a] = w->dims[a + 2];
    g->s[a] = ns > 0 ? st[a] : 1;
    g->d[a] = nd > 0 ? dl[a] : 1;
    g->pad_begin[a] = np > 0 ? pd[a] : 0;
    g->pad_end[a] = np > 0 ? pd[a + 3] : 0;
    const int64_t o_pad = no > 0 ? opd[a] : 0;
    if (g->s[a] < 1 || g->d[a] < 1 || g->pad_begin[a] < 0 || g->pad_end[a] < 0 || o_pad < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv3D): stride, dilation, pads or "
                        "output_padding of axis %d out of range", op->name, a);
    g->out[a] = g->s[a] * (g->in[a] - 1) + o_pad + (g->k[a] - 1) * g->d[a] + 1 -
                g->pad_begin[a] - g->pad_end[a];
    if (g->out[a] < 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Deconv3D): the pads leave no output along "
                        "axis %d", op->name, a);
    dims[a + 2] = g->out[a];
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 5));
  op->macs = mace_tensor_numel(x) * mace_tensor_numel(w) / w->dims[0];
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const deconv3d_state *s;
  const mace_op *op;
} deconv3d_job;

static void deconv3d_range(void *ctx, int64_t begin, int64_t end) {
  const deconv3d_job *j = (const deconv3d_job *)ctx;
  const mace_op *op = j->op;
  mace_f32_deconv3d__ref((const float *)op->inputs[0]->data, (const float *)op->inputs[1]->data,
                         op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL,
                         (float *)op->outputs[0]->data, &j->s->g, op->inputs[0]->dims[1],
                         op->outputs[0]->dims[1], j->s->group, begin, end);
}

static mace_status deconv3d_run(mace_op *op) {
  const deconv3d_state *s = (const deconv3d_state *)op->state;
  const mace_tensor *y = op->outputs[0];
  const int64_t rows = y->dims[0] * y->dims[1] * y->dims[2];
  const int64_t per_row = rows > 0 ? op->macs / rows : 0;
  deconv3d_job job = {s, op};
  if (rows > 0)
    mace_threadpool_parallel_for(op->pool, rows, 1 + DECONV3D_GRAIN / (per_row + 1),
                                 deconv3d_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_deconv3d_f32 = {.type = "Deconv3D", .device = MACE_DEVICE_CPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(deconv3d_state),
                                           .infer = deconv3d_infer, .run = deconv3d_run};
