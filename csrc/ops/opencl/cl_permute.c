/* The gather-by-strides launch of the permuting GPU kinds (ops/opencl/cl_permute.h). */
#include "ops/opencl/cl_permute.h"

mace_status mace_cl_permute_launch(mace_op *op, int nd, const int64_t *dims,
                                   const int64_t *strides, int64_t base) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  if (nd > 8)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): %d dims on the GPU (at most 8)",
                      op->name, op->type, nd);
  int32_t d[8], s[8];
  for (int k = 0; k < 8; ++k) {
    const int src = k - (8 - nd);
    d[k] = src >= 0 ? (int32_t)dims[src] : 1;
    s[k] = src >= 0 ? (int32_t)strides[src] : 0;
  }
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n == 0) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "layout", "transpose", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  if (base) {  /* the input's offset moved to the first element read */
    const int64_t off = (int64_t)(op->inputs[0]->cl_offset / mace_cl_runtime_elem_size(rt));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 1, off + base));
  }
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, n));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 5, d, sizeof(d)));
  MACE_RETURN_IF_ERROR(mace_cl_arg(k, 6, s, sizeof(s)));
  const size_t gws[1] = {(size_t)n};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}
