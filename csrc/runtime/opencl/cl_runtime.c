/* The OpenCL runtime (runtime/opencl/cl_runtime.h): devices, the queue on the device's shared
 * context (cl_registry.c), buffers, programs built from the embedded kernels/opencl sources with
 * an on-disk binary cache, launches, profiling. */
#define _POSIX_C_SOURCE 200809L  /* getpid */
#include "runtime/opencl/cl_runtime.h"

#ifdef MACE_HAVE_OPENCL_HEADERS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checksum.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/opencl/cl_enqueue.h"
#include "runtime/opencl/cl_loader.h"
#include "runtime/opencl/cl_registry.h"
#include "runtime/opencl/cl_sources.h"
#include "runtime/opencl/cl_tuning.h"

/* A built kernel: owned by the runtime (freed with it); ops hold borrowed pointers. */
struct mace_cl_kernel {
  mace_cl_runtime *rt;
  cl_kernel kernel;
  char *key;               /* program "\n" name "\n" options */
  size_t max_work_group;   /* CL_KERNEL_WORK_GROUP_SIZE */
};

/* One program binary of the on-disk cache. */
typedef struct binary_entry {
  char *key;               /* device, driver, source hash and options (binary_key) */
  unsigned char *bin;
  size_t size;
} binary_entry;

typedef struct profile_tag {
  char *tag;
  double ms;
} profile_tag;

typedef struct pending_event {
  int tag;                 /* index into tags */
  cl_event event;
} pending_event;

/* Events held before their times are folded into the per-tag totals. */
#define MAX_PENDING_EVENTS 1024

struct mace_cl_runtime {
  const mace_cl_api *api;
  cl_platform_id platform;
  cl_device_id device;
  mace_cl_shared *shared;  /* the registry's context entry this runtime holds */
  cl_context context;      /* shared's */
  cl_command_queue queue;
  mace_cl_device_info info;
  mace_cl_precision precision;
  int profiling;           /* launches keep events whose times profiles read */
  int image_memory;        /* mace_cl_config.image_memory */
  char *binary_cache;      /* owned path or NULL */
  int binaries_loaded;     /* the file is read at the first program not built in the context */
  binary_entry *binaries;
  int n_binaries, cap_binaries;
  mace_cl_kernel **kernels;
  int n_kernels, cap_kernels;
  void *staging;           /* owned host buffer for fp16 conversions */
  size_t staging_bytes;
  profile_tag *tags;
  int n_tags, cap_tags;
  pending_event pending[MAX_PENDING_EVENTS];
  int n_pending;
  mace_cl_tuning tuning;
  size_t chunk_items;      /* mace_cl_config's: 0, or launches split in chunks (cl_enqueue.c) */
  mace_cl_launch_stats launch_stats;
};

/* Grows *array (of `elem` bytes each) to hold at least n + 1 items. 0 on failure. */
static int grow(void **array, int *cap, int n, size_t elem) {
  if (n < *cap) return 1;
  const int cap2 = *cap ? *cap * 2 : 16;
  void *p = realloc(*array, (size_t)cap2 * elem);
  if (!p) return 0;
  *array = p;
  *cap = cap2;
  return 1;
}

static char *dup_str(const char *s) {
  const size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static mace_status cl_fail(cl_int err, const char *what) {
  return mace_error(err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                            err == CL_OUT_OF_RESOURCES
                        ? MACE_OUT_OF_RESOURCES
                        : MACE_RUNTIME_ERROR,
                    "OpenCL: %s failed: %s (%d)", what, mace_cl_error_name(err), (int)err);
}

/* ------------------------------------------------------------------------------------------ */
/* Devices. */

static void device_string(const mace_cl_api *api, cl_device_id d, cl_device_info what, char *out,
                          size_t size) {
  size_t n = 0;
  out[0] = 0;
  if (api->clGetDeviceInfo(d, what, 0, NULL, &n) != CL_SUCCESS || n == 0) return;
  char *all = malloc(n + 1);  /* may be longer than the field: keep its head */
  if (all && api->clGetDeviceInfo(d, what, n, all, NULL) == CL_SUCCESS) {
    all[n] = 0;
    snprintf(out, size, "%s", all);
  }
  free(all);
}

/* The extensions string can be longer than the info's field: read it whole, keep its head. */
static void device_extensions(const mace_cl_api *api, cl_device_id d, mace_cl_device_info *info,
                              int *has_fp16) {
  size_t n = 0;
  info->extensions[0] = 0;
  *has_fp16 = 0;
  if (api->clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || !n) return;
  char *all = malloc(n + 1);
  if (!all) return;
  if (api->clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, all, NULL) == CL_SUCCESS) {
    all[n] = 0;
    *has_fp16 = strstr(all, "cl_khr_fp16") != NULL;
    snprintf(info->extensions, sizeof(info->extensions), "%s", all);
  }
  free(all);
}

