/* The resize parameters the CPU Resize kinds work out at infer (ops/resize.c, their state), read
 * by the GPU kinds (ops/opencl/resize.c) from a shadow of the CPU kind after its infer. */
#ifndef MACE_OPS_RESIZE_PARAMS_H_
#define MACE_OPS_RESIZE_PARAMS_H_

#include "core/op.h"
#include "kernels/cpu/ref/resize.h"

typedef struct mace_resize_params {
  mace_resize_coord coord;
  mace_resize_nearest rounding;
  float scales[MACE_MAX_DIMS];  /* per dim: what drives the coordinate transform */
  float cubic_a;
  int exclude_outside;
} mace_resize_params;

#endif /* MACE_OPS_RESIZE_PARAMS_H_ */
