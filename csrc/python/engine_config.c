/* The Engine's option names (device, affinity, gpu_precision, gpu_memory) turned into mace_config
 * fields. */
#include "python/mace_python.h"

#include <string.h>

int mace_py_config_names(mace_config *cfg, const char *device, int affinity,
                         const char *gpu_precision) {
  if (strcmp(device, "cpu") == 0 || strcmp(device, "CPU") == 0) {
    cfg->device = MACE_DEVICE_CPU;
  } else if (strcmp(device, "gpu") == 0 || strcmp(device, "GPU") == 0) {
    cfg->device = MACE_DEVICE_GPU;
  } else {
    PyErr_Format(mace_py_InvalidArgumentError, "device must be 'cpu' or 'gpu', not '%s'", device);
    return -1;
  }
  if (affinity < MACE_AFFINITY_NONE || affinity > MACE_AFFINITY_LITTLE_ONLY) {
    PyErr_Format(mace_py_InvalidArgumentError,
                 "affinity must be 0 (none), 1 (big cores) or 2 (little), not %d", affinity);
    return -1;
  }
  cfg->affinity = (mace_affinity)affinity;
  if (strcmp(gpu_precision, "fp16") == 0) {
    cfg->gpu_precision = MACE_GPU_FP16;
  } else if (strcmp(gpu_precision, "fp32") == 0) {
    cfg->gpu_precision = MACE_GPU_FP32;
  } else if (strcmp(gpu_precision, "fp16_storage") == 0) {
    cfg->gpu_precision = MACE_GPU_FP16_STORAGE;
  } else {
    PyErr_Format(mace_py_InvalidArgumentError,
                 "gpu_precision must be 'fp16', 'fp32' or 'fp16_storage', not '%s'",
                 gpu_precision);
    return -1;
  }
  return 0;
}

int mace_py_config_gpu_memory(mace_config *cfg, const char *gpu_memory) {
  if (strcmp(gpu_memory, "buffer") == 0) {
    cfg->gpu_memory = MACE_GPU_BUFFER;
  } else if (strcmp(gpu_memory, "image") == 0) {
    cfg->gpu_memory = MACE_GPU_IMAGE;
  } else {
    PyErr_Format(mace_py_InvalidArgumentError, "gpu_memory must be 'buffer' or 'image', not '%s'",
                 gpu_memory);
    return -1;
  }
  return 0;
}