static void fill_device_info(const mace_cl_api *api, cl_platform_id p, cl_device_id d, int pi,
                             int di, mace_cl_device_info *info) {
  memset(info, 0, sizeof(*info));
  info->platform_index = pi;
  info->device_index = di;
  if (api->clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(info->platform) - 1, info->platform,
                             NULL) != CL_SUCCESS)
    info->platform[0] = 0;
  device_string(api, d, CL_DEVICE_NAME, info->name, sizeof(info->name));
  device_string(api, d, CL_DEVICE_VENDOR, info->vendor, sizeof(info->vendor));
  device_string(api, d, CL_DEVICE_VERSION, info->version, sizeof(info->version));
  device_string(api, d, CL_DRIVER_VERSION, info->driver, sizeof(info->driver));
  cl_device_type type = 0;
  api->clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
  info->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  cl_uint cu = 0;
  api->clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL);
  info->compute_units = (int)cu;
  cl_ulong mem = 0, alloc = 0;
  api->clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
  api->clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(alloc), &alloc, NULL);
  info->global_mem_bytes = (int64_t)mem;
  info->max_alloc_bytes = (int64_t)alloc;
  size_t wg = 0;
  api->clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
  info->max_work_group_size = wg;
  device_extensions(api, d, info, &info->has_fp16);
}

#define MAX_PLATFORMS 16
#define MAX_DEVICES 32

/* The platforms (none is not an error: the ICD loader reports CL_PLATFORM_NOT_FOUND_KHR). */
static mace_status get_platforms(const mace_cl_api *api, cl_platform_id *ids, cl_uint *n) {
  *n = 0;
  cl_int err = api->clGetPlatformIDs(MAX_PLATFORMS, ids, n);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */) {
    *n = 0;
    return MACE_OK;
  }
  if (err != CL_SUCCESS) return cl_fail(err, "clGetPlatformIDs");
  if (*n > MAX_PLATFORMS) *n = MAX_PLATFORMS;
  return MACE_OK;
}

static cl_uint get_devices(const mace_cl_api *api, cl_platform_id p, cl_device_id *ids) {
  cl_uint n = 0;
  if (api->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n) != CL_SUCCESS) return 0;
  return n > MAX_DEVICES ? MAX_DEVICES : n;
}

mace_status mace_cl_list_devices(mace_cl_device_info *out, int max, int *n) {
  *n = 0;
  const mace_cl_api *api;
  MACE_RETURN_IF_ERROR(mace_cl_loader_open(NULL, &api));
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np;
  MACE_RETURN_IF_ERROR(get_platforms(api, plats, &np));
  for (cl_uint p = 0; p < np; ++p) {
    cl_device_id devs[MAX_DEVICES];
    const cl_uint nd = get_devices(api, plats[p], devs);
    for (cl_uint d = 0; d < nd; ++d) {
      if (*n < max && out) fill_device_info(api, plats[p], devs[d], (int)p, (int)d, &out[*n]);
      ++*n;
    }
  }
  return MACE_OK;
}

/* The device the config asks for: -1 picks the first GPU (platform, then device), else the
 * first device. MACE_UNSUPPORTED when there is none or the indices are out of range. */
static mace_status pick_device(const mace_cl_api *api, const mace_cl_config *c,
                               cl_platform_id *plat, cl_device_id *dev, int *pi, int *di) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np;
  MACE_RETURN_IF_ERROR(get_platforms(api, plats, &np));
  if (np == 0)
    return mace_error(MACE_UNSUPPORTED, "no OpenCL platform: the OpenCL library loaded, but "
                      "no driver (ICD) is installed (Debian: e.g. pocl-opencl-icd)");
  if (c->platform_index >= (int)np)
    return mace_error(MACE_UNSUPPORTED, "no OpenCL platform %d (there are %u)",
                      c->platform_index, (unsigned)np);
  int best_p = -1, best_d = -1, first_p = -1, first_d = -1;
  for (cl_uint p = 0; p < np; ++p) {
    if (c->platform_index >= 0 && (int)p != c->platform_index) continue;
    cl_device_id devs[MAX_DEVICES];
    const cl_uint nd = get_devices(api, plats[p], devs);
    if (c->device_index >= 0) {
      if (c->device_index < (int)nd && first_p < 0) {
        first_p = (int)p;
        first_d = c->device_index;
      }
      continue;
    }
    for (cl_uint d = 0; d < nd; ++d) {
      cl_device_type type = 0;
      api->clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
      if (first_p < 0) {
        first_p = (int)p;
        first_d = (int)d;
      }
      if ((type & CL_DEVICE_TYPE_GPU) && best_p < 0) {
        best_p = (int)p;
        best_d = (int)d;
      }
    }
  }
  if (best_p < 0) {
    best_p = first_p;
    best_d = first_d;
  }
  if (best_p < 0) {
    if (c->device_index >= 0)
      return mace_error(MACE_UNSUPPORTED, "no OpenCL device %d on platform %d",
                        c->device_index, c->platform_index);
    return mace_error(MACE_UNSUPPORTED, "no OpenCL device found (%u platform(s), none with a "
                      "device)", (unsigned)np);
  }
  cl_device_id devs[MAX_DEVICES];
  get_devices(api, plats[best_p], devs);
  *plat = plats[best_p];
  *dev = devs[best_d];
  *pi = best_p;
  *di = best_d;
  return MACE_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The on-disk binary cache: "MACECLB1", u32 count, then per program u32 key bytes, u64 binary
 * bytes, u32 CRC-32 of both, the key, the binary. Anything inconsistent discards the file (the
 * programs are rebuilt from source and the file rewritten). */

static const char kCacheMagic[8] = {'M', 'A', 'C', 'E', 'C', 'L', 'B', '1'};

