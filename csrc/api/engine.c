/* The public C API (mace/mace.h): engines over a net, a thread pool and the model's memory. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/engine_internal.h"
#include "api/model_crypto.h"
#include "core/checksum.h"
#include "core/net.h"
#include "core/status.h"
#include "mace/mace.h"
#include "runtime/cpu/cpu_features.h"
#include "runtime/opencl/cl_device.h"

#define MACE_VERSION_STRING "0.1.0"

/* runtime/cpu/layout.c names the blocked copy of a model tensor "<name>@nchwc"
 * (runtime/cpu/layout.h). */
#define NCHWC_SUFFIX "@nchwc"

/* A tensor kept for reading after a run (mace_engine_keep_tensors). */
typedef struct kept_tensor {
  int tensor;                /* index in the net */
  char *name;                /* owned: the name asked for, or the model's for MACE_KEEP_ALL */
} kept_tensor;

struct mace_engine {
  mace_net *net;             /* owned */
  mace_cl_runtime *cl;       /* owned, device GPU only; destroyed after the net */
  mace_runtime gpu;          /* cl behind the device interface (runtime/device.h), when cl is
                              * set: what the net and the run's copies go through */
  char *cl_files[2];         /* owned copies of the binary cache and tuning file paths */
  mace_threadpool *pool;     /* shared, reference held (mace_threadpool_release) */
  /* owned: aligned copy of the weights (the weights file's bytes, or the caller's buffer
   * when not borrowed), read by the ops for as long as the engine lives */
  uint8_t *weights_copy;
  /* The inputs of the next mace_engine_run_bound, one per model input in the model's order:
   * copies of the caller's descriptions, whose buffers stay the caller's. */
  mace_io *bound;            /* owned */
  int inputs_bound;          /* bound holds inputs for the next run */
  kept_tensor *kept;         /* owned, n_kept */
  int n_kept;
  int kept_valid;            /* the kept tensors hold the latest run's values */
};

const char *mace_version(void) { return MACE_VERSION_STRING; }

const char *mace_cpu_get_isa(void) { return mace_cpu_isa_name(mace_cpu_isa_active()); }
mace_cl_runtime *mace_engine_cl_runtime(const mace_engine *engine) { return engine->cl; }

int mace_engine_gpu_precision(const mace_engine *engine) {
  if (!engine || !engine->cl) return -1;
  return mace_cl_runtime_precision(engine->cl) == MACE_CL_FP16 ? MACE_GPU_FP16 : MACE_GPU_FP32;
}

void mace_config_init(mace_config *config) {
  memset(config, 0, sizeof(*config));
  config->device = MACE_DEVICE_CPU;
  config->num_threads = -1;
  config->affinity = MACE_AFFINITY_BIG_ONLY;
  config->gpu_platform = -1;
  config->gpu_device = -1;
  config->gpu_precision = MACE_GPU_FP16;
}

/* The OpenCL runtime of a GPU engine (MACE_UNSUPPORTED saying why when there is none). */
static mace_status create_gpu(mace_engine *eng, const mace_config *config) {
  if (config->gpu_memory != MACE_GPU_BUFFER && config->gpu_memory != MACE_GPU_IMAGE)
    return mace_error(MACE_INVALID_ARGS, "gpu_memory %d is neither MACE_GPU_BUFFER nor "
                      "MACE_GPU_IMAGE", (int)config->gpu_memory);
  if (config->gpu_precision != MACE_GPU_FP32 && config->gpu_precision != MACE_GPU_FP16 &&
      config->gpu_precision != MACE_GPU_FP16_STORAGE)
    return mace_error(MACE_INVALID_ARGS, "gpu_precision %d is none of MACE_GPU_FP32, "
                      "MACE_GPU_FP16 and MACE_GPU_FP16_STORAGE", (int)config->gpu_precision);
  /* FP16 is half where the device computes it (cl_khr_fp16), fp32 elsewhere; FP16_STORAGE is
   * half storage on every device. */
  static const mace_cl_precision kPrecision[] = {[MACE_GPU_FP32] = MACE_CL_FP32,
                                                 [MACE_GPU_FP16] = MACE_CL_AUTO,
                                                 [MACE_GPU_FP16_STORAGE] = MACE_CL_FP16};
  if (config->opencl_queue_window_size < 0)
    return mace_error(MACE_INVALID_ARGS, "opencl_queue_window_size %d is negative",
                      config->opencl_queue_window_size);
  if (config->limit_opencl_kernel_time != 0 && config->limit_opencl_kernel_time != 1)
    return mace_error(MACE_INVALID_ARGS, "limit_opencl_kernel_time %d is neither 0 nor 1",
                      config->limit_opencl_kernel_time);
  size_t chunk_items = 0;
  if (config->limit_opencl_kernel_time)
    MACE_RETURN_IF_ERROR(mace_cl_chunk_items_default(&chunk_items));
  const char *files[2] = {config->opencl_binary_file, config->opencl_parameter_file};
  for (int i = 0; i < 2; ++i)
    if (files[i] && !(eng->cl_files[i] = strdup(files[i])))
      return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_cl_config cc = {.platform_index = config->gpu_platform,
                       .device_index = config->gpu_device,
                       .precision = kPrecision[config->gpu_precision],
                       .binary_cache = eng->cl_files[0],
                       .tuning_file = eng->cl_files[1],
                       .chunk_items = chunk_items,
                       /* launch events only while mace_engine_set_profiling is on */
                       .profiling = 0,
                       .image_memory = config->gpu_memory == MACE_GPU_IMAGE};
  if (config->share_gpu_with) {
    if (!config->share_gpu_with->cl)
      return mace_error(MACE_INVALID_ARGS, "share_gpu_with is an engine on the CPU: it has no "
                        "OpenCL context to share");
    cc.share = config->share_gpu_with->cl;
  }
  mace_status st = mace_cl_runtime_create(&cc, &eng->cl);
  if (st != MACE_OK) return mace_error_wrap(st, "device GPU (OpenCL)");
  int64_t max_w, max_h;
  if (cc.image_memory && (st = mace_cl_image_limits(eng->cl, &max_w, &max_h)) != MACE_OK)
    return mace_error_wrap(st, "gpu_memory image");
  mace_cl_device_init(&eng->gpu, eng->cl);
  return MACE_OK;
}

