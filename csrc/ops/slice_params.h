/* Slice's resolved window, worked out by the CPU kind's infer (ops/slice.c, its state) and read
 * by the GPU kind (ops/opencl/slice.c) from a shadow of the CPU kind. */
#ifndef MACE_OPS_SLICE_PARAMS_H_
#define MACE_OPS_SLICE_PARAMS_H_

#include <stdint.h>

#include "mace/mace.h"

typedef struct mace_slice_params {
  int64_t starts[MACE_MAX_DIMS], steps[MACE_MAX_DIMS];  /* per input dim, clamped */
  int64_t out_dims[MACE_MAX_DIMS];
  int64_t rows, row_len;
} mace_slice_params;

#endif /* MACE_OPS_SLICE_PARAMS_H_ */
