/* The OpenCL runtime behind the device interface (runtime/device.h): one mace_cl_runtime's
 * buffers, copies (float tensors converted to its precision), kernel launches of the GPU op
 * kinds, its queue and its profiling events, and image2d memory with its buffer <-> image
 * transforms when the engine asked it. No graph rewrite: GPU kinds read plain tensors. */
#ifndef MACE_RUNTIME_OPENCL_CL_DEVICE_H_
#define MACE_RUNTIME_OPENCL_CL_DEVICE_H_

#include "runtime/device.h"
#include "runtime/opencl/cl_runtime.h"

/* Makes *dev the device of `cl` (borrowed: it must outlive *dev, which holds nothing to free). */
void mace_cl_device_init(mace_runtime *dev, mace_cl_runtime *cl);

#endif /* MACE_RUNTIME_OPENCL_CL_DEVICE_H_ */
