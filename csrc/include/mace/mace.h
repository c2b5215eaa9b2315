/* mace public C API: load a converted model (graph .pb + weights .data), run it, read outputs.
 *
 * Worked example (error handling shortened; every call returns mace_status):
 *
 *   #include <mace/mace.h>
 *
 *   mace_config cfg;
 *   mace_config_init(&cfg);              // CPU, all cores, a big core per thread
 *   cfg.num_threads = 2;
 *   mace_engine *eng = NULL;
 *   if (mace_engine_create_from_files("m.pb", "m.data", &cfg, &eng) != MACE_OK) {
 *     fprintf(stderr, "mace: %s\n", mace_last_error());
 *     return 1;
 *   }
 *   mace_tensor_info in;                 // name, dims, dtype, data format of input 0
 *   mace_engine_input_info(eng, 0, &in);
 *   float *x = calloc(mace_tensor_info_numel(&in), sizeof(float));
 *   mace_tensor_info out;
 *   mace_engine_output_info(eng, 0, &out);
 *   float *y = calloc(mace_tensor_info_numel(&out), sizeof(float));
 *
 *   mace_io input = {in.name, x, in.ndim, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
 *   memcpy(input.dims, in.dims, sizeof(in.dims));
 *   mace_io output = {out.name, y, 0, {0}, MACE_DT_F32, MACE_DF_NCHW, 0, NULL};
 *   if (mace_engine_run(eng, &input, 1, &output, 1) != MACE_OK) { ... mace_last_error() ... }
 *   // output.dims / output.ndim now hold the output's shape
 *   mace_engine_destroy(eng);
 *
 * Intermediate tensors (what quantization calibrates on) come from the same engine: keep
 * them before a run, read them after it.
 *
 *   mace_engine_keep_tensors(eng, NULL, MACE_KEEP_ALL);   // or an array of names
 *   mace_engine_run(eng, &input, 1, &output, 1);
 *   for (int i = 0; i < mace_engine_num_kept_tensors(eng); ++i) {
 *     mace_tensor_info t;                // name, dims, dtype (the model's layout: NCHW)
 *     mace_engine_kept_tensor_info(eng, i, &t);
 *     size_t bytes = mace_tensor_info_numel(&t) * mace_dtype_size(t.dtype);
 *     void *buf = malloc(bytes);
 *     mace_engine_read_kept_tensor(eng, i, buf, bytes);
 *   }
 *   mace_engine_keep_tensors(eng, NULL, 0);               // back to full memory reuse
 *
 * Ownership: the engine owns everything it allocates; mace_engine_destroy frees it.
 * Buffers passed to mace_engine_create_from_buffers are copied unless the config says
 * `borrow_weights`, in which case the weights buffer must outlive the engine.
 * The library never aborts the process: failures return a status and set a message that
 * mace_last_error() returns (per thread, valid until the next failing call in that thread).
 */
#ifndef MACE_MACE_H_
#define MACE_MACE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MACE_MAX_DIMS 8

typedef enum mace_status {
  MACE_OK = 0,
  MACE_INVALID_ARGS = 1,      /* a caller passed something unusable (NULL, bad index, ...) */
  MACE_OUT_OF_RESOURCES = 2,  /* memory, file or thread could not be had */
  MACE_UNSUPPORTED = 3,       /* valid request the engine cannot do (yet) */
  MACE_INVALID_MODEL = 4,     /* corrupt or inconsistent graph/weights */
  MACE_INVALID_INPUT = 5,     /* input name/shape/dtype does not fit the model */
  MACE_RUNTIME_ERROR = 6      /* anything else that failed while running */
} mace_status;

