/* The per-channel affine launch of the image BatchNorm and BiasAdd kinds (cl_image_affine.h). */
#include "ops/opencl/cl_image_affine.h"

mace_status mace_cl_image_affine(mace_op *op, int mode, float eps, const mace_activation *act) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *y = op->outputs[0];
  if (!mace_tensor_numel(y)) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_ops", "affine_image", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 1, op, y));
  for (int i = 0; i < 4; ++i)  /* absent parameters: input 1 again, never read */
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2 + 2 * i, op,
                                            op->inputs[1 + i < op->n_inputs ? 1 + i : 1]));
  const int64_t ints[] = {y->dims[1], y->dims[2], y->dims[3], y->dims[0], mode};
  for (int i = 0; i < 5; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 10 + i, ints[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 15, eps));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 16, act ? act->kind : 0));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 17, act ? act->alpha : 0.0f));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 18, act ? act->beta : 0.0f));
  size_t gws[3];
  mace_cl_image_gws(y, gws);
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}
