/* Net build (parse, validate, create ops, infer shapes, plan the arena) and execution. */
#define _POSIX_C_SOURCE 200809L
#include "core/net.h"
#include "core/net_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/placement.h"
#include "core/planner.h"
#include "core/proto_arg.h"
#include "core/status.h"
#include "kernels/cpu/ref/quantize.h"
#include "mace.pb-c.h"
#include "runtime/cpu/cpu_device.h"


/* ---- tensor names ---------------------------------------------------------------------- */

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int find_tensor(const mace_net *net, const char *name) {
  if (!name) return -1;
  uint64_t h = hash_name(name);
  for (int k = 0; k < net->table_size; ++k) {
    int slot = (int)((h + (uint64_t)k) % (uint64_t)net->table_size);
    int idx = net->name_table[slot];
    if (idx < 0) return -1;
    if (strcmp(net->tensors[idx].name, name) == 0) return idx;
  }
  return -1;
}

/* Names are protobuf strings, which must be UTF-8; a corrupt byte would otherwise surface
 * later (in a binding that decodes names) instead of at load. */
static int valid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = *p < 0x80 ? 0 : (*p >> 5) == 0x6 ? 1 : (*p >> 4) == 0xE ? 2 : (*p >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || (n == 1 && *p < 0xC2)) return 0;
    ++p;
    for (int k = 0; k < n; ++k, ++p)
      if ((*p & 0xC0) != 0x80) return 0;
  }
  return 1;
}

/* Adds a tensor named `name`; fails when the name exists already. */
mace_status mace_net_add_tensor(mace_net *net, const char *name, mace_tensor_role role,
                                int *index) {
  if (!name || !*name) return mace_error(MACE_INVALID_MODEL, "a tensor has an empty name");
  if (!valid_utf8(name))
    return mace_error(MACE_INVALID_MODEL, "a tensor name is not valid UTF-8 (corrupt model?)");
  if (find_tensor(net, name) >= 0)
    return mace_error(MACE_INVALID_MODEL, "tensor '%s' is defined more than once", name);
  int idx = net->n_tensors++;
  mace_tensor *t = &net->tensors[idx];
  memset(t, 0, sizeof(*t));
  t->name = strdup(name);
  if (!t->name) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  t->role = role;
  if (role == MACE_TENSOR_CONST) mace_planner_tensor(net->planner, idx)->flags = MACE_PLAN_OUTSIDE;
  uint64_t h = hash_name(name);
  for (int k = 0; k < net->table_size; ++k) {
    int slot = (int)((h + (uint64_t)k) % (uint64_t)net->table_size);
    if (net->name_table[slot] < 0) {
      net->name_table[slot] = idx;
      break;
    }
  }
  *index = idx;
  return MACE_OK;
}

/* ---- value tensors --------------------------------------------------------------------- */

