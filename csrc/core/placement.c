/* Placement of ops on the GPU and the CPU, the copies between devices and the device arena. */
#define _POSIX_C_SOURCE 200809L
#include "core/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/placement_image.h"
#include "core/status.h"
#include "runtime/device.h"

/* A step run before op `before`: a transfer (a copy of a tensor to the other device) or a
 * transform (a tensor's buffer <-> image copy, core/placement_image.h). */
typedef struct transfer_step {
  mace_op op;               /* first: the kind's run gets &op; kind: transfer_kind,
                             * to_image_kind or to_buffer_kind; name: the copy's name (borrowed) */
  mace_runtime *gpu;        /* the device the copy goes to, comes from or is made on (borrowed) */
  mace_tensor *io[2];       /* op.inputs = io (the source), op.outputs = io + 1 (the copy) */
  int before;
  int skipped;              /* the copy is a caller's device buffer this run: no step */
} transfer_step;

/* One entry of the execution order: an op of the net or a transfer step. */
typedef struct sched_entry {
  const mace_op *op;
  double *ms;
} sched_entry;

struct mace_placement {
  unsigned char *is_copy;   /* owned, per tensor (capacity): made by placement (a copy) */
  int *twin;                /* owned, per tensor: its copy on the other device (or, for a copy,
                             * its original), -1 */
  int *copy_first;          /* owned, per tensor: first / last op reading the copy (this plan) */
  int *copy_last;
  unsigned char *op_gpu;    /* owned, per op: runs on the GPU */
  transfer_step *steps;     /* owned, n_steps (at most one per copy) */
  double *step_ms;
  int n_steps;
  sched_entry *sched;       /* owned, n_ops + n_steps */
  int n_sched;
  mace_planner *planner;    /* owned: the device arena's planner */
  void *arena;              /* owned device memory (a cl_mem), arena_capacity bytes */
  int64_t arena_capacity;
  void **consts;            /* owned device memory of uploaded constants */
  int n_consts, cap_consts;
  int gpu_ops_queued;       /* GPU ops enqueued since the last wait (queue window) */
  void **bound_mem;         /* owned array, per tensor: the caller's cl_mem a device copy of a
                             * model input reads from instead of the arena (borrowed, this
                             * run; mace_placement_bind_device_input), or NULL */
  int *origin;              /* owned, per tensor: for a copy, the tensor it copies; -1 */
  int *img_twin;            /* owned, per tensor: the image copy of a buffer tensor, or the
                             * buffer copy of an image tensor (placement_image.c); -1 */
  mace_image_pool images;   /* image2d memory of the image tensors (placement_image.c) */
};

static int is_image(const mace_tensor *t) { return t->storage == MACE_STORAGE_CL_IMAGE2D; }

/* Bytes of t on the device: float tensors in the device's precision. */
static size_t device_bytes(const mace_net *net, const mace_tensor *t) {
  return (size_t)mace_tensor_numel(t) * net->gpu->ops->elem_size(net->gpu, t->dtype);
}