/* graph_name names the model in checksum errors (a path, or NULL). */
static mace_status engine_build(mace_engine *eng, const void *graph, size_t graph_size,
                                const uint8_t *weights, size_t weights_size,
                                const mace_config *config, const char *graph_name) {
  mace_config dflt;
  if (!config) {
    mace_config_init(&dflt);
    config = &dflt;
  }
  if (config->device != MACE_DEVICE_CPU && config->device != MACE_DEVICE_GPU)
    return mace_error(MACE_UNSUPPORTED, "device %d is not available in this build",
                      (int)config->device);
  if (config->device == MACE_DEVICE_GPU) MACE_RETURN_IF_ERROR(create_gpu(eng, config));
  if (!config->skip_checksum)
    MACE_RETURN_IF_ERROR(
        mace_model_verify_checksums(graph, graph_size, weights, weights_size, graph_name));
  MACE_RETURN_IF_ERROR(mace_threadpool_acquire(config->num_threads, config->affinity, &eng->pool));
  /* Weights the ops read only through their packed copies are not held twice: in memory the
   * engine owns, or a buffer its caller gave it to spend. */
  const int discard = (weights && weights == eng->weights_copy) || config->discard_packed_weights;
  MACE_RETURN_IF_ERROR(mace_net_create_on(graph, graph_size, weights, weights_size, eng->pool,
                                          eng->cl ? &eng->gpu : NULL, config->max_arena_bytes,
                                          discard, &eng->net));
  if (eng->cl) mace_net_set_queue_window(eng->net, config->opencl_queue_window_size);
  int n_in = mace_net_num_inputs(eng->net);
  eng->bound = calloc(n_in ? (size_t)n_in : 1, sizeof(mace_io));
  if (!eng->bound) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  return MACE_OK;
}

/* engine_build of a model that may be encrypted (mace encrypt): the graph decrypted into a
 * buffer freed once the net is built (the net keeps its own parse), the weights into the
 * engine's aligned copy, which replaces any copy of the ciphertext. */
static mace_status engine_build_model(mace_engine *eng, const void *graph, size_t graph_size,
                                      const uint8_t *weights, size_t weights_size,
                                      const mace_config *config, const char *graph_name) {
  uint8_t *plain_graph = NULL, *plain_weights = NULL;
  size_t plain_graph_size = 0, plain_weights_size = 0;
  MACE_RETURN_IF_ERROR(mace_model_decrypt(graph, graph_size, weights, weights_size, config,
                                          &plain_graph, &plain_graph_size, &plain_weights,
                                          &plain_weights_size));
  if (plain_weights) {
    mace_aligned_free(eng->weights_copy);
    eng->weights_copy = plain_weights;
    weights = plain_weights;
    weights_size = plain_weights_size;
  }
  mace_status st = engine_build(eng, plain_graph ? plain_graph : graph,
                                plain_graph ? plain_graph_size : graph_size, weights,
                                weights_size, config, graph_name);
  free(plain_graph);
  return st;
}

mace_status mace_engine_create_from_buffers(const void *graph, size_t graph_size,
                                            const void *weights, size_t weights_size,
                                            const mace_config *config, mace_engine **out) {
  if (!out) return mace_error(MACE_INVALID_ARGS, "out is NULL");
  *out = NULL;
  if (!graph) return mace_error(MACE_INVALID_ARGS, "graph is NULL");
  if (!weights && weights_size) return mace_error(MACE_INVALID_ARGS, "weights is NULL");
  mace_engine *eng = calloc(1, sizeof(*eng));
  if (!eng) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  const uint8_t *w = weights;
  int borrow = config && config->borrow_weights && ((uintptr_t)weights % 64 == 0);
  if (weights_size && !borrow) {
    /* Like a packed filter, dense and read whole: on huge pages where it is large. */
    eng->weights_copy = mace_filter_alloc(weights_size);
    if (!eng->weights_copy) {
      mace_engine_destroy(eng);
      return mace_error(MACE_OUT_OF_RESOURCES, "out of memory copying %zu weight bytes",
                        weights_size);
    }
    memcpy(eng->weights_copy, weights, weights_size);
    w = eng->weights_copy;
  }
  mace_status st = engine_build_model(eng, graph, graph_size, w, weights_size, config, NULL);
  if (st != MACE_OK) {
    mace_engine_destroy(eng);
    return st;
  }
  *out = eng;
  return MACE_OK;
}

static mace_status read_file(const char *path, void **data, size_t *size) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return mace_error(MACE_INVALID_ARGS, "cannot open '%s': %s", path, strerror(errno));
  mace_status st = MACE_OK;
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = mace_error(MACE_INVALID_ARGS, "'%s' is not a regular file", path);
    goto done;
  }
  if (fseek(f, 0, SEEK_END) != 0) {
    st = mace_error(MACE_INVALID_ARGS, "cannot read '%s'", path);
    goto done;
  }
  long len = ftell(f);
  if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
    st = mace_error(MACE_INVALID_ARGS, "cannot read '%s'", path);
    goto done;
  }
  *data = malloc(len ? (size_t)len : 1);
  if (!*data) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory reading '%s'", path);
    goto done;
  }
  if (len && fread(*data, 1, (size_t)len, f) != (size_t)len) {
    free(*data);
    *data = NULL;
    st = mace_error(MACE_INVALID_ARGS, "short read of '%s'", path);
    goto done;
  }
  *size = (size_t)len;