/* Values match proto/mace.proto DataType. */
typedef enum mace_dtype {
  MACE_DT_INVALID = 0,
  MACE_DT_F32 = 1,
  MACE_DT_U8 = 2,
  MACE_DT_F16 = 3,
  MACE_DT_I32 = 4,
  MACE_DT_BF16 = 6,
  MACE_DT_I8 = 8,
  MACE_DT_I64 = 9,
  MACE_DT_BOOL = 10,
  MACE_DT_I16 = 11,
  MACE_DT_U16 = 12,
  MACE_DT_U32 = 13,
  MACE_DT_U64 = 14,
  MACE_DT_F64 = 15,
  /* Narrow formats of ONNX (float8 per OCP/Graphcore, float4 e2m1, 4- and 2-bit integers),
   * one element per byte as NumPy's ml_dtypes holds them: only Cast computes on them. */
  MACE_DT_F8E4M3FN = 16,
  MACE_DT_F8E4M3FNUZ = 17,
  MACE_DT_F8E5M2 = 18,
  MACE_DT_F8E5M2FNUZ = 19,
  MACE_DT_F8E8M0 = 20,
  MACE_DT_F4E2M1 = 21,
  MACE_DT_I4 = 22,
  MACE_DT_U4 = 23,
  MACE_DT_I2 = 24,
  MACE_DT_U2 = 25
} mace_dtype;

/* Data format of a model input/output (seed 003, chapter 17). */
typedef enum mace_data_format {
  MACE_DF_NONE = 0,
  MACE_DF_NHWC = 1,
  MACE_DF_NCHW = 2
} mace_data_format;

typedef enum mace_device { MACE_DEVICE_CPU = 0, MACE_DEVICE_GPU = 2 } mace_device;

typedef enum mace_affinity {
  MACE_AFFINITY_NONE = 0,
  MACE_AFFINITY_BIG_ONLY = 1,
  MACE_AFFINITY_LITTLE_ONLY = 2
} mace_affinity;

/* Precision of float tensors on the GPU (seed 003's data_type fp16_fp32 / fp32_fp32).
 * MACE_GPU_FP16 (the default, as MACE's fp16_fp32): half precision where the device has
 * cl_khr_fp16, fp32 where it lacks it (there half could only be stored, not computed, and
 * the conversions cost time for nothing). MACE_GPU_FP16_STORAGE: tensors stored in half on
 * every device (vload_half / vstore_half, core OpenCL), computed in float: half the memory
 * and bandwidth on a device without cl_khr_fp16, and how that path is tested there.
 * mace_engine_gpu_precision says what an engine uses (MACE_GPU_FP32 or MACE_GPU_FP16).
 * Every kernel computes in float today: fp16 means half storage with float arithmetic. */
typedef enum mace_gpu_precision {
  MACE_GPU_FP32 = 0,
  MACE_GPU_FP16 = 1,
  MACE_GPU_FP16_STORAGE = 2
} mace_gpu_precision;

/* Memory of the activations on the GPU (seed 003's cl_mem_type). MACE_GPU_BUFFER (default):
 * OpenCL buffers, row-major. MACE_GPU_IMAGE: the ops that have image kernels (Conv2D, Pooling,
 * Activation, BatchNorm, BiasAdd, Eltwise, Concat) keep their 4-D activations in image2d
 * objects (RGBA pixels of 4 channels, width W * ceil(C / 4), height N * H); every other op
 * reads buffers, with explicit transform steps (BufferToImage / ImageToBuffer, in the profile)
 * between the two. A device without image support fails engine creation (MACE_UNSUPPORTED). */
typedef enum mace_gpu_memory {
  MACE_GPU_BUFFER = 0,
  MACE_GPU_IMAGE = 1
} mace_gpu_memory;

