/* Device buffers that outlive the runtime that made them (mace_cl_buffer, the public
 * mace_gpu_buffer): a cl_mem with its context and queue retained. */
#include "runtime/opencl/cl_runtime.h"

#ifdef MACE_HAVE_OPENCL_HEADERS

#include <stdlib.h>

#include "runtime/opencl/cl_loader.h"

/* Owned: the cl_mem and a reference on the context and queue, all released by destroy. */
struct mace_cl_buffer {
  const mace_cl_api *api;  /* process-wide, never unloaded */
  cl_context context;
  cl_command_queue queue;
  cl_mem mem;
  size_t bytes;
  mace_cl_precision precision;
  int platform_index, device_index;  /* its runtime's device (mace_cl_device_info) */
};

static mace_status buffer_fail(cl_int err, const char *what) {
  return mace_error(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                            err == CL_OUT_OF_HOST_MEMORY
                        ? MACE_OUT_OF_RESOURCES
                        : MACE_RUNTIME_ERROR,
                    "OpenCL: %s failed: %s", what, mace_cl_error_name(err));
}

mace_status mace_cl_buffer_create(mace_cl_runtime *rt, size_t bytes, mace_cl_buffer **out) {
  *out = NULL;
  mace_cl_buffer *b = calloc(1, sizeof(*b));
  if (!b) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_cl_runtime_handles(rt, &b->api, &b->context, &b->queue);
  b->bytes = bytes;
  b->precision = mace_cl_runtime_precision(rt);
  b->platform_index = mace_cl_runtime_device(rt)->platform_index;
  b->device_index = mace_cl_runtime_device(rt)->device_index;
  void *mem = NULL;
  mace_status st = mace_cl_alloc(rt, bytes, &mem);
  if (st != MACE_OK) {
    free(b);
    return st;
  }
  b->mem = mem;
  b->api->clRetainContext(b->context);
  b->api->clRetainCommandQueue(b->queue);
  *out = b;
  return MACE_OK;
}

void mace_cl_buffer_destroy(mace_cl_buffer *b) {
  if (!b) return;
  b->api->clReleaseMemObject(b->mem);
  b->api->clReleaseCommandQueue(b->queue);
  b->api->clReleaseContext(b->context);
  free(b);
}

void *mace_cl_buffer_mem(const mace_cl_buffer *b) { return b->mem; }
/* The queue, as mace_cl_runtime_context: runtimes on one device share a context but only
 * those sharing the queue may take the buffer (their work on it runs in order). */
const void *mace_cl_buffer_context(const mace_cl_buffer *b) { return b->queue; }
size_t mace_cl_buffer_size(const mace_cl_buffer *b) { return b->bytes; }
mace_cl_precision mace_cl_buffer_precision(const mace_cl_buffer *b) { return b->precision; }
void mace_cl_buffer_device(const mace_cl_buffer *b, int *platform_index, int *device_index) {
  *platform_index = b->platform_index;
  *device_index = b->device_index;
}

static mace_status check_range(const mace_cl_buffer *b, size_t offset, size_t bytes) {
  if (offset > b->bytes || bytes > b->bytes - offset)
    return mace_error(MACE_INVALID_ARGS, "GPU buffer: bytes [%zu, %zu) are outside its %zu bytes",
                      offset, offset + bytes, b->bytes);
  return MACE_OK;
}

mace_status mace_cl_buffer_read(const mace_cl_buffer *b, size_t offset, void *dst,
                                size_t bytes) {
  MACE_RETURN_IF_ERROR(check_range(b, offset, bytes));
  if (!bytes) return MACE_OK;
  cl_int err = b->api->clEnqueueReadBuffer(b->queue, b->mem, CL_TRUE, offset, bytes, dst, 0,
                                           NULL, NULL);
  return err == CL_SUCCESS ? MACE_OK : buffer_fail(err, "clEnqueueReadBuffer");
}

mace_status mace_cl_buffer_write(mace_cl_buffer *b, size_t offset, const void *src,
                                 size_t bytes) {
  MACE_RETURN_IF_ERROR(check_range(b, offset, bytes));
  if (!bytes) return MACE_OK;
  cl_int err = b->api->clEnqueueWriteBuffer(b->queue, b->mem, CL_TRUE, offset, bytes, src, 0,
                                            NULL, NULL);
  return err == CL_SUCCESS ? MACE_OK : buffer_fail(err, "clEnqueueWriteBuffer");
}

#endif /* MACE_HAVE_OPENCL_HEADERS */
