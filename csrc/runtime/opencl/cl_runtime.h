/* The OpenCL runtime: the ICD loader opened at run time, one context per device shared by the
 * engines of the process and one in-order queue per engine, programs built from kernels/opencl/ sources (binaries cached on disk), device memory
 * and kernel launches. The contract between GPU op kinds (csrc/ops/opencl/) and the net.
 *
 * Nothing here includes <CL/cl.h>: handles are opaque, so core and ops build (and the CPU path
 * runs) on machines with no OpenCL at all. libOpenCL.so.1 is dlopen'ed by
 * mace_cl_runtime_create / mace_cl_list_devices; when it or a device is missing they return
 * MACE_UNSUPPORTED with a message saying so.
 *
 * Memory: a GPU tensor (mace_tensor.storage == MACE_STORAGE_CL_BUFFER) lives in a device
 * buffer, t->cl_mem, from byte t->cl_offset on (the net plans one device arena like the host
 * one); t->data is NULL. Elements are stored as the runtime's precision says: fp32, or fp16
 * when the runtime was created with MACE_CL_FP16 (through vload_half/vstore_half, core OpenCL
 * 1.2, so on every device; has_fp16 only says whether half arithmetic exists). Every program
 * is compiled behind a preamble defining DATA_T (float | half), LOAD(p, i) (element i as a
 * float) and STORE(p, i, v), then kernels/opencl/common.cl (the fused activation), so one
 * source serves both precisions; accumulation is in float. Kernels take element offsets
 * (cl_offset / elem_size) as int arguments and check their own bounds: the runtime rounds
 * global sizes up to the work-group's.
 *
 * Not thread-safe: one runtime is used by one thread at a time (the engine's). Kernels are
 * shared by the ops that use them: set the arguments and launch without interleaving.
 * Creating and destroying runtimes is thread-safe: the context of a device and the programs
 * built in it are kept in a process-wide registry (cl_registry.c, one mutex) that every runtime
 * of that device shares; kernels and queues stay per runtime. */
#ifndef MACE_RUNTIME_OPENCL_CL_RUNTIME_H_
#define MACE_RUNTIME_OPENCL_CL_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct mace_cl_runtime mace_cl_runtime;
typedef struct mace_cl_kernel mace_cl_kernel;   /* a built cl_kernel, owned by the runtime */

/* How float tensors are stored. MACE_CL_AUTO is a request only (mace_cl_config.precision):
 * the runtime resolves it to MACE_CL_FP16 on a device with cl_khr_fp16 and to MACE_CL_FP32 on
 * one without (where half storage is conversions with no gain); mace_cl_runtime_precision
 * says which. MACE_CL_FP16 asks half storage on every device. */
typedef enum mace_cl_precision {
  MACE_CL_FP32 = 0,
  MACE_CL_FP16 = 1,
  MACE_CL_AUTO = 2
} mace_cl_precision;

typedef struct mace_cl_device_info {
  int platform_index, device_index;
  char platform[128];
  char name[128];
  char vendor[128];
  char version[64];          /* CL_DEVICE_VERSION */
  char driver[64];           /* CL_DRIVER_VERSION */
  int is_gpu;                /* CL_DEVICE_TYPE_GPU (PoCL's CPU device is not) */
  int has_fp16;              /* cl_khr_fp16 */
  int compute_units;
  int64_t global_mem_bytes;
  int64_t max_alloc_bytes;
  size_t max_work_group_size;
  char extensions[1024];     /* truncated CL_DEVICE_EXTENSIONS */
} mace_cl_device_info;

typedef struct mace_cl_config {
  int platform_index;        /* -1: the first platform with a GPU device, else the first */
  int device_index;          /* -1: the first GPU device of that platform, else the first */
  mace_cl_precision precision;  /* FP32, FP16 or AUTO (resolved at create) */
  const char *binary_cache;  /* NULL: no cache; else a file (seed 003's opencl_binary_file) */
  const char *tuning_file;   /* NULL: default work sizes; else seed 003's opencl_parameter_file */
  int profiling;             /* queue with CL_QUEUE_PROFILING_ENABLE; events timed per launch */
  const char *library;       /* NULL: $MACE_OPENCL_LIBRARY, else libOpenCL.so.1, else libOpenCL.so */
  /* NULL: a context and queue of its own. Else this runtime uses share's device, context and
   * in-order queue (retained: share may be destroyed first), so buffers of one are valid in
   * the other and their work runs in submission order (platform/device indices and library
   * are share's). Programs, precision, caches, profiling and profiles stay per runtime. */
  const struct mace_cl_runtime *share;
  /* 0: the device's context from the process-wide registry (created by the first runtime on
   * the device, released by the last), with the programs already built in it. 1: a context
   * of its own, shared with no one (share overrides it). */
  int private_context;
  /* 1: the engine keeps the activations of the ops that have image kernels in image2d
   * memory (seed 003's cl_mem_type image; see the image section below); 0: buffers only. */
  int image_memory;
  /* 0: every launch in one piece. > 0 (limit_opencl_kernel_time): a launch of more work items
   * is split into chunks of at most this many along its outermost dimension (cl_enqueue.c). */
  size_t chunk_items;
} mace_cl_config;

