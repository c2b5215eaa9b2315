/* The broadcast element-wise launch of the GPU Eltwise and Activation kinds (ops/opencl/cl_eltwise.h). */
#include "ops/opencl/cl_eltwise.h"

mace_status mace_cl_eltwise_launch(mace_op *op, int type, const mace_eltwise_shape *shape,
                                   const mace_tensor *a, const mace_tensor *b,
                                   const mace_tensor *y, const mace_activation *act) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "eltwise", "eltwise", "", &k));
  const int64_t n = mace_tensor_numel(y);
  int32_t dims[8], sa[8], sb[8];
  for (int i = 0; i < 8; ++i) {
    const int in = i < shape->ndim;
    dims[i] = in ? (int32_t)shape->dims[i] : 1;
    sa[i] = in ? (int32_t)shape->a_strides[i] : 0;
    sb[i] = in && b ? (int32_t)shape->b_strides[i] : 0;
  }
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, a));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, b ? b : a));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, b != NULL));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 5, op, y));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 7, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8, type));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 9, shape->ndim));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 10, dims, sizeof(dims)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 11, sa, sizeof(sa)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 12, sb, sizeof(sb)));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 13, act ? act->kind : 0));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 14, act ? act->alpha : 0.0f));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 15, act ? act->beta : 0.0f));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}