typedef struct mace_config {
  /* MACE_DEVICE_CPU (default), or MACE_DEVICE_GPU: OpenCL through the ICD loader
   * (libOpenCL.so.1, opened at run time), ops without a GPU kernel on the CPU with copies
   * between the two (MACE's cpu+gpu). With no OpenCL library, platform or device, engine
   * creation fails with MACE_UNSUPPORTED saying which. */
  mace_device device;
  int num_threads;          /* <= 0: one per online core */
  mace_affinity affinity;   /* default BIG_ONLY: with workers, a core per thread among the
                             * fastest (the caller's only during a run); NONE leaves it to
                             * the OS */
  int borrow_weights;       /* create_from_buffers: use the weights buffer in place */
  int skip_checksum;        /* default 0: a model that records checksums of its graph and
                             * weights (NetDef.weights_crc32, graph_crc32) is verified at
                             * load, a mismatch failing with MACE_INVALID_MODEL; 1 skips it */
  /* Device MACE_DEVICE_GPU only (ignored on the CPU): */
  int gpu_platform;         /* OpenCL platform index; default -1: the first with a GPU device,
                             * else the first */
  int gpu_device;           /* device index in that platform; default -1: its first GPU, else
                             * its first device */
  mace_gpu_precision gpu_precision;  /* default MACE_GPU_FP16 (as MACE's fp16_fp32): half
                                      * where the device has cl_khr_fp16, else fp32; see
                                      * mace_gpu_precision */
  const char *opencl_binary_file;    /* NULL (default): programs built from source each time;
                                      * else compiled programs are cached in this file */
  const char *opencl_parameter_file; /* NULL (default): default work-group sizes; else the
                                      * local work sizes a tuning run wrote */
  int opencl_queue_window_size;      /* > 0: wait for the GPU every that many kernels (keeps a
                                      * UI responsive); 0 (default): never */
  int limit_opencl_kernel_time;      /* 1: a kernel launch of more work items than
                                      * MACE_OPENCL_CHUNK_ITEMS (default 16384) runs as chunks
                                      * along its outermost dimension, flushed one by one, so
                                      * the GPU can serve the display between them; the same
                                      * results bit for bit. 0 (default): one launch each */
  /* Encrypted models (`mace encrypt`, docs/encryption.md): the AES-256 key, borrowed for the
   * create call only and never logged; NULL when the model is not encrypted. A wrong key is
   * MACE_INVALID_MODEL; a build without OpenSSL's libcrypto gives MACE_UNSUPPORTED. */
  const unsigned char *decrypt_key;
  size_t decrypt_key_size;  /* 32 */
  /* The most bytes a run arena (and each tensor an op computes at infer time from input
   * values) may take; a larger plan fails that run with MACE_OUT_OF_RESOURCES naming both
   * sizes instead of being allocated. 0 (default): the environment variable
   * MACE_MAX_ARENA_BYTES when set (0 there: no limit), else the machine's physical memory;
   * > 0: that many bytes; < 0: no limit. */
  int64_t max_arena_bytes;
  /* Device MACE_DEVICE_GPU: NULL (default), a context and queue of its own; else a GPU engine
   * whose OpenCL device, context and in-order queue this engine shares (gpu_platform and
   * gpu_device are then ignored), so that the GPU buffers of one are inputs and outputs of
   * the other with no copy through the host (see mace_gpu_buffer). Borrowed for the create
   * call only: the shared context lives as long as any engine or buffer using it. */
  const struct mace_engine *share_gpu_with;
  /* create_from_buffers with borrow_weights: 1 lets the engine give back (madvise
   * MADV_DONTNEED) the pages of weights its ops read only through packed copies, which then
   * read as zeros: for a buffer nothing else reads (mace.Session's own converted blob).
   * Weights the engine owns (read from a file, or copied) are always spent so. Default 0. */
  int discard_packed_weights;
  /* Device MACE_DEVICE_GPU: MACE_GPU_BUFFER (default) or MACE_GPU_IMAGE; see mace_gpu_memory. */
  mace_gpu_memory gpu_memory;
} mace_config;

typedef struct mace_tensor_info {
  const char *name;         /* borrowed from the engine; valid while it lives */
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_dtype dtype;
  mace_data_format format;
} mace_tensor_info;

/* A buffer in a GPU engine's OpenCL context (a cl_mem), for tensors that stay on the device
 * between runs and between engines that share a context (mace_config.share_gpu_with).
 * Float (f32) tensors are stored in the precision of the engine that made the buffer
 * (mace_gpu_buffer_precision: fp16 as IEEE half, or fp32), other dtypes as on the host.
 * Owned by the caller (mace_gpu_buffer_destroy), valid after its engine is destroyed. */
typedef struct mace_gpu_buffer mace_gpu_buffer;

/* One named input or output for mace_engine_run. For inputs, dims/ndim/dtype/format
 * describe `data`; for outputs, `data` must hold the output's bytes (see output_info) and
 * dims/ndim are filled on return. `format` NHWC on a 4-D NCHW model tensor is transposed.
 * `data_bytes` (0: not given) is the size of an output's buffer: a run whose output needs
 * more fails with MACE_INVALID_ARGS before anything is written. Set it whenever input shapes
 * change between runs; without it the buffer must fit the output of the shapes bound. */
