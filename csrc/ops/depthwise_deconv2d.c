/* DepthwiseDeconv2d: the seed's name for a grouped (group == channels) Deconv2D; reuses csrc/ops/deconv2d.c. */
/*
 * Inputs, output and arguments: exactly those of Deconv2D (csrc/ops/deconv2d.c), f32 NCHW:
 *   0 x [N, C, H, W], 1 filter [C, C_out / C, kH, kW], 2 bias [C_out] (optional);
 *   group  int (required here): must equal C, the input channels (depthwise).
 * Every step (init, infer, run, release) is Deconv2D's; this kind only checks the group.
 */
#include "core/op.h"

extern const mace_op_kind mace_op_deconv2d_f32;

#define DW_DECONV_STATE_BYTES 1024

static mace_status dw_deconv_init(mace_op *op) {
  if (mace_op_deconv2d_f32.state_size > DW_DECONV_STATE_BYTES)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (DepthwiseDeconv2d): Deconv2D state grew past "
                      "%d bytes", op->name, DW_DECONV_STATE_BYTES);
  return mace_op_deconv2d_f32.init ? mace_op_deconv2d_f32.init(op) : MACE_OK;
}

static mace_status dw_deconv_infer(mace_op *op) {
  if (op->n_inputs < 1 || op->inputs[0]->ndim != 4 ||
      mace_op_arg_int(op, "group", 0) != op->inputs[0]->dims[1])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DepthwiseDeconv2d): group must equal the "
                      "input channels of a 4-D NCHW input", op->name);
  return mace_op_deconv2d_f32.infer(op);
}

static mace_status dw_deconv_run(mace_op *op) { return mace_op_deconv2d_f32.run(op); }

static void dw_deconv_release(mace_op *op) {
  if (mace_op_deconv2d_f32.release) mace_op_deconv2d_f32.release(op);
}

const mace_op_kind mace_op_depthwise_deconv2d_f32 = {
    .type = "DepthwiseDeconv2d", .device = MACE_DEVICE_CPU, .dtype = MACE_DT_F32,
    .state_size = DW_DECONV_STATE_BYTES, .init = dw_deconv_init, .infer = dw_deconv_infer,
    .run = dw_deconv_run, .release = dw_deconv_release};
