/* QLinearAdd: broadcasting addition of two int8/uint8 tensors, fixed-point requantized. */
/*
 * Inputs, output and arguments: ops/qlinear_binary.h (ONNX com.microsoft QLinearAdd order).
 * Arithmetic (kernels/cpu/ref/qlinear_eltwise.h, TFLite's ADD): with s = 2 * max(a_scale,
 * b_scale),
 *   a' = mace_requant_scale((a - a_zp) << 20, M_a = a_scale / s)
 *   b' = mace_requant_scale((b - b_zp) << 20, M_b = b_scale / s)
 *   y  = mace_requant(a' + b', M_y = s / (2^20 * y_scale), y_zp, lo, hi)
 * every M split by mace_requant_params (requant.h), so each ISA gives the same bytes.
 * ONNX Runtime computes a_scale / y_scale * (a - a_zp) + b_scale / y_scale * (b - b_zp) in
 * float and rounds half to even: the two differ by at most one unit.
 */
#include "ops/qlinear_binary.h"

static mace_status qlinear_add_infer(mace_op *op) { return qlinear_binary_infer(op, "QLinearAdd"); }

static mace_status qlinear_add_run(mace_op *op) { return qlinear_binary_run(op, "QLinearAdd", 1); }

const mace_op_kind mace_op_qlinear_add = {.type = "QLinearAdd", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_INVALID,
                                          .state_size = sizeof(qlinear_binary_state),
                                          .infer = qlinear_add_infer, .run = qlinear_add_run};
