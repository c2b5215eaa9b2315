/* Shared helpers of the GPU image kinds: infer checks, image arguments (ops/opencl/cl_image_op.h). */
#include "ops/opencl/cl_image_op.h"

static mace_status check_4d(const mace_op *op, const mace_tensor *t, const char *what, int k,
                            int64_t max_w, int64_t max_h) {
  if (t->ndim != 4 || t->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s %d is %s of rank %d, image kernels "
                      "take 4-D f32", op->name, op->type, what, k, mace_dtype_name(t->dtype),
                      t->ndim);
  int64_t w, h;
  mace_cl_image_shape(t->dims, &w, &h);
  if (w > max_w || h > max_h)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %s %d needs a %lld x %lld image, over "
                      "the device's %lld x %lld", op->name, op->type, what, k, (long long)w,
                      (long long)h, (long long)max_w, (long long)max_h);
  return MACE_OK;
}

mace_status mace_cl_image_check(mace_op *op, unsigned images) {
  int64_t max_w, max_h;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  MACE_RETURN_IF_ERROR(mace_cl_image_limits(rt, &max_w, &max_h));
  for (int k = 0; k < op->n_inputs; ++k) {
    const mace_tensor *t = op->inputs[k];
    if (!t) continue;
    const int image = k < 32 && (images >> k) & 1u;
    if (image && (t->role == MACE_TENSOR_CONST || t->is_value))
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): input %d is a constant, image kernels "
                        "read it from an image", op->name, op->type, k);
    if (!image && t->role != MACE_TENSOR_CONST)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): input %d is computed at run time, image "
                        "kernels read it as a constant buffer", op->name, op->type, k);
    if (image) MACE_RETURN_IF_ERROR(check_4d(op, t, "input", k, max_w, max_h));
  }
  for (int k = 0; k < op->n_outputs; ++k)
    MACE_RETURN_IF_ERROR(check_4d(op, op->outputs[k], "output", k, max_w, max_h));
  return MACE_OK;
}

mace_status mace_cl_arg_image(mace_cl_kernel *k, int index, const mace_op *op,
                              const mace_tensor *t) {
  if (!t || t->storage != MACE_STORAGE_CL_IMAGE2D || !t->cl_mem)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): tensor '%s' is not in an image",
                      op->name, op->type, t && t->name ? t->name : "?");
  return mace_cl_arg_mem(k, index, t->cl_mem);
}

void mace_cl_image_gws(const mace_tensor *t, size_t gws[3]) {
  gws[0] = (size_t)t->dims[3];
  gws[1] = (size_t)((t->dims[1] + 3) / 4);
  gws[2] = (size_t)(t->dims[0] * t->dims[2]);
}