static int on_gpu(const mace_tensor *t) {
  return t->storage == MACE_STORAGE_CL_BUFFER && t->role != MACE_TENSOR_CONST;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- transfer steps -------------------------------------------------------------------- */

static mace_status transfer_infer(mace_op *op) {
  (void)op;
  return MACE_OK;
}

static mace_status transfer_run(mace_op *op) {
  mace_runtime *gpu = ((transfer_step *)op)->gpu;
  const mace_tensor *src = op->inputs[0];
  mace_tensor *dst = op->outputs[0];
  const size_t numel = (size_t)mace_tensor_numel(src);
  if (!numel) return MACE_OK;
  mace_status st = dst->storage == MACE_STORAGE_CL_BUFFER
                       ? gpu->ops->copy_in(gpu, dst->cl_mem, dst->cl_offset, src->data, numel,
                                           src->dtype)
                       : gpu->ops->copy_out(gpu, src->cl_mem, src->cl_offset, dst->data, numel,
                                            src->dtype);
  if (st != MACE_OK) return mace_error_wrap(st, "op '%s' (copy of '%s')", op->name, src->name);
  return MACE_OK;
}

static const mace_op_kind transfer_kind = {.type = "Transfer",
                                           .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_INVALID,
                                           .infer = transfer_infer,
                                           .run = transfer_run};

/* The buffer <-> image transforms (core/placement_image.h), a step each like a transfer. */
static mace_status to_image_run(mace_op *op) {
  return mace_image_transform(((transfer_step *)op)->gpu, op, 1);
}

static mace_status to_buffer_run(mace_op *op) {
  return mace_image_transform(((transfer_step *)op)->gpu, op, 0);
}

static const mace_op_kind to_image_kind = {.type = "BufferToImage",
                                           .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_INVALID,
                                           .infer = transfer_infer,
                                           .run = to_image_run};
static const mace_op_kind to_buffer_kind = {.type = "ImageToBuffer",
                                            .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_INVALID,
                                            .infer = transfer_infer,
                                            .run = to_buffer_run};

/* ---- lifetime -------------------------------------------------------------------------- */

mace_status mace_placement_create(mace_net *net) {
  const int cap = net->tensor_capacity, n_ops = net->n_ops;
  mace_placement *pl = calloc(1, sizeof(*pl));
  if (!pl) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  net->placement = pl;
  pl->is_copy = calloc(cap ? (size_t)cap : 1, 1);
  pl->twin = malloc((size_t)(cap ? cap : 1) * sizeof(int));
  pl->copy_first = malloc((size_t)(cap ? cap : 1) * sizeof(int));
  pl->copy_last = malloc((size_t)(cap ? cap : 1) * sizeof(int));
  pl->op_gpu = calloc(n_ops ? (size_t)n_ops : 1, 1);
  pl->steps = calloc(cap ? (size_t)cap : 1, sizeof(transfer_step));
  pl->step_ms = calloc(cap ? (size_t)cap : 1, sizeof(double));
  pl->sched = calloc((size_t)(n_ops + cap + 1), sizeof(sched_entry));
  pl->bound_mem = calloc(cap ? (size_t)cap : 1, sizeof(void *));
  pl->origin = malloc((size_t)(cap ? cap : 1) * sizeof(int));
  pl->img_twin = malloc((size_t)(cap ? cap : 1) * sizeof(int));
  if (!pl->origin || !pl->img_twin || !pl->bound_mem || !pl->is_copy || !pl->twin || !pl->copy_first || !pl->copy_last || !pl->op_gpu || !pl->steps ||
      !pl->step_ms || !pl->sched)
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  for (int i = 0; i < cap; ++i)
    pl->twin[i] = pl->copy_first[i] = pl->copy_last[i] = pl->origin[i] = pl->img_twin[i] = -1;
  return mace_planner_create(cap, n_ops, &pl->planner);
}

void mace_placement_release(mace_net *net) {
  mace_placement *pl = net->placement;
  if (!pl) return;
  if (pl->arena) net->gpu->ops->free(net->gpu, pl->arena);
  pl->arena = NULL;
  pl->arena_capacity = 0;
  mace_image_pool_release(&pl->images, net->gpu);
  for (int i = 0; i < net->n_tensors; ++i)
    if (on_gpu(&net->tensors[i]) || is_image(&net->tensors[i])) net->tensors[i].cl_mem = NULL;
}

void mace_placement_destroy(mace_net *net) {
  mace_placement *pl = net->placement;
  if (!pl) return;
  mace_placement_release(net);
  for (int i = 0; i < pl->n_consts; ++i) net->gpu->ops->free(net->gpu, pl->consts[i]);
  free(pl->consts);
  free(pl->is_copy);
  free(pl->twin);
  free(pl->copy_first);
  free(pl->copy_last);
  free(pl->op_gpu);
  free(pl->steps);
  free(pl->step_ms);
  free(pl->sched);
  free(pl->bound_mem);
  free(pl->origin);
  free(pl->img_twin);
  mace_image_pool_free(&pl->images);
  mace_planner_destroy(pl->planner);
  free(pl);
  net->placement = NULL;
}

/* ---- build ----------------------------------------------------------------------------- */

/* A new tensor named "<name>:<suffix>", the copy of tensor `idx` (twin of each other). */
static mace_status add_copy(mace_net *net, int idx, const char *suffix, mace_tensor_role role,
                            int image, int *out) {
  mace_placement *pl = net->placement;
  const mace_tensor *t = &net->tensors[idx];
  if (net->n_tensors >= net->tensor_capacity)
    return mace_error(MACE_RUNTIME_ERROR, "no room for a copy of '%s'", t->name);
  size_t len = strlen(t->name) + strlen(suffix) + 2;
  char *name = malloc(len);
  if (!name) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  snprintf(name, len, "%s:%s", t->name, suffix);
  int c;
  mace_status st = mace_net_add_tensor(net, name, role, &c);
  free(name);
  MACE_RETURN_IF_ERROR(st);
  pl->is_copy[c] = 1;
  pl->origin[c] = idx;
  if (image) {
    pl->img_twin[idx] = c;
    pl->img_twin[c] = idx;
  } else {
    pl->twin[idx] = c;
    pl->twin[c] = idx;
  }
  *out = c;
  return MACE_OK;
}

/* The device copy of constant `idx`, uploaded at its first use: a constant tensor with no host
 * data (so the CPU kinds GPU kinds infer with pack nothing) and its own cl_mem. */
static mace_status const_copy(mace_net *net, int idx, mace_tensor **out) {
  mace_placement *pl = net->placement;
  if (pl->twin[idx] >= 0) {
    *out = &net->tensors[pl->twin[idx]];
    return MACE_OK;
  }
  if (pl->n_consts == pl->cap_consts) {
    int cap = pl->cap_consts ? 2 * pl->cap_consts : 64;
    void **grown = realloc(pl->consts, (size_t)cap * sizeof(void *));
    if (!grown) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    pl->consts = grown;
    pl->cap_consts = cap;
  }
  const mace_tensor *t = &net->tensors[idx];
  size_t bytes = device_bytes(net, t);
  void *mem = NULL;
  mace_status st = net->gpu->ops->alloc(net->gpu, bytes ? bytes : 64, &mem);
  if (st != MACE_OK) return mace_error_wrap(st, "uploading constant '%s'", t->name);
  pl->consts[pl->n_consts++] = mem;
  if (bytes && (st = net->gpu->ops->copy_in(net->gpu, mem, 0, t->data,
                                            (size_t)mace_tensor_numel(t), t->dtype)) != MACE_OK)
    return mace_error_wrap(st, "uploading constant '%s'", t->name);
  int c;
  MACE_RETURN_IF_ERROR(add_copy(net, idx, "gpu", MACE_TENSOR_CONST, 0, &c));
  mace_tensor *copy = &net->tensors[c];
  t = &net->tensors[idx];
  copy->dtype = t->dtype;
  copy->ndim = t->ndim;
  memcpy(copy->dims, t->dims, sizeof(copy->dims));
  copy->scale = t->scale;
  copy->zero_point = t->zero_point;
  copy->storage = MACE_STORAGE_CL_BUFFER;
  copy->cl_mem = mem;
  copy->cl_offset = 0;
  *out = copy;
  return MACE_OK;
}

static int is_mask_bit(unsigned mask, int k) { return k < 32 && (mask >> k) & 1u; }

mace_status mace_placement_bind_inputs(mace_net *net, mace_op *op) {
  const mace_placement *pl = net->placement;
  if (net->gpu->ops->bind_op) net->gpu->ops->bind_op(net->gpu, op);
  for (int k = 0; k < op->n_inputs; ++k) {
    int idx = (int)(op->inputs[k] - net->tensors);
    while (pl->is_copy[idx]) idx = pl->origin[idx];
    op->inputs[k] = &net->tensors[idx];
  }
  if (op->kind->device != MACE_DEVICE_GPU) return MACE_OK;
  for (int k = 0; k < op->n_inputs; ++k)
    if (op->inputs[k]->role == MACE_TENSOR_CONST && !is_mask_bit(op->kind->value_inputs, k))
      MACE_RETURN_IF_ERROR(const_copy(net, (int)(op->inputs[k] - net->tensors), &op->inputs[k]));
  return MACE_OK;
}

static const mace_op_kind *cpu_kind(const mace_op *op) {
  mace_dtype dt = op->n_inputs ? op->inputs[0]->dtype : MACE_DT_F32;
  return mace_registry_find(op->type, MACE_DEVICE_CPU, dt);
}

/* The kind an op of `kind` falls back to: an image kind to its type's buffer kind, a buffer
 * kind to the CPU's. */
static const mace_op_kind *fallback_kind(const mace_op *op) {
  mace_dtype dt = op->n_inputs ? op->inputs[0]->dtype : MACE_DT_F32;
  const mace_op_kind *buf =
      op->kind->cl_image ? mace_registry_find(op->type, MACE_DEVICE_GPU, dt) : NULL;
  return buf ? buf : cpu_kind(op);
}

int mace_placement_can_fall_back(const mace_net *net, int index) {
  const mace_op *op = &net->ops[index];
  return op->kind->device == MACE_DEVICE_GPU && fallback_kind(op) != NULL;
}

const mace_op_kind *mace_placement_gpu_kind(const mace_net *net, const char *type, mace_dtype dt,
                                            char *const *outputs, size_t n_outputs) {
  const mace_op_kind *k = NULL;
  int gives_output = 0;
  for (size_t i = 0; i < n_outputs; ++i)
    for (size_t j = 0; j < net->def->n_output_info; ++j)
      gives_output |= net->def->output_info[j]->name &&
                      strcmp(outputs[i], net->def->output_info[j]->name) == 0;
  if (net->gpu->ops->image_memory && net->gpu->ops->image_memory(net->gpu) && !gives_output)
    k = mace_registry_find_image(type, dt);
  return k ? k : mace_registry_find(type, MACE_DEVICE_GPU, dt);
}

mace_status mace_placement_fall_back(mace_net *net, int index) {
  mace_op *op = &net->ops[index];
  const mace_op_kind *cpu = fallback_kind(op);
  if (!cpu) return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): no CPU kernel", op->name, op->type);
  MACE_VLOG(1, "op '%s' (%s) runs on the %s: the %s kernel refused its shapes (%s)", op->name,
            op->type, cpu->device == MACE_DEVICE_GPU ? "GPU with buffers" : "CPU",
            op->kind->cl_image ? "GPU image" : "GPU", mace_last_error());
  if (op->kind->release && op->state) op->kind->release(op);
  free(op->state);
  op->state = NULL;
  op->kind = cpu;
  MACE_RETURN_IF_ERROR(mace_placement_bind_inputs(net, op)); /* the host constants again */
  if (cpu->state_size) {
    op->state = calloc(1, cpu->state_size);
    if (!op->state) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  }
  if (cpu->init) MACE_RETURN_IF_ERROR(cpu->init(op));
  return MACE_OK;
}

