/* A model argument as ops read it (core/proto_arg.h). */
#include "core/proto_arg.h"

#include <stdlib.h>
#include <string.h>

mace_status mace_arg_from_proto(const Mace__Argument *pa, mace_arg *arg) {
  arg->name = pa->name ? pa->name : "";
  arg->has_i = pa->has_i;
  arg->i = pa->i;
  arg->has_f = pa->has_f;
  arg->f = pa->f;
  if (pa->has_s) {
    char *s = malloc(pa->s.len + 1);
    if (!s) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    if (pa->s.len) memcpy(s, pa->s.data, pa->s.len);
    s[pa->s.len] = 0;
    arg->s = s;
    arg->s_size = pa->s.len;
    arg->has_s = 1;
  }
  arg->n_ints = (int)pa->n_ints;
  arg->ints = pa->ints;
  arg->n_floats = (int)pa->n_floats;
  arg->floats = pa->floats;
  return MACE_OK;
}
