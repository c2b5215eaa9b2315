/* Shared by the libFuzzer harnesses: the input split of fuzz_loader and a bounded run of an engine. */
#ifndef MACE_TESTS_FUZZ_COMMON_H
#define MACE_TESTS_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mace/mace.h"

/* Inputs and outputs larger than this are not run (the harness would only measure memset). */
#define FUZZ_MAX_BYTES ((int64_t)1 << 22)

/* A fuzz_loader input: "MACF", graph size (u32 little-endian), graph bytes, weights bytes. */
#define FUZZ_MAGIC "MACF"

/* Bytes of a tensor of info's shape and dtype, or -1 when negative, overflowing or above
 * FUZZ_MAX_BYTES. */
static inline int64_t fuzz_tensor_bytes(const mace_tensor_info *info) {
  int64_t n = (int64_t)mace_dtype_size(info->dtype);
  if (n <= 0 || info->ndim < 0 || info->ndim > MACE_MAX_DIMS) return -1;
  for (int d = 0; d < info->ndim; ++d) {
    if (info->dims[d] < 0) return -1;
    if (info->dims[d] > 0 && n > FUZZ_MAX_BYTES / info->dims[d]) return -1;
    n *= info->dims[d];
  }
  return n;
}

/* Runs eng once on the given inputs (already bound by mace_engine_bind_inputs) into buffers sized
 * from output_info; every failure must be a status, which is all the harness looks at. */
static inline void fuzz_run_bound(mace_engine *eng) {
  int n = mace_engine_num_outputs(eng);
  if (n <= 0 || n > 64) return;
  mace_io outs[64];
  memset(outs, 0, sizeof(outs));
  int ok = 1;
  for (int i = 0; i < n; ++i) {
    mace_tensor_info info;
    int64_t bytes = -1;
    if (mace_engine_output_info(eng, i, &info) == MACE_OK) bytes = fuzz_tensor_bytes(&info);
    if (bytes < 0) {
      ok = 0;
      break;
    }
    outs[i].name = info.name;
    outs[i].data = calloc(1, (size_t)bytes + 1);
    outs[i].dtype = info.dtype;
    if (!outs[i].data) ok = 0;
  }
  if (ok) (void)mace_engine_run_bound(eng, outs, n);
  for (int i = 0; i < n; ++i) free(outs[i].data);
}

/* Binds zero-filled inputs of the model's own shapes and runs once (the loader harness: a model
 * that loads must also run or fail cleanly). */
static inline void fuzz_run_zeros(mace_engine *eng) {
  int n = mace_engine_num_inputs(eng);
  if (n <= 0 || n > 64) return;
  mace_io ins[64];
  memset(ins, 0, sizeof(ins));
  int ok = 1;
  for (int i = 0; i < n && ok; ++i) {
    mace_tensor_info info;
    int64_t bytes = -1;
    if (mace_engine_input_info(eng, i, &info) == MACE_OK) bytes = fuzz_tensor_bytes(&info);
    if (bytes < 0) {
      ok = 0;
      break;
    }
    ins[i].name = info.name;
    ins[i].ndim = info.ndim;
    memcpy(ins[i].dims, info.dims, sizeof(info.dims));
    ins[i].dtype = info.dtype;
    ins[i].format = info.format;
    ins[i].data = calloc(1, (size_t)bytes + 1);
    if (!ins[i].data) ok = 0;
  }
  if (ok && mace_engine_bind_inputs(eng, ins, n) == MACE_OK) fuzz_run_bound(eng);
  for (int i = 0; i < n; ++i) free(ins[i].data);
}

#endif