/* The copy of tensor `idx` on the other device, made at its first use in this plan. */
static mace_status get_copy(mace_net *net, int idx, int *out) {
  mace_placement *pl = net->placement;
  mace_tensor *t = &net->tensors[idx];
  const int to_gpu = !on_gpu(t);
  if (pl->twin[idx] < 0) {
    int made;
    MACE_RETURN_IF_ERROR(
        add_copy(net, idx, to_gpu ? "to_gpu" : "to_host", MACE_TENSOR_INTERMEDIATE, 0, &made));
    t = &net->tensors[idx];
  }
  const int c = pl->twin[idx];
  mace_tensor *copy = &net->tensors[c];
  copy->dtype = t->dtype;
  copy->ndim = t->ndim;
  memcpy(copy->dims, t->dims, sizeof(copy->dims));
  copy->layout = t->layout;
  copy->block = t->block;
  copy->scale = t->scale;
  copy->zero_point = t->zero_point;
  copy->view_of = NULL;
  copy->storage = to_gpu ? MACE_STORAGE_CL_BUFFER : MACE_STORAGE_HOST;
  *out = c;
  return MACE_OK;
}

/* Whether op i runs on the GPU: a GPU kind, or a CPU view op whose input is there. */
static int runs_on_gpu(const mace_net *net, const mace_op *op) {
  if (op->kind->device == MACE_DEVICE_GPU) return 1;
  if (op->kind->run != mace_op_view_run || op->n_inputs < 1) return 0;
  const mace_tensor *x = op->inputs[0];
  (void)net;
  return x->role != MACE_TENSOR_CONST && !x->is_value && (on_gpu(x) || is_image(x));
}