/* Work items per chunk that limit_opencl_kernel_time gives (mace_cl_config.chunk_items):
 * $MACE_OPENCL_CHUNK_ITEMS when set (not a positive integer: MACE_INVALID_ARGS naming it), else
 * MACE_CL_DEFAULT_CHUNK_ITEMS, a proxy for MACE's 1 ms bound (no launch is timed). */
#define MACE_CL_DEFAULT_CHUNK_ITEMS 16384
mace_status mace_cl_chunk_items_default(size_t *out);

/* Launch counters of a runtime since it was created: kernel launches asked by ops, those split
 * into chunks, and the chunks those made (diagnostics, tests). */
typedef struct mace_cl_launch_stats {
  int64_t launches, chunked_launches, chunks;
} mace_cl_launch_stats;
void mace_cl_runtime_launch_stats(const mace_cl_runtime *rt, mace_cl_launch_stats *out);

/* Every OpenCL device on every platform (n set to how many; at most max written). */
mace_status mace_cl_list_devices(mace_cl_device_info *out, int max, int *n);

mace_status mace_cl_runtime_create(const mace_cl_config *config, mace_cl_runtime **out);
void mace_cl_runtime_destroy(mace_cl_runtime *rt);
const mace_cl_device_info *mace_cl_runtime_device(const mace_cl_runtime *rt);
/* The precision float tensors are stored in: MACE_CL_FP32 or MACE_CL_FP16 (never AUTO). */
mace_cl_precision mace_cl_runtime_precision(const mace_cl_runtime *rt);
/* Bytes of one stored element of a float tensor: 4, or 2 in fp16. */
size_t mace_cl_runtime_elem_size(const mace_cl_runtime *rt);

/* Which buffers this runtime may take from another (opaque): equal for runtimes that share a
 * queue (mace_cl_config.share) and their buffers, so work on them runs in submission order.
 * Runtimes on one device share a cl_context but not a queue, so this is not the context. */
const void *mace_cl_runtime_context(const mace_cl_runtime *rt);
/* The runtime's cl_context (opaque): equal for every runtime of a device that did not ask
 * private_context. */
const void *mace_cl_runtime_cl_context(const mace_cl_runtime *rt);

/* The registry's counters since the process started (tests, diagnostics). */
typedef struct mace_cl_registry_stats {
  int contexts_created;    /* clCreateContext calls that succeeded */
  int contexts_live;       /* contexts some runtime still holds */
  int contexts_listed;     /* the ones new runtimes get (not private, not discarded): live or idle */
  int contexts_idle;       /* listed contexts no runtime holds, kept for the next one */
  int programs_built;      /* programs created (from source or a cached binary) and kept */
  int programs_reused;     /* kernels' programs found already built in the context */
} mace_cl_registry_stats;
void mace_cl_registry_get_stats(mace_cl_registry_stats *out);
/* Releases the idle contexts (no runtime holds them) and their programs; returns how many. */
int mace_cl_registry_release_idle(void);

/* Device buffers (cl_mem, opaque). */
mace_status mace_cl_alloc(mace_cl_runtime *rt, size_t bytes, void **mem);
void mace_cl_free(mace_cl_runtime *rt, void *mem);
/* Blocking copies between host memory and a buffer, converting float <-> the stored
 * precision when `as_float` is set (float tensors), byte for byte otherwise. `count` is in
 * elements of the stored type when as_float, in bytes otherwise; offsets in bytes. */
mace_status mace_cl_write(mace_cl_runtime *rt, void *mem, size_t offset, const void *src,
                          size_t count, int as_float);
mace_status mace_cl_read(mace_cl_runtime *rt, const void *mem, size_t offset, void *dst,
                         size_t count, int as_float);
mace_status mace_cl_finish(mace_cl_runtime *rt);
/* Enqueues a device-to-device copy of `bytes` bytes (never blocks); buffers of this context. */
mace_status mace_cl_copy(mace_cl_runtime *rt, const void *src, size_t src_offset, void *dst,
                         size_t dst_offset, size_t bytes);

/* A buffer that outlives its runtime (the public mace_gpu_buffer): its cl_mem with the
 * context and queue it was made on, retained, so it can be read, written and freed after
 * the runtime (the engine) is gone. Created with the runtime's precision as a tag (float
 * tensors in it are stored so). Owned by the caller: mace_cl_buffer_destroy. */