done:
  fclose(f);
  return st;
}

mace_status mace_engine_create_from_files(const char *graph_path, const char *weights_path,
                                          const mace_config *config, mace_engine **out) {
  if (!out) return mace_error(MACE_INVALID_ARGS, "out is NULL");
  *out = NULL;
  if (!graph_path) return mace_error(MACE_INVALID_ARGS, "graph path is NULL");
  void *graph = NULL;
  size_t graph_size = 0;
  MACE_RETURN_IF_ERROR(read_file(graph_path, &graph, &graph_size));
  mace_engine *eng = calloc(1, sizeof(*eng));
  mace_status st = MACE_OK;
  int fd = -1;
  size_t weights_size = 0;
  if (!eng) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    goto done;
  }
  if (weights_path) {
    fd = open(weights_path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
      st = mace_error(MACE_INVALID_ARGS, "cannot open '%s': %s", weights_path, strerror(errno));
      goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
      st = mace_error(MACE_INVALID_ARGS, "weights '%s' is not a regular file", weights_path);
      goto done;
    }
    /* The weights are read into memory of the engine's own, not mapped: a mapping of the
     * file would fault its pages back from the file whenever the ops read them, so a file
     * truncated or rewritten under a live engine would kill the process (SIGBUS) or change
     * its results. A copy cannot change: replacing the file affects only later loads
     * (docs/design.md, "Model files"). */
    weights_size = (size_t)sb.st_size;
    if (weights_size) {
      eng->weights_copy = mace_filter_alloc(weights_size);
      if (!eng->weights_copy) {
        st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory reading %zu weight bytes of '%s'",
                        weights_size, weights_path);
        goto done;
      }
      size_t got = 0;
      while (got < weights_size) {
        ssize_t n = read(fd, eng->weights_copy + got, weights_size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          st = mace_error(MACE_INVALID_ARGS, "cannot read '%s': %s", weights_path,
                          n < 0 ? strerror(errno) : "the file shrank while being read");
          goto done;
        }
        got += (size_t)n;
      }
    }
  }
  st = engine_build_model(eng, graph, graph_size, eng->weights_copy, weights_size, config,
                          graph_path);
  if (st != MACE_OK) mace_error_wrap(st, "loading '%s'", graph_path);
done:
  if (fd >= 0) close(fd);
  free(graph);
  if (st != MACE_OK) {
    mace_engine_destroy(eng);
    return st;
  }
  *out = eng;
  return MACE_OK;
}

static void free_kept(kept_tensor *kept, int n) {
  for (int i = 0; kept && i < n; ++i) free(kept[i].name);
  free(kept);
}

void mace_engine_destroy(mace_engine *eng) {
  if (!eng) return;
  free_kept(eng->kept, eng->n_kept);
  free(eng->bound);
  mace_net_destroy(eng->net);
  if (eng->cl) mace_cl_runtime_destroy(eng->cl);
  free(eng->cl_files[0]);
  free(eng->cl_files[1]);
  mace_threadpool_release(eng->pool);
  mace_aligned_free(eng->weights_copy);
  free(eng);
}

int mace_engine_num_inputs(const mace_engine *eng) { return eng ? mace_net_num_inputs(eng->net) : 0; }
int mace_engine_num_outputs(const mace_engine *eng) {
  return eng ? mace_net_num_outputs(eng->net) : 0;
}

static void fill_info(const mace_tensor *t, mace_data_format format, mace_tensor_info *info) {
  memset(info, 0, sizeof(*info));
  info->name = t->name;
  info->ndim = t->ndim;
  memcpy(info->dims, t->dims, sizeof(info->dims));
  info->dtype = t->dtype;
  info->format = format;
}

mace_status mace_engine_input_info(const mace_engine *eng, int index, mace_tensor_info *info) {
  if (!eng || !info || index < 0 || index >= mace_net_num_inputs(eng->net))
    return mace_error(MACE_INVALID_ARGS, "no input %d", index);
  const mace_net_io *io = mace_net_input(eng->net, index);
  fill_info(mace_net_tensor_const(eng->net, io->tensor), io->format, info);
  return MACE_OK;
}

mace_status mace_engine_output_info(const mace_engine *eng, int index, mace_tensor_info *info) {
  if (!eng || !info || index < 0 || index >= mace_net_num_outputs(eng->net))
    return mace_error(MACE_INVALID_ARGS, "no output %d", index);
  const mace_net_io *io = mace_net_output(eng->net, index);
  if (io->resolved) {
    fill_info(mace_net_tensor_const(eng->net, io->tensor), io->format, info);
    /* an upper bound when an op sized at run precedes it (the run gives the real dims) */
    info->ndim = io->bound_ndim;
    memcpy(info->dims, io->bound_dims, sizeof(io->bound_dims));
  } else { /* the net waits for input values: only the declared name and dtype are known */
    memset(info, 0, sizeof(*info));
    info->name = io->name;
    info->dtype = io->dtype;
    info->format = io->format;
  }
  return MACE_OK;
}

/* Copies a 4-D tensor between NHWC (caller) and NCHW (model) layouts. dims are NCHW. */
static void copy_nhwc_nchw(const uint8_t *src, uint8_t *dst, const int64_t *d, size_t es,
                           int to_nchw) {
  int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  /* empty: the loops would still walk the other dims (2^31 steps for [62039, 32764, 0, 1]) */
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          size_t nchw = (size_t)(((in * c + ic) * h + ih) * w + iw) * es;
          size_t nhwc = (size_t)(((in * h + ih) * w + iw) * c + ic) * es;
          if (to_nchw)
            memcpy(dst + nchw, src + nhwc, es);
          else
            memcpy(dst + nhwc, src + nchw, es);
        }
}

