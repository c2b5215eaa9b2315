/* GRU: ONNX GRU (f32); the engine and the documentation of inputs, outputs and arguments are in
 * csrc/ops/recurrent_op.c. */
/*
 * Inputs:  X, W, R, then the present ones of B, sequence_lens, initial_h (see
 *          csrc/ops/recurrent_op.c).
 * Outputs: Y, Y_h.
 * Arguments: hidden_size, direction, layout, clip, activations, activation_alpha,
 *   activation_beta, linear_before_reset, has_* (see csrc/ops/recurrent_op.c).
 */
#include "ops/recurrent_op.h"

static mace_status gru_init(mace_op *op) { return mace_recurrent_init(op, MACE_CELL_GRU); }

const mace_op_kind mace_op_gru_f32 = {.type = "GRU", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_F32,
                                      .state_size = sizeof(mace_recurrent_state),
                                      .init = gru_init, .infer = mace_recurrent_infer,
                                      .run = mace_recurrent_run,
                                      .release = mace_recurrent_release};