static void free_binaries(mace_cl_runtime *rt) {
  for (int i = 0; i < rt->n_binaries; ++i) {
    free(rt->binaries[i].key);
    free(rt->binaries[i].bin);
  }
  rt->n_binaries = 0;
}

static int read_exact(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n; }

static void load_binary_cache(mace_cl_runtime *rt) {
  FILE *f = fopen(rt->binary_cache, "rb");
  if (!f) return;  /* none yet */
  char magic[8];
  uint32_t count = 0;
  int ok = read_exact(f, magic, 8) && memcmp(magic, kCacheMagic, 8) == 0 &&
           read_exact(f, &count, 4) && count < 100000;
  for (uint32_t i = 0; ok && i < count; ++i) {
    uint32_t klen = 0, crc = 0;
    uint64_t blen = 0;
    ok = read_exact(f, &klen, 4) && read_exact(f, &blen, 8) && read_exact(f, &crc, 4) &&
         klen > 0 && klen < 65536 && blen > 0 && blen < ((uint64_t)1 << 31) &&
         grow((void **)&rt->binaries, &rt->cap_binaries, rt->n_binaries, sizeof(binary_entry));
    if (!ok) break;
    binary_entry e = {malloc(klen + 1), malloc((size_t)blen), (size_t)blen};
    ok = e.key && e.bin && read_exact(f, e.key, klen) && read_exact(f, e.bin, e.size);
    if (ok) {
      e.key[klen] = 0;
      ok = strlen(e.key) == klen &&
           mace_crc32_update(mace_crc32_update(0, e.key, klen), e.bin, e.size) == crc;
    }
    if (!ok) {
      free(e.key);
      free(e.bin);
      break;
    }
    rt->binaries[rt->n_binaries++] = e;
  }
  fclose(f);
  if (!ok) {
    MACE_LOG(WARNING, "OpenCL binary cache %s is corrupt or from another version: ignored, "
             "programs are rebuilt and the file rewritten", rt->binary_cache);
    free_binaries(rt);
  }
}

/* Rewrites the whole file through a temporary and a rename, so a reader never sees half. */
static void save_binary_cache(mace_cl_runtime *rt) {
  const size_t n = strlen(rt->binary_cache) + 32;
  char *tmp = malloc(n);
  if (!tmp) return;
  snprintf(tmp, n, "%s.tmp%d", rt->binary_cache, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  int ok = f != NULL;
  const uint32_t count = (uint32_t)rt->n_binaries;
  ok = ok && fwrite(kCacheMagic, 1, 8, f) == 8 && fwrite(&count, 4, 1, f) == 1;
  for (int i = 0; ok && i < rt->n_binaries; ++i) {
    const binary_entry *e = &rt->binaries[i];
    const uint32_t klen = (uint32_t)strlen(e->key);
    const uint64_t blen = e->size;
    const uint32_t crc = mace_crc32_update(mace_crc32_update(0, e->key, klen), e->bin, e->size);
    ok = fwrite(&klen, 4, 1, f) == 1 && fwrite(&blen, 8, 1, f) == 1 &&
         fwrite(&crc, 4, 1, f) == 1 && fwrite(e->key, 1, klen, f) == klen &&
         fwrite(e->bin, 1, e->size, f) == e->size;
  }
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, rt->binary_cache) != 0) ok = 0;
  if (!ok) {
    remove(tmp);
    MACE_LOG(WARNING, "cannot write the OpenCL binary cache %s", rt->binary_cache);
  }
  free(tmp);
}

