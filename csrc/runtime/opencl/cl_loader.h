/* The OpenCL ICD loader opened at run time (dlopen) and the table of the cl* entry points mace
 * calls. Included only by csrc/runtime/opencl/ sources, which see <CL/cl.h>; nothing links OpenCL. */
#ifndef MACE_RUNTIME_OPENCL_CL_LOADER_H_
#define MACE_RUNTIME_OPENCL_CL_LOADER_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "core/status.h"

/* X(name): every OpenCL function mace uses; the table below has one pointer per line. */
#define MACE_CL_FUNCTIONS(X)                                                                 \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)              \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue)    \
  X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)     \
  X(clFinish) X(clFlush) X(clCreateProgramWithSource) X(clCreateProgramWithBinary)           \
  X(clBuildProgram) X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseProgram)         \
  X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clEnqueueNDRangeKernel)           \
  X(clGetKernelWorkGroupInfo) X(clGetEventProfilingInfo) X(clWaitForEvents) X(clReleaseEvent)  \
  X(clRetainContext) X(clRetainCommandQueue) X(clEnqueueCopyBuffer) X(clCreateImage)

/* The loaded library: one function pointer per entry point (never NULL once loaded). */
typedef struct mace_cl_api {
#define MACE_CL_API_FIELD(fn) __typeof__(&fn) fn;
  MACE_CL_FUNCTIONS(MACE_CL_API_FIELD)
#undef MACE_CL_API_FIELD
} mace_cl_api;

/* The process-wide table for `library` (NULL: $MACE_OPENCL_LIBRARY, else libOpenCL.so.1, else
 * libOpenCL.so), opened once per distinct path and never closed (ICDs do not survive being
 * unloaded). MACE_UNSUPPORTED naming the library and dlerror() when it or a symbol is
 * missing. Thread-safe. */
mace_status mace_cl_loader_open(const char *library, const mace_cl_api **api);

/* The handles of a runtime (cl_runtime.c), for the other files of this folder (cl_buffer.c). */
struct mace_cl_runtime;
void mace_cl_runtime_handles(const struct mace_cl_runtime *rt, const mace_cl_api **api,
                             cl_context *context, cl_command_queue *queue);

/* The runtime's device (cl_image.c asks its image limits). */
cl_device_id mace_cl_runtime_device_id(const struct mace_cl_runtime *rt);

/* "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code. */
const char *mace_cl_error_name(cl_int err);

#endif /* MACE_RUNTIME_OPENCL_CL_LOADER_H_ */