static int needs_transpose(mace_data_format given, mace_data_format model, int ndim) {
  return ndim == 4 && given == MACE_DF_NHWC && model != MACE_DF_NHWC;
}

/* Re-infers the net for new input shapes; on failure restores the previous shapes and
 * reports the inputs' expected and given shapes with the reason. */
static mace_status reshape_inputs(mace_net *net, int64_t (*dims)[MACE_MAX_DIMS], int *ndims,
                                  const void *const *values) {
  int n_in = mace_net_num_inputs(net);
  int64_t old_dims[256][MACE_MAX_DIMS];
  int old_ndims[256];
  char given[512] = "";
  size_t used = 0;
  for (int i = 0; i < n_in; ++i) {
    const mace_tensor *t = mace_net_tensor_const(net, mace_net_input(net, i)->tensor);
    memcpy(old_dims[i], t->dims, sizeof(old_dims[i]));
    old_ndims[i] = t->ndim;
    if (mace_dims_equal(dims[i], ndims[i], t->dims, t->ndim) || used >= sizeof(given)) continue;
    char a[160], b[160];
    used += (size_t)snprintf(given + used, sizeof(given) - used,
                             "%sinput '%s': expected shape %s, given %s", used ? "; " : "",
                             t->name, mace_dims_str(t->dims, t->ndim, a, sizeof(a)),
                             mace_dims_str(dims[i], ndims[i], b, sizeof(b)));
  }
  mace_status st = mace_net_reshape(net, (const int64_t(*)[MACE_MAX_DIMS])dims, ndims, values);
  if (st == MACE_OK) return MACE_OK;
  char reason[1024];
  snprintf(reason, sizeof(reason), "%s", mace_last_error());
  /* Value inputs become unknown again: the next run supplies them. */
  mace_net_reshape(net, (const int64_t(*)[MACE_MAX_DIMS])old_dims, old_ndims, NULL);
  if (!used)
    return mace_error(MACE_INVALID_INPUT, "the model cannot run these input values: %s", reason);
  return mace_error(MACE_INVALID_INPUT, "%s (the model cannot run this shape: %s)", given, reason);
}

/* An input given as a GPU buffer: one the engine can read in place (engine_internal.h). */
static mace_status check_gpu_input(const mace_engine *eng, const mace_tensor *t,
                                   const mace_io *x, mace_data_format model_format,
                                   const int64_t *dims, int ndim) {
  if (needs_transpose(x->format, model_format, x->ndim))
    return mace_error(MACE_UNSUPPORTED, "input '%s': a GPU buffer is read in the model's layout, "
                      "not NHWC", t->name);
  if (t->is_value)
    return mace_error(MACE_UNSUPPORTED, "input '%s': its values set the model's shapes, so it "
                      "must be given in host memory", t->name);
  mace_tensor_info info = {t->name, ndim, {0}, t->dtype, MACE_DF_NONE};
  memcpy(info.dims, dims, sizeof(info.dims));
  return mace_gpu_buffer_check(eng, x->gpu_buffer, "input", t->name, t->dtype == MACE_DT_F32,
                               mace_engine_gpu_tensor_bytes(eng, &info));
}

/* Matches `inputs` to the model's inputs by name (in the model's order, the usual case, with
 * no search), checks dtypes and ranks, and re-infers the net when a shape or an input's
 * values that shapes depend on differ. bound (NULL: not wanted) gets the description of
 * model input i at i. */
static mace_status match_inputs(const mace_engine *eng, const mace_io *inputs, int num_inputs,
                                mace_io *bound) {
  mace_net *net = eng->net;
  int n_in = mace_net_num_inputs(net);
  if (num_inputs != n_in || (num_inputs && !inputs))
    return mace_error(MACE_INVALID_INPUT, "the model has %d inputs, %d given", n_in, num_inputs);
  int64_t dims[256][MACE_MAX_DIMS];
  int ndims[256];
  const void *values[256];
  int reshape = !mace_net_is_built(net);
  if (n_in > 256) return mace_error(MACE_UNSUPPORTED, "more than 256 inputs");
  for (int i = 0; i < n_in; ++i) {
    const mace_net_io *io = mace_net_input(net, i);
    const mace_tensor *t = mace_net_tensor_const(net, io->tensor);
    int k = inputs[i].name && strcmp(inputs[i].name, t->name) == 0 ? i : -1;
    for (int j = 0; k < 0 && j < num_inputs; ++j)
      if (inputs[j].name && strcmp(inputs[j].name, t->name) == 0) k = j;
    if (k < 0) return mace_error(MACE_INVALID_INPUT, "input '%s' is not given", t->name);
    const mace_io *x = &inputs[k];
    if (!x->data && !x->gpu_buffer && mace_tensor_numel(t) > 0)
      return mace_error(MACE_INVALID_INPUT, "input '%s' has no data", t->name);
    if (x->dtype != t->dtype)
      return mace_error(MACE_INVALID_INPUT, "input '%s': expected dtype %s, given %s", t->name,
                        mace_dtype_name(t->dtype), mace_dtype_name(x->dtype));
    if (x->ndim < 0 || x->ndim > MACE_MAX_DIMS)
      return mace_error(MACE_INVALID_INPUT, "input '%s': rank %d", t->name, x->ndim);
    ndims[i] = x->ndim;
    memcpy(dims[i], x->dims, sizeof(dims[i]));
    if (needs_transpose(x->format, io->format, x->ndim)) {
      dims[i][1] = x->dims[3];
      dims[i][2] = x->dims[1];
      dims[i][3] = x->dims[2];
    }
    for (int d = 0; d < x->ndim; ++d)
      if (dims[i][d] < 0)
        return mace_error(MACE_INVALID_INPUT, "input '%s': negative dim", t->name);
    if (x->ndim != t->ndim) {
      char a[160], b[160];
      return mace_error(MACE_INVALID_INPUT, "input '%s': expected shape %s, given %s", t->name,
                        mace_dims_str(t->dims, t->ndim, a, sizeof(a)),
                        mace_dims_str(dims[i], ndims[i], b, sizeof(b)));
    }
    if (!mace_dims_equal(dims[i], ndims[i], t->dims, t->ndim)) reshape = 1;
    if (x->gpu_buffer) MACE_RETURN_IF_ERROR(check_gpu_input(eng, t, x, io->format, dims[i], ndims[i]));
    values[i] = x->data;
    /* Values that shapes depend on: a change re-infers the net. */
    if (t->is_value && (!mace_dims_equal(dims[i], ndims[i], t->dims, t->ndim) ||
                        !mace_net_input_values_equal(net, i, x->data)))
      reshape = 1;
    if (bound) bound[i] = *x;
  }
  if (reshape) MACE_RETURN_IF_ERROR(reshape_inputs(net, dims, ndims, values));
  return MACE_OK;
}