static binary_entry *find_binary(mace_cl_runtime *rt, const char *key) {
  if (!rt->binaries_loaded) {
    rt->binaries_loaded = 1;
    load_binary_cache(rt);
  }
  for (int i = 0; i < rt->n_binaries; ++i)
    if (strcmp(rt->binaries[i].key, key) == 0) return &rt->binaries[i];
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Runtime. */

mace_status mace_cl_runtime_create(const mace_cl_config *config, mace_cl_runtime **out) {
  *out = NULL;
  mace_cl_config dflt = {.platform_index = -1, .device_index = -1};
  const mace_cl_config *c = config ? config : &dflt;
  if (c->precision != MACE_CL_FP32 && c->precision != MACE_CL_FP16 &&
      c->precision != MACE_CL_AUTO)
    return mace_error(MACE_INVALID_ARGS, "OpenCL: precision %d is not fp32 (0), fp16 (1) or "
                      "auto (2)", (int)c->precision);
  const mace_cl_api *api;
  MACE_RETURN_IF_ERROR(mace_cl_loader_open(c->library, &api));
  mace_status st = MACE_OK;
  mace_cl_runtime *rt = calloc(1, sizeof(*rt));
  if (!rt) return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory for the runtime");
  rt->api = api;
  cl_int err;
  if (c->share) { /* share's device, context and queue */
    rt->api = api = c->share->api;
    rt->platform = c->share->platform;
    rt->device = c->share->device;
    rt->info = c->share->info;
    rt->profiling = c->profiling != 0; /* the queue can always time launches */
    mace_cl_shared_retain(c->share->shared);
    rt->shared = c->share->shared;
    rt->context = c->share->context;
    if ((err = api->clRetainCommandQueue(c->share->queue)) != CL_SUCCESS) {
      st = cl_fail(err, "clRetainCommandQueue");
      goto fail;
    }
    rt->queue = c->share->queue;
    goto own_state;
  }
  int pi = 0, di = 0;
  st = pick_device(api, c, &rt->platform, &rt->device, &pi, &di);
  if (st != MACE_OK) goto fail;
  fill_device_info(api, rt->platform, rt->device, pi, di, &rt->info);
  rt->profiling = c->profiling != 0;
  /* A shared context that fails here (its device was lost) leaves the registry and the queue
   * is tried once more on a new one. */
  for (int attempt = 0; attempt < 2 && !rt->queue; ++attempt) {
    st = mace_cl_shared_acquire(api, rt->platform, rt->device, c->private_context, &rt->shared);
    if (st != MACE_OK) goto fail;
    rt->context = mace_cl_shared_context(rt->shared);
    /* The queue can always time launches (the tuner times them too); events are only asked
     * for while profiling is on (mace_cl_set_profiling). */
    rt->queue = api->clCreateCommandQueue(rt->context, rt->device, CL_QUEUE_PROFILING_ENABLE,
                                          &err);
    if (!rt->queue) {
      st = cl_fail(err, "clCreateCommandQueue");
      mace_cl_shared_discard(rt->shared);
      mace_cl_shared_release(rt->shared);
      rt->shared = NULL;
      rt->context = NULL;
      if (!mace_cl_error_is_fatal(err)) goto fail;
    }
  }
  if (!rt->queue) goto fail;
  st = MACE_OK;
own_state:
  rt->image_memory = c->image_memory != 0;
  rt->precision = c->precision;
  rt->chunk_items = c->chunk_items;
  if (rt->precision == MACE_CL_AUTO) {
    rt->precision = rt->info.has_fp16 ? MACE_CL_FP16 : MACE_CL_FP32;
    if (!rt->info.has_fp16)
      MACE_LOG(INFO, "OpenCL: %s has no cl_khr_fp16: float tensors run in fp32 (half "
               "storage anyway: gpu_precision fp16_storage)", rt->info.name);
  }
  if (c->binary_cache && *c->binary_cache) {
    rt->binary_cache = dup_str(c->binary_cache);
    if (!rt->binary_cache) {
      st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
      goto fail;
    }
  }
  st = mace_cl_tuning_load(&rt->tuning, c->tuning_file);
  if (st != MACE_OK) goto fail;
  *out = rt;
  return MACE_OK;
fail:
  mace_cl_runtime_destroy(rt);
  return st;
}

static void resolve_pending(mace_cl_runtime *rt);

void mace_cl_runtime_destroy(mace_cl_runtime *rt) {
  if (!rt) return;
  const mace_cl_api *api = rt->api;
  if (rt->queue) api->clFinish(rt->queue);
  resolve_pending(rt);
  mace_cl_tuning_save(&rt->tuning);
  mace_cl_tuning_free(&rt->tuning);
  for (int i = 0; i < rt->n_kernels; ++i) {
    api->clReleaseKernel(rt->kernels[i]->kernel);
    free(rt->kernels[i]->key);
    free(rt->kernels[i]);
  }
  free(rt->kernels);
  free_binaries(rt);
  free(rt->binaries);
  free(rt->binary_cache);
  for (int i = 0; i < rt->n_tags; ++i) free(rt->tags[i].tag);
  free(rt->tags);
  free(rt->staging);
  if (rt->queue) api->clReleaseCommandQueue(rt->queue);
  mace_cl_shared_release(rt->shared);  /* the last runtime on the context releases it */
  free(rt);
}

const mace_cl_device_info *mace_cl_runtime_device(const mace_cl_runtime *rt) {
  return &rt->info;
}
mace_cl_precision mace_cl_runtime_precision(const mace_cl_runtime *rt) { return rt->precision; }
size_t mace_cl_runtime_elem_size(const mace_cl_runtime *rt) {
  return rt->precision == MACE_CL_FP16 ? 2 : 4;
}

const void *mace_cl_runtime_context(const mace_cl_runtime *rt) { return rt->queue; }
int mace_cl_runtime_image_memory(const mace_cl_runtime *rt) { return rt->image_memory; }
cl_device_id mace_cl_runtime_device_id(const mace_cl_runtime *rt) { return rt->device; }
const void *mace_cl_runtime_cl_context(const mace_cl_runtime *rt) { return rt->context; }

/* An error that says the device is gone takes the context out of the registry, so the next
 * runtime on the device gets a new one. Returns err. */
static cl_int note_error(mace_cl_runtime *rt, cl_int err) {
  if (err != CL_SUCCESS && mace_cl_error_is_fatal(err) && rt->shared)
    mace_cl_shared_discard(rt->shared);
  return err;
}

void mace_cl_runtime_handles(const mace_cl_runtime *rt, const mace_cl_api **api,
                             cl_context *context, cl_command_queue *queue) {
  *api = rt->api;
  *context = rt->context;
  *queue = rt->queue;
}

/* ------------------------------------------------------------------------------------------ */
/* Memory. */

mace_status mace_cl_alloc(mace_cl_runtime *rt, size_t bytes, void **mem) {
  *mem = NULL;
  if (rt->info.max_alloc_bytes > 0 && bytes > (size_t)rt->info.max_alloc_bytes)
    return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: a buffer of %zu bytes is over the "
                      "device's largest allocation (%lld bytes, %s)", bytes,
                      (long long)rt->info.max_alloc_bytes, rt->info.name);
  cl_int err;
  cl_mem m = rt->api->clCreateBuffer(rt->context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL,
                                     &err);
  if (!m) return cl_fail(err, "clCreateBuffer");
  *mem = m;
  return MACE_OK;
}

