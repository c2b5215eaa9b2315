/* Kernel launches split into chunks along their outermost dimension (seed 003's
 * limit_opencl_kernel_time), for the other files of this folder (they see <CL/cl.h>). */
#ifndef MACE_RUNTIME_OPENCL_CL_ENQUEUE_H_
#define MACE_RUNTIME_OPENCL_CL_ENQUEUE_H_

#include <stddef.h>

#include "runtime/opencl/cl_loader.h"

/* How a launch over global size g (each g[i] a multiple of l[i]) is split so that no chunk has
 * more than chunk_items work items: the number of chunks (1: one launch, as with chunk_items
 * 0), the dimension split (*dim: the outermost with more than one work-group) and the chunk's
 * extent along it (*step, a multiple of l[*dim]; the last chunk may be shorter). A chunk never
 * splits a work-group, so it may exceed chunk_items when one slice of work-groups does. */
int mace_cl_chunk_plan(int dims, const size_t *g, const size_t *l, size_t chunk_items, int *dim,
                       size_t *step);

/* Called with each launch's event (ownership passes to the callee). */
typedef void (*mace_cl_event_fn)(void *ctx, cl_event event);

/* Enqueues `kernel` over g with local size l (never blocks): one clEnqueueNDRangeKernel, or,
 * per mace_cl_chunk_plan, one per chunk with its global work offset and a clFlush after each,
 * so the device may run other work between them. Kernels see the same get_global_id values
 * either way; those that index by work-group use MACE_GROUP_ID (kernels/opencl/common.cl).
 * on_event (NULL: no events) gets every launch's event. *chunks: the launches made. Returns
 * the first error (launches already enqueued stay). */
cl_int mace_cl_enqueue_chunked(const mace_cl_api *api, cl_command_queue queue, cl_kernel kernel,
                               int dims, const size_t *g, const size_t *l, size_t chunk_items,
                               mace_cl_event_fn on_event, void *ctx, int *chunks);

#endif /* MACE_RUNTIME_OPENCL_CL_ENQUEUE_H_ */
