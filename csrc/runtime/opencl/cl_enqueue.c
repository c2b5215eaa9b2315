/* Kernel launches split into chunks along their outermost dimension (limit_opencl_kernel_time:
 * MACE splits long kernels so that the GPU stays responsive to the display). */
#include "runtime/opencl/cl_runtime.h"

#include <errno.h>
#include <stdlib.h>

#ifdef MACE_HAVE_OPENCL_HEADERS

#include "runtime/opencl/cl_enqueue.h"

int mace_cl_chunk_plan(int dims, const size_t *g, const size_t *l, size_t chunk_items, int *dim,
                       size_t *step) {
  *dim = 0;
  *step = g[0];
  if (chunk_items == 0 || dims < 1 || dims > 3) return 1;
  size_t total = 1;
  for (int i = 0; i < dims; ++i) total *= g[i];
  if (total <= chunk_items) return 1;
  int d = dims - 1;
  while (d >= 0 && g[d] <= l[d]) --d;  /* one work-group along d: nothing to split there */
  if (d < 0) return 1;
  const size_t per_group = total / g[d] * l[d];  /* work items of one work-group slice */
  size_t groups = chunk_items / per_group;
  if (groups < 1) groups = 1;
  const size_t s = groups * l[d];
  const size_t n = (g[d] + s - 1) / s;
  if (n <= 1) return 1;
  *dim = d;
  *step = s;
  return (int)n;
}

cl_int mace_cl_enqueue_chunked(const mace_cl_api *api, cl_command_queue queue, cl_kernel kernel,
                               int dims, const size_t *g, const size_t *l, size_t chunk_items,
                               mace_cl_event_fn on_event, void *ctx, int *chunks) {
  int d;
  size_t step;
  const int n = mace_cl_chunk_plan(dims, g, l, chunk_items, &d, &step);
  cl_int err = CL_SUCCESS;
  *chunks = 0;
  for (int c = 0; c < n && err == CL_SUCCESS; ++c) {
    size_t off[3] = {0, 0, 0}, gc[3];
    for (int i = 0; i < dims; ++i) gc[i] = g[i];
    if (n > 1) {
      off[d] = (size_t)c * step;
      gc[d] = g[d] - off[d] < step ? g[d] - off[d] : step;
    }
    cl_event ev = NULL;
    err = api->clEnqueueNDRangeKernel(queue, kernel, (cl_uint)dims, n > 1 ? off : NULL, gc, l, 0,
                                      NULL, on_event ? &ev : NULL);
    if (err != CL_SUCCESS) break;
    ++*chunks;
    if (ev) on_event(ctx, ev);
    if (n > 1) err = api->clFlush(queue);  /* hand this chunk to the device before the next */
  }
  return err;
}

#endif /* MACE_HAVE_OPENCL_HEADERS */

mace_status mace_cl_chunk_items_default(size_t *out) {
  *out = MACE_CL_DEFAULT_CHUNK_ITEMS;
  const char *env = getenv("MACE_OPENCL_CHUNK_ITEMS");
  if (!env || !*env) return MACE_OK;
  char *end = NULL;
  errno = 0;
  const long long v = strtoll(env, &end, 10);
  if (errno || !end || *end || v <= 0)
    return mace_error(MACE_INVALID_ARGS, "MACE_OPENCL_CHUNK_ITEMS='%.40s' is not a positive "
                      "integer (work items per chunk of limit_opencl_kernel_time)", env);
  *out = (size_t)v;
  return MACE_OK;
}