void mace_cl_free(mace_cl_runtime *rt, void *mem) {
  if (rt && mem) rt->api->clReleaseMemObject((cl_mem)mem);
}

/* Elements converted per blocking transfer in fp16, so the staging buffer stays small. */
#define STAGING_ELEMS ((size_t)1 << 18)

static mace_status staging(mace_cl_runtime *rt, size_t bytes) {
  if (rt->staging_bytes >= bytes) return MACE_OK;
  void *p = realloc(rt->staging, bytes);
  if (!p) return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory for a %zu-byte staging "
                            "buffer", bytes);
  rt->staging = p;
  rt->staging_bytes = bytes;
  return MACE_OK;
}

mace_status mace_cl_write(mace_cl_runtime *rt, void *mem, size_t offset, const void *src,
                          size_t count, int as_float) {
  cl_int err;
  if (!as_float || rt->precision == MACE_CL_FP32) {
    const size_t bytes = as_float ? count * 4 : count;
    if (!bytes) return MACE_OK;
    err = note_error(rt, rt->api->clEnqueueWriteBuffer(rt->queue, (cl_mem)mem, CL_TRUE, offset,
                                                       bytes, src, 0, NULL, NULL));
    return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clEnqueueWriteBuffer");
  }
  MACE_RETURN_IF_ERROR(staging(rt, STAGING_ELEMS * 2));
  const float *s = src;
  for (size_t done = 0; done < count; done += STAGING_ELEMS) {
    const size_t n = count - done < STAGING_ELEMS ? count - done : STAGING_ELEMS;
    uint16_t *h = rt->staging;
    mace_cpu_f32_to_f16(s + done, h, (int64_t)n);
    err = note_error(rt, rt->api->clEnqueueWriteBuffer(rt->queue, (cl_mem)mem, CL_TRUE,
                                                       offset + done * 2, n * 2, h, 0, NULL,
                                                       NULL));
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueWriteBuffer");
  }
  return MACE_OK;
}

mace_status mace_cl_read(mace_cl_runtime *rt, const void *mem, size_t offset, void *dst,
                         size_t count, int as_float) {
  cl_int err;
  if (!as_float || rt->precision == MACE_CL_FP32) {
    const size_t bytes = as_float ? count * 4 : count;
    if (!bytes) return MACE_OK;
    err = note_error(rt, rt->api->clEnqueueReadBuffer(rt->queue, (cl_mem)mem, CL_TRUE, offset,
                                                      bytes, dst, 0, NULL, NULL));
    return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clEnqueueReadBuffer");
  }
  MACE_RETURN_IF_ERROR(staging(rt, STAGING_ELEMS * 2));
  float *d = dst;
  for (size_t done = 0; done < count; done += STAGING_ELEMS) {
    const size_t n = count - done < STAGING_ELEMS ? count - done : STAGING_ELEMS;
    uint16_t *h = rt->staging;
    err = note_error(rt, rt->api->clEnqueueReadBuffer(rt->queue, (cl_mem)mem, CL_TRUE,
                                                      offset + done * 2, n * 2, h, 0, NULL,
                                                      NULL));
    if (err != CL_SUCCESS) return cl_fail(err, "clEnqueueReadBuffer");
    mace_cpu_f16_to_f32(h, d + done, (int64_t)n);
  }
  return MACE_OK;
}

mace_status mace_cl_finish(mace_cl_runtime *rt) {
  const cl_int err = note_error(rt, rt->api->clFinish(rt->queue));
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clFinish");
}

mace_status mace_cl_copy(mace_cl_runtime *rt, const void *src, size_t src_offset, void *dst,
                         size_t dst_offset, size_t bytes) {
  if (!bytes) return MACE_OK;
  const cl_int err = rt->api->clEnqueueCopyBuffer(rt->queue, (cl_mem)src, (cl_mem)dst,
                                                  src_offset, dst_offset, bytes, 0, NULL, NULL);
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clEnqueueCopyBuffer");
}

/* ------------------------------------------------------------------------------------------ */
/* Programs and kernels. */

/* What every program starts with: the stored element type and how to load/store it as
 * float. fp16 storage goes through vload_half/vstore_half (core OpenCL 1.2), so it needs no
 * cl_khr_fp16: arithmetic stays in float on every device. */
static const char *precision_preamble(mace_cl_precision p) {
  return p == MACE_CL_FP16 ? "#define DATA_T half\n"
                             "#define LOAD(p, i) vload_half((i), (p))\n"
                             "#define STORE(p, i, v) vstore_half_rte((v), (i), (p))\n"
                           : "#define DATA_T float\n"
                             "#define LOAD(p, i) ((p)[(i)])\n"
                             "#define STORE(p, i, v) ((p)[(i)] = (v))\n";
}

static const char *find_source(const char *name) {
  for (int i = 0; i < mace_cl_n_sources; ++i)
    if (strcmp(mace_cl_sources[i].name, name) == 0) return mace_cl_sources[i].text;
  return NULL;
}

