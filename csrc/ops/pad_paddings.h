/* Pad's paddings as its CPU kind reads them (ops/pad.c), shared with the GPU kind (ops/opencl/pad.c). */
#ifndef MACE_OPS_PAD_PADDINGS_H_
#define MACE_OPS_PAD_PADDINGS_H_

#include "core/op.h"

/* paddings[0..2 * ndim): before_0, after_0, before_1, ... from the argument `paddings`, or
 * from input 1 (ONNX order) with input 3's axes; an error naming what does not fit. */
mace_status mace_pad_read_paddings(const mace_op *op, int ndim, int64_t *paddings);

#endif /* MACE_OPS_PAD_PADDINGS_H_ */