typedef struct mace_io {
  const char *name;
  void *data;               /* borrowed: caller's memory */
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  mace_dtype dtype;
  mace_data_format format;
  size_t data_bytes;        /* outputs: capacity of `data` in bytes, 0 if not given */
  /* NULL (default): `data` is host memory. Else (GPU engines; `data` unused) the tensor is in
   * this buffer from byte 0, in the engine's precision: an input is read there by the GPU
   * ops with no upload (no "<name>:to_gpu" transfer in the profile); an output is copied
   * there on the device (an output computed on the CPU is uploaded). The buffer must be of
   * the engine's context and precision and hold mace_engine_gpu_tensor_bytes; NHWC `format`
   * and inputs whose values set shapes are MACE_UNSUPPORTED; mismatches MACE_INVALID_INPUT. */
  mace_gpu_buffer *gpu_buffer;
} mace_io;

typedef struct mace_engine mace_engine;

/* Per-op statistics of the last run when profiling is on (mace_engine_set_profiling). Ops on the
 * GPU report their kernels' device time from OpenCL profiling events. */
typedef struct mace_op_stat {
  const char *name;         /* borrowed from the engine */
  const char *type;
  double ms;                /* wall time of the op in the last run */
  int64_t macs;             /* multiply-accumulates the op performs */
  int ndim;
  int64_t out_dims[MACE_MAX_DIMS];
  mace_device device;       /* where it ran; copies between devices (type "Transfer", named
                             * "<tensor>:to_gpu" / ":to_host") count as GPU */
  int reinferred;           /* its shapes were inferred again during the last run: it follows
                             * an op sized by values whose output changed dims */
} mace_op_stat;

typedef struct mace_memory_stat {
  int64_t arena_bytes;          /* peak bytes of intermediates with the planned arena */
  int64_t naive_bytes;          /* sum of all intermediates' bytes, no reuse */
  int64_t weights_bytes;
  int64_t device_arena_bytes;   /* GPU engines: bytes of the planned device arena; else 0 */
} mace_memory_stat;

/* One OpenCL device (mace_gpu_list_devices). */
typedef struct mace_gpu_info {
  int platform_index, device_index;  /* what mace_config.gpu_platform / gpu_device take */
  char platform[128];
  char name[128];
  char vendor[128];
  char version[64];         /* CL_DEVICE_VERSION */
  char driver[64];          /* CL_DRIVER_VERSION */
  int is_gpu;               /* CL_DEVICE_TYPE_GPU (PoCL's CPU device is not) */
  int has_fp16;             /* cl_khr_fp16: MACE_GPU_FP16 runs in half, else in fp32 */
  int compute_units;
  int64_t global_mem_bytes;
  int64_t max_alloc_bytes;
  int64_t max_work_group_size;
  char extensions[1024];    /* CL_DEVICE_EXTENSIONS, space separated (may be truncated) */
} mace_gpu_info;

/* Every OpenCL device of every platform: *n is how many (at most max written to out). With no
 * OpenCL library or platform: MACE_UNSUPPORTED saying which, *n 0. */
mace_status mace_gpu_list_devices(mace_gpu_info *out, int max, int *n);
/* When its last GPU engine is destroyed, a device's OpenCL context stays in the process with
 * the programs built in it, so the next engine on that device skips the driver's context
 * creation and program loads. This releases those idle contexts (engines still alive keep
 * theirs); returns how many were released. */
int mace_gpu_release_idle(void);

const char *mace_version(void);
/* The kernel level this process uses: "ref", "avx2", "avx512" or "neon" (the best the CPU and
 * the build support, lowered by MACE_CPU_ISA; chosen once). */
const char *mace_cpu_get_isa(void);
const char *mace_last_error(void);
const char *mace_status_name(mace_status status);

void mace_config_init(mace_config *config);
int64_t mace_tensor_info_numel(const mace_tensor_info *info);
size_t mace_dtype_size(mace_dtype dtype);

mace_status mace_engine_create_from_buffers(const void *graph, size_t graph_size,
                                            const void *weights, size_t weights_size,
                                            const mace_config *config, mace_engine **out);
/* The weights file is read into memory the engine owns (a file replaced or truncated later
 * does not affect it); both files are verified against the checksums the graph records. */
mace_status mace_engine_create_from_files(const char *graph_path, const char *weights_path,
                                          const mace_config *config, mace_engine **out);
void mace_engine_destroy(mace_engine *engine);