mace_status mace_engine_resize(mace_engine *eng, const mace_io *inputs, int num_inputs) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  eng->inputs_bound = 0;
  eng->kept_valid = 0;
  return match_inputs(eng, inputs, num_inputs, NULL);
}

mace_status mace_engine_bind_inputs(mace_engine *eng, const mace_io *inputs, int num_inputs) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  eng->inputs_bound = 0;
  eng->kept_valid = 0;
  MACE_RETURN_IF_ERROR(match_inputs(eng, inputs, num_inputs, eng->bound));
  eng->inputs_bound = 1;
  return MACE_OK;
}

/* The index of the model output named `name`, or -1. */
static int find_output(const mace_net *net, const char *name) {
  int found = -1;
  for (int i = 0; i < mace_net_num_outputs(net); ++i) {
    const mace_tensor *t = mace_net_tensor_const(net, mace_net_output(net, i)->tensor);
    if (name && strcmp(name, t->name) == 0) found = i;
  }
  return found;
}

/* Whether [p, p + n) and [q, q + m) share a byte. */
static int overlaps(const void *p, size_t n, const void *q, size_t m) {
  const uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return n && m && a < b + m && b < a + n;
}

/* Points the outputs an op writes in the model's layout at the caller's buffers for the run
 * (mace_net_borrow), unless a buffer overlaps an input's: a copy after the run would be one
 * more pass over the output in memory. */
static void bind_outputs(mace_net *net, const mace_io *inputs, int num_inputs,
                         const mace_io *outputs, int num_outputs) {
  for (int k = 0; k < num_outputs; ++k) {
    const mace_io *y = &outputs[k];
    const int i = find_output(net, y->name);
    if (i < 0 || !y->data || y->gpu_buffer) continue;
    const mace_net_io *io = mace_net_output(net, i);
    const mace_tensor *t = mace_net_tensor_const(net, io->tensor);
    const size_t nbytes = mace_tensor_nbytes(t);
    int ok = t->role == MACE_TENSOR_INTERMEDIATE && t->storage == MACE_STORAGE_HOST &&
             t->layout != MACE_LAYOUT_NCHWC &&
             !needs_transpose(y->format, io->format, t->ndim) &&
             (uintptr_t)y->data % mace_dtype_size(t->dtype) == 0;
    for (int j = 0; ok && j < num_inputs; ++j) {  /* the caller's input buffers */
      if (!inputs[j].data) continue;
      size_t in_bytes = mace_dtype_size(inputs[j].dtype);
      for (int d = 0; d < inputs[j].ndim; ++d) in_bytes *= (size_t)inputs[j].dims[d];
      ok = !overlaps(y->data, nbytes, inputs[j].data, in_bytes);
    }
    if (ok) (void)mace_net_borrow(net, io->tensor, y->data);
  }
}

/* Output t into the caller's GPU buffer: a copy on the device, or an upload when t was
 * computed on the CPU. Enqueued only (copy_outputs waits). */
static mace_status write_gpu_output(mace_engine *eng, const mace_tensor *t,
                                    mace_gpu_buffer *buffer) {
  mace_tensor_info info;
  fill_info(t, MACE_DF_NONE, &info);
  const size_t bytes = mace_engine_gpu_tensor_bytes(eng, &info);
  const int is_float = t->dtype == MACE_DT_F32;
  MACE_RETURN_IF_ERROR(mace_gpu_buffer_check(eng, buffer, "output", t->name, is_float, bytes));
  void *mem = mace_gpu_buffer_cl_mem(buffer);
  mace_runtime *gpu = &eng->gpu;
  mace_status st = t->storage != MACE_STORAGE_HOST && t->role != MACE_TENSOR_CONST
                       ? gpu->ops->copy(gpu, t->cl_mem, t->cl_offset, mem, 0, bytes)
                       : gpu->ops->copy_in(gpu, mem, 0, t->data, (size_t)mace_tensor_numel(t),
                                           t->dtype);
  if (st != MACE_OK) return mace_error_wrap(st, "output '%s' into its GPU buffer", t->name);
  return MACE_OK;
}

/* Refuses, before the run writes anything, an output buffer the caller sized smaller than
 * the output of the shapes bound (mace_io.data_bytes; 0 means not given). */
