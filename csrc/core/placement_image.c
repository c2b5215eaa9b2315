/* The image2d side of GPU placement: transform steps and the image pool (core/placement_image.h). */
#include "core/placement_image.h"

#include <stdlib.h>
#include <string.h>

mace_status mace_image_transform(mace_runtime *gpu, mace_op *op, int to_image) {
  const mace_tensor *src = op->inputs[0];
  mace_tensor *dst = op->outputs[0];
  if (!mace_tensor_numel(src)) return MACE_OK;
  mace_status st =
      to_image ? gpu->ops->image_from_buffer(gpu, src->cl_mem, src->cl_offset, dst->cl_mem,
                                             src->dims, op->name)
               : gpu->ops->image_to_buffer(gpu, src->cl_mem, dst->cl_mem, dst->cl_offset,
                                           src->dims, op->name);
  if (st != MACE_OK)
    return mace_error_wrap(st, "op '%s' (%s of '%s')", op->name, to_image ? "image" : "buffer",
                           src->name);
  return MACE_OK;
}

void mace_image_pool_release(mace_image_pool *p, mace_runtime *gpu) {
  for (int i = 0; i < p->n; ++i) gpu->ops->free(gpu, p->mems[i]);
  p->n = 0;
  p->ready = 0;
}

void mace_image_pool_free(mace_image_pool *p) {
  free(p->mems);
  free(p->width);
  free(p->height);
  free(p->slot);
  memset(p, 0, sizeof(*p));
}

static mace_status add_slot(mace_image_pool *p, int64_t w, int64_t h, int *out) {
  if (p->n == p->cap) {
    const int cap = p->cap ? 2 * p->cap : 32;
    void **m = realloc(p->mems, (size_t)cap * sizeof(void *));
    if (m) p->mems = m;
    int64_t *ws = realloc(p->width, (size_t)cap * sizeof(int64_t));
    if (ws) p->width = ws;
    int64_t *hs = realloc(p->height, (size_t)cap * sizeof(int64_t));
    if (hs) p->height = hs;
    if (!m || !ws || !hs) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    p->cap = cap;
  }
  p->mems[p->n] = NULL;
  p->width[p->n] = w;
  p->height[p->n] = h;
  *out = p->n++;
  return MACE_OK;
}

mace_status mace_image_pool_assign(mace_image_pool *p, mace_runtime *gpu, mace_tensor *tensors,
                                   int n, const int *first, const int *last) {
  mace_status st = MACE_OK;
  int *order = NULL, *busy = NULL;
  mace_image_pool_release(p, gpu);
  if (p->n_slot_entries < n) {
    int *s = realloc(p->slot, (size_t)(n ? n : 1) * sizeof(int));
    if (!s) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    p->slot = s;
    p->n_slot_entries = n;
  }
  order = malloc((size_t)(n ? n : 1) * sizeof(int));
  busy = malloc((size_t)(n ? n : 1) * sizeof(int)); /* per image: last op of its tensor */
  if (!order || !busy) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    goto done;
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    p->slot[i] = -1;
    if (tensors[i].storage == MACE_STORAGE_CL_IMAGE2D && first[i] >= 0) order[m++] = i;
  }
  /* In order of first use (insertion sort: already nearly sorted by tensor index). */
  for (int a = 1; a < m; ++a) {
    const int v = order[a];
    int b = a - 1;
    while (b >= 0 && first[order[b]] > first[v]) {
      order[b + 1] = order[b];
      --b;
    }
    order[b + 1] = v;
  }
  for (int a = 0; a < m; ++a) {
    const int t = order[a];
    int64_t w, h;
    gpu->ops->image_extent(gpu, tensors[t].dims, &w, &h);
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    /* The smallest free image that holds it, else the free image to grow least, else a new one. */
    int best = -1;
    for (int s = 0; s < p->n; ++s) {
      if (busy[s] >= first[t] || p->width[s] < w || p->height[s] < h) continue;
      if (best < 0 || p->width[s] * p->height[s] < p->width[best] * p->height[best]) best = s;
    }
    if (best < 0) { /* grow the free image that grows least, when that adds less than w x h */
      int64_t least = w * h;
      for (int s = 0; s < p->n; ++s) {
        if (busy[s] >= first[t]) continue;
        const int64_t gw = p->width[s] > w ? p->width[s] : w, gh = p->height[s] > h ? p->height[s] : h;
        const int64_t added = gw * gh - p->width[s] * p->height[s];
        if (added < least) {
          least = added;
          best = s;
        }
      }
      if (best >= 0) {
        if (w > p->width[best]) p->width[best] = w;
        if (h > p->height[best]) p->height[best] = h;
      }
    }
    if (best < 0) {
      if ((st = add_slot(p, w, h, &best)) != MACE_OK) goto done;
    }
    busy[best] = last[t] > first[t] ? last[t] : first[t];
    p->slot[t] = best;
  }
  for (int s = 0; s < p->n; ++s) {
    st = gpu->ops->image_alloc(gpu, p->width[s], p->height[s], &p->mems[s]);
    if (st != MACE_OK) {
      st = mace_error_wrap(st, "allocating image %d of %lld x %lld pixels", s,
                           (long long)p->width[s], (long long)p->height[s]);
      p->n = s; /* the ones made are released by the next release */
      goto done;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (p->slot[i] < 0) continue;
    tensors[i].cl_mem = p->mems[p->slot[i]];
    tensors[i].cl_offset = 0;
    tensors[i].data = NULL;
  }
  p->ready = 1;
done:
  free(order);
  free(busy);
  return st;
}

mace_status mace_image_read(mace_runtime *gpu, const mace_tensor *t, void *dst) {
  const size_t numel = (size_t)mace_tensor_numel(t);
  if (!numel) return MACE_OK;
  void *buf = NULL;
  mace_status st = gpu->ops->alloc(gpu, numel * gpu->ops->elem_size(gpu, MACE_DT_F32), &buf);
  if (st == MACE_OK) st = gpu->ops->image_to_buffer(gpu, t->cl_mem, buf, 0, t->dims, NULL);
  if (st == MACE_OK) st = gpu->ops->copy_out(gpu, buf, 0, dst, numel, MACE_DT_F32);
  if (buf) gpu->ops->free(gpu, buf);
  return st;
}