/* Where a tensor lives, or an op reads its computed inputs. */
enum { LOC_HOST = 0, LOC_BUFFER = 1, LOC_IMAGE = 2 };
static int loc_of(const mace_tensor *t) {
  return is_image(t) ? LOC_IMAGE : on_gpu(t) ? LOC_BUFFER : LOC_HOST;
}

/* The step that writes copy `c` of `src` right before op i (made at the copy's first use in
 * this plan), and the copy's last reader. */
static void add_step(mace_net *net, mace_tensor *src, int c, int i, const mace_op_kind *kind) {
  mace_placement *pl = net->placement;
  if (pl->copy_first[c] < 0) {
    transfer_step *s = &pl->steps[pl->n_steps++];
    memset(s, 0, sizeof(*s));
    s->io[0] = src;
    s->io[1] = &net->tensors[c];
    s->op.kind = kind;
    s->op.name = net->tensors[c].name;
    s->op.type = kind->type;
    s->op.inputs = s->io;
    s->op.n_inputs = 1;
    s->op.outputs = s->io + 1;
    s->op.n_outputs = 1;
    s->gpu = net->gpu;
    s->op.pool = net->pool;
    s->before = i;
    pl->copy_first[c] = i;
  }
  pl->copy_last[c] = i;
}

/* Tensor `idx` (host or buffer) copied to the other of the two for op i: a transfer step. */
static mace_status transfer_copy(mace_net *net, int idx, int i, int *out) {
  MACE_RETURN_IF_ERROR(get_copy(net, idx, out));
  add_step(net, &net->tensors[idx], *out, i, &transfer_kind);
  return MACE_OK;
}