static mace_status check_output_buffers(const mace_net *net, const mace_io *outputs,
                                        int num_outputs) {
  for (int k = 0; k < num_outputs; ++k) {
    const int i = find_output(net, outputs[k].name);
    if (i < 0 || !outputs[k].data_bytes) continue;
    const mace_net_io *io = mace_net_output(net, i);
    const mace_tensor *t = mace_net_tensor_const(net, io->tensor);
    /* the bytes the caller receives at most (a blocked tensor's padded storage is refused
     * later) */
    size_t need = mace_dtype_size(t->dtype);
    for (int d = 0; d < io->bound_ndim; ++d) need *= (size_t)io->bound_dims[d];
    if (need > outputs[k].data_bytes) {
      char d[96];
      return mace_error(MACE_INVALID_ARGS, "output '%s' is %s (%zu bytes) for the inputs bound, "
                        "but its buffer holds %zu bytes", t->name,
                        mace_dims_str(io->bound_dims, io->bound_ndim, d, sizeof d), need,
                        outputs[k].data_bytes);
    }
  }
  return MACE_OK;
}

/* Copies the outputs named in `outputs` out of the net after a run (none for those written in
 * place). */
static mace_status copy_outputs(mace_engine *eng, mace_io *outputs, int num_outputs) {
  const mace_net *net = eng->net;
  int on_device = 0;
  for (int k = 0; k < num_outputs; ++k) {
    mace_io *y = &outputs[k];
    const int found = find_output(net, y->name);
    if (found < 0)
      return mace_error(MACE_INVALID_ARGS, "'%s' is not an output of the model",
                        y->name ? y->name : "(null)");
    const mace_net_io *io = mace_net_output(net, found);
    const mace_tensor *t = mace_net_tensor_const(net, io->tensor);
    if (!y->data && !y->gpu_buffer && mace_tensor_numel(t) > 0)
      return mace_error(MACE_INVALID_ARGS, "output '%s' has no buffer", t->name);
    /* Only a model's own Reorder op can return one; its storage is larger than its dims. */
    if (t->layout == MACE_LAYOUT_NCHWC)
      return mace_error(MACE_INVALID_MODEL, "output '%s' is in the blocked NCHWc layout (a "
                        "Reorder op to NCHWc ends the model)", t->name);
    const size_t bytes = (size_t)mace_tensor_numel(t) * mace_dtype_size(t->dtype);
    if (y->data && y->data_bytes && bytes > y->data_bytes)
      return mace_error(MACE_RUNTIME_ERROR, "output '%s' came out larger (%zu bytes) than the "
                        "bound it was planned for (%zu bytes)", t->name, bytes, y->data_bytes);
    y->dtype = t->dtype;
    y->ndim = t->ndim;
    memcpy(y->dims, t->dims, sizeof(y->dims));
    const int transpose = needs_transpose(y->format, io->format, t->ndim);
    if (y->gpu_buffer) {
      if (transpose)
        return mace_error(MACE_UNSUPPORTED, "output '%s': a GPU buffer is written in the "
                          "model's layout, not NHWC", t->name);
      MACE_RETURN_IF_ERROR(write_gpu_output(eng, t, y->gpu_buffer));
      on_device = 1;
    } else if (t->storage != MACE_STORAGE_HOST && t->role != MACE_TENSOR_CONST) {
      /* computed on the GPU: read back (into a temporary to transpose it) */
      void *tmp = transpose ? mace_aligned_alloc(mace_tensor_nbytes(t)) : y->data;
      if (!tmp) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory reading '%s'", t->name);
      mace_status st = mace_net_read_tensor(net, io->tensor, tmp);
      if (st == MACE_OK && transpose) {
        copy_nhwc_nchw(tmp, y->data, t->dims, mace_dtype_size(t->dtype), 0);
        y->dims[1] = t->dims[2];
        y->dims[2] = t->dims[3];
        y->dims[3] = t->dims[1];
      }
      if (transpose) mace_aligned_free(tmp);
      MACE_RETURN_IF_ERROR(st);
    } else if (transpose) {
      copy_nhwc_nchw(t->data, y->data, t->dims, mace_dtype_size(t->dtype), 0);
      y->dims[1] = t->dims[2];
      y->dims[2] = t->dims[3];
      y->dims[3] = t->dims[1];
    } else if (mace_tensor_nbytes(t) && t->data != y->data) {
      memcpy(y->data, t->data, mace_tensor_nbytes(t));
    }
  }
  /* The device copies are done before the caller (or another engine's queue) reads them. */
  return on_device ? eng->gpu.ops->sync(&eng->gpu) : MACE_OK;
}

/* Puts the bound inputs where the net reads them: an input in the model's layout is read in
 * place from the caller's buffer (aligned to its element: the kernels load unaligned vectors),
 * which saves a copy on a cold destination; others are copied (transposed from NHWC). */
static mace_status read_inputs(mace_engine *eng, const mace_io *bound) {
  mace_net *net = eng->net;
  if (eng->cl) mace_net_clear_device_inputs(net);
  for (int i = 0; i < mace_net_num_inputs(net); ++i) {
    const mace_net_io *io = mace_net_input(net, i);
    mace_tensor *t = mace_net_tensor(net, io->tensor);
    const mace_io *x = &bound[i];
    if (x->gpu_buffer) {
      /* read in place by the GPU ops; downloaded only when a CPU op reads it too */
      void *mem = mace_gpu_buffer_cl_mem(x->gpu_buffer);
      int needs_host = 0;
      MACE_RETURN_IF_ERROR(mace_net_bind_device_input(net, i, mem, &needs_host));
      if (needs_host && mace_tensor_nbytes(t))
        MACE_RETURN_IF_ERROR(eng->gpu.ops->copy_out(&eng->gpu, mem, 0, t->data,
                                                    (size_t)mace_tensor_numel(t), t->dtype));
    } else if (needs_transpose(x->format, io->format, x->ndim))
      copy_nhwc_nchw(x->data, t->data, t->dims, mace_dtype_size(t->dtype), 1);
    else if (mace_tensor_nbytes(t) &&
             !((uintptr_t)x->data % mace_dtype_size(t->dtype) == 0 &&
               mace_net_borrow(net, io->tensor, x->data)))
      memcpy(t->data, x->data, mace_tensor_nbytes(t));
  }
  return MACE_OK;
}