static int name_listed(char *const *names, int n, const char *name) {
  for (int i = 0; name && i < n; ++i)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

static int is_value_name(const mace_net *net, const char *name) {
  return name_listed(net->value_names, net->n_value_names, name);
}

/* The bits a kind's arg_value_inputs adds for op `od` (an If whose branch reads the values of
 * a lifted tensor): asked on a probe op holding the arguments alone. */
static mace_status arg_value_inputs(const Mace__OperatorDef *od, int size_at_run,
                                    unsigned *mask) {
  *mask = 0;
  if (!mace_registry_has_arg_value_inputs(od->type)) return MACE_OK;
  mace_arg *args = calloc(od->n_arg ? od->n_arg : 1, sizeof(mace_arg));
  if (!args) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = MACE_OK;
  size_t n = 0;
  for (; n < od->n_arg && st == MACE_OK; ++n) st = mace_arg_from_proto(od->arg[n], &args[n]);
  if (st == MACE_OK) {
    mace_op probe;
    memset(&probe, 0, sizeof(probe));
    probe.name = od->name ? od->name : "";
    probe.type = od->type;
    probe.args = args;
    probe.n_args = (int)od->n_arg;
    probe.n_inputs = (int)od->n_input;
    probe.size_at_run = size_at_run;
    st = mace_registry_arg_value_inputs(&probe, mask);
  }
  for (size_t k = 0; k < n; ++k) free((char *)args[k].s);
  free(args);
  return st;
}

/* Names of the tensors whose values some infer reads, and (transitively) of everything those
 * are computed from: walked backwards over the graph before any op exists, into names[*n..]
 * (room for every op input and output), each op's value-input bits into op_masks (may be
 * NULL). An input an op reads only the dims of (Shape's) is not among them: a value computed
 * from a tensor's shape does not make that tensor's producers run at infer. */
static mace_status mark_values(const Mace__NetDef *def, char **names, int *n,
                               unsigned *op_masks, int size_at_run) {
  for (size_t i = def->n_op; i-- > 0;) {
    const Mace__OperatorDef *od = def->op[i];
    if (!od->type) continue;
    unsigned extra = 0;
    MACE_RETURN_IF_ERROR(arg_value_inputs(od, size_at_run, &extra));
    unsigned mask = mace_registry_value_inputs(od->type) | extra;
    if (size_at_run) mask &= ~mace_registry_run_value_inputs(od->type);
    unsigned dims_only = mace_registry_dims_only_inputs(od->type);
    if (op_masks) op_masks[i] = mask;
    /* Not sized at run: the op runs during infer, its outputs values. */
    for (size_t k = 0; !size_at_run && mace_registry_sized_at_run(od->type) && k < od->n_output;
         ++k)
      if (od->output[k] && *od->output[k] && !name_listed(names, *n, od->output[k]))
        names[(*n)++] = od->output[k];
    int all = 0;
    for (size_t k = 0; k < od->n_output; ++k) all |= name_listed(names, *n, od->output[k]);
    /* An op that runs during infer computes all its outputs there (a Split feeding NMS one
     * half and ordinary ops the other): each becomes a value, read from host memory. */
    for (size_t k = 0; all && k < od->n_output; ++k)
      if (od->output[k] && *od->output[k] && !name_listed(names, *n, od->output[k]))
        names[(*n)++] = od->output[k];
    for (size_t k = 0; k < od->n_input; ++k) {
      int dims = k < 32 && (dims_only >> k) & 1u;
      if (!((all && !dims) || (k < 32 && (mask >> k) & 1u)) || !od->input[k]) continue;
      if (!name_listed(names, *n, od->input[k])) names[(*n)++] = od->input[k];
    }
  }
  return MACE_OK;
}

static size_t value_names_room(const Mace__NetDef *def) {
  size_t cap = 0;
  for (size_t i = 0; i < def->n_op; ++i) cap += def->op[i]->n_input + def->op[i]->n_output;
  return cap ? cap : 1;
}

static mace_status mark_value_names(mace_net *net) {
  net->value_names = calloc(value_names_room(net->def), sizeof(char *));
  net->op_value_inputs = calloc(net->def->n_op ? net->def->n_op : 1, sizeof(unsigned));
  if (!net->value_names || !net->op_value_inputs)
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  return mark_values(net->def, net->value_names, &net->n_value_names, net->op_value_inputs,
                     net->size_at_run);
}

mace_status mace_net_graph_value_inputs(const void *graph, size_t graph_size, int size_at_run,
                                        uint64_t *mask) {
  *mask = 0;
  Mace__NetDef *def = mace__net_def__unpack(NULL, graph_size, graph);
  if (!def)
    return mace_error(MACE_INVALID_MODEL, "the graph (%zu bytes) is not a valid mace NetDef: "
                      "protobuf parsing failed", graph_size);
  char **names = calloc(value_names_room(def), sizeof(char *));
  int n = 0;
  mace_status st = names ? mark_values(def, names, &n, NULL, size_at_run)
                         : mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  for (size_t i = 0; st == MACE_OK && i < def->n_input_info && i < 64; ++i)
    if (name_listed(names, n, def->input_info[i]->name)) *mask |= UINT64_C(1) << i;
  free(names);
  mace__net_def__free_unpacked(def, NULL);
  return st;
}

/* The most bytes the net's arena or one value tensor may take (0: no limit): its
 * max_arena_bytes, else mace_arena_ceiling() (the environment, read when asked). */
int64_t mace_net_arena_ceiling(const mace_net *net) {
  if (net->max_arena_bytes < 0) return 0;
  return net->max_arena_bytes > 0 ? net->max_arena_bytes : mace_arena_ceiling();
}

/* A value tensor's owned host buffer for its current size, within the net's arena ceiling: the
 * one it has when that is large enough (a net re-inferred on every run, a detector's backbone
 * evaluated at infer, keeps its buffers), else a new one. */
static mace_status value_alloc(mace_net *net, mace_tensor *t) {
  const size_t need = mace_tensor_nbytes(t);
  const int64_t ceiling = mace_net_arena_ceiling(net);
  if (ceiling > 0 && (int64_t)need > ceiling)
    return mace_error(MACE_OUT_OF_RESOURCES, "value tensor '%s' needs %lld bytes, above the "
                      "ceiling of %lld bytes (max_arena_bytes / MACE_MAX_ARENA_BYTES)", t->name,
                      (long long)need, (long long)ceiling);
  size_t *room = &net->value_room[t - net->tensors];
  t->value_ready = 0;
  if (t->owns_data && t->data && *room >= need) return MACE_OK;
  if (t->owns_data) mace_aligned_free(t->data);
  t->data = mace_aligned_alloc(need);
  t->owns_data = t->data != NULL;
  *room = t->data ? need : 0;
  if (!t->data) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory for '%s'", t->name);
  return MACE_OK;
}

/* ---- loading --------------------------------------------------------------------------- */

static int valid_dtype(int dt) {
  return dt > MACE_DT_INVALID && dt <= MACE_DT_U2 && mace_dtype_size((mace_dtype)dt) > 0;
}

static mace_status set_dims(mace_tensor *t, const int64_t *dims, size_t n, const char *what) {
  if (n > MACE_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "%s '%s' has rank %zu > %d", what, t->name, n,
                      MACE_MAX_DIMS);
  int64_t numel = 1;
  for (size_t i = 0; i < n; ++i) {
    if (dims[i] < 0 || dims[i] > (INT64_C(1) << 40))
      return mace_error(MACE_INVALID_MODEL, "%s '%s' has invalid dim %lld", what, t->name,
                        (long long)dims[i]);
    if (dims[i] > 0 && numel > (INT64_C(1) << 40) / dims[i])
      return mace_error(MACE_INVALID_MODEL, "%s '%s' is too large", what, t->name);
    numel *= dims[i];
    t->dims[i] = dims[i];
  }
  t->ndim = (int)n;
  return MACE_OK;
}

/* Weight-only int8 (ConstTensor.channel_scales): wide = q * the scale of q's channel along
 * channel_axis, Dequantize's reference kernel with zero points 0. */
static mace_status widen_int8(const Mace__ConstTensor *ct, const mace_tensor *t, float *wide,
                              int64_t n) {
  const int64_t axis = ct->has_channel_axis ? ct->channel_axis : 0;
  mace_quant_params q = {.scale = ct->channel_scales, .zero_point = NULL,
                         .channels = (int64_t)ct->n_channel_scales, .inner = 1};
  if (q.channels == 0)
    return mace_error(MACE_INVALID_MODEL, "constant '%s': int8 weights to widen have no "
                      "channel_scales", t->name);
  if (q.channels > 1) {
    if (axis < 0 || axis >= t->ndim || t->dims[axis] != q.channels)
      return mace_error(MACE_INVALID_MODEL, "constant '%s': %lld channel scales do not match "
                        "dims[%lld] of a rank-%d tensor", t->name, (long long)q.channels,
                        (long long)axis, t->ndim);
    for (int d = (int)axis + 1; d < t->ndim; ++d) q.inner *= t->dims[d];
  }
  mace_s8_dequantize_f32__ref((const int8_t *)t->data, wide, &q, 0, n);
  return MACE_OK;
}

/* A constant stored in half precision or as int8 with load_type DT_FLOAT (fp16_fp32 /
 * bf16_fp32 weight storage, weight-only int8): replaces its borrowed bytes with an owned,
 * 64-byte aligned fp32 copy, freed with the net, so ops and weight packing see fp32 as from an
 * fp32 model. */
static mace_status widen_const(const Mace__ConstTensor *ct, mace_tensor *t) {
  mace_status s = MACE_OK;
  if (!ct->has_load_type || ct->load_type == ct->data_type) return MACE_OK;
  if ((int)ct->load_type != (int)MACE_DT_F32 ||
      (t->dtype != MACE_DT_F16 && t->dtype != MACE_DT_BF16 && t->dtype != MACE_DT_I8))
    return mace_error(MACE_INVALID_MODEL,
                      "constant '%s': cannot widen data type %d to load type %d (only fp16, "
                      "bf16 or int8 to fp32)", t->name, (int)ct->data_type, (int)ct->load_type);
  int64_t n = mace_tensor_numel(t);
  float *wide = mace_aligned_alloc((size_t)(n ? n : 1) * sizeof(float));
  if (!wide) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory widening '%s'", t->name);
  if (t->dtype == MACE_DT_F16)
    mace_cpu_f16_to_f32(t->data, wide, n);
  else if (t->dtype == MACE_DT_BF16)
    mace_cpu_bf16_to_f32(t->data, wide, n);
  else
    s = widen_int8(ct, t, wide, n);
  if (s != MACE_OK) {
    mace_aligned_free(wide);
    return s;
  }
  t->dtype = MACE_DT_F32;
  t->data = wide;
  t->owns_data = 1;
  return MACE_OK;
}

static mace_status load_consts(mace_net *net) {
  for (size_t i = 0; i < net->def->n_tensors; ++i) {
    const Mace__ConstTensor *ct = net->def->tensors[i];
    int idx;
    MACE_RETURN_IF_ERROR(mace_net_add_tensor(net, ct->name, MACE_TENSOR_CONST, &idx));
    mace_tensor *t = &net->tensors[idx];
    if (!valid_dtype(ct->data_type))
      return mace_error(MACE_INVALID_MODEL, "constant '%s' has unknown data type %d", t->name,
                        (int)ct->data_type);
    t->dtype = (mace_dtype)ct->data_type;
    MACE_RETURN_IF_ERROR(set_dims(t, ct->dims, ct->n_dims, "constant"));
    t->scale = ct->scale;
    t->zero_point = ct->zero_point;
    int64_t need = (int64_t)mace_tensor_nbytes(t);
    if (!ct->has_offset || !ct->has_data_size || ct->data_size != need)
      return mace_error(MACE_INVALID_MODEL,
                        "constant '%s': data_size %lld does not match dims and dtype (%lld bytes)",
                        t->name, (long long)ct->data_size, (long long)need);
    /* 64-byte aligned, or only to the element size when smaller than 64 bytes (a scale, a
     * short bias: converters/serialize.py's const_alignment). */
    const int64_t align = need >= MACE_ALIGN ? MACE_ALIGN : (int64_t)mace_dtype_size(t->dtype);
    if (ct->offset < 0 || ct->offset % align != 0)
      return mace_error(MACE_INVALID_MODEL, "constant '%s': offset %lld is not %lld-byte aligned",
                        t->name, (long long)ct->offset, (long long)align);
    if ((uint64_t)ct->offset > net->weights_size ||
        (uint64_t)need > net->weights_size - (uint64_t)ct->offset)
      return mace_error(MACE_INVALID_MODEL,
                        "constant '%s': bytes [%lld, %lld) lie past the end of the weights (%zu "
                        "bytes)",
                        t->name, (long long)ct->offset, (long long)(ct->offset + need),
                        net->weights_size);
    /* no weights at all (only empty constants): no arithmetic on a null pointer */
    t->data = net->weights ? (void *)(net->weights + ct->offset) : NULL;
    net->weights_bytes += need;
    MACE_RETURN_IF_ERROR(widen_const(ct, t));
  }
  return MACE_OK;
}

static mace_status load_inputs(mace_net *net) {
  net->n_inputs = (int)net->def->n_input_info;
  net->inputs = calloc(net->n_inputs ? (size_t)net->n_inputs : 1, sizeof(mace_net_io));
  if (!net->inputs) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  for (int i = 0; i < net->n_inputs; ++i) {
    const Mace__InputOutputInfo *info = net->def->input_info[i];
    int idx;
    MACE_RETURN_IF_ERROR(mace_net_add_tensor(net, info->name, MACE_TENSOR_INPUT, &idx));
    mace_tensor *t = &net->tensors[idx];
    if (!valid_dtype(info->data_type))
      return mace_error(MACE_INVALID_MODEL, "input '%s' has unknown data type %d", t->name,
                        (int)info->data_type);
    t->dtype = (mace_dtype)info->data_type;
    MACE_RETURN_IF_ERROR(set_dims(t, info->dims, info->n_dims, "input"));
    mace_plan_tensor *pt = mace_planner_tensor(net->planner, idx);
    pt->first = 0;
    pt->flags = MACE_PLAN_CALLER;
    if (is_value_name(net, t->name)) {
      t->is_value = 1;
      net->has_value_inputs = 1;
      pt->flags = MACE_PLAN_OUTSIDE;
      MACE_RETURN_IF_ERROR(value_alloc(net, t));
    }
    net->inputs[i].tensor = idx;
    net->inputs[i].format = (mace_data_format)info->data_format;
  }
  return MACE_OK;
}

static mace_status convert_args(mace_net *net) {
  size_t total = 0;
  for (size_t i = 0; i < net->def->n_op; ++i) total += net->def->op[i]->n_arg;
  net->args = calloc(total ? total : 1, sizeof(mace_arg));
  if (!net->args) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  for (size_t i = 0; i < net->def->n_op; ++i) {
    const Mace__OperatorDef *od = net->def->op[i];
    for (size_t a = 0; a < od->n_arg; ++a) {
      MACE_RETURN_IF_ERROR(mace_arg_from_proto(od->arg[a], &net->args[net->n_args]));
      ++net->n_args;
    }
  }
  return MACE_OK;
}

static mace_status create_op(mace_net *net, int index, const mace_arg *args) {
  const Mace__OperatorDef *od = net->def->op[index];
  mace_op *op = &net->ops[index];
  op->name = od->name ? od->name : "";
  op->type = od->type ? od->type : "";
  op->args = args;
  op->n_args = (int)od->n_arg;
  op->pool = net->pool;
  op->weights = net->weights;
  op->weights_size = net->weights_size;
  op->size_at_run = net->size_at_run;
  if (!valid_utf8(op->name) || !valid_utf8(op->type))
    return mace_error(MACE_INVALID_MODEL, "op %d: name or type is not valid UTF-8 (corrupt model?)",
                      index);
  if (!*op->type)
    return mace_error(MACE_INVALID_MODEL, "op %d ('%s') has no type", index, op->name);
  if (od->n_input > 1024 || od->n_output > 1024 || od->n_output == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s) has %zu inputs and %zu outputs",
                      op->name, op->type, od->n_input, od->n_output);
  op->inputs = calloc(od->n_input ? od->n_input : 1, sizeof(mace_tensor *));
  op->outputs = calloc(od->n_output, sizeof(mace_tensor *));
  if (!op->inputs || !op->outputs) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  op->n_inputs = (int)od->n_input;
  op->n_outputs = (int)od->n_output;
  for (size_t k = 0; k < od->n_input; ++k) {
    int t = find_tensor(net, od->input[k]);
    if (t < 0)
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (%s): input '%s' is not a constant, a model input or the output "
                        "of an earlier op (missing tensor or cycle)",
                        op->name, op->type, od->input[k] ? od->input[k] : "");
    op->inputs[k] = &net->tensors[t];
    mace_planner_tensor(net->planner, t)->last = index;
  }
  mace_dtype dt = op->n_inputs ? op->inputs[0]->dtype : MACE_DT_F32;
  /* With a GPU, its kind when the type has one (core/placement.h), unless infer needs the
   * op's outputs as values (those ops run at infer, on the host). */
  op->kind = net->gpu && !is_value_name(net, od->output[0])
                 ? mace_placement_gpu_kind(net, op->type, dt, od->output, od->n_output) : NULL;
  if (!op->kind) op->kind = mace_registry_find(op->type, MACE_DEVICE_CPU, dt);
  if (!op->kind) {
    if (mace_registry_has_type(op->type))
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): no CPU kernel for %s inputs", op->name,
                        op->type, mace_dtype_name(dt));
    if (mace_registry_selection())
      return mace_error(MACE_UNSUPPORTED,
                        "op '%s': op type '%s' is not compiled into this library (built with "
                        "MACE_OPS=%s; rebuild with it added)",
                        op->name, op->type, mace_registry_selection());
    return mace_error(MACE_INVALID_MODEL, "op '%s': unknown op type '%s'", op->name, op->type);
  }
  op->value_inputs = (op->kind->value_inputs &
                     ~(net->size_at_run ? op->kind->run_value_inputs : 0u)) |
                    net->op_value_inputs[index];
  for (size_t k = 0; k < od->n_output; ++k) {
    int t;
    MACE_RETURN_IF_ERROR(mace_net_add_tensor(net, od->output[k], MACE_TENSOR_INTERMEDIATE, &t));
    op->outputs[k] = &net->tensors[t];
    net->tensors[t].is_value = is_value_name(net, od->output[k]);
    mace_plan_tensor *pt = mace_planner_tensor(net->planner, t);
    pt->first = pt->last = index;
    pt->flags = net->tensors[t].is_value ? MACE_PLAN_OUTSIDE : MACE_PLAN_COMPUTED;
  }
  if (op->kind->state_size) {
    op->state = calloc(1, op->kind->state_size);
    if (!op->state) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  }
  if (net->placement) MACE_RETURN_IF_ERROR(mace_placement_bind_inputs(net, op));
  mace_status st = op->kind->init ? op->kind->init(op) : MACE_OK;
  while (st != MACE_OK && net->placement && mace_placement_can_fall_back(net, index))
    st = mace_placement_fall_back(net, index); /* arguments the GPU kernel does not take */
  MACE_RETURN_IF_ERROR(st);
  if (op->kind->output_is_view) {
    if (op->n_inputs < 1 || op->n_outputs < 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s) needs an input and an output",
                        op->name, op->type);
    mace_tensor *root = op->inputs[0]->view_of ? op->inputs[0]->view_of : op->inputs[0];
    op->outputs[0]->view_of = root;
    mace_planner_tensor(net->planner, (int)(op->outputs[0] - net->tensors))->view_of =
        (int)(root - net->tensors);
  }
  return MACE_OK;
}