/* Buffer tensor `idx` as an image for op i, or image tensor `idx` as a buffer: a transform. */
static mace_status transform_copy(mace_net *net, int idx, int i, int *out) {
  mace_placement *pl = net->placement;
  const int to_image = !is_image(&net->tensors[idx]);
  if (pl->img_twin[idx] < 0) {
    int made;
    MACE_RETURN_IF_ERROR(add_copy(net, idx, to_image ? "to_image" : "to_buffer",
                                  MACE_TENSOR_INTERMEDIATE, 1, &made));
  }
  const int c = pl->img_twin[idx];
  const mace_tensor *t = &net->tensors[idx];
  mace_tensor *copy = &net->tensors[c];
  copy->dtype = t->dtype;
  copy->ndim = t->ndim;
  memcpy(copy->dims, t->dims, sizeof(copy->dims));
  copy->layout = t->layout;
  copy->block = t->block;
  copy->scale = t->scale;
  copy->zero_point = t->zero_point;
  copy->view_of = NULL;
  copy->storage = to_image ? MACE_STORAGE_CL_IMAGE2D : MACE_STORAGE_CL_BUFFER;
  add_step(net, &net->tensors[idx], c, i,
           to_image ? &to_image_kind : &to_buffer_kind);
  *out = c;
  return MACE_OK;
}

/* Rewires the computed inputs of op i to copies where it reads them (`loc`), adding the
 * transfer and transform steps: host <-> buffer is a transfer, buffer <-> image a transform,
 * host <-> image both, through a buffer copy. */
static mace_status place_inputs(mace_net *net, int i, int loc) {
  mace_op *op = &net->ops[i];
  for (int k = 0; k < op->n_inputs; ++k) {
    mace_tensor *t = op->inputs[k];
    const int from = loc_of(t);
    if (t->role == MACE_TENSOR_CONST || is_mask_bit(op->kind->value_inputs, k) ||
        is_mask_bit(op->kind->dims_only_inputs, k) || from == loc)
      continue;
    int c = (int)(t - net->tensors);
    if (from == LOC_IMAGE) MACE_RETURN_IF_ERROR(transform_copy(net, c, i, &c));
    if (from == LOC_HOST || loc == LOC_HOST) MACE_RETURN_IF_ERROR(transfer_copy(net, c, i, &c));
    if (loc == LOC_IMAGE) MACE_RETURN_IF_ERROR(transform_copy(net, c, i, &c));
    op->inputs[k] = &net->tensors[c];
  }
  return MACE_OK;
}