mace_status mace_engine_run_bound(mace_engine *eng, mace_io *outputs, int num_outputs) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  if (num_outputs < 0 || (num_outputs && !outputs))
    return mace_error(MACE_INVALID_ARGS, "bad outputs array");
  if (!eng->inputs_bound)
    return mace_error(MACE_INVALID_ARGS, "no inputs are bound: call mace_engine_bind_inputs "
                      "before each mace_engine_run_bound");
  mace_net *net = eng->net;
  eng->inputs_bound = 0;
  eng->kept_valid = 0;
  MACE_RETURN_IF_ERROR(check_output_buffers(net, outputs, num_outputs));
  MACE_RETURN_IF_ERROR(mace_net_prepare(net));
  mace_status st = read_inputs(eng, eng->bound);
  if (st == MACE_OK) {
    bind_outputs(net, eng->bound, mace_net_num_inputs(net), outputs, num_outputs);
    st = mace_net_run(net);
  }
  if (st == MACE_OK) st = copy_outputs(eng, outputs, num_outputs);
  for (int i = 0; i < mace_net_num_inputs(net); ++i)  /* the arrays are the caller's again */
    (void)mace_net_borrow(net, mace_net_input(net, i)->tensor, NULL);
  for (int i = 0; i < mace_net_num_outputs(net); ++i)
    (void)mace_net_borrow(net, mace_net_output(net, i)->tensor, NULL);
  eng->kept_valid = st == MACE_OK;
  return st;
}

mace_status mace_engine_run(mace_engine *eng, const mace_io *inputs, int num_inputs,
                            mace_io *outputs, int num_outputs) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  if (num_outputs < 0 || (num_outputs && !outputs))
    return mace_error(MACE_INVALID_ARGS, "bad outputs array");
  MACE_RETURN_IF_ERROR(mace_engine_bind_inputs(eng, inputs, num_inputs));
  return mace_engine_run_bound(eng, outputs, num_outputs);
}

mace_status mace_engine_release_intermediate_buffers(mace_engine *eng) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  mace_net_release_arena(eng->net);
  eng->kept_valid = 0;
  return MACE_OK;
}

mace_status mace_engine_set_profiling(mace_engine *eng, int on) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  mace_net_set_profiling(eng->net, on);
  if (eng->cl) eng->gpu.ops->set_profiling(&eng->gpu, on);
  return MACE_OK;
}

int mace_engine_num_ops(const mace_engine *eng) { return eng ? mace_net_num_steps(eng->net) : 0; }

mace_status mace_engine_op_stat(const mace_engine *eng, int index, mace_op_stat *stat) {
  if (!eng || !stat || index < 0 || index >= mace_net_num_steps(eng->net))
    return mace_error(MACE_INVALID_ARGS, "no op %d", index);
  double ms = 0;
  const mace_op *op = mace_net_step(eng->net, index, &ms);
  memset(stat, 0, sizeof(*stat));
  stat->name = op->name ? op->name : "";
  stat->type = op->type ? op->type : "";
  stat->ms = ms;
  stat->device = op->kind->device == MACE_DEVICE_GPU ||
                         (op->n_outputs && op->outputs[0]->storage != MACE_STORAGE_HOST)
                     ? MACE_DEVICE_GPU
                     : MACE_DEVICE_CPU;
  stat->macs = op->macs;
  stat->reinferred = mace_net_op_reinferred(eng->net, op);
  if (op->n_outputs) {
    stat->ndim = op->outputs[0]->ndim;
    memcpy(stat->out_dims, op->outputs[0]->dims, sizeof(stat->out_dims));
  }
  return MACE_OK;
}

mace_status mace_engine_memory_stat(const mace_engine *eng, mace_memory_stat *stat) {
  if (!eng || !stat) return mace_error(MACE_INVALID_ARGS, "NULL argument");
  mace_net_memory(eng->net, &stat->arena_bytes, &stat->naive_bytes, &stat->weights_bytes);
  stat->device_arena_bytes = mace_net_device_arena_bytes(eng->net);
  return MACE_OK;
}

/* ---- kept tensors ---------------------------------------------------------------------- */

/* The tensor a caller means by `name`: the tensor of that name, else its blocked copy. */
static int find_model_tensor(const mace_net *net, const char *name) {
  int idx = mace_net_find_tensor(net, name);
  if (idx >= 0 || strlen(name) > 4096) return idx;
  char blocked[4096 + sizeof(NCHWC_SUFFIX)];
  snprintf(blocked, sizeof(blocked), "%s%s", name, NCHWC_SUFFIX);
  return mace_net_find_tensor(net, blocked);
}

/* Every tensor a run computes, under the model's names: a blocked copy of a tensor that also
 * exists plain is left out (same values), one that exists only blocked is named as the model
 * names it. */
static mace_status keep_all(const mace_net *net, unsigned char *mask, kept_tensor *kept, int *n) {
  const size_t suffix = strlen(NCHWC_SUFFIX);
  for (int i = 0; i < mace_net_num_tensors(net); ++i) {
    const mace_tensor *t = mace_net_tensor_const(net, i);
    if (t->role != MACE_TENSOR_INTERMEDIATE || mace_net_tensor_is_copy(net, i)) continue;
    size_t len = strlen(t->name);
    int blocked = len > suffix && strcmp(t->name + len - suffix, NCHWC_SUFFIX) == 0;
    char *name = blocked ? strndup(t->name, len - suffix) : strdup(t->name);
    if (!name) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    if (blocked && mace_net_find_tensor(net, name) >= 0) {
      free(name);
      continue;
    }
    mask[i] = 1;
    kept[*n].tensor = i;
    kept[(*n)++].name = name;
  }
  return MACE_OK;
}