/* Allocated "program\nname..." keys. */
static char *join3(const char *a, const char *b, const char *c) {
  const size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
  char *k = malloc(n);
  if (k) snprintf(k, n, "%s\n%s%s%s", a, b, c ? "\n" : "", c ? c : "");
  return k;
}

static mace_status build_log_error(mace_cl_runtime *rt, cl_program prog, const char *program,
                                   const char *options, cl_int err) {
  char log[640];
  size_t n = 0;
  log[0] = 0;
  rt->api->clGetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log,
                                 &n);
  if (n >= sizeof(log)) {  /* too long for the call above: read it whole, keep its head */
    char *all = malloc(n + 1);
    if (all && rt->api->clGetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG, n, all,
                                              NULL) == CL_SUCCESS)
      memcpy(log, all, sizeof(log) - 1);
    free(all);
  }
  log[sizeof(log) - 1] = 0;
  return mace_error(MACE_RUNTIME_ERROR, "OpenCL: program '%s' (options \"%s\") failed to build "
                    "on %s: %s (%d); build log: %s", program, options, rt->info.name,
                    mace_cl_error_name(err), (int)err, log[0] ? log : "(empty)");
}

/* Stores the built program's binary in the cache (and the file). Failures only log. */
static void cache_program(mace_cl_runtime *rt, cl_program prog, const char *key) {
  size_t size = 0;
  if (rt->api->clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) !=
          CL_SUCCESS || !size)
    return;
  unsigned char *bin = malloc(size);
  char *k = dup_str(key);
  if (bin && k &&
      rt->api->clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) ==
          CL_SUCCESS &&
      grow((void **)&rt->binaries, &rt->cap_binaries, rt->n_binaries, sizeof(binary_entry))) {
    rt->binaries[rt->n_binaries++] = (binary_entry){k, bin, size};
    save_binary_cache(rt);
    return;
  }
  free(bin);
  free(k);
}

/* The binary cache's key: device, driver, the hash and length of the whole source, the options.
 * Allocated; NULL without memory. */
static char *binary_key(const mace_cl_runtime *rt, const char *program, const char *options,
                        uint32_t crc, size_t len) {
  const size_t n = strlen(rt->info.name) + strlen(rt->info.driver) + strlen(rt->info.version) +
                   strlen(options) + strlen(program) + 64;
  char *key = malloc(n);
  if (key)
    snprintf(key, n, "%s|%s|%s|%s|%08x.%zu|%s", rt->info.name, rt->info.driver,
             rt->info.version, program, (unsigned)crc, len, options);
  return key;
}

/* The CRC-32 and length of a program's whole source (preamble, common.cl, its file). */
static void source_hash(const char *const parts[3], uint32_t *crc, size_t *len) {
  *crc = 0;
  *len = 0;
  for (int i = 0; i < 3; ++i) {
    *crc = mace_crc32_update(*crc, parts[i], strlen(parts[i]));
    *len += strlen(parts[i]);
  }
}

/* A program another runtime built in the shared context is stored in this runtime's binary
 * cache too when it is not there yet (the registry says which cache it came from). */
static void cache_shared_program(mace_cl_runtime *rt, cl_program prog, const char *program,
                                 const char *options, const char *cached_in) {
  if (!rt->binary_cache || (cached_in && strcmp(cached_in, rt->binary_cache) == 0)) return;
  const char *text = find_source(program), *common = find_source("common");
  const char *parts[3] = {precision_preamble(rt->precision), common ? common : "",
                          text ? text : ""};
  uint32_t crc;
  size_t len;
  source_hash(parts, &crc, &len);
  char *key = binary_key(rt, program, options, crc, len);
  if (key && !find_binary(rt, key)) cache_program(rt, prog, key);
  free(key);
}

/* Builds `program` with `options` in the runtime's context: from the cached binary when there
 * is one, else from source (then stored in the cache). */
static mace_status build_program(mace_cl_runtime *rt, const char *program, const char *options,
                                 cl_program *out) {
  const mace_cl_api *api = rt->api;
  const char *text = find_source(program);
  const char *common = find_source("common");
  if (!text)
    return mace_error(MACE_INVALID_ARGS, "OpenCL: no kernel source kernels/opencl/%s.cl is "
                      "embedded in this build", program);
  const char *parts[3] = {precision_preamble(rt->precision), common ? common : "", text};
  char *key = NULL;
  uint32_t crc;
  size_t len;
  source_hash(parts, &crc, &len);
  cl_int err;
  cl_program prog = NULL;
  if (rt->binary_cache) {
    key = binary_key(rt, program, options, crc, len);
    if (!key) return mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
    const binary_entry *e = find_binary(rt, key);
    if (e) {
      const unsigned char *bin = e->bin;
      cl_int bin_status = CL_SUCCESS;
      prog = api->clCreateProgramWithBinary(rt->context, 1, &rt->device, &e->size, &bin,
                                            &bin_status, &err);
      if (prog && (err != CL_SUCCESS || bin_status != CL_SUCCESS ||
                   api->clBuildProgram(prog, 1, &rt->device, options, NULL, NULL) !=
                       CL_SUCCESS)) {
        api->clReleaseProgram(prog);
        prog = NULL;
      }
      if (!prog)
        MACE_LOG(WARNING, "OpenCL binary cache: the binary of '%s' did not load on %s; "
                 "rebuilding from source", program, rt->info.name);
    }
  }
  if (!prog) {
    prog = api->clCreateProgramWithSource(rt->context, 3, parts, NULL, &err);
    if (!prog) {
      free(key);
      return cl_fail(err, "clCreateProgramWithSource");
    }
    err = api->clBuildProgram(prog, 1, &rt->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
      const mace_status st = build_log_error(rt, prog, program, options, err);
      api->clReleaseProgram(prog);
      free(key);
      return st;
    }
    if (key) {
      /* A stale entry of the same key (its binary failed to load) is replaced. */
      binary_entry *old = find_binary(rt, key);
      if (old) {
        free(old->key);
        free(old->bin);
        *old = rt->binaries[--rt->n_binaries];
      }
      cache_program(rt, prog, key);
    }
  }
  free(key);
  *out = prog;
  return MACE_OK;
}