mace_status mace_placement_apply(mace_net *net) {
  mace_placement *pl = net->placement;
  for (int i = 0; i < net->tensor_capacity; ++i) pl->copy_first[i] = pl->copy_last[i] = -1;
  pl->n_steps = 0;
  for (int i = 0; i < net->n_tensors; ++i) {
    mace_tensor *t = &net->tensors[i];
    if (!pl->is_copy[i] && t->role != MACE_TENSOR_CONST) t->storage = MACE_STORAGE_HOST;
  }
  for (int i = 0; i < net->n_ops; ++i) {
    mace_op *op = &net->ops[i];
    MACE_RETURN_IF_ERROR(mace_placement_bind_inputs(net, op));
    const int gpu = !net->evaluated[i] && runs_on_gpu(net, op);
    const int loc = !gpu ? LOC_HOST : op->kind->cl_image ? LOC_IMAGE : LOC_BUFFER;
    pl->op_gpu[i] = (unsigned char)gpu;
    if (!net->evaluated[i]) MACE_RETURN_IF_ERROR(place_inputs(net, i, loc));
    for (int k = 0; k < op->n_outputs; ++k)
      if (!op->outputs[k]->is_value)
        op->outputs[k]->storage = loc == LOC_IMAGE  ? MACE_STORAGE_CL_IMAGE2D
                                  : loc == LOC_BUFFER ? MACE_STORAGE_CL_BUFFER
                                                      : MACE_STORAGE_HOST;
    /* A view shares the bytes of its input as rewired: the root on this op's device. */
    mace_tensor *y = op->outputs[0];
    mace_plan_tensor *py = mace_planner_tensor(net->planner, (int)(y - net->tensors));
    if (op->kind->output_is_view && op->n_inputs >= 1) {
      mace_tensor *root = op->inputs[0]->view_of ? op->inputs[0]->view_of : op->inputs[0];
      y->view_of = root;
      py->view_of = (int)(root - net->tensors);
    } else if (y->view_of) {
      y->view_of = NULL;
      py->view_of = -1;
    }
  }
  /* Copies' lifetimes; copies not used in this plan take no memory. */
  for (int c = 0; c < net->n_tensors; ++c) {
    if (!pl->is_copy[c] || net->tensors[c].role == MACE_TENSOR_CONST) continue;
    mace_plan_tensor *pt = mace_planner_tensor(net->planner, c);
    pt->first = pl->copy_first[c];
    pt->last = pl->copy_last[c];
    pt->view_of = -1;
    pt->flags = pl->copy_first[c] < 0 ? MACE_PLAN_OUTSIDE : 0;
  }
  mace_placement_clear_device_inputs(net);
  return MACE_OK;
}

/* The execution order: the ops and the transfer steps not skipped. */
static void schedule(mace_net *net) {
  mace_placement *pl = net->placement;
  int n = 0, s = 0;
  for (int i = 0; i < net->n_ops; ++i) {
    for (; s < pl->n_steps && pl->steps[s].before == i; ++s)
      if (!pl->steps[s].skipped)
        pl->sched[n++] = (sched_entry){&pl->steps[s].op, &pl->step_ms[s]};
    pl->sched[n++] = (sched_entry){&net->ops[i], &net->op_ms[i]};
  }
  pl->n_sched = n;
}

void mace_placement_clear_device_inputs(mace_net *net) {
  mace_placement *pl = net->placement;
  if (!pl) return;
  memset(pl->bound_mem, 0, (size_t)net->tensor_capacity * sizeof(void *));
  for (int s = 0; s < pl->n_steps; ++s) pl->steps[s].skipped = 0;
  schedule(net);
}

/* Points the device copy `c` of a model input, and the views of it, at `mem` (from byte 0). */
static void bind_copy(mace_net *net, int c, void *mem) {
  const int64_t *offsets = mace_planner_offsets(net->placement->planner);
  mace_tensor *copy = &net->tensors[c];
  for (int i = 0; i < net->n_tensors; ++i) {
    mace_tensor *t = &net->tensors[i];
    if (!on_gpu(t) || (t != copy && t->view_of != copy)) continue;
    t->cl_mem = mem;
    t->cl_offset = (size_t)(offsets[i] - offsets[c]);
  }
}