static mace_status keep_named(const mace_net *net, const char *const *names, int num_names,
                              unsigned char *mask, kept_tensor *kept, int *n) {
  for (int k = 0; k < num_names; ++k) {
    const char *name = names[k];
    if (!name) return mace_error(MACE_INVALID_ARGS, "tensor name %d is NULL", k);
    int idx = find_model_tensor(net, name);
    if (idx < 0) return mace_error(MACE_INVALID_ARGS, "no tensor named '%s' in the model", name);
    if (mace_net_tensor_const(net, idx)->role == MACE_TENSOR_CONST)
      return mace_error(MACE_INVALID_ARGS, "'%s' is a constant of the model (weights), not a "
                        "tensor that a run computes", name);
    if (mask[idx]) continue;
    mask[idx] = 1;
    kept[*n].tensor = idx;
    kept[*n].name = strdup(name);
    if (!kept[(*n)++].name) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  }
  return MACE_OK;
}

mace_status mace_engine_keep_tensors(mace_engine *eng, const char *const *names, int num_names) {
  if (!eng) return mace_error(MACE_INVALID_ARGS, "engine is NULL");
  if (num_names != MACE_KEEP_ALL && (num_names < 0 || (num_names && !names)))
    return mace_error(MACE_INVALID_ARGS, "bad names array (%d names)", num_names);
  mace_net *net = eng->net;
  const int nt = mace_net_num_tensors(net);
  unsigned char *mask = calloc(nt ? (size_t)nt : 1, 1);
  kept_tensor *kept = calloc(nt ? (size_t)nt : 1, sizeof(kept_tensor));
  int n = 0;
  mace_status st = MACE_OK;
  if (!mask || !kept) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    goto cleanup;
  }
  st = num_names == MACE_KEEP_ALL ? keep_all(net, mask, kept, &n)
                                  : keep_named(net, names, num_names, mask, kept, &n);
  if (st != MACE_OK) goto cleanup;
  if ((st = mace_net_set_kept(net, n ? mask : NULL)) != MACE_OK) {
    /* the previous set stays (its plan was made before, so this one is remembered) */
    memset(mask, 0, (size_t)nt);
    for (int i = 0; i < eng->n_kept; ++i) mask[eng->kept[i].tensor] = 1;
    (void)mace_net_set_kept(net, eng->n_kept ? mask : NULL);
    goto cleanup;
  }
  free_kept(eng->kept, eng->n_kept);
  eng->kept = kept;
  eng->n_kept = n;
  kept = NULL;
  eng->kept_valid = 0;
cleanup:
  free_kept(kept, n);
  free(mask);
  return st;
}

int mace_engine_num_kept_tensors(const mace_engine *eng) { return eng ? eng->n_kept : 0; }

mace_status mace_engine_kept_tensor_info(const mace_engine *eng, int index,
                                         mace_tensor_info *info) {
  if (!eng || !info || index < 0 || index >= eng->n_kept)
    return mace_error(MACE_INVALID_ARGS, "no kept tensor %d", index);
  fill_info(mace_net_tensor_const(eng->net, eng->kept[index].tensor), MACE_DF_NONE, info);
  info->name = eng->kept[index].name;
  return MACE_OK;
}

/* Copies a blocked [N, C, H, W] tensor (stored [N, ceil(C/b), H, W, b]) to plain NCHW. */
static void copy_unblocked(const mace_tensor *t, uint8_t *dst) {
  const int64_t n = t->dims[0], c = t->dims[1], hw = t->dims[2] * t->dims[3], b = t->block;
  const int64_t cb = (c + b - 1) / b;
  const size_t es = mace_dtype_size(t->dtype);
  const uint8_t *src = t->data;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic) {
      const uint8_t *s = src + (size_t)(((in * cb + ic / b) * hw) * b + ic % b) * es;
      uint8_t *d = dst + (size_t)((in * c + ic) * hw) * es;
      if (es == 4) {
        for (int64_t p = 0; p < hw; ++p) memcpy(d + p * 4, s + p * b * 4, 4);
      } else {
        for (int64_t p = 0; p < hw; ++p) memcpy(d + (size_t)p * es, s + (size_t)(p * b) * es, es);
      }
    }
}

mace_status mace_engine_read_kept_tensor(const mace_engine *eng, int index, void *data,
                                         size_t size) {
  if (!eng || index < 0 || index >= eng->n_kept)
    return mace_error(MACE_INVALID_ARGS, "no kept tensor %d", index);
  const mace_tensor *t = mace_net_tensor_const(eng->net, eng->kept[index].tensor);
  const size_t need = (size_t)mace_tensor_numel(t) * mace_dtype_size(t->dtype);
  if (!eng->kept_valid)
    return mace_error(MACE_INVALID_ARGS, "kept tensor '%s' holds no values: run the engine "
                      "after keeping it (and after a new input shape or a release)",
                      eng->kept[index].name);
  if (size < need || (need && !data))
    return mace_error(MACE_INVALID_ARGS, "kept tensor '%s' needs %zu bytes, the buffer has %zu",
                      eng->kept[index].name, need, data ? size : 0);
  if (!need) return MACE_OK;
  if (t->storage != MACE_STORAGE_HOST)  /* on the GPU (never blocked) */
    return mace_net_read_tensor(eng->net, eng->kept[index].tensor, data);
  if (t->layout != MACE_LAYOUT_NCHWC)
    memcpy(data, t->data, need);
  else if (t->ndim == 4 && t->block > 0)
    copy_unblocked(t, data);
  else
    return mace_error(MACE_UNSUPPORTED, "kept tensor '%s' is blocked (NCHWc) with rank %d",
                      eng->kept[index].name, t->ndim);
  return MACE_OK;
}
