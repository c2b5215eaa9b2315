/* dlopen of the OpenCL ICD loader and the table of its entry points (runtime/opencl/cl_loader.h). */
#ifdef MACE_HAVE_OPENCL_HEADERS  /* else the stub runtime needs no loader */
#include "runtime/opencl/cl_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The libraries opened so far, by the path asked for; a few paths at most in a process. */
#define MAX_LIBRARIES 8
typedef struct loaded_library {
  char path[256];
  mace_cl_api api;
} loaded_library;

static loaded_library g_libs[MAX_LIBRARIES];
static int g_n_libs;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static mace_status load_symbols(void *handle, const char *path, mace_cl_api *api) {
#define MACE_CL_LOAD(fn)                                                                   \
  *(void **)(&api->fn) = dlsym(handle, #fn);                                               \
  if (!api->fn)                                                                            \
    return mace_error(MACE_UNSUPPORTED, "OpenCL library %s lacks %s (an OpenCL 1.2 ICD "    \
                      "loader is needed)", path, #fn);
  MACE_CL_FUNCTIONS(MACE_CL_LOAD)
#undef MACE_CL_LOAD
  return MACE_OK;
}

mace_status mace_cl_loader_open(const char *library, const mace_cl_api **api) {
  *api = NULL;
  const char *env = getenv("MACE_OPENCL_LIBRARY");
  const char *want = library ? library : (env && *env ? env : NULL);
  const char *key = want ? want : "";
  if (strlen(key) >= sizeof(g_libs[0].path))
    return mace_error(MACE_INVALID_ARGS, "OpenCL library path is too long (%zu bytes)",
                      strlen(key));
  mace_status st = MACE_OK;
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < g_n_libs; ++i) {
    if (strcmp(g_libs[i].path, key) == 0) {
      *api = &g_libs[i].api;
      goto done;
    }
  }
  if (g_n_libs == MAX_LIBRARIES) {
    st = mace_error(MACE_UNSUPPORTED, "too many distinct OpenCL libraries opened (%d)",
                    MAX_LIBRARIES);
    goto done;
  }
  void *handle = NULL;
  const char *opened = want;
  if (want) {
    handle = dlopen(want, RTLD_NOW | RTLD_LOCAL);
  } else {
    opened = "libOpenCL.so.1";
    handle = dlopen(opened, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      opened = "libOpenCL.so";
      handle = dlopen(opened, RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (!handle) {
    const char *why = dlerror();
    st = mace_error(MACE_UNSUPPORTED, "no OpenCL library: cannot load %s (%s); install an "
                    "OpenCL ICD loader and a driver (Debian: ocl-icd-libopencl1 and e.g. "
                    "pocl-opencl-icd)", want ? want : "libOpenCL.so.1 or libOpenCL.so",
                    why ? why : "unknown error");
    goto done;
  }
  loaded_library *lib = &g_libs[g_n_libs];
  memset(lib, 0, sizeof(*lib));
  st = load_symbols(handle, opened, &lib->api);
  if (st != MACE_OK) {
    dlclose(handle);
    goto done;
  }
  strcpy(lib->path, key);
  ++g_n_libs;
  *api = &lib->api;
done:
  pthread_mutex_unlock(&g_lock);
  return st;
}

const char *mace_cl_error_name(cl_int err) {
  switch (err) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_BUILD_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef E
    default: return "unknown OpenCL error";
  }
}

#endif /* MACE_HAVE_OPENCL_HEADERS */
