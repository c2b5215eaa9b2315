/* The device interface: what the net asks of a device's runtime, as a table of functions.
 *
 * A mace_runtime is one device's runtime as the net sees it: a table (mace_device_ops) and the
 * implementation's state. Two exist: the CPU's (runtime/cpu/cpu_device.h, a process-wide
 * constant, the default of a net made without one) and OpenCL's (runtime/opencl/cl_device.h,
 * over one mace_cl_runtime). The net calls a device only through this table: it rewrites the
 * graph for the device at build (prepare_graph), keeps the device's tensors in memory it
 * allocates (alloc/free), moves tensors between the host and the device (copy_in/copy_out,
 * copy), runs the ops of the device's kinds (bind_op, run_op), waits for them (sync) and reads
 * their device time (profile_*); on OpenCL with image memory it also keeps tensors in images
 * and transforms them between buffers and images (image_*).
 *
 * Memory is opaque (`void *mem`): host memory on the CPU, a cl_mem on OpenCL. A float tensor
 * may be stored narrower than on the host (OpenCL fp16): elem_size says how many bytes one of
 * its elements takes there, and copy_in/copy_out convert.
 *
 * The CPU path pays nothing for the table: a net without a GPU runs its ops' kinds directly,
 * as before; the table is read once per build (prepare_graph) and, with a GPU, once per op
 * the placement runs (core/placement.h). */
#ifndef MACE_RUNTIME_DEVICE_H_
#define MACE_RUNTIME_DEVICE_H_

#include <stddef.h>
#include <stdint.h>

#include "core/op.h"
#include "core/status.h"
#include "core/tensor.h"
#include "mace.pb-c.h"

typedef struct mace_runtime mace_runtime;

typedef struct mace_device_ops {
  const char *name;  /* "cpu", "opencl": in messages */
  /* At net build, before any op exists: rewrites the graph for this device (the CPU: the
   * blocked-layout pass, runtime/cpu/layout.h). *n_inserted: ops it added (0: def unchanged).
   * NULL: the device takes the graph as it is. */
  mace_status (*prepare_graph)(mace_runtime *rt, Mace__NetDef *def, int *n_inserted);
  /* Bytes one element of `dtype` takes in this device's memory. */
  size_t (*elem_size)(const mace_runtime *rt, mace_dtype dtype);
  /* Device memory of `bytes` bytes; freed with free. */
  mace_status (*alloc)(mace_runtime *rt, size_t bytes, void **mem);
  void (*free)(mace_runtime *rt, void *mem);
  /* Blocking copies of `numel` elements of `dtype` between host memory (plain, dtype's host
   * size an element) and `mem` from byte `offset` on, in the device's storage of dtype. */
  mace_status (*copy_in)(mace_runtime *rt, void *mem, size_t offset, const void *src,
                         size_t numel, mace_dtype dtype);
  mace_status (*copy_out)(mace_runtime *rt, const void *mem, size_t offset, void *dst,
                          size_t numel, mace_dtype dtype);
  /* A copy of `bytes` bytes between two of this device's buffers, in order with the ops
   * (it may return before it is done: sync waits). */
  mace_status (*copy)(mace_runtime *rt, const void *src, size_t src_offset, void *dst,
                      size_t dst_offset, size_t bytes);
  /* Gives an op of one of this device's kinds what its kernels need (OpenCL: op->cl). Called
   * before the kind's init and infer. NULL: nothing to give. */
  void (*bind_op)(mace_runtime *rt, mace_op *op);
  /* Runs (OpenCL: enqueues) an op bound to this device. */
  mace_status (*run_op)(mace_runtime *rt, mace_op *op);
  /* Waits until everything run or copied on the device is done. */
  mace_status (*sync)(mace_runtime *rt);
  /* Device time of ops: set_profiling turns it on or off; profile_ms gives the milliseconds of
   * the ops run since profile_reset under the name `tag` (waiting for them); the CPU keeps none
   * (0: the net times the host instead). */
  void (*set_profiling)(mace_runtime *rt, int on);
  void (*profile_reset)(mace_runtime *rt);
  double (*profile_ms)(mace_runtime *rt, const char *tag);
  /* Image memory (OpenCL image2d in seed 003's layout, runtime/opencl/cl_runtime.h): all NULL on
   * a device without it (the CPU). image_memory: whether the engine asked it (then the ops of an
   * image kind keep their activations in images, core/placement.h). image_extent: the size in
   * pixels (width x height) of the image that holds a 4-D [N, C, H, W] float tensor. image_alloc:
   * an image of width x height pixels (a larger one holds any smaller tensor), freed with free.
   * image_from_buffer / image_to_buffer: enqueue the layout transform of the [N, C, H, W] float
   * tensor at byte `offset` of buffer `buf` into image `image`, or back, in order with the ops
   * (profile_ms reads it under `tag`, which may be NULL). */
  int (*image_memory)(const mace_runtime *rt);
  void (*image_extent)(const mace_runtime *rt, const int64_t *dims, int64_t *width,
                       int64_t *height);
  mace_status (*image_alloc)(mace_runtime *rt, int64_t width, int64_t height, void **mem);
  mace_status (*image_from_buffer)(mace_runtime *rt, const void *buf, size_t offset, void *image,
                                   const int64_t *dims, const char *tag);
  mace_status (*image_to_buffer)(mace_runtime *rt, const void *image, void *buf, size_t offset,
                                 const int64_t *dims, const char *tag);
} mace_device_ops;

/* One device's runtime. Owned by whoever made it (the engine; the CPU's is a constant). */
struct mace_runtime {
  const mace_device_ops *ops;
  mace_device device;  /* whose op kinds it runs: MACE_DEVICE_CPU or MACE_DEVICE_GPU (mace.h) */
  void *impl;          /* the implementation's state (OpenCL: its mace_cl_runtime), borrowed */
};

#endif /* MACE_RUNTIME_DEVICE_H_ */