/* Runs op i's infer; at load also checks the output shapes the model declares (after a
 * reshape those no longer apply). */
mace_status mace_net_infer_op(mace_net *net, int i, int check_declared) {
  mace_op *op = &net->ops[i];
  op->macs = 0;
  op->scratch_bytes = 0;
  for (int k = 0; k < op->n_inputs && !op->kind->accepts_nchwc; ++k)
    if (op->inputs[k]->layout == MACE_LAYOUT_NCHWC)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s) cannot read the blocked (NCHWc) "
                        "tensor '%s' (a layout pass error; MACE_NCHWC=0 turns the pass off)",
                        op->name, op->type, op->inputs[k]->name);
  op->output_bound = 0;
  MACE_RETURN_IF_ERROR(op->kind->infer(op));
  const Mace__OperatorDef *od = net->def->op[i];
  for (int k = 0; k < op->n_outputs; ++k) {
    const mace_tensor *t = op->outputs[k];
    if (t->dtype == MACE_DT_INVALID)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s) did not set output %d", op->name,
                        op->type, k);
    if (check_declared && (size_t)k < od->n_output_shape &&
        !mace_dims_equal(t->dims, t->ndim, od->output_shape[k]->dims,
                         (int)od->output_shape[k]->n_dims)) {
      char a[160], b[160];
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (%s): output '%s' is %s by inference but the model says %s",
                        op->name, op->type, t->name, mace_dims_str(t->dims, t->ndim, a, 160),
                        mace_dims_str(od->output_shape[k]->dims, (int)od->output_shape[k]->n_dims,
                                      b, 160));
    }
  }
  return MACE_OK;
}

