/* A small .npy reader/writer for the command-line tools and tests (not part of libmace).
 *
 * Supports format versions 1.0, 2.0 and 3.0 headers, C order only, little-endian dtypes
 * '<f4' '<f8' '<i8' '<i4' '|b1' '|u1' (and '|i1'), 0 to MACE_NPY_MAX_DIMS dims. Anything else is refused
 * with a message saying what was found, never a crash:
 *
 *   mace_npy_array a;
 *   char err[256];
 *   if (mace_npy_read("x.npy", &a, err, sizeof(err)) != 0) { fprintf(stderr, "%s\n", err); ... }
 *   ... a.type, a.ndim, a.dims, a.numel, a.data ...
 *   mace_npy_free(&a);
 *
 * Ownership: mace_npy_read allocates a.data (malloc); mace_npy_free releases it. Writers borrow `data`.
 */
#ifndef MACE_TOOLS_NPY_H_
#define MACE_TOOLS_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include "mace/mace.h"

#define MACE_NPY_MAX_DIMS MACE_MAX_DIMS

typedef enum mace_npy_type {
  MACE_NPY_F32 = 0,   /* '<f4' */
  MACE_NPY_F64 = 1,   /* '<f8' */
  MACE_NPY_I64 = 2,   /* '<i8' */
  MACE_NPY_I32 = 3,   /* '<i4' */
  MACE_NPY_BOOL = 4,  /* '|b1' */
  MACE_NPY_U8 = 5,    /* '|u1' */
  MACE_NPY_I8 = 6     /* '|i1' */
} mace_npy_type;

typedef struct mace_npy_array {
  mace_npy_type type;
  int ndim;                          /* 0 for a scalar */
  int64_t dims[MACE_NPY_MAX_DIMS];
  int64_t numel;                     /* product of dims (1 for a scalar) */
  size_t itemsize;
  void *data;                        /* owned: malloc'd, numel * itemsize bytes (at least 1 byte) */
} mace_npy_array;

/* All return 0 on success; on failure -1 with a message in err (always NUL-terminated). */
int mace_npy_read(const char *path, mace_npy_array *out, char *err, size_t err_size);
int mace_npy_parse(const void *bytes, size_t size, mace_npy_array *out, char *err, size_t err_size);
int mace_npy_write(const char *path, mace_npy_type type, const int64_t *dims, int ndim,
                   const void *data, char *err, size_t err_size);
void mace_npy_free(mace_npy_array *a);

size_t mace_npy_type_size(mace_npy_type type);
const char *mace_npy_type_descr(mace_npy_type type);   /* "<f4", ... */

/* Mapping to and from the engine's dtypes. mace_npy_type_of fails (-1) for dtypes .npy files here
 * cannot hold (f16, bf16); mace_npy_dtype_of returns MACE_DT_INVALID for f64 (no engine dtype). */
int mace_npy_type_of(mace_dtype dtype, mace_npy_type *out);
mace_dtype mace_npy_dtype_of(mace_npy_type type);

/* Converts n elements between .npy types and engine dtypes (F32, I32, I64, U8, I8, BOOL) through
 * double, as numpy's astype(casting='unsafe') does for in-range values. Returns -1 for an
 * unsupported engine dtype. */
int mace_npy_convert_to(const mace_npy_array *a, mace_dtype dtype, void *dst);

#endif /* MACE_TOOLS_NPY_H_ */
