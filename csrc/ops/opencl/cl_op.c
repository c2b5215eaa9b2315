/* Shared helpers of the GPU op kinds: the CPU kind's shape inference, kernel tensor arguments. */
#include "ops/opencl/cl_op.h"

#include <limits.h>
#include <stdlib.h>

static mace_op shadow_op(const mace_op *op, const mace_cl_shadow *sh) {
  mace_op s = *op;
  s.kind = sh->cpu;
  s.state = sh->state;
  s.cl = NULL;
  return s;
}

mace_status mace_cl_shadow_init(mace_op *op, mace_cl_shadow *sh) {
  sh->cpu = mace_registry_find(op->type, MACE_DEVICE_CPU, MACE_DT_F32);
  if (!sh->cpu)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): no CPU kind to infer shapes with",
                      op->name, op->type);
  sh->state = calloc(1, sh->cpu->state_size ? sh->cpu->state_size : 1);
  if (!sh->state) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s': no memory", op->name);
  if (!sh->cpu->init) return MACE_OK;
  mace_op s = shadow_op(op, sh);
  return sh->cpu->init(&s);
}

/* The CPU kind's infer sees the inputs without their host data (value inputs excepted): the
 * net keeps a constant's host copy beside its upload, and a CPU infer that finds a constant
 * filter's data packs it (or plans Winograd) for a CPU run that never comes. */
mace_status mace_cl_shadow_infer(mace_op *op, mace_cl_shadow *sh) {
  mace_op s = shadow_op(op, sh);
  const int n = op->n_inputs;
  mace_tensor *copies = malloc((size_t)(n ? n : 1) * sizeof(mace_tensor));
  mace_tensor **ptrs = malloc((size_t)(n ? n : 1) * sizeof(mace_tensor *));
  if (!copies || !ptrs) {
    free(copies);
    free(ptrs);
    return mace_error(MACE_OUT_OF_RESOURCES, "op '%s': no memory", op->name);
  }
  for (int i = 0; i < n; ++i) {
    const int value = i < 32 && ((sh->cpu->value_inputs | op->kind->value_inputs) >> i) & 1u;
    ptrs[i] = op->inputs[i];
    if (op->inputs[i] && !value) {
      copies[i] = *op->inputs[i];
      copies[i].data = NULL;
      ptrs[i] = &copies[i];
    }
  }
  s.inputs = ptrs;
  const mace_status st = sh->cpu->infer(&s);
  free(copies);
  free(ptrs);
  MACE_RETURN_IF_ERROR(st);
  op->macs = s.macs;
  op->scratch_bytes = 0;
  for (int i = 0; i < op->n_inputs; ++i)
    if (op->inputs[i] && mace_tensor_numel(op->inputs[i]) >= INT_MAX)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): input %d has %lld elements, over the "
                        "GPU kernels' int indices", op->name, op->type, i,
                        (long long)mace_tensor_numel(op->inputs[i]));
  for (int i = 0; i < op->n_outputs; ++i) {
    if (mace_tensor_numel(op->outputs[i]) >= INT_MAX)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): output %d has %lld elements, over the "
                        "GPU kernels' int indices", op->name, op->type, i,
                        (long long)mace_tensor_numel(op->outputs[i]));
    op->outputs[i]->layout = MACE_LAYOUT_NCHW;
  }
  return MACE_OK;
}

void mace_cl_shadow_release(mace_op *op, mace_cl_shadow *sh) {
  if (sh->state && sh->cpu && sh->cpu->release) {
    mace_op s = shadow_op(op, sh);
    sh->cpu->release(&s);
  }
  free(sh->state);
  sh->state = NULL;
}

size_t mace_cl_row_group(const mace_cl_kernel *k, int64_t len) {
  size_t limit = mace_cl_kernel_max_work_group(k);
  if (limit > 256) limit = 256;
  size_t g = 1;
  while (g * 2 <= limit && (int64_t)g < len) g *= 2;
  return g;
}

mace_status mace_cl_op_runtime(const mace_op *op, mace_cl_runtime **rt) {
  *rt = op->cl;
  if (!*rt)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): a GPU op run without an OpenCL runtime",
                      op->name, op->type);
  return MACE_OK;
}

mace_status mace_cl_arg_tensor(mace_cl_kernel *k, int index, const mace_op *op,
                               const mace_tensor *t) {
  if (!t || t->storage != MACE_STORAGE_CL_BUFFER || !t->cl_mem)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): tensor '%s' is not in a device buffer",
                      op->name, op->type, t && t->name ? t->name : "?");
  const size_t es = mace_cl_runtime_elem_size(op->cl);
  if (t->cl_offset % es)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): tensor '%s' starts at byte %zu of its "
                      "buffer, not a whole element", op->name, op->type,
                      t->name ? t->name : "?", t->cl_offset);
  if (t->cl_offset / es >= INT_MAX)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): tensor '%s' lies past element 2^31 of "
                      "its buffer", op->name, op->type, t->name ? t->name : "?");
  const int32_t off = (int32_t)(t->cl_offset / es);
  MACE_RETURN_IF_ERROR(mace_cl_arg_mem(k, index, t->cl_mem));
  return mace_cl_arg(k, index + 1, &off, sizeof(off));
}

mace_status mace_cl_arg_int(mace_cl_kernel *k, int index, int64_t v) {
  const int32_t i = (int32_t)v;
  return mace_cl_arg(k, index, &i, sizeof(i));
}

mace_status mace_cl_arg_float(mace_cl_kernel *k, int index, float v) {
  return mace_cl_arg(k, index, &v, sizeof(v));
}