/* Whether every input whose values op i's infer reads is available. */
static int values_ready(const mace_op *op) {
  for (int k = 0; k < op->n_inputs; ++k) {
    const mace_tensor *t = op->inputs[k];
    int dims_only = k < 32 && (op->kind->dims_only_inputs >> k) & 1u;
    int needed = (k < 32 && (op->value_inputs >> k) & 1u) ||
                 (op->outputs[0]->is_value && !dims_only);
    if (needed && t->role != MACE_TENSOR_CONST && !t->value_ready) return 0;
  }
  return 1;
}

/* Runs op i now, during infer, into its outputs' host buffers (it produces value tensors). */
mace_status mace_net_evaluate_op(mace_net *net, int i) {
  mace_op *op = &net->ops[i];
  for (int k = 0; k < op->n_outputs; ++k) {
    if (!op->outputs[k]->is_value)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): output '%s' is needed at infer time "
                        "but output '%s' is not", op->name, op->type, op->outputs[0]->name,
                        op->outputs[k]->name);
    MACE_RETURN_IF_ERROR(value_alloc(net, op->outputs[k]));
  }
  /* Value tensors are small; their ops' scratch is a temporary buffer, not the arena. */
  op->scratch = op->scratch_bytes ? mace_aligned_alloc(op->scratch_bytes) : NULL;
  if (op->scratch_bytes && !op->scratch)
    return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (%s): out of memory", op->name, op->type);
  /* A view op (Reshape, ExpandDims, ...) of a value has its own host buffer: copy the bytes. */
  mace_status st = MACE_OK;
  if (op->kind->output_is_view)
    memcpy(op->outputs[0]->data, op->inputs[0]->data, mace_tensor_nbytes(op->outputs[0]));
  else
    st = op->kind->run(op);
  mace_aligned_free(op->scratch);
  op->scratch = NULL;
  MACE_RETURN_IF_ERROR(st);
  for (int k = 0; k < op->n_outputs; ++k) op->outputs[k]->value_ready = 1;
  net->evaluated[i] = 1;
  return MACE_OK;
}

