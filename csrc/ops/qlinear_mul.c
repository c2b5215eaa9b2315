/* QLinearMul: broadcasting product of two int8/uint8 tensors, fixed-point requantized. */
/*
 * Inputs, output and arguments: ops/qlinear_binary.h (ONNX com.microsoft QLinearMul order).
 * Arithmetic (kernels/cpu/ref/qlinear_eltwise.h):
 *   acc = (a - a_zp) * (b - b_zp)                      exact int32
 *   y   = mace_requant(acc, M = a_scale * b_scale / y_scale, y_zp, lo, hi)
 * ONNX Runtime computes the product in float and rounds half to even: at most one unit apart.
 */
#include "ops/qlinear_binary.h"

static mace_status qlinear_mul_infer(mace_op *op) { return qlinear_binary_infer(op, "QLinearMul"); }

static mace_status qlinear_mul_run(mace_op *op) { return qlinear_binary_run(op, "QLinearMul", 0); }

const mace_op_kind mace_op_qlinear_mul = {.type = "QLinearMul", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_INVALID,
                                          .state_size = sizeof(qlinear_binary_state),
                                          .infer = qlinear_mul_infer, .run = qlinear_mul_run};
