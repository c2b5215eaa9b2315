/* The op registry: every kind listed in csrc/ops/manifest.inc, looked up by type/device/dtype. */
#include <string.h>

#include "core/op.h"

/* An op-selected build (cmake/op_selection.cmake) compiles a cut copy of the manifest: the generated
 * header defines MACE_OPS_MANIFEST and MACE_OPS_SELECTION then, and nothing otherwise. */
#include "mace_ops_selection.h"
#ifndef MACE_OPS_MANIFEST
#define MACE_OPS_MANIFEST "ops/manifest.inc"
#endif

#define MACE_OP(sym) extern const mace_op_kind sym;
#include MACE_OPS_MANIFEST
#undef MACE_OP

static const mace_op_kind *const g_kinds[] = {
#define MACE_OP(sym) &sym,
#include MACE_OPS_MANIFEST
#undef MACE_OP
    NULL};

int mace_registry_count(void) { return (int)(sizeof(g_kinds) / sizeof(g_kinds[0])) - 1; }

const mace_op_kind *mace_registry_at(int i) {
  return i >= 0 && i < mace_registry_count() ? g_kinds[i] : NULL;
}

const mace_op_kind *mace_registry_find(const char *type, mace_device device, mace_dtype dtype) {
  const mace_op_kind *any = NULL;
  for (int i = 0; g_kinds[i]; ++i) {
    const mace_op_kind *k = g_kinds[i];
    if (k->device != device || k->cl_image || strcmp(k->type, type) != 0) continue;
    if (k->dtype == dtype) return k;
    if (k->dtype == MACE_DT_INVALID && !any) any = k;
  }
  return any;
}

const mace_op_kind *mace_registry_find_image(const char *type, mace_dtype dtype) {
  for (int i = 0; g_kinds[i]; ++i) {
    const mace_op_kind *k = g_kinds[i];
    if (k->cl_image && k->dtype == dtype && strcmp(k->type, type) == 0) return k;
  }
  return NULL;
}

unsigned mace_registry_value_inputs(const char *type) {
  unsigned mask = 0;
  for (int i = 0; g_kinds[i]; ++i)
    if (strcmp(g_kinds[i]->type, type) == 0) mask |= g_kinds[i]->value_inputs;
  return mask;
}

mace_status mace_registry_arg_value_inputs(const mace_op *probe, unsigned *mask) {
  *mask = 0;
  for (int i = 0; g_kinds[i]; ++i) {
    if (!g_kinds[i]->arg_value_inputs || strcmp(g_kinds[i]->type, probe->type) != 0) continue;
    unsigned m = 0;
    MACE_RETURN_IF_ERROR(g_kinds[i]->arg_value_inputs(probe, &m));
    *mask |= m;
  }
  return MACE_OK;
}

int mace_registry_has_arg_value_inputs(const char *type) {
  for (int i = 0; g_kinds[i]; ++i)
    if (g_kinds[i]->arg_value_inputs && strcmp(g_kinds[i]->type, type) == 0) return 1;
  return 0;
}

int mace_registry_sized_at_run(const char *type) {
  for (int i = 0; g_kinds[i]; ++i)
    if (g_kinds[i]->sized_at_run == 1 && strcmp(g_kinds[i]->type, type) == 0) return 1;
  return 0;
}

unsigned mace_registry_run_value_inputs(const char *type) {
  unsigned mask = 0;
  for (int i = 0; g_kinds[i]; ++i)
    if (strcmp(g_kinds[i]->type, type) == 0) mask |= g_kinds[i]->run_value_inputs;
  return mask;
}

unsigned mace_registry_dims_only_inputs(const char *type) {
  unsigned mask = ~0u;
  int found = 0;
  for (int i = 0; g_kinds[i]; ++i)
    if (strcmp(g_kinds[i]->type, type) == 0) {
      mask &= g_kinds[i]->dims_only_inputs;
      found = 1;
    }
  return found ? mask : 0u;
}

int mace_registry_has_type(const char *type) {
  for (int i = 0; g_kinds[i]; ++i)
    if (strcmp(g_kinds[i]->type, type) == 0) return 1;
  return 0;
}

const char *mace_registry_selection(void) {
#ifdef MACE_OPS_SELECTION
  return MACE_OPS_SELECTION;
#else
  return NULL;
#endif
}
