/* The public listing of OpenCL devices (mace_gpu_list_devices) over the OpenCL runtime's. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "mace/mace.h"
#include "runtime/opencl/cl_runtime.h"

mace_status mace_gpu_list_devices(mace_gpu_info *out, int max, int *n) {
  if (!n || max < 0 || (max && !out)) return mace_error(MACE_INVALID_ARGS, "bad arguments");
  *n = 0;
  mace_cl_device_info *all = calloc(max ? (size_t)max : 1, sizeof(*all));
  if (!all) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  int found = 0;
  mace_status st = mace_cl_list_devices(all, max, &found);
  if (st == MACE_OK) {
    for (int i = 0; i < found && i < max; ++i) {
      const mace_cl_device_info *d = &all[i];
      mace_gpu_info *o = &out[i];
      memset(o, 0, sizeof(*o));
      o->platform_index = d->platform_index;
      o->device_index = d->device_index;
#define MACE_COPY_STR(f) memcpy(o->f, d->f, sizeof(o->f) < sizeof(d->f) ? sizeof(o->f) : sizeof(d->f)); \
  o->f[sizeof(o->f) - 1] = '\0'
      MACE_COPY_STR(platform);
      MACE_COPY_STR(name);
      MACE_COPY_STR(vendor);
      MACE_COPY_STR(version);
      MACE_COPY_STR(driver);
      MACE_COPY_STR(extensions);
#undef MACE_COPY_STR
      o->is_gpu = d->is_gpu;
      o->has_fp16 = d->has_fp16;
      o->compute_units = d->compute_units;
      o->global_mem_bytes = d->global_mem_bytes;
      o->max_alloc_bytes = d->max_alloc_bytes;
      o->max_work_group_size = (int64_t)d->max_work_group_size;
    }
    *n = found;
  }
  free(all);
  return st;
}

int mace_gpu_release_idle(void) { return mace_cl_registry_release_idle(); }