mace_status mace_placement_bind_device_input(mace_net *net, int index, void *mem,
                                              int *needs_host) {
  mace_placement *pl = net->placement;
  *needs_host = 0;
  const mace_tensor *x = &net->tensors[index];
  for (int i = 0; i < net->n_ops && !*needs_host; ++i) {
    const mace_op *op = &net->ops[i];
    if (pl->op_gpu[i] || net->evaluated[i]) continue;
    for (int k = 0; k < op->n_inputs; ++k)
      if (op->inputs[k] == x && !is_mask_bit(op->kind->dims_only_inputs, k)) *needs_host = 1;
  }
  for (int j = 0; j < net->n_outputs; ++j)
    if (net->outputs[j].tensor == index) *needs_host = 1;
  const int c = pl->twin[index];
  if (c < 0 || pl->copy_first[c] < 0) return MACE_OK; /* no GPU op reads it */
  for (int s = 0; s < pl->n_steps; ++s)
    if (pl->steps[s].io[1] == &net->tensors[c]) pl->steps[s].skipped = 1;
  pl->bound_mem[c] = mem;
  bind_copy(net, c, mem);
  schedule(net);
  return MACE_OK;
}

/* ---- planning and memory --------------------------------------------------------------- */

void mace_placement_describe(mace_net *net) {
  mace_placement *pl = net->placement;
  for (int i = 0; i < net->n_tensors; ++i) {
    const mace_tensor *t = &net->tensors[i];
    mace_plan_tensor *host = mace_planner_tensor(net->planner, i);
    mace_plan_tensor *dev = mace_planner_tensor(pl->planner, i);
    const int unused_copy = pl->is_copy[i] && pl->copy_first[i] < 0;
    if (is_image(t)) { /* in an image of the pool, outside both arenas */
      host->flags |= MACE_PLAN_OUTSIDE;
      *dev = (mace_plan_tensor){0, -1, -1, -1, MACE_PLAN_OUTSIDE};
    } else if (on_gpu(t) && !unused_copy) {
      host->flags |= MACE_PLAN_OUTSIDE;
      *dev = *host;
      dev->flags = host->flags & (MACE_PLAN_COMPUTED | MACE_PLAN_KEEP);
      dev->bytes = (int64_t)device_bytes(net, t);
    } else {
      if (t->role != MACE_TENSOR_CONST && !t->is_value && !unused_copy)
        host->flags &= ~MACE_PLAN_OUTSIDE;
      *dev = (mace_plan_tensor){0, -1, -1, -1, MACE_PLAN_OUTSIDE};
    }
  }
}

mace_status mace_placement_plan(mace_net *net) {
  mace_placement *pl = net->placement;
  mace_planner_clear_gathers(pl->planner);
  MACE_RETURN_IF_ERROR(mace_planner_plan(pl->planner));
  if (pl->arena && mace_planner_arena_bytes(pl->planner) > pl->arena_capacity)
    mace_placement_release(net);
  pl->images.ready = 0; /* the next prepare gives the image tensors their images */
  return MACE_OK;
}

int64_t mace_placement_arena_bytes(const mace_net *net) {
  return net->placement ? mace_planner_arena_bytes(net->placement->planner) : 0;
}

/* Images for the image tensors of this plan, by their lifetimes: a copy's from its first to
 * its last reader, an op's output from the op to its last reader (to the end when kept). */
static mace_status assign_images(mace_net *net) {
  mace_placement *pl = net->placement;
  const int n = net->n_tensors;
  int *first = malloc((size_t)(n ? n : 1) * sizeof(int));
  int *last = malloc((size_t)(n ? n : 1) * sizeof(int));
  mace_status st = MACE_OK;
  if (!first || !last) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    goto done;
  }
  for (int i = 0; i < n; ++i) {
    const mace_plan_tensor *pt = mace_planner_tensor(net->planner, i);
    first[i] = pl->is_copy[i] ? pl->copy_first[i] : pt->first;
    last[i] = pl->is_copy[i] ? pl->copy_last[i] : pt->last;
    if (pt->flags & MACE_PLAN_KEEP) last[i] = net->n_ops;
  }
  st = mace_image_pool_assign(&pl->images, net->gpu, net->tensors, n, first, last);
done:
  free(first);
  free(last);
  return st;
}