int mace_engine_num_inputs(const mace_engine *engine);
int mace_engine_num_outputs(const mace_engine *engine);
mace_status mace_engine_input_info(const mace_engine *engine, int index, mace_tensor_info *info);
/* An output's dims for the inputs given: where an op sized by values (NonZero,
 * NonMaxSuppression, ...) precedes it, an upper bound, and the run reports the real dims in
 * mace_io.dims (a buffer of the bound's bytes always holds them). */
mace_status mace_engine_output_info(const mace_engine *engine, int index, mace_tensor_info *info);

mace_status mace_engine_run(mace_engine *engine, const mace_io *inputs, int num_inputs,
                            mace_io *outputs, int num_outputs);

/* mace_engine_run in two steps, for a caller that allocates its output buffers once it knows
 * their shapes: mace_engine_bind_inputs matches `inputs` to the model's inputs by name, checks
 * them and re-infers the net for new shapes (as mace_engine_resize does); then
 * mace_engine_output_info tells the output shapes; then mace_engine_run_bound runs on the bound
 * inputs, whose buffers must stay valid until it returns. Each run_bound needs its own bind. */
mace_status mace_engine_bind_inputs(mace_engine *engine, const mace_io *inputs, int num_inputs);
mace_status mace_engine_run_bound(mace_engine *engine, mace_io *outputs, int num_outputs);

/* Dynamic shapes: prepares the engine for the inputs' shapes (same names, dtypes and ranks as
 * the model's; batch, height, width may change) without running, so that output_info tells
 * the output sizes to allocate. mace_engine_run does the same by itself; shapes seen before
 * reuse their plan. A shape the model cannot take is MACE_INVALID_INPUT naming the input, the
 * expected and the given shape, and the engine keeps its previous shapes. */
mace_status mace_engine_resize(mace_engine *engine, const mace_io *inputs, int num_inputs);

/* Frees the intermediate arena; the next run plans and allocates it again. */
mace_status mace_engine_release_intermediate_buffers(mace_engine *engine);

mace_status mace_engine_set_profiling(mace_engine *engine, int on);
/* Ops in execution order, with a GPU also the copies between devices (op_stat says which). */
int mace_engine_num_ops(const mace_engine *engine);
mace_status mace_engine_op_stat(const mace_engine *engine, int index, mace_op_stat *stat);
mace_status mace_engine_memory_stat(const mace_engine *engine, mace_memory_stat *stat);

/* Intermediate tensors. mace_engine_keep_tensors keeps the named tensors (or, with names NULL
 * and num_names MACE_KEEP_ALL, every tensor a run computes; num_names 0: none) for reading after
 * each run: the planner does not reuse their memory, so the arena grows (memory_stat says by
 * how much) while they are kept; runs are otherwise unchanged. A name is a tensor of the
 * converted model (an ONNX node's output keeps its name); a name the model lacks, or a
 * constant's, is MACE_INVALID_ARGS naming it, and the previous set stays. The kept set replaces
 * the previous one and lasts until the next call.
 * Kept tensors are listed in the order asked (MACE_KEEP_ALL: execution order) by
 * mace_engine_kept_tensor_info (name, dims, dtype; shapes of the latest inputs; the name is
 * valid until the next mace_engine_keep_tensors). After a run,
 * mace_engine_read_kept_tensor copies one into `data` (`size` bytes, at least numel * dtype
 * size) in the model's layout: tensors that run blocked (NCHWc) come back as NCHW. Reading when
 * no run has completed since the last keep, bind, resize or release is MACE_INVALID_ARGS. */
/* GPU buffers (see mace_gpu_buffer). Chaining two engines on the GPU:
 *
 *   cfg.device = MACE_DEVICE_GPU;
 *   mace_engine_create_from_files("a.pb", "a.data", &cfg, &a);
 *   cfg.share_gpu_with = a;                                // same context and queue
 *   mace_engine_create_from_files("b.pb", "b.data", &cfg, &b);
 *   mace_engine_bind_inputs(a, &x, 1);
 *   mace_engine_output_info(a, 0, &info);
 *   mace_gpu_buffer_create(a, mace_engine_gpu_tensor_bytes(a, &info), &mid);
 *   mace_io y = {info.name, NULL, 0, {0}, info.dtype, MACE_DF_NONE, 0, mid};
 *   mace_engine_run_bound(a, &y, 1);                       // y stays on the GPU
 *   mace_io z = {"b_input", NULL, y.ndim, {0}, y.dtype, MACE_DF_NONE, 0, mid};
 *   memcpy(z.dims, y.dims, sizeof(z.dims));
 *   mace_engine_run(b, &z, 1, &out, 1);                    // b reads mid in place
 *   mace_gpu_buffer_destroy(mid);
 */
