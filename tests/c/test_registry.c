/* Unit test of the op registry (csrc/ops/manifest.inc): complete entries, no duplicates, lookups. */
#include <stdio.h>
#include <string.h>

#include "core/op.h"
#include "test_util.h"

/* The manifest's line count, at compile time. */
static const int kManifestLines = 0
#define MACE_OP(sym) +1
#include "ops/manifest.inc"
#undef MACE_OP
    ;

static const mace_dtype kDtypes[] = {MACE_DT_INVALID, MACE_DT_F32, MACE_DT_U8, MACE_DT_F16, MACE_DT_I32,
                                     MACE_DT_BF16, MACE_DT_I8, MACE_DT_I64, MACE_DT_BOOL,
                                     MACE_DT_I16, MACE_DT_U16, MACE_DT_U32, MACE_DT_U64, MACE_DT_F64};

int main(void) {
  int n = mace_registry_count();
  CHECK(n == kManifestLines, "registry has %d kinds, the manifest %d lines", n, kManifestLines);
  CHECK(n > 0, "empty registry");
  CHECK(mace_registry_at(-1) == NULL && mace_registry_at(n) == NULL, "out-of-range index gives a kind");
  for (int i = 0; i < n; ++i) {
    const mace_op_kind *k = mace_registry_at(i);
    CHECK(k != NULL, "entry %d is NULL", i);
    if (!k) continue;
    const char *type = k->type ? k->type : "(null)";
    printf("%3d  %-20s device %d dtype %d state %zu bytes\n", i, type, (int)k->device, (int)k->dtype,
           k->state_size);
    CHECK(k->type && *k->type, "entry %d has no type", i);
    CHECK(k->infer != NULL, "%s (entry %d) has no infer", type, i);
    CHECK(k->run != NULL, "%s (entry %d) has no run", type, i);
    CHECK(k->device == MACE_DEVICE_CPU || k->device == MACE_DEVICE_GPU, "%s: device %d", type, (int)k->device);
    int known_dtype = 0;
    for (size_t d = 0; d < sizeof(kDtypes) / sizeof(kDtypes[0]); ++d) known_dtype |= k->dtype == kDtypes[d];
    CHECK(known_dtype, "%s: dtype %d", type, (int)k->dtype);
    CHECK(k->state_size < (1u << 20), "%s: state of %zu bytes", type, k->state_size);
    CHECK(k->release == NULL || k->state_size > 0 || k->init != NULL, "%s: release without state or init", type);
    for (int j = i + 1; j < n; ++j) {
      const mace_op_kind *o = mace_registry_at(j);
      if (!o || !o->type || !k->type) continue;
      CHECK(!(strcmp(o->type, k->type) == 0 && o->device == k->device && o->dtype == k->dtype &&
              o->cl_image == k->cl_image),
            "duplicate (%s, device %d, dtype %d) at entries %d and %d", type, (int)k->device, (int)k->dtype, i, j);
      CHECK(o != k, "the same kind is listed twice (%s, entries %d and %d)", type, i, j);
    }
    if (!k->type) continue;
    /* Lookup by its own triple finds it (exact dtype wins over a wildcard). */
    const mace_op_kind *f = k->cl_image ? mace_registry_find_image(k->type, k->dtype)
                                        : mace_registry_find(k->type, k->device, k->dtype);
    CHECK(f == k, "find(%s, %d, %d) does not return the entry", type, (int)k->device, (int)k->dtype);
    CHECK(mace_registry_has_type(k->type), "has_type(%s) is 0", type);
    /* Any dtype: an exact match, a wildcard of the same type, or nothing. */
    for (size_t d = 0; d < sizeof(kDtypes) / sizeof(kDtypes[0]); ++d) {
      const mace_op_kind *g = mace_registry_find(k->type, k->device, kDtypes[d]);
      CHECK(g == NULL || !g->cl_image, "find(%s) returned an image kind", type);
      CHECK(g == NULL || (strcmp(g->type, k->type) == 0 && g->device == k->device &&
                          (g->dtype == kDtypes[d] || g->dtype == MACE_DT_INVALID)),
            "find(%s, dtype %d) returned (%s, dtype %d)", type, (int)kDtypes[d], g ? g->type : "", g ? (int)g->dtype : -1);
    }
  }
  CHECK(mace_registry_find("NoSuchOpType", MACE_DEVICE_CPU, MACE_DT_F32) == NULL, "unknown type found");
  CHECK(mace_registry_find("", MACE_DEVICE_CPU, MACE_DT_F32) == NULL, "empty type found");
  CHECK(!mace_registry_has_type("NoSuchOpType"), "has_type(unknown) != 0");
  if (n > 0 && mace_registry_at(0) && mace_registry_at(0)->type) {
    /* Types are case-sensitive and matched whole. */
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(mace_registry_at(0)->type) - 1), mace_registry_at(0)->type);
    const mace_op_kind *p = mace_registry_find(prefix, MACE_DEVICE_CPU, MACE_DT_F32);
    CHECK(p == NULL || strcmp(p->type, prefix) == 0, "prefix '%s' matched %s", prefix, p->type);
  }
  return TEST_FINISH("%d kinds, %ld checks", n, test_checks);
}