mace_status mace_cl_get_kernel(mace_cl_runtime *rt, const char *program, const char *name,
                               const char *options, mace_cl_kernel **out) {
  *out = NULL;
  if (!options) options = "";
  mace_status st = MACE_OK;
  char *kkey = join3(program, name, options);
  /* The program's key in the registry: the precision (its preamble), program, options. */
  char *pkey = join3(rt->precision == MACE_CL_FP16 ? "fp16" : "fp32", program, options);
  if (!kkey || !pkey) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
    goto done;
  }
  for (int i = 0; i < rt->n_kernels; ++i) {
    if (strcmp(rt->kernels[i]->key, kkey) == 0) {
      *out = rt->kernels[i];
      goto done;
    }
  }
  /* Programs live in the shared context's registry entry (built once for every runtime of the
   * device); kernels are this runtime's. */
  const char *cached_in = NULL;
  cl_program prog = mace_cl_shared_find_program(rt->shared, pkey, &cached_in);
  if (prog) {
    cache_shared_program(rt, prog, program, options, cached_in);
  } else {
    cl_program built = NULL;
    st = build_program(rt, program, options, &built);
    if (st != MACE_OK) goto done;
    st = mace_cl_shared_add_program(rt->shared, pkey, built, rt->binary_cache, &prog);
    if (st != MACE_OK) goto done;
  }
  if (!grow((void **)&rt->kernels, &rt->cap_kernels, rt->n_kernels, sizeof(mace_cl_kernel *))) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
    goto done;
  }
  mace_cl_kernel *k = calloc(1, sizeof(*k));
  if (!k) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
    goto done;
  }
  cl_int err;
  k->kernel = rt->api->clCreateKernel(prog, name, &err);
  if (!k->kernel) {
    free(k);
    st = mace_error(MACE_RUNTIME_ERROR, "OpenCL: no kernel '%s' in program '%s': %s (%d)", name,
                    program, mace_cl_error_name(err), (int)err);
    goto done;
  }
  k->rt = rt;
  k->key = kkey;
  kkey = NULL;
  if (rt->api->clGetKernelWorkGroupInfo(k->kernel, rt->device, CL_KERNEL_WORK_GROUP_SIZE,
                                        sizeof(k->max_work_group), &k->max_work_group,
                                        NULL) != CL_SUCCESS)
    k->max_work_group = rt->info.max_work_group_size;
  rt->kernels[rt->n_kernels++] = k;
  *out = k;
done:
  free(kkey);
  free(pkey);
  return st;
}

const char *mace_cl_kernel_key(const mace_cl_kernel *k) { return k->key; }
size_t mace_cl_kernel_max_work_group(const mace_cl_kernel *k) { return k->max_work_group; }

mace_status mace_cl_arg_mem(mace_cl_kernel *k, int index, const void *mem) {
  const cl_mem m = (cl_mem)mem;
  const cl_int err = k->rt->api->clSetKernelArg(k->kernel, (cl_uint)index, sizeof(m), &m);
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clSetKernelArg (buffer)");
}

mace_status mace_cl_arg(mace_cl_kernel *k, int index, const void *value, size_t size) {
  const cl_int err = k->rt->api->clSetKernelArg(k->kernel, (cl_uint)index, size, value);
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clSetKernelArg");
}

mace_status mace_cl_arg_local(mace_cl_kernel *k, int index, size_t size) {
  const cl_int err = k->rt->api->clSetKernelArg(k->kernel, (cl_uint)index, size, NULL);
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clSetKernelArg (local)");
}

/* ------------------------------------------------------------------------------------------ */
/* Launches and profiling. */

static int tag_index(mace_cl_runtime *rt, const char *tag) {
  for (int i = 0; i < rt->n_tags; ++i)
    if (strcmp(rt->tags[i].tag, tag) == 0) return i;
  if (!grow((void **)&rt->tags, &rt->cap_tags, rt->n_tags, sizeof(profile_tag))) return -1;
  char *t = dup_str(tag);
  if (!t) return -1;
  rt->tags[rt->n_tags] = (profile_tag){t, 0.0};
  return rt->n_tags++;
}