static mace_status load_outputs(mace_net *net);
static mace_status plan(mace_net *net);

/* Creates (first time) and infers ops from n_built on, evaluating the ops that produce
 * value tensors. Stops early, without error, at an op that needs the values of a model
 * input not given yet; the rest is built when the inputs arrive. Plans the arena once the
 * whole net is built. */
/* Counts the constant bytes op just holds packed; past DISCARD_EVERY of them the blob's pages
 * of those read only packed go back now, not after the whole build (peak memory). */
#define DISCARD_EVERY ((size_t)8 << 20)
static void note_packed(mace_net *net, const mace_op *op) {
  if (!op->kind || !op->kind->input_packed) return;
  for (int k = 0; k < op->n_inputs; ++k)
    if (op->inputs[k] && op->inputs[k]->role == MACE_TENSOR_CONST &&
        op->kind->input_packed(op, k))
      net->packed_since_discard += mace_tensor_nbytes(op->inputs[k]);
  if (net->packed_since_discard >= DISCARD_EVERY) {
    (void)mace_net_discard_packed_weights(net);
    net->packed_since_discard = 0;
  }
}

static mace_status build(mace_net *net) {
  const mace_arg *args = net->args;
  for (int i = 0; i < net->n_built; ++i) args += net->def->op[i]->n_arg;
  for (int i = net->n_built; i < net->n_ops; ++i) {
    if (i >= net->n_created) {
      /* Created and inferred in order: an op's kernel is chosen by its inputs' dtypes. */
      MACE_RETURN_IF_ERROR(create_op(net, i, args));
      net->n_created = i + 1;
    }
    if (net->placement) MACE_RETURN_IF_ERROR(mace_placement_bind_inputs(net, &net->ops[i]));
    if (!values_ready(&net->ops[i])) return MACE_OK;
    /* Bounds are not the shapes the model declares. */
    const int reads = mace_net_reads_bounded(net, &net->ops[i]);
    const int check = !net->reshaped && !reads &&
                      !(net->ops[i].kind->sized_at_run && !net->ops[i].outputs[0]->is_value);
    mace_status st = mace_net_infer_op(net, i, check);
    while (st != MACE_OK && net->placement && mace_placement_can_fall_back(net, i)) {
      /* The GPU kernel cannot take these shapes: the CPU runs it (an image kind: buffers). */
      MACE_RETURN_IF_ERROR(mace_placement_fall_back(net, i));
      st = mace_net_infer_op(net, i, check);
    }
    MACE_RETURN_IF_ERROR(st);
    if (net->discard_packed) note_packed(net, &net->ops[i]);
    net->evaluated[i] = 0;
    if (net->ops[i].outputs[0]->is_value) MACE_RETURN_IF_ERROR(mace_net_evaluate_op(net, i));
    mace_net_note_bounds(net, i, reads);
    net->n_built = i + 1;
    args += net->def->op[i]->n_arg;
  }
  if (!net->outputs[0].resolved) MACE_RETURN_IF_ERROR(load_outputs(net));
  net->any_bounded = 0;
  for (int i = 0; i < net->n_tensors; ++i) net->any_bounded |= net->bounded[i];
  for (int i = 0; i < net->n_outputs; ++i) {
    const mace_tensor *t = &net->tensors[net->outputs[i].tensor];
    net->outputs[i].bound_ndim = t->ndim;
    memcpy(net->outputs[i].bound_dims, t->dims, sizeof(t->dims));
  }
  mace_net_release_overflow(net);
  if (net->placement) MACE_RETURN_IF_ERROR(mace_placement_apply(net));
  if (net->discard_packed && net->packed_since_discard) {
    (void)mace_net_discard_packed_weights(net);
    net->packed_since_discard = 0;
  }
  return plan(net);
}

int mace_net_is_built(const mace_net *net) { return net->n_built == net->n_ops; }

/* Describes the current sizes, scratch and gathering ops to the planner and plans the arena
 * (a description seen before takes its remembered plan). The arena only grows: a plan larger
 * than the allocated arena frees it, and the next prepare allocates it at the new size. */
