/* The image2d side of GPU placement (core/placement.c) on an engine with image memory: the
 * buffer <-> image transform steps and the image2d objects the image tensors live in, reached
 * through the device interface's image entries (runtime/device.h). */
#ifndef MACE_CORE_PLACEMENT_IMAGE_H_
#define MACE_CORE_PLACEMENT_IMAGE_H_

#include "core/op.h"
#include "runtime/device.h"

/* Image memory: tensors whose lifetimes do not overlap share an image2d large enough for
 * both (kernels address pixels by coordinates, so a larger image serves), as MACE's image
 * pool does. Owned by the placement: mems (cl_mem images) are released by
 * mace_image_pool_release, the arrays by mace_image_pool_free. */
typedef struct mace_image_pool {
  void **mems;
  int64_t *width, *height;
  int n, cap;
  int *slot;     /* per tensor (n_slot_entries): its image, or -1 */
  int n_slot_entries;
  int ready;     /* images assigned for the current plan */
} mace_image_pool;

/* A transform step's run (a kernel, shown in profiles as "BufferToImage" / "ImageToBuffer",
 * core/placement.c's kinds): writes op's output, an image tensor when to_image (else a buffer
 * tensor), from its input, a tensor of the same 4-D dims in the other storage, on `gpu`. */
mace_status mace_image_transform(mace_runtime *gpu, mace_op *op, int to_image);

/* Gives every tensor t of `tensors` (n of them) with storage MACE_STORAGE_CL_IMAGE2D and
 * first[t] >= 0 an image alive over ops [first[t], last[t]], allocating what the plan needs,
 * and points t->cl_mem at it. */
mace_status mace_image_pool_assign(mace_image_pool *p, mace_runtime *gpu, mace_tensor *tensors,
                                   int n, const int *first, const int *last);
void mace_image_pool_release(mace_image_pool *p, mace_runtime *gpu);
void mace_image_pool_free(mace_image_pool *p);

/* Image tensor t's values into host memory (floats): a transform into a scratch buffer and a
 * blocking read. */
mace_status mace_image_read(mace_runtime *gpu, const mace_tensor *t, void *dst);

#endif /* MACE_CORE_PLACEMENT_IMAGE_H_ */