mace_status mace_placement_prepare(mace_net *net) {
  mace_placement *pl = net->placement;
  if (!pl->arena) {
    int64_t bytes = mace_planner_arena_bytes(pl->planner);
    if (bytes < MACE_ALIGN) bytes = MACE_ALIGN;
    mace_status st = net->gpu->ops->alloc(net->gpu, (size_t)bytes, &pl->arena);
    if (st != MACE_OK) {
      pl->arena = NULL;
      return mace_error_wrap(st, "allocating the %lld-byte device arena", (long long)bytes);
    }
    pl->arena_capacity = bytes;
  }
  const int64_t *offsets = mace_planner_offsets(pl->planner);
  for (int i = 0; i < net->n_tensors; ++i) {
    mace_tensor *t = &net->tensors[i];
    if (!on_gpu(t)) continue;
    t->data = NULL;
    if (t->view_of && t->view_of->role == MACE_TENSOR_CONST) { /* a view of an uploaded weight */
      t->cl_mem = t->view_of->cl_mem;
      t->cl_offset = t->view_of->cl_offset;
    } else {
      t->cl_mem = pl->arena;
      t->cl_offset = (size_t)offsets[i];
    }
  }
  for (int c = 0; c < net->n_tensors; ++c)
    if (pl->bound_mem[c]) bind_copy(net, c, pl->bound_mem[c]);
  return pl->images.ready ? MACE_OK : assign_images(net);
}

/* ---- run ------------------------------------------------------------------------------- */

mace_status mace_placement_run_begin(mace_net *net) {
  net->gpu->ops->profile_reset(net->gpu);
  net->placement->gpu_ops_queued = 0;
  return MACE_OK;
}

mace_status mace_placement_run_op(mace_net *net, int index) {
  mace_op *op = &net->ops[index];
  if (op->kind->device != MACE_DEVICE_GPU) return op->kind->run(op); /* the CPU's kinds */
  return net->gpu->ops->run_op(net->gpu, op);
}

mace_status mace_placement_run_steps(mace_net *net, int index) {
  mace_placement *pl = net->placement;
  /* steps are in op order: find this op's first (few steps: a linear scan) */
  for (int s = 0; s < pl->n_steps; ++s) {
    if (pl->steps[s].before != index || pl->steps[s].skipped) continue;
    mace_op *step = &pl->steps[s].op;
    const int kernel = step->kind != &transfer_kind; /* a transform: timed by its event */
    double t0 = 0;
    if (net->profiling && !kernel) { /* time the copy alone, not the kernels queued before it */
      MACE_RETURN_IF_ERROR(net->gpu->ops->sync(net->gpu));
      t0 = now_ms();
    }
    MACE_RETURN_IF_ERROR(step->kind->run(step));
    if (net->profiling)
      pl->step_ms[s] = kernel ? net->gpu->ops->profile_ms(net->gpu, step->name) : now_ms() - t0;
  }
  return MACE_OK;
}

double mace_placement_op_done(mace_net *net, int index, double wall_ms) {
  mace_placement *pl = net->placement;
  if (!pl->op_gpu[index] || net->ops[index].kind->device != MACE_DEVICE_GPU) return wall_ms;
  if (net->queue_window > 0 && ++pl->gpu_ops_queued >= net->queue_window) {
    (void)net->gpu->ops->sync(net->gpu); /* an error surfaces at run end */
    pl->gpu_ops_queued = 0;
  }
  return net->profiling ? net->gpu->ops->profile_ms(net->gpu, net->ops[index].name) : wall_ms;
}

mace_status mace_placement_run_end(mace_net *net) { return net->gpu->ops->sync(net->gpu); }

/* ---- queries --------------------------------------------------------------------------- */

int mace_placement_num_steps(const mace_net *net) {
  return net->placement->n_sched ? net->placement->n_sched : net->n_ops;
}

const mace_op *mace_placement_step(const mace_net *net, int i, double *ms) {
  const mace_placement *pl = net->placement;
  if (!pl->n_sched) {
    *ms = net->op_ms[i];
    return &net->ops[i];
  }
  *ms = *pl->sched[i].ms;
  return pl->sched[i].op;
}

mace_status mace_placement_read(const mace_net *net, const mace_tensor *t, void *dst) {
  const size_t numel = (size_t)mace_tensor_numel(t);
  if (!numel) return MACE_OK;
  mace_status st =
      is_image(t) ? mace_image_read(net->gpu, t, dst)
                  : net->gpu->ops->copy_out(net->gpu, t->cl_mem, t->cl_offset, dst, numel, t->dtype);
  if (st != MACE_OK) return mace_error_wrap(st, "reading '%s' from the GPU", t->name);
  return MACE_OK;
}

int mace_placement_is_copy(const mace_net *net, int index) {
  const mace_placement *pl = net->placement;
  return pl && pl->is_copy[index];
}