#define MACE_MAX_GATHERED 64
static mace_status plan(mace_net *net) {
  mace_planner *p = net->planner;
  for (int i = 0; i < net->n_tensors; ++i)
    mace_planner_tensor(p, i)->bytes = net->bounded[i]
                                           ? net->bound_bytes[i]
                                           : (int64_t)mace_tensor_nbytes(&net->tensors[i]);
  for (int i = 0; i < net->n_ops; ++i)
    mace_planner_set_scratch(p, i, net->op_bounded[i] ? net->bound_scratch[i]
                                                      : (int64_t)net->ops[i].scratch_bytes);
  if (net->placement) mace_placement_describe(net);
  /* An op that gathers its inputs (kind->inputs_in_output, a Concat) copies nothing when they
   * are computed in place inside its output. */
  mace_planner_clear_gathers(p);
  int64_t offs[MACE_MAX_GATHERED];
  int inputs[MACE_MAX_GATHERED];
  for (int i = 0; i < net->n_ops; ++i) {
    const mace_op *op = &net->ops[i];
    if (!op->kind->inputs_in_output || op->n_outputs != 1 || op->n_inputs > MACE_MAX_GATHERED ||
        net->op_bounded[i] || net->bounded[op->outputs[0] - net->tensors] ||
        op->outputs[0]->storage != MACE_STORAGE_HOST || !op->kind->inputs_in_output(op, offs))
      continue;
    for (int k = 0; k < op->n_inputs; ++k) inputs[k] = (int)(op->inputs[k] - net->tensors);
    MACE_RETURN_IF_ERROR(mace_planner_add_gather(p, (int)(op->outputs[0] - net->tensors),
                                                 op->n_inputs, inputs, offs));
  }
  MACE_RETURN_IF_ERROR(mace_planner_plan(p));
  if (net->placement) MACE_RETURN_IF_ERROR(mace_placement_plan(net));
  if (net->arena && mace_planner_arena_bytes(p) > net->arena_capacity) mace_net_release_arena(net);
  return MACE_OK;
}

static void bind_arena(mace_net *net) {
  const int64_t *offsets = mace_planner_offsets(net->planner);
  for (int i = 0; i < net->n_tensors; ++i) {
    mace_tensor *t = &net->tensors[i];
    if (t->role == MACE_TENSOR_CONST || t->is_value || t->borrowed ||
        t->storage != MACE_STORAGE_HOST || net->overflow[i])
      continue;
    if (t->view_of && (t->view_of->role == MACE_TENSOR_CONST || t->view_of->is_value))
      t->data = t->view_of->data; /* a view of weights or a host value: read only */
    else if (t->view_of && net->overflow[t->view_of - net->tensors])
      t->data = t->view_of->data; /* a view of a buffer of its own */
    else
      t->data = net->arena + offsets[i];
  }
  for (int i = 0; i < net->n_ops; ++i)
    net->ops[i].scratch = net->own_scratch[i] ? net->own_scratch[i]
                          : (net->op_bounded[i] ? net->bound_scratch[i]
                                                : (int64_t)net->ops[i].scratch_bytes)
                              ? net->arena + mace_planner_scratch_offset(net->planner, i)
                              : NULL;
}

int mace_net_borrow(mace_net *net, int index, void *data) {
  mace_tensor *t = &net->tensors[index];
  if (!data) {
    if (t->borrowed)
      t->data = net->arena ? net->arena + mace_planner_offsets(net->planner)[index] : NULL;
    t->borrowed = 0;
    return 1;
  }
  /* a bounded tensor's dims are known only after the run */
  if (!mace_planner_borrowable(net->planner, index) || net->bounded[index]) return 0;
  t->data = data;
  t->borrowed = 1;  /* bind_arena leaves it */
  return 1;
}

mace_status mace_net_prepare(mace_net *net) {
  if (!mace_net_is_built(net)) return mace_error(MACE_INVALID_INPUT, "input values are missing");
  if (!net->arena) {
    const int64_t bytes = mace_planner_arena_bytes(net->planner);
    const int64_t ceiling = mace_net_arena_ceiling(net);
    if (ceiling > 0 && bytes > ceiling)
      return mace_error(MACE_OUT_OF_RESOURCES, "the arena of these input shapes needs %lld bytes, "
                        "above the ceiling of %lld bytes (max_arena_bytes / MACE_MAX_ARENA_BYTES)",
                        (long long)bytes, (long long)ceiling);
    net->arena = mace_aligned_alloc((size_t)bytes);
    net->arena_capacity = bytes;
    if (!net->arena)
      return mace_error(MACE_OUT_OF_RESOURCES, "could not allocate the %lld-byte arena",
                        (long long)bytes);
  }
  bind_arena(net);
  return net->placement ? mace_placement_prepare(net) : MACE_OK;
}

/* Output slots exist from load; their tensors are resolved once every op is created. */
static mace_status alloc_outputs(mace_net *net) {
  net->n_outputs = (int)net->def->n_output_info;
  if (net->n_outputs == 0) return mace_error(MACE_INVALID_MODEL, "the model declares no outputs");
  net->outputs = calloc((size_t)net->n_outputs, sizeof(mace_net_io));
  if (!net->outputs) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  for (int i = 0; i < net->n_outputs; ++i) {
    const Mace__InputOutputInfo *info = net->def->output_info[i];
    net->outputs[i].tensor = -1;
    net->outputs[i].format = (mace_data_format)info->data_format;
    net->outputs[i].name = info->name ? info->name : "";
    net->outputs[i].dtype = valid_dtype(info->data_type) ? (mace_dtype)info->data_type
                                                          : MACE_DT_INVALID;
  }
  return MACE_OK;
}

static mace_status load_outputs(mace_net *net) {
  for (int i = 0; i < net->n_outputs; ++i) {
    const Mace__InputOutputInfo *info = net->def->output_info[i];
    int t = find_tensor(net, info->name);
    if (t < 0)
      return mace_error(MACE_INVALID_MODEL, "output '%s' is not produced by any op",
                        info->name ? info->name : "");
    net->outputs[i].tensor = t;
    net->outputs[i].resolved = 1;
    mace_plan_tensor *pt = mace_planner_tensor(net->planner, t);
    pt->last = net->n_ops; /* alive until the caller copies it out */
    if (net->tensors[t].role == MACE_TENSOR_INTERMEDIATE && !net->tensors[t].is_value)
      pt->flags |= MACE_PLAN_CALLER;
  }
  return MACE_OK;
}

static mace_status create_net(const void *graph, size_t graph_size, const uint8_t *weights,
                              size_t weights_size, mace_threadpool *pool,
                              struct mace_runtime *gpu, int64_t max_arena_bytes,
                              int discard_packed, int size_at_run, mace_net **out);

mace_status mace_net_create(const void *graph, size_t graph_size, const uint8_t *weights,
                            size_t weights_size, mace_threadpool *pool, mace_net **out) {
  return create_net(graph, graph_size, weights, weights_size, pool, NULL, 0, 0, 1, out);
}

mace_status mace_net_create_nested(const void *graph, size_t graph_size, const uint8_t *weights,
                                   size_t weights_size, mace_threadpool *pool, int size_at_run,
                                   mace_net **out) {
  return create_net(graph, graph_size, weights, weights_size, pool, NULL, 0, 0, size_at_run,
                    out);
}

