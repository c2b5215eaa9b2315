/* What the files of csrc/api share about an engine beyond mace/mace.h. */
#ifndef MACE_API_ENGINE_INTERNAL_H_
#define MACE_API_ENGINE_INTERNAL_H_

#include "mace/mace.h"
#include "runtime/opencl/cl_runtime.h"

/* The engine's OpenCL runtime (borrowed), NULL for a CPU engine. */
mace_cl_runtime *mace_engine_cl_runtime(const mace_engine *engine);

/* The buffer's runtime-level handle (borrowed from `buffer`). */
mace_cl_buffer *mace_gpu_buffer_cl(const mace_gpu_buffer *buffer);

/* MACE_OK when `buffer` can hold tensor `what` ('input'/'output' `name`) of `bytes` device
 * bytes for `engine`: a GPU engine, the same context, the engine's precision for a float
 * tensor, large enough; else MACE_INVALID_INPUT saying which. */
mace_status mace_gpu_buffer_check(const mace_engine *engine, const mace_gpu_buffer *buffer,
                                  const char *what, const char *name, int is_float,
                                  size_t bytes);

#endif /* MACE_API_ENGINE_INTERNAL_H_ */