typedef struct mace_cl_buffer mace_cl_buffer;
mace_status mace_cl_buffer_create(mace_cl_runtime *rt, size_t bytes, mace_cl_buffer **out);
void mace_cl_buffer_destroy(mace_cl_buffer *b);
void *mace_cl_buffer_mem(const mace_cl_buffer *b);           /* the cl_mem */
const void *mace_cl_buffer_context(const mace_cl_buffer *b); /* its queue: see runtime_context */
size_t mace_cl_buffer_size(const mace_cl_buffer *b);
mace_cl_precision mace_cl_buffer_precision(const mace_cl_buffer *b);
/* The device it lives on: mace_cl_device_info's platform_index and device_index. */
void mace_cl_buffer_device(const mace_cl_buffer *b, int *platform_index, int *device_index);
/* Blocking byte copies between host memory and the buffer, on the queue it was made on. */
mace_status mace_cl_buffer_read(const mace_cl_buffer *b, size_t offset, void *dst, size_t bytes);
mace_status mace_cl_buffer_write(mace_cl_buffer *b, size_t offset, const void *src,
                                 size_t bytes);

/* The kernel `name` of program `program` (kernels/opencl/<program>.cl) built with extra
 * `options` (e.g. "-DACT=1 -DKSIZE=3"); built once per (program, options) and cached. */
mace_status mace_cl_get_kernel(mace_cl_runtime *rt, const char *program, const char *name,
                               const char *options, mace_cl_kernel **out);
/* Arguments: a buffer (an opaque cl_mem), a plain value of `size` bytes (int32, float, ...),
 * or local memory of `size` bytes. */
mace_status mace_cl_arg_mem(mace_cl_kernel *k, int index, const void *mem);
mace_status mace_cl_arg(mace_cl_kernel *k, int index, const void *value, size_t size);
mace_status mace_cl_arg_local(mace_cl_kernel *k, int index, size_t size);
/* The most work items a work-group of this kernel may have on its device
 * (CL_KERNEL_WORK_GROUP_SIZE). */
size_t mace_cl_kernel_max_work_group(const mace_cl_kernel *k);
/* Enqueues the kernel over `gws` (dims 1..3); lws NULL lets the tuner's file or the driver
 * choose. `tag` names the launch in profiles (the op's name). Never blocks. */
mace_status mace_cl_launch(mace_cl_runtime *rt, mace_cl_kernel *k, int dims, const size_t *gws,
                           const size_t *lws, const char *tag);
/* Turns per-launch profiling events on or off (mace_cl_config.profiling is the initial state;
 * off, launches carry no event). */
void mace_cl_set_profiling(mace_cl_runtime *rt, int on);
/* With profiling on: device milliseconds of the launches tagged `tag` since the last
 * mace_cl_profile_reset (waits for them). */
double mace_cl_profile_ms(mace_cl_runtime *rt, const char *tag);
void mace_cl_profile_reset(mace_cl_runtime *rt);

/* ---- image2d memory (cl_image.c) ----------------------------------------------------------
 * seed 003's activation layout: a 4-D NCHW tensor [N, C, H, W] is an image2d of CL_RGBA pixels
 * (CL_FLOAT, or CL_HALF_FLOAT in fp16), width W * ceil(C / 4), height N * H: pixel
 * (cb * W + w, n * H + h) holds channels 4 cb .. 4 cb + 3 of (n, h, w), the channel tail zero.
 * Kernels read and write float4 (read_imagef / write_imagef convert half). */

/* Whether the runtime's engine asked image memory (mace_cl_config.image_memory). */
int mace_cl_runtime_image_memory(const mace_cl_runtime *rt);
/* The image2d of dims [N, C, H, W]: its width and height in pixels. */
static inline void mace_cl_image_shape(const int64_t *dims, int64_t *width, int64_t *height) {
  *width = dims[3] * ((dims[1] + 3) / 4);
  *height = dims[0] * dims[2];
}
/* The device's largest image2d, or MACE_UNSUPPORTED when it has no image support. */
mace_status mace_cl_image_limits(mace_cl_runtime *rt, int64_t *max_width, int64_t *max_height);
/* An image2d of width x height RGBA pixels in the runtime's precision (freed by mace_cl_free). */
mace_status mace_cl_image_alloc(mace_cl_runtime *rt, size_t width, size_t height, void **mem);
/* The layout transforms (kernels/opencl/image_transform.cl), enqueued: the NCHW tensor of
 * dims [N, C, H, W] at byte `offset` of buffer `buf` into image `image`, and back. `tag` names
 * the launch in profiles. */
mace_status mace_cl_image_from_buffer(mace_cl_runtime *rt, const void *buf, size_t offset,
                                      void *image, const int64_t *dims, const char *tag);
mace_status mace_cl_image_to_buffer(mace_cl_runtime *rt, const void *image, void *buf,
                                    size_t offset, const int64_t *dims, const char *tag);

#endif /* MACE_RUNTIME_OPENCL_CL_RUNTIME_H_ */
