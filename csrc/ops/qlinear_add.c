/* QLinearAdd: broadcasting addition of two int8/uint8 tensors, fixed-point requantized. */
/*
 * Inputs, output and arguments: ops/qlinear_binary.h (ONNX com.microsoft QLinearAdd order).
 * Arithmetic (kernels/cpu/ref/qlinear_eltwise.h; docs/int8.md, "QLinearAdd's arithmetic"), one
 * of two forms chosen from the scales:
 *   narrow (M_a = a_scale / y_scale and M_b = b_scale / y_scale below 64): m_a = M_a * 2^s,
 *     m_b = M_b * 2^s as integers of at most 15 bits, s in [9, 20] (mace_qadd16_params),
 *     y = clamp((m_a * a + m_b * b + 2^(s-1) - m_a * a_zp - m_b * b_zp + y_zp * 2^s) >> s)
 *   wide (TFLite's ADD): with s = 2 * max(a_scale, b_scale),
 *     a' = mace_requant_scale((a - a_zp) << 20, M_a = a_scale / s)
 *     b' = mace_requant_scale((b - b_zp) << 20, M_b = b_scale / s)
 *     y  = mace_requant(a' + b', M_y = s / (2^20 * y_scale), y_zp, lo, hi)
 * every M split by mace_requant_params (requant.h), so each ISA gives the same bytes.
 * ONNX Runtime computes a_scale / y_scale * (a - a_zp) + b_scale / y_scale * (b - b_zp) in
 * float and rounds half to even: either form differs from it by at most one unit.
 */
#include "ops/qlinear_binary.h"

static mace_status qlinear_add_infer(mace_op *op) { return qlinear_binary_infer(op, "QLinearAdd"); }

static mace_status qlinear_add_run(mace_op *op) { return qlinear_binary_run(op, "QLinearAdd", 1); }

const mace_op_kind mace_op_qlinear_add = {.type = "QLinearAdd", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_INVALID,
                                          .state_size = sizeof(qlinear_binary_state),
                                          .infer = qlinear_add_infer, .run = qlinear_add_run};