/* With a GPU, ops sized at run run during infer: the placement of ops and copies between
 * devices is made once for all shapes. */
mace_status mace_net_create_on(const void *graph, size_t graph_size, const uint8_t *weights,
                               size_t weights_size, mace_threadpool *pool,
                               struct mace_runtime *gpu, int64_t max_arena_bytes,
                               int discard_packed, mace_net **out) {
  return create_net(graph, graph_size, weights, weights_size, pool, gpu, max_arena_bytes,
                    discard_packed, gpu == NULL, out);
}

static mace_status create_net(const void *graph, size_t graph_size, const uint8_t *weights,
                              size_t weights_size, mace_threadpool *pool,
                              struct mace_runtime *gpu, int64_t max_arena_bytes,
                              int discard_packed, int size_at_run, mace_net **out) {
  *out = NULL;
  if (!graph || graph_size == 0) return mace_error(MACE_INVALID_MODEL, "the graph is empty");
  mace_net *net = calloc(1, sizeof(*net));
  if (!net) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  mace_status st = MACE_OK;
  net->pool = pool;
  net->gpu = gpu;
  net->max_arena_bytes = max_arena_bytes;
  net->size_at_run = size_at_run;
  net->discard_packed = discard_packed && !gpu;
  net->weights = weights;
  net->weights_size = weights ? weights_size : 0;
  net->def = mace__net_def__unpack(NULL, graph_size, graph);
  if (!net->def) {
    st = mace_error(MACE_INVALID_MODEL,
                    "the graph (%zu bytes) is not a valid mace NetDef: protobuf parsing failed",
                    graph_size);
    goto fail;
  }
  if (net->def->has_weights_size && (uint64_t)net->def->weights_size > net->weights_size) {
    st = mace_error(MACE_INVALID_MODEL,
                    "the weights hold %zu bytes but the model needs %lld (truncated .data?)",
                    net->weights_size, (long long)net->def->weights_size);
    goto fail;
  }
  /* The device rewrites the graph for itself: on the CPU, chains of ops that gain from the
   * blocked layout get it, with Reorders at their ends (runtime/cpu/layout.h). Not with a GPU:
   * its kernels read plain tensors, and ops fall back to the CPU one by one. */
  mace_runtime *dev = gpu ? gpu : mace_cpu_device();
  int n_reorders = 0;
  if (dev->ops->prepare_graph &&
      (st = dev->ops->prepare_graph(dev, net->def, &n_reorders)) != MACE_OK)
    goto fail;
  size_t n_tensors = net->def->n_tensors + net->def->n_input_info;
  net->max_outputs = 1;
  for (size_t i = 0; i < net->def->n_op; ++i) {
    n_tensors += net->def->op[i]->n_output;
    if (net->def->op[i]->n_output > (size_t)net->max_outputs &&
        net->def->op[i]->n_output <= 1024)
      net->max_outputs = (int)net->def->op[i]->n_output;
  }
  if (n_tensors > (1u << 24)) {
    st = mace_error(MACE_INVALID_MODEL, "the model has too many tensors (%zu)", n_tensors);
    goto fail;
  }
  /* With a GPU, room for copies of each tensor in the other places (host, buffer, image). */
  net->tensor_capacity = (int)(gpu ? 4 * n_tensors : n_tensors);
  net->table_size = net->tensor_capacity * 2 + 1;
  net->tensors = calloc(n_tensors ? (size_t)net->tensor_capacity : 1, sizeof(mace_tensor));
  net->name_table = malloc((size_t)net->table_size * sizeof(int));
  net->n_ops = (int)net->def->n_op;
  net->ops = calloc(net->n_ops ? (size_t)net->n_ops : 1, sizeof(mace_op));
  net->op_ms = calloc(net->n_ops ? (size_t)net->n_ops : 1, sizeof(double));
  net->evaluated = calloc(net->n_ops ? (size_t)net->n_ops : 1, 1);
  net->value_room = calloc((size_t)net->tensor_capacity + 1, sizeof(size_t));
  const size_t n_t = (size_t)net->tensor_capacity + 1, n_o = (size_t)net->n_ops + 1;
  net->bounded = calloc(n_t, 1);
  net->bound_bytes = calloc(n_t, sizeof(int64_t));
  net->dirty = calloc(n_t, 1);
  net->overflow = calloc(n_t, 1);
  net->op_bounded = calloc(n_o, 1);
  net->bound_scratch = calloc(n_o, sizeof(int64_t));
  net->own_scratch = calloc(n_o, sizeof(void *));
  net->own_scratch_room = calloc(n_o, sizeof(size_t));
  net->reinferred = calloc(n_o, 1);
  net->snap = calloc((size_t)net->max_outputs * (MACE_MAX_DIMS + 1), sizeof(int64_t));
  if (!net->tensors || !net->name_table || !net->ops || !net->op_ms || !net->evaluated ||
      !net->value_room || !net->bounded || !net->bound_bytes || !net->dirty || !net->overflow ||
      !net->op_bounded || !net->bound_scratch || !net->own_scratch || !net->own_scratch_room ||
      !net->snap || !net->reinferred) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
    goto fail;
  }
  if ((st = mace_planner_create(net->tensor_capacity, net->n_ops, &net->planner)) != MACE_OK)
    goto fail;
  if (gpu && (st = mace_placement_create(net)) != MACE_OK) goto fail;
  for (int i = 0; i < net->table_size; ++i) net->name_table[i] = -1;
  if ((st = load_consts(net)) != MACE_OK) goto fail;
  if ((st = mark_value_names(net)) != MACE_OK) goto fail;
  if ((st = load_inputs(net)) != MACE_OK) goto fail;
  if ((st = convert_args(net)) != MACE_OK) goto fail;
  if ((st = alloc_outputs(net)) != MACE_OK) goto fail;
  if ((st = build(net)) != MACE_OK) goto fail;
  *out = net;
  return MACE_OK;
fail:
  mace_net_destroy(net);
  return st;
}

