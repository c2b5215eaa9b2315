/* Activation fused into the output write of Conv2D/Deconv2D/FullyConnected/MatMul/Eltwise,
 * parsed from the op's arguments (MACE's names):
 *   activation              "NOOP" (default) | "RELU" | "RELUX" | "LEAKYRELU" | "SIGMOID" |
 *                           "TANH" | "HARDSIGMOID" | "HARDSWISH" | "ELU" | "SWISH" | "GELU" |
 *                           "GELU_TANH" | "MISH" (GELU: x * (1 + erf(x / sqrt(2))) / 2;
 *                           GELU_TANH: x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2;
 *                           MISH: x * tanh(log(1 + exp(x))))
 *   max_limit               RELUX upper bound (relu6: 6)
 *   activation_coefficient  LEAKYRELU slope, ELU alpha, SWISH alpha (x * sigmoid(alpha x), default 1)
 *   hardsigmoid_alpha/beta  HARDSIGMOID (ONNX defaults 0.2, 0.5); HARDSWISH uses 1/6, 0.5
 */
#ifndef MACE_OPS_FUSED_ACTIVATION_H_
#define MACE_OPS_FUSED_ACTIVATION_H_

#include "core/op.h"
#include "kernels/cpu/ref/activation.h"

mace_status mace_fused_activation_parse(const mace_op *op, mace_activation *act);

#endif /* MACE_OPS_FUSED_ACTIVATION_H_ */
