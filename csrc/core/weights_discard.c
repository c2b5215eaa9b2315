/* Gives back the pages of the weights blob that only packed copies are read from
 * (mace_net_discard_packed_weights, core/net.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/net_internal.h"

typedef struct span {
  uintptr_t lo, hi; /* [lo, hi) */
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* madvise(DONTNEED) on the whole pages inside [lo, hi); the bytes given back. */
static int64_t drop_pages(uintptr_t lo, uintptr_t hi, uintptr_t page) {
  lo = (lo + page - 1) / page * page;
  hi = hi / page * page;
  if (hi <= lo) return 0;
#if defined(__linux__) && defined(MADV_DONTNEED)
  if (madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0) return (int64_t)(hi - lo);
#endif
  return 0;
}

int64_t mace_net_discard_packed_weights(mace_net *net) {
  /* On the CPU alone: a GPU placement copies constants to the device when it plans again. */
  if (!net || !net->weights || !net->weights_size || net->gpu) return 0;
  const uintptr_t base = (uintptr_t)net->weights, end = base + net->weights_size;
  const long page_size = sysconf(_SC_PAGESIZE);
  const uintptr_t page = page_size > 0 ? (uintptr_t)page_size : 4096;
  const int n = net->n_tensors;
  /* Per constant in the blob: 1 when read packed (and by no op otherwise), 2 when needed. */
  char *use = calloc(n ? (size_t)n : 1, 1);
  span *keep = malloc((n ? (size_t)n : 1) * sizeof(span));
  span *drop = malloc((n ? (size_t)n : 1) * sizeof(span));
  int64_t given = 0;
  int n_keep = 0, n_drop = 0;
  if (!use || !keep || !drop) goto done; /* only memory is at stake: keep everything */
  for (int i = 0; i < net->n_ops; ++i) {
    const mace_op *op = &net->ops[i];
    for (int k = 0; k < op->n_inputs; ++k) {
      const mace_tensor *t = op->inputs[k];
      if (!t || t < net->tensors || t >= net->tensors + n) continue;
      const int idx = (int)(t - net->tensors);
      const int packed = op->kind && op->kind->input_packed && op->kind->input_packed(op, k);
      if (!packed) use[idx] = 2;
      else if (use[idx] == 0) use[idx] = 1;
    }
  }
  /* Ops not created yet (a build in progress) read their inputs as they are, for all we know. */
  for (int i = net->n_created; i < net->n_ops; ++i) {
    const Mace__OperatorDef *od = net->def->op[i];
    for (size_t k = 0; k < od->n_input; ++k) {
      const int idx = od->input[k] ? mace_net_find_tensor(net, od->input[k]) : -1;
      if (idx >= 0 && idx < n) use[idx] = 2;
    }
  }
  for (int i = 0; i < net->n_outputs; ++i) { /* a constant given as an output is copied out */
    const mace_net_io *io = &net->outputs[i];
    const int idx = io->tensor >= 0 ? io->tensor
                    : io->name     ? mace_net_find_tensor(net, io->name)
                                   : -1;
    if (idx >= 0 && idx < n) use[idx] = 2;
  }
  for (int i = 0; i < n; ++i) {
    const mace_tensor *t = &net->tensors[i];
    const uintptr_t lo = (uintptr_t)t->data;
    if (t->role != MACE_TENSOR_CONST || !t->data || t->owns_data || lo < base || lo >= end)
      continue;
    size_t bytes = mace_tensor_nbytes(t);
    if (bytes > end - lo) bytes = end - lo;
    const span s = {lo, lo + bytes};
    if (use[i] == 1) drop[n_drop++] = s;
    else keep[n_keep++] = s; /* read by an op as it is, or read by none (kept as it was) */
  }
  if (!n_drop) goto done;
  qsort(keep, (size_t)n_keep, sizeof(span), span_cmp);
  /* Each dropped span less the kept spans that overlap it (two constants on the same bytes
   * are kept when either is needed). */
  for (int d = 0; d < n_drop; ++d) {
    uintptr_t lo = drop[d].lo;
    const uintptr_t hi = drop[d].hi;
    for (int k = 0; k < n_keep && keep[k].lo < hi; ++k) {
      if (keep[k].hi <= lo) continue;
      if (keep[k].lo > lo) given += drop_pages(lo, keep[k].lo, page);
      if (keep[k].hi > lo) lo = keep[k].hi;
    }
    if (lo < hi) given += drop_pages(lo, hi, page);
  }
done:
  free(use);
  free(keep);
  free(drop);
  return given;
}
