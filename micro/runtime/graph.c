/* MACE Micro graph executor: resolves each op's tensors to pointers and runs the ops in order. */
#include "mace_micro.h"

/* The address of tensor t, or NULL when t is out of range or names a missing input/output. */
static const void *tensor_ptr(const mace_micro_model *m, uint16_t t, unsigned char *arena,
                              const void *const *inputs, void *const *outputs) {
  const mace_micro_tensor *d;
  if (t >= m->n_tensors) return NULL;
  d = &m->tensors[t];
  switch (d->mem) {
    case MACE_MICRO_MEM_ARENA:
      return d->offset < m->arena_bytes ? arena + d->offset : NULL;
    case MACE_MICRO_MEM_CONST:
      return d->data;
    case MACE_MICRO_MEM_INPUT:
      return d->index < m->n_inputs ? inputs[d->index] : NULL;
    case MACE_MICRO_MEM_OUTPUT:
      return d->index < m->n_outputs ? outputs[d->index] : NULL;
    default:
      return NULL;
  }
}

/* An op may write only the arena or an output. */
static int tensor_writable(const mace_micro_model *m, uint16_t t) {
  return t < m->n_tensors && (m->tensors[t].mem == MACE_MICRO_MEM_ARENA ||
                              m->tensors[t].mem == MACE_MICRO_MEM_OUTPUT);
}

mace_micro_status mace_micro_model_run(const mace_micro_model *model, void *arena,
                                       uint32_t arena_bytes, const void *const *inputs,
                                       void *const *outputs) {
  mace_micro_status s = MACE_MICRO_OK;
  uint16_t i;
  if (model == NULL || model->ops == NULL || model->tensors == NULL) {
    s = MACE_MICRO_INVALID_ARGUMENT;
    goto done;
  }
  if ((model->arena_bytes > 0 && arena == NULL) || arena_bytes < model->arena_bytes ||
      ((uintptr_t)arena & 7u) != 0 || (model->n_inputs > 0 && inputs == NULL) ||
      (model->n_outputs > 0 && outputs == NULL)) {
    s = MACE_MICRO_INVALID_ARGUMENT;
    goto done;
  }
  for (i = 0; i < model->n_inputs; ++i) {
    if (inputs[i] == NULL) {
      s = MACE_MICRO_INVALID_ARGUMENT;
      goto done;
    }
  }
  for (i = 0; i < model->n_outputs; ++i) {
    if (outputs[i] == NULL) {
      s = MACE_MICRO_INVALID_ARGUMENT;
      goto done;
    }
  }
  for (i = 0; i < model->n_ops && s == MACE_MICRO_OK; ++i) {
    const mace_micro_op *op = &model->ops[i];
    const void *x0, *x1 = NULL;
    void *y;
    x0 = tensor_ptr(model, op->x0, (unsigned char *)arena, inputs, outputs);
    if (op->x1 != MACE_MICRO_NO_TENSOR)
      x1 = tensor_ptr(model, op->x1, (unsigned char *)arena, inputs, outputs);
    if (op->run == NULL || x0 == NULL || (op->x1 != MACE_MICRO_NO_TENSOR && x1 == NULL) ||
        !tensor_writable(model, op->y)) {
      s = MACE_MICRO_INVALID_MODEL;
      goto done;
    }
    /* Writable tensors are arena slices or the caller's outputs: casting const away is safe. */
    y = (void *)(uintptr_t)tensor_ptr(model, op->y, (unsigned char *)arena, inputs, outputs);
    if (y == NULL) {
      s = MACE_MICRO_INVALID_MODEL;
      goto done;
    }
    s = op->run(op->params, x0, x1, y);
  }
done:
  return s;
}