void mace_net_destroy(mace_net *net) {
  if (!net) return;
  mace_placement_destroy(net);
  for (int i = 0; net->own_scratch && i < net->n_ops; ++i) mace_aligned_free(net->own_scratch[i]);
  for (int i = 0; i < net->n_ops; ++i) {
    mace_op *op = &net->ops[i];
    if (op->kind && op->kind->release && op->state) op->kind->release(op);
    free(op->state);
    free(op->inputs);
    free(op->outputs);
  }
  for (int i = 0; i < net->n_tensors; ++i) {
    free(net->tensors[i].name);
    if (net->tensors[i].owns_data) mace_aligned_free(net->tensors[i].data);
  }
  for (int i = 0; i < net->n_args; ++i) free((char *)net->args[i].s);
  free(net->args);
  free(net->ops);
  free(net->tensors);
  free(net->name_table);
  free(net->inputs);
  free(net->outputs);
  free(net->op_ms);
  free(net->evaluated);
  free(net->value_names);
  free(net->op_value_inputs);
  free(net->value_room);
  free(net->bounded);
  free(net->bound_bytes);
  free(net->dirty);
  free(net->overflow);
  free(net->op_bounded);
  free(net->bound_scratch);
  free(net->own_scratch);
  free(net->own_scratch_room);
  free(net->snap);
  free(net->reinferred);
  mace_aligned_free(net->arena);
  mace_planner_destroy(net->planner);
  if (net->def) mace__net_def__free_unpacked(net->def, NULL);
  free(net);
}

/* ---- queries (the read-only ones: core/net_query.c) ------------------------------------ */

int mace_net_find_tensor(const mace_net *net, const char *name) { return find_tensor(net, name); }

void mace_net_release_arena(mace_net *net) {
  mace_placement_release(net);
  mace_aligned_free(net->arena);
  net->arena = NULL;
  net->arena_capacity = 0;
  for (int i = 0; i < net->n_tensors; ++i)
    if (net->tensors[i].role != MACE_TENSOR_CONST && !net->tensors[i].is_value &&
        !net->overflow[i])
      net->tensors[i].data = NULL;
  for (int i = 0; i < net->n_ops; ++i) net->ops[i].scratch = NULL;
}

mace_status mace_net_reshape(mace_net *net, const int64_t (*dims)[MACE_MAX_DIMS],
                             const int *ndims, const void *const *values) {
  for (int i = 0; i < net->n_inputs; ++i) {
    mace_tensor *t = &net->tensors[net->inputs[i].tensor];
    if (ndims && ndims[i] >= 0) MACE_RETURN_IF_ERROR(set_dims(t, dims[i], (size_t)ndims[i], "input"));
    if (!t->is_value) continue;
    if (!values || !values[i]) {
      t->value_ready = 0;
      continue;
    }
    MACE_RETURN_IF_ERROR(value_alloc(net, t));
    if (mace_tensor_nbytes(t)) memcpy(t->data, values[i], mace_tensor_nbytes(t));
    t->value_ready = 1;
  }
  net->reshaped = 1;
  net->n_built = 0;
  return build(net);
}

mace_status mace_net_set_kept(mace_net *net, const unsigned char *kept) {
  for (int i = 0; i < net->n_tensors; ++i) {
    mace_plan_tensor *pt = mace_planner_tensor(net->planner, i);
    pt->flags = (kept && kept[i]) ? (pt->flags | MACE_PLAN_KEEP) : (pt->flags & ~MACE_PLAN_KEEP);
  }
  return mace_net_is_built(net) ? plan(net) : MACE_OK;
}

/* ---- run ------------------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

mace_status mace_net_run(mace_net *net) {
  if (!mace_net_is_built(net))
    return mace_error(MACE_INVALID_INPUT, "the net needs the values of its inputs before it can "
                      "run (op '%s' reads them)", net->ops[net->n_built].name);
  MACE_RETURN_IF_ERROR(mace_net_prepare(net));
  mace_caller_binding binding;
  mace_threadpool_bind_caller(net->pool, &binding);
  mace_status st = net->placement ? mace_placement_run_begin(net) : MACE_OK;
  if (net->any_bounded) {
    memset(net->dirty, 0, (size_t)net->n_tensors);
    memset(net->reinferred, 0, (size_t)net->n_ops);
  }
  for (int i = 0; i < net->n_ops && st == MACE_OK; ++i) {
    mace_op *op = &net->ops[i];
    if (net->placement && (st = mace_placement_run_steps(net, i)) != MACE_OK) break;
    /* What follows an op sized at run is inferred again where that op changed its dims. */
    if (net->op_bounded[i] && mace_net_reads_dirty(net, op) &&
        (st = mace_net_reinfer_op(net, i)) != MACE_OK) {
      st = mace_error_wrap(st, "op '%s' (%s), inferred again at run", op->name, op->type);
      break;
    }
    if (net->evaluated[i]) continue; /* computed during infer */
    double t0 = net->profiling ? now_ms() : 0;
    const int sized = op->kind->sized_at_run && net->any_bounded;
    if (sized) mace_net_snap_dims(net, op);
    st = net->placement ? mace_placement_run_op(net, i) : op->kind->run(op);
    if (st == MACE_OK && sized) st = mace_net_sized_op_done(net, i);
    if (st != MACE_OK) {
      /* Ops name themselves in their messages; add the name only where one did not. */
      char tag[256];
      snprintf(tag, sizeof(tag), "op '%s'", op->name);
      if (!strstr(mace_last_error(), tag))
        st = mace_error_wrap(st, "op '%s' (%s)", op->name, op->type);
    } else if (net->profiling) {
      net->op_ms[i] = now_ms() - t0;
    }
    if (st == MACE_OK && net->placement)
      net->op_ms[i] = mace_placement_op_done(net, i, net->op_ms[i]);
  }
  if (st == MACE_OK && net->placement) st = mace_placement_run_end(net);
  mace_threadpool_unbind_caller(&binding);
  if (st != MACE_OK && net->any_bounded) {
    /* A run stopped halfway leaves dims of this run and of the last: back to the bounds. */
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", mace_last_error());
    net->n_built = 0;
    (void)build(net);
    st = mace_error(st, "%s", msg);
  }
  /* Ops that pack for good only once they have run (a convolution's Winograd choice): their
   * weights go back after the first run. */
  if (st == MACE_OK && net->discard_packed && !net->discarded_after_run) {
    net->discarded_after_run = 1;
    (void)mace_net_discard_packed_weights(net);
  }
  return st;
}
