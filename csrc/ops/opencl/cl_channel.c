/* The per-channel affine launch of the GPU BatchNorm and BiasAdd kinds (ops/opencl/cl_channel.h). */
#include "ops/opencl/cl_channel.h"

mace_status mace_cl_channel_affine(mace_op *op, int mode, float eps, const mace_activation *act) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *x = op->inputs[0];
  const int64_t n = mace_tensor_numel(x), c = x->dims[1], inner = c ? n / (x->dims[0] * c) : 0;
  if (n == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "channel", "channel_affine", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, x));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  for (int i = 0; i < 4; ++i)  /* absent parameters: input 1 again, never read */
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 4 + 2 * i, op,
                                            op->inputs[1 + i < op->n_inputs ? 1 + i : 1]));
  const int64_t ints[] = {n, c, inner, mode};
  for (int i = 0; i < 4; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 12 + i, ints[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 16, eps));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 17, act ? act->kind : 0));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 18, act ? act->alpha : 0.0f));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 19, act ? act->beta : 0.0f));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}
