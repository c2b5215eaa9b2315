/* Copy: the bytes of a reshape that cannot alias its input (into an output, out of an input). */
#include "mace_micro_ops.h"

mace_micro_status mace_micro_op_copy(const void *params, const void *x0, const void *x1,
                                     void *y) {
  const mace_micro_copy *p = (const mace_micro_copy *)params;
  const unsigned char *s = (const unsigned char *)x0;
  unsigned char *d = (unsigned char *)y;
  int32_t i;
  (void)x1;
  if (p->bytes < 0) return MACE_MICRO_INVALID_MODEL;
  for (i = 0; i < p->bytes; ++i) d[i] = s[i];
  return MACE_MICRO_OK;
}
