/* The OpenCL runtime behind the device interface (runtime/opencl/cl_device.h). Only the
 * runtime's public functions are called (image memory: cl_image.c's), so this builds with the
 * stub runtime too. */
#include "runtime/opencl/cl_device.h"

static mace_cl_runtime *cl_of(const mace_runtime *rt) { return (mace_cl_runtime *)rt->impl; }

/* Float tensors are stored in the runtime's precision and copied as elements; the others
 * byte for byte. */
static size_t cl_elem_size(const mace_runtime *rt, mace_dtype dtype) {
  return dtype == MACE_DT_F32 ? mace_cl_runtime_elem_size(cl_of(rt)) : mace_dtype_size(dtype);
}

static size_t cl_count(size_t numel, mace_dtype dtype) {
  return dtype == MACE_DT_F32 ? numel : numel * mace_dtype_size(dtype);
}

static mace_status cl_alloc(mace_runtime *rt, size_t bytes, void **mem) {
  return mace_cl_alloc(cl_of(rt), bytes, mem);
}

static void cl_free(mace_runtime *rt, void *mem) { mace_cl_free(cl_of(rt), mem); }

static mace_status cl_copy_in(mace_runtime *rt, void *mem, size_t offset, const void *src,
                              size_t numel, mace_dtype dtype) {
  return mace_cl_write(cl_of(rt), mem, offset, src, cl_count(numel, dtype),
                       dtype == MACE_DT_F32);
}

static mace_status cl_copy_out(mace_runtime *rt, const void *mem, size_t offset, void *dst,
                               size_t numel, mace_dtype dtype) {
  return mace_cl_read(cl_of(rt), mem, offset, dst, cl_count(numel, dtype), dtype == MACE_DT_F32);
}

static mace_status cl_copy(mace_runtime *rt, const void *src, size_t src_offset, void *dst,
                           size_t dst_offset, size_t bytes) {
  return mace_cl_copy(cl_of(rt), src, src_offset, dst, dst_offset, bytes);
}

static void cl_bind_op(mace_runtime *rt, mace_op *op) { op->cl = cl_of(rt); }

static mace_status cl_run_op(mace_runtime *rt, mace_op *op) {
  (void)rt;
  return op->kind->run(op);  /* the kind enqueues its kernels on op->cl's queue */
}

static mace_status cl_sync(mace_runtime *rt) { return mace_cl_finish(cl_of(rt)); }

static void cl_set_profiling(mace_runtime *rt, int on) { mace_cl_set_profiling(cl_of(rt), on); }

static void cl_profile_reset(mace_runtime *rt) { mace_cl_profile_reset(cl_of(rt)); }

static double cl_profile_ms(mace_runtime *rt, const char *tag) {
  return mace_cl_profile_ms(cl_of(rt), tag);
}

static int cl_image_memory(const mace_runtime *rt) { return mace_cl_runtime_image_memory(cl_of(rt)); }

static void cl_image_extent(const mace_runtime *rt, const int64_t *dims, int64_t *width,
                            int64_t *height) {
  (void)rt;
  mace_cl_image_shape(dims, width, height);
}

static mace_status cl_image_alloc(mace_runtime *rt, int64_t width, int64_t height, void **mem) {
  return mace_cl_image_alloc(cl_of(rt), (size_t)width, (size_t)height, mem);
}

static mace_status cl_image_from_buffer(mace_runtime *rt, const void *buf, size_t offset,
                                        void *image, const int64_t *dims, const char *tag) {
  return mace_cl_image_from_buffer(cl_of(rt), buf, offset, image, dims, tag);
}

static mace_status cl_image_to_buffer(mace_runtime *rt, const void *image, void *buf,
                                      size_t offset, const int64_t *dims, const char *tag) {
  return mace_cl_image_to_buffer(cl_of(rt), image, buf, offset, dims, tag);
}

static const mace_device_ops cl_ops = {.name = "opencl",
                                       .prepare_graph = NULL,
                                       .elem_size = cl_elem_size,
                                       .alloc = cl_alloc,
                                       .free = cl_free,
                                       .copy_in = cl_copy_in,
                                       .copy_out = cl_copy_out,
                                       .copy = cl_copy,
                                       .bind_op = cl_bind_op,
                                       .run_op = cl_run_op,
                                       .sync = cl_sync,
                                       .set_profiling = cl_set_profiling,
                                       .profile_reset = cl_profile_reset,
                                       .profile_ms = cl_profile_ms,
                                       .image_memory = cl_image_memory,
                                       .image_extent = cl_image_extent,
                                       .image_alloc = cl_image_alloc,
                                       .image_from_buffer = cl_image_from_buffer,
                                       .image_to_buffer = cl_image_to_buffer};

void mace_cl_device_init(mace_runtime *dev, mace_cl_runtime *cl) {
  dev->ops = &cl_ops;
  dev->device = MACE_DEVICE_GPU;
  dev->impl = cl;
}
