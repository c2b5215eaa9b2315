/* Placement of a net's ops on the GPU and the CPU (MACE's cpu+gpu), the copies between them and
 * the device arena. Used by core/net.c only when the engine has an OpenCL runtime.
 *
 * Which op runs where: an op whose type has a GPU kind (mace_registry_find(type,
 * MACE_DEVICE_GPU, dtype)) runs on the GPU when that kind's infer accepts the shapes; otherwise
 * (no GPU kind, infer refuses, or the op computes values that infer reads) its CPU kind runs
 * it. A CPU view op (run == mace_op_view_run: Reshape, Squeeze, ...) follows its input to the
 * GPU, since it moves no bytes. A fallen-back op stays on the CPU for the net's life.
 *
 * Tensors: an op's outputs live where the op runs: on the GPU in the device arena (storage
 * MACE_STORAGE_CL_BUFFER, cl_mem/cl_offset, data NULL; a view shares its root's cl_mem at the
 * root's offset), else in the host arena. A tensor read on the other device gets a copy there,
 * a tensor named "<name>:to_gpu" or "<name>:to_host", written by a transfer step that runs
 * right before the first op that reads it and shows in the profile as an op of type
 * "Transfer". Constants read by GPU ops are uploaded once, when the op is created (before its
 * init): a GPU kind sees a constant "<name>:gpu" (role MACE_TENSOR_CONST, storage
 * MACE_STORAGE_CL_BUFFER, its own cl_mem at offset 0, data NULL: the CPU kinds GPU kinds infer
 * with pack nothing), except for the inputs whose values its infer reads (value_inputs),
 * which stay the host constants. Inputs a kind reads only the values of (value_inputs) or only
 * the dims of (dims_only_inputs) are never copied. Model inputs stay on
 * the host (a transfer step uploads them); model outputs computed on the GPU stay there and
 * the engine reads them back (mace_net_read_tensor). Float (f32) tensors are stored on the
 * device in its precision (its elem_size bytes an element).
 *
 * The GPU is reached only through the device interface (runtime/device.h, net->gpu): memory,
 * copies, binding and running its ops, waiting, profiling. Nothing here names OpenCL.
 *
 * Device memory: a second mace_planner over the same tensor indices plans one device buffer
 * (the device's alloc) for the device-resident tensors, as the host planner does the host arena;
 * each planner sees the other device's tensors as MACE_PLAN_OUTSIDE. Op scratch stays in the
 * host arena. Placement is recomputed after every full build, so new input shapes re-infer
 * and re-plan both arenas.
 *
 * Image memory (the device's image_memory): ops of an image kind (mace_op_kind.cl_image)
 * read their computed inputs and write their outputs as image2d tensors (storage
 * MACE_STORAGE_CL_IMAGE2D, outside both arenas, in images of core/placement_image.c's pool).
 * A buffer tensor an image op reads gets an image copy "<name>:to_image" and an image tensor a
 * buffer op (or a view) reads a buffer copy "<name>:to_buffer", each written by a transform
 * step ("BufferToImage" / "ImageToBuffer", a kernel) before its first reader; host <-> image
 * goes through a buffer copy and a transfer. */
#ifndef MACE_CORE_PLACEMENT_H_
#define MACE_CORE_PLACEMENT_H_

#include "core/net_internal.h"

typedef struct mace_placement mace_placement;

/* The placement of `net` (net->gpu set): owned by the net, mace_placement_destroy frees it with
 * the device arena and the uploaded constants. */
mace_status mace_placement_create(mace_net *net);
void mace_placement_destroy(mace_net *net);

/* ---- build (core/net.c, in op order) ---- */

/* Before init and before each infer: binds op to the GPU (the device's bind_op: op->cl) and
 * points op's inputs at the tensors the model names, but for a GPU kind its constants at their
 * device copies (uploaded at the first use). */
mace_status mace_placement_bind_inputs(mace_net *net, mace_op *op);
/* The GPU kind of op `index` refused its shapes: whether a CPU kind exists, and the switch to
 * it (release, new state, init). */
int mace_placement_can_fall_back(const mace_net *net, int index);
/* The GPU kind of an op of `type` whose input 0 is `dt` and whose outputs are named `outputs`:
 * on an engine with image memory its image kind (cl_image), unless one of its outputs is a
 * model output (read back from a buffer) or the type has none; else its buffer kind; NULL
 * when the type has no GPU kind. An image kind that refuses the op's arguments or shapes falls
 * back to the buffer kind, and that one to the CPU's (mace_placement_fall_back). */
const mace_op_kind *mace_placement_gpu_kind(const mace_net *net, const char *type, mace_dtype dt,
                                            char *const *outputs, size_t n_outputs);
mace_status mace_placement_fall_back(mace_net *net, int index);
/* After every op is inferred: where each tensor lives, the copies and the transfer steps. */
mace_status mace_placement_apply(mace_net *net);

/* ---- planning and memory ---- */

/* Before the host plan: the host planner sees device tensors as outside its arena. */
void mace_placement_describe(mace_net *net);
/* After the host plan: plans the device arena (freed when it must grow). */
mace_status mace_placement_plan(mace_net *net);
/* Allocates the device arena when missing and binds device tensors to it. */
mace_status mace_placement_prepare(mace_net *net);
void mace_placement_release(mace_net *net);
int64_t mace_placement_arena_bytes(const mace_net *net);

/* ---- model inputs in a caller's device buffer ---- */

/* For this run (after mace_placement_apply), model input tensor `index` is the caller's
 * device buffer `mem` (a cl_mem of the runtime's context, from byte 0, in the runtime's
 * precision): the GPU ops read it in place (its copy "<name>:to_gpu" and that copy's views
 * point at `mem`; the transfer step is gone from the run and the profile). *needs_host is set
 * when a CPU op or a model output reads the input too: the caller must then fill its host
 * data. Lasts until mace_placement_clear_device_inputs (called by apply). */
mace_status mace_placement_bind_device_input(mace_net *net, int index, void *mem,
                                             int *needs_host);
void mace_placement_clear_device_inputs(mace_net *net);

/* ---- run ---- */

mace_status mace_placement_run_begin(mace_net *net);
/* Runs op `index`: a GPU kind through the GPU's run_op, a CPU kind (or a view that follows its
 * input to the GPU) directly. */
mace_status mace_placement_run_op(mace_net *net, int index);
/* Runs the transfer steps due before op `index`. */
mace_status mace_placement_run_steps(mace_net *net, int index);
/* After op `index` ran on the GPU: its device milliseconds when profiling (else `wall_ms`),
 * and the queue window (mace_net_set_queue_window). */
double mace_placement_op_done(mace_net *net, int index, double wall_ms);
mace_status mace_placement_run_end(mace_net *net);

/* ---- queries ---- */

/* Ops and transfer steps in execution order. */
int mace_placement_num_steps(const mace_net *net);
const mace_op *mace_placement_step(const mace_net *net, int i, double *ms);
/* Copies t, a tensor on the GPU (on_gpu), into host memory (float tensors as f32). */
mace_status mace_placement_read(const mace_net *net, const mace_tensor *t, void *dst);
/* Whether tensor `index` is a copy made by placement ("<name>:to_gpu" / ":to_host"). */
int mace_placement_is_copy(const mace_net *net, int index);

#endif /* MACE_CORE_PLACEMENT_H_ */