mace_status mace_gpu_buffer_create(mace_engine *engine, size_t bytes, mace_gpu_buffer **out);
void mace_gpu_buffer_destroy(mace_gpu_buffer *buffer);
size_t mace_gpu_buffer_size(const mace_gpu_buffer *buffer);
mace_gpu_precision mace_gpu_buffer_precision(const mace_gpu_buffer *buffer);
/* The cl_mem, for the caller's own OpenCL code (retain it to keep it past destroy). */
void *mace_gpu_buffer_cl_mem(const mace_gpu_buffer *buffer);
/* Blocking copies of raw bytes (float tensors in the buffer's precision) to/from the host. */
mace_status mace_gpu_buffer_read(const mace_gpu_buffer *buffer, size_t offset, void *dst,
                                 size_t bytes);
mace_status mace_gpu_buffer_write(mace_gpu_buffer *buffer, size_t offset, const void *src,
                                  size_t bytes);
/* Bytes a tensor of `info`'s dtype and dims takes in a GPU buffer of this engine (f32 in its
 * precision); 0 for a CPU engine. */
size_t mace_engine_gpu_tensor_bytes(const mace_engine *engine, const mace_tensor_info *info);
/* The precision a GPU engine stores float tensors in: MACE_GPU_FP16 or MACE_GPU_FP32 (what
 * MACE_GPU_FP16 resolved to on its device); -1 for a CPU engine. */
int mace_engine_gpu_precision(const mace_engine *engine);
/* Whether `buffer` is in this engine's OpenCL context (usable as its input or output). */
int mace_engine_shares_gpu_buffer(const mace_engine *engine, const mace_gpu_buffer *buffer);

/* Kernel launches of a GPU engine since it was created: launches, those split into chunks
 * (limit_opencl_kernel_time) and the chunks they made. All 0 for a CPU engine. */
typedef struct mace_gpu_launch_stat {
  int64_t launches, chunked_launches, chunks;
} mace_gpu_launch_stat;
mace_status mace_engine_gpu_launch_stat(const mace_engine *engine, mace_gpu_launch_stat *stat);

/* The index of the buffer's device in mace_gpu_list_devices' list (-1 if it is not listed). */
int mace_gpu_buffer_device(const mace_gpu_buffer *buffer);

/* DLPack export of a tensor in a GPU buffer (DLPack's kDLOpenCL convention: dl_tensor.data is
 * the cl_mem, byte_offset 0). `versioned` 1 makes a DLManagedTensorVersioned (DLPack 1.0,
 * capsule name "dltensor_versioned"), 0 a DLManagedTensor ("dltensor"); returned through *out
 * as void * (mace.h does not include dlpack.h; api/dlpack.h has the layouts). The tensor is
 * `dims` (row-major strides, given) of `dtype`, f32 described as the buffer stores it (float16
 * in an fp16 buffer); device (4, the index of its device in mace_gpu_list_devices' list).
 * Calling its deleter frees what the export allocated and calls release(release_ctx) once;
 * the buffer must stay alive until then (release is where its owner lets it go). */
mace_status mace_gpu_buffer_export_dlpack(const mace_gpu_buffer *buffer, int ndim,
                                          const int64_t *dims, mace_dtype dtype, int versioned,
                                          void (*release)(void *ctx), void *release_ctx,
                                          void **out);

#define MACE_KEEP_ALL (-1)
mace_status mace_engine_keep_tensors(mace_engine *engine, const char *const *names,
                                     int num_names);
int mace_engine_num_kept_tensors(const mace_engine *engine);
mace_status mace_engine_kept_tensor_info(const mace_engine *engine, int index,
                                         mace_tensor_info *info);
mace_status mace_engine_read_kept_tensor(const mace_engine *engine, int index, void *data,
                                         size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MACE_MACE_H_ */
