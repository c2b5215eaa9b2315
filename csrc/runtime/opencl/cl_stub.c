/* The OpenCL runtime of a build without <CL/cl.h> (cmake/opencl.cmake): every entry point of
 * runtime/opencl/cl_runtime.h says so with MACE_UNSUPPORTED, so the CPU path builds and runs. */
#include "runtime/opencl/cl_runtime.h"

#ifndef MACE_HAVE_OPENCL_HEADERS

#include <string.h>

static mace_status no_headers(void) {
  return mace_error(MACE_UNSUPPORTED, "mace was built without OpenCL headers (CL/cl.h; Debian: "
                    "opencl-headers): no GPU runtime");
}
mace_status mace_cl_list_devices(mace_cl_device_info *out, int max, int *n) {
  (void)out;
  (void)max;
  *n = 0;
  return no_headers();
}
mace_status mace_cl_runtime_create(const mace_cl_config *config, mace_cl_runtime **out) {
  (void)config;
  *out = NULL;
  return no_headers();
}
void mace_cl_runtime_destroy(mace_cl_runtime *rt) { (void)rt; }
const mace_cl_device_info *mace_cl_runtime_device(const mace_cl_runtime *rt) {
  (void)rt;
  return NULL;
}
mace_cl_precision mace_cl_runtime_precision(const mace_cl_runtime *rt) {
  (void)rt;
  return MACE_CL_FP32;
}
size_t mace_cl_runtime_elem_size(const mace_cl_runtime *rt) {
  (void)rt;
  return 4;
}
mace_status mace_cl_alloc(mace_cl_runtime *rt, size_t bytes, void **mem) {
  (void)rt;
  (void)bytes;
  *mem = NULL;
  return no_headers();
}
void mace_cl_free(mace_cl_runtime *rt, void *mem) {
  (void)rt;
  (void)mem;
}
mace_status mace_cl_write(mace_cl_runtime *rt, void *mem, size_t offset, const void *src,
                          size_t count, int as_float) {
  (void)rt, (void)mem, (void)offset, (void)src, (void)count, (void)as_float;
  return no_headers();
}
mace_status mace_cl_read(mace_cl_runtime *rt, const void *mem, size_t offset, void *dst,
                         size_t count, int as_float) {
  (void)rt, (void)mem, (void)offset, (void)dst, (void)count, (void)as_float;
  return no_headers();
}
mace_status mace_cl_finish(mace_cl_runtime *rt) {
  (void)rt;
  return no_headers();
}
mace_status mace_cl_get_kernel(mace_cl_runtime *rt, const char *program, const char *name,
                               const char *options, mace_cl_kernel **out) {
  (void)rt, (void)program, (void)name, (void)options;
  *out = NULL;
  return no_headers();
}
mace_status mace_cl_arg_mem(mace_cl_kernel *k, int index, const void *mem) {
  (void)k, (void)index, (void)mem;
  return no_headers();
}
mace_status mace_cl_arg(mace_cl_kernel *k, int index, const void *value, size_t size) {
  (void)k, (void)index, (void)value, (void)size;
  return no_headers();
}
mace_status mace_cl_arg_local(mace_cl_kernel *k, int index, size_t size) {
  (void)k, (void)index, (void)size;
  return no_headers();
}
size_t mace_cl_kernel_max_work_group(const mace_cl_kernel *k) {
  (void)k;
  return 1;
}
mace_status mace_cl_launch(mace_cl_runtime *rt, mace_cl_kernel *k, int dims, const size_t *gws,
                           const size_t *lws, const char *tag) {
  (void)rt, (void)k, (void)dims, (void)gws, (void)lws, (void)tag;
  return no_headers();
}
void mace_cl_set_profiling(mace_cl_runtime *rt, int on) { (void)rt, (void)on; }
double mace_cl_profile_ms(mace_cl_runtime *rt, const char *tag) {
  (void)rt, (void)tag;
  return 0.0;
}
void mace_cl_profile_reset(mace_cl_runtime *rt) { (void)rt; }

const void *mace_cl_runtime_context(const mace_cl_runtime *rt) {
  (void)rt;
  return NULL;
}
const void *mace_cl_runtime_cl_context(const mace_cl_runtime *rt) {
  (void)rt;
  return NULL;
}
void mace_cl_registry_get_stats(mace_cl_registry_stats *out) { memset(out, 0, sizeof(*out)); }
int mace_cl_registry_release_idle(void) { return 0; }
mace_status mace_cl_copy(mace_cl_runtime *rt, const void *src, size_t src_offset, void *dst,
                         size_t dst_offset, size_t bytes) {
  (void)rt, (void)src, (void)src_offset, (void)dst, (void)dst_offset, (void)bytes;
  return no_headers();
}
/* No runtime can be made, so no buffer exists: the accessors are never reached. */
mace_status mace_cl_buffer_create(mace_cl_runtime *rt, size_t bytes, mace_cl_buffer **out) {
  (void)rt, (void)bytes;
  *out = NULL;
  return no_headers();
}
void mace_cl_buffer_destroy(mace_cl_buffer *b) { (void)b; }
void mace_cl_buffer_device(const mace_cl_buffer *b, int *platform_index, int *device_index) {
  (void)b;
  *platform_index = *device_index = -1;
}
void mace_cl_runtime_launch_stats(const mace_cl_runtime *rt, mace_cl_launch_stats *out) {
  (void)rt;
  memset(out, 0, sizeof(*out));
}
void *mace_cl_buffer_mem(const mace_cl_buffer *b) {
  (void)b;
  return NULL;
}
const void *mace_cl_buffer_context(const mace_cl_buffer *b) {
  (void)b;
  return NULL;
}
size_t mace_cl_buffer_size(const mace_cl_buffer *b) {
  (void)b;
  return 0;
}
mace_cl_precision mace_cl_buffer_precision(const mace_cl_buffer *b) {
  (void)b;
  return MACE_CL_FP32;
}
mace_status mace_cl_buffer_read(const mace_cl_buffer *b, size_t offset, void *dst, size_t bytes) {
  (void)b, (void)offset, (void)dst, (void)bytes;
  return no_headers();
}
mace_status mace_cl_buffer_write(mace_cl_buffer *b, size_t offset, const void *src,
                                 size_t bytes) {
  (void)b, (void)offset, (void)src, (void)bytes;
  return no_headers();
}

#endif /* !MACE_HAVE_OPENCL_HEADERS */
