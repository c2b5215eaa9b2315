/* Tensor helpers: dtype sizes and names, element counts, aligned allocation. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "core/tensor.h"

#include "kernels/cpu/nchwc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

size_t mace_dtype_size(mace_dtype dtype) {
  switch (dtype) {
    case MACE_DT_F32: case MACE_DT_I32: case MACE_DT_U32: return 4;
    case MACE_DT_F16: case MACE_DT_BF16: case MACE_DT_I16: case MACE_DT_U16: return 2;
    case MACE_DT_U8: case MACE_DT_I8: case MACE_DT_BOOL: return 1;
    case MACE_DT_F8E4M3FN: case MACE_DT_F8E4M3FNUZ: case MACE_DT_F8E5M2: case MACE_DT_F8E5M2FNUZ:
    case MACE_DT_F8E8M0: case MACE_DT_F4E2M1: case MACE_DT_I4: case MACE_DT_U4: case MACE_DT_I2:
    case MACE_DT_U2: return 1; /* one element per byte */
    case MACE_DT_I64: case MACE_DT_U64: case MACE_DT_F64: return 8;
    case MACE_DT_INVALID: break;
  }
  return 0;
}

const char *mace_dtype_name(mace_dtype dtype) {
  switch (dtype) {
    case MACE_DT_F32: return "float32";
    case MACE_DT_I32: return "int32";
    case MACE_DT_F16: return "float16";
    case MACE_DT_BF16: return "bfloat16";
    case MACE_DT_U8: return "uint8";
    case MACE_DT_I8: return "int8";
    case MACE_DT_BOOL: return "bool";
    case MACE_DT_I64: return "int64";
    case MACE_DT_I16: return "int16";
    case MACE_DT_U16: return "uint16";
    case MACE_DT_U32: return "uint32";
    case MACE_DT_U64: return "uint64";
    case MACE_DT_F64: return "float64";
    case MACE_DT_F8E4M3FN: return "float8_e4m3fn";
    case MACE_DT_F8E4M3FNUZ: return "float8_e4m3fnuz";
    case MACE_DT_F8E5M2: return "float8_e5m2";
    case MACE_DT_F8E5M2FNUZ: return "float8_e5m2fnuz";
    case MACE_DT_F8E8M0: return "float8_e8m0fnu";
    case MACE_DT_F4E2M1: return "float4_e2m1fn";
    case MACE_DT_I4: return "int4";
    case MACE_DT_U4: return "uint4";
    case MACE_DT_I2: return "int2";
    case MACE_DT_U2: return "uint2";
    case MACE_DT_INVALID: break;
  }
  return "invalid";
}

int64_t mace_tensor_numel(const mace_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->dims[i];
  return n;
}

int64_t mace_tensor_storage_numel(const mace_tensor *t) {
  if (t->layout != MACE_LAYOUT_NCHWC || t->ndim != 4 || t->block <= 0) return mace_tensor_numel(t);
  return t->dims[0] * MACE_NCHWC_PADDED(t->dims[1], t->block) * t->dims[2] * t->dims[3];
}

size_t mace_tensor_nbytes(const mace_tensor *t) {
  return (size_t)mace_tensor_storage_numel(t) * mace_dtype_size(t->dtype);
}

int64_t mace_tensor_info_numel(const mace_tensor_info *info) {
  int64_t n = 1;
  for (int i = 0; i < info->ndim; ++i) n *= info->dims[i];
  return n;
}

const char *mace_dims_str(const int64_t *dims, int ndim, char *buf, size_t size) {
  size_t used = 0;
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

int mace_dims_equal(const int64_t *a, int na, const int64_t *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* 64-byte aligned, or (huge) 2 MB aligned with transparent huge pages advised over its whole
 * 2 MB pages, from 2 MB up on Linux; the rest of a last partial one stays on 4 KB pages.
 * Rounded up to whole 2 MB pages, the last one was resident whole: more memory (BERT's 2.25
 * MB weights each on 4 MB) for no measured speed (benchmarks/HISTORY.md). */
static void *aligned_alloc_(size_t bytes, int huge_ok) {
  if (bytes == 0) bytes = MACE_ALIGN;
  size_t align = MACE_ALIGN;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t huge = (size_t)2 << 20;
  if (huge_ok && bytes >= huge) align = huge;
#endif
  if (bytes > SIZE_MAX - MACE_ALIGN) return NULL;
  const size_t rounded = (bytes + MACE_ALIGN - 1) / MACE_ALIGN * MACE_ALIGN;
  void *p = NULL;
  if (posix_memalign(&p, align, rounded) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == huge) (void)madvise(p, bytes / huge * huge, MADV_HUGEPAGE); /* failure: harmless */
#endif
  return p;
}

void *mace_aligned_alloc(size_t bytes) { return aligned_alloc_(bytes, 0); }

int64_t mace_arena_ceiling(void) {
  const char *env = getenv("MACE_MAX_ARENA_BYTES");
  if (env && *env) {
    char *end = NULL;
    long long v = strtoll(env, &end, 10);
    if (end && *end == '\0' && v >= 0) return (int64_t)v;
    /* unparsable: fall back to physical memory rather than no limit */
  }
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && pages <= INT64_MAX / page) return (int64_t)pages * page;
#endif
  return 0;
}

/* Packed filters are dense and streamed whole every run, tens of MB in a network: on 4 KB
 * pages every 4 KB of them is a TLB miss. Not for the arena or scratch: a huge page is
 * resident once any byte of it is touched, and those are not always touched whole, so
 * resident memory grew with them (benchmarks/HISTORY.md). */
void *mace_filter_alloc(size_t bytes) { return aligned_alloc_(bytes, 1); }

void mace_aligned_free(void *p) { free(p); }