/* Folds the pending events' device times into their tags (waiting for them). */
static void resolve_pending(mace_cl_runtime *rt) {
  for (int i = 0; i < rt->n_pending; ++i) {
    cl_event e = rt->pending[i].event;
    cl_ulong t0 = 0, t1 = 0;
    if (rt->api->clWaitForEvents(1, &e) == CL_SUCCESS &&
        rt->api->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(t0), &t0,
                                         NULL) == CL_SUCCESS &&
        rt->api->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) ==
            CL_SUCCESS &&
        t1 >= t0)
      rt->tags[rt->pending[i].tag].ms += (double)(t1 - t0) * 1e-6;
    rt->api->clReleaseEvent(e);
  }
  rt->n_pending = 0;
}

/* A launch's profiling event kept for its tag (cl_enqueue.c calls it once per chunk). */
typedef struct launch_tag {
  mace_cl_runtime *rt;
  int tag;
} launch_tag;

static void keep_event(void *ctx, cl_event ev) {
  launch_tag *lt = ctx;
  if (lt->rt->n_pending == MAX_PENDING_EVENTS) resolve_pending(lt->rt);
  lt->rt->pending[lt->rt->n_pending++] = (pending_event){lt->tag, ev};
}

mace_status mace_cl_launch(mace_cl_runtime *rt, mace_cl_kernel *k, int dims, const size_t *gws,
                           const size_t *lws, const char *tag) {
  if (dims < 1 || dims > 3)
    return mace_error(MACE_INVALID_ARGS, "OpenCL: launch of %d dimensions (1 to 3)", dims);
  size_t g[3], l[3];
  const size_t *use_l = lws;
  for (int i = 0; i < dims; ++i)
    if (gws[i] == 0) return MACE_OK;  /* nothing to compute */
  if (!use_l && mace_cl_tuning_find(&rt->tuning, k->key, dims, gws, l)) use_l = l;
  if (!use_l && mace_cl_tuning_active(&rt->tuning)) {
    MACE_RETURN_IF_ERROR(mace_cl_tuning_run(&rt->tuning, rt, k, dims, gws, l));
    use_l = l;
  }
  if (!use_l) {
    mace_cl_default_lws(dims, gws, k->max_work_group, l);
    use_l = l;
  }
  /* Kernels check their own bounds: the global size is rounded up to the work-group's. */
  for (int i = 0; i < dims; ++i) g[i] = (gws[i] + use_l[i] - 1) / use_l[i] * use_l[i];
  const int t = rt->profiling && tag ? tag_index(rt, tag) : -1;
  launch_tag lt = {rt, t};
  int chunks = 0;
  const cl_int err = note_error(
      rt, mace_cl_enqueue_chunked(rt->api, rt->queue, k->kernel, dims, g, use_l, rt->chunk_items,
                                  t >= 0 ? keep_event : NULL, &lt, &chunks));
  ++rt->launch_stats.launches;
  if (chunks > 1) {
    ++rt->launch_stats.chunked_launches;
    rt->launch_stats.chunks += chunks;
  }
  if (err != CL_SUCCESS)
    return mace_error(MACE_RUNTIME_ERROR, "OpenCL: launch of %s (%s) failed: %s (%d)",
                      strchr(k->key, '\n') ? strchr(k->key, '\n') + 1 : k->key, tag ? tag : "",
                      mace_cl_error_name(err), (int)err);
  return MACE_OK;
}

void mace_cl_runtime_launch_stats(const mace_cl_runtime *rt, mace_cl_launch_stats *out) {
  *out = rt->launch_stats;
}

mace_status mace_cl_launch_timed(mace_cl_runtime *rt, mace_cl_kernel *k, int dims,
                                 const size_t *gws, const size_t *lws, double *ms) {
  size_t g[3];
  for (int i = 0; i < dims; ++i) g[i] = (gws[i] + lws[i] - 1) / lws[i] * lws[i];
  cl_event ev = NULL;
  *ms = -1.0;
  cl_int err = rt->api->clEnqueueNDRangeKernel(rt->queue, k->kernel, (cl_uint)dims, NULL, g,
                                               lws, 0, NULL, &ev);
  if (err != CL_SUCCESS) return MACE_RUNTIME_ERROR;  /* this lws does not fit: not an error */
  cl_ulong t0 = 0, t1 = 0;
  err = rt->api->clWaitForEvents(1, &ev);
  if (err == CL_SUCCESS &&
      rt->api->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL) ==
          CL_SUCCESS &&
      rt->api->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) ==
          CL_SUCCESS)
    *ms = (double)(t1 - t0) * 1e-6;
  rt->api->clReleaseEvent(ev);
  return err == CL_SUCCESS ? MACE_OK : cl_fail(err, "clWaitForEvents");
}

void mace_cl_set_profiling(mace_cl_runtime *rt, int on) {
  if (!on) mace_cl_profile_reset(rt);
  rt->profiling = on != 0;
}

double mace_cl_profile_ms(mace_cl_runtime *rt, const char *tag) {
  resolve_pending(rt);
  for (int i = 0; i < rt->n_tags; ++i)
    if (strcmp(rt->tags[i].tag, tag) == 0) return rt->tags[i].ms;
  return 0.0;
}

void mace_cl_profile_reset(mace_cl_runtime *rt) {
  resolve_pending(rt);
  for (int i = 0; i < rt->n_tags; ++i) rt->tags[i].ms = 0.0;
}

#endif /* MACE_HAVE_OPENCL_HEADERS (else cl_stub.c) */
