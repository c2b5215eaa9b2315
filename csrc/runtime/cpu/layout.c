/* The blocked-layout pass (runtime/cpu/layout.h). */
#include "runtime/cpu/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/proto_arg.h"
#include "runtime/cpu/cpu_features.h"

#define NCHWC_SUFFIX "@nchwc"

int mace_nchwc_block(void) {
  const char *env = getenv("MACE_NCHWC");
  if (env && strcmp(env, "0") == 0) return 0;
  switch (mace_cpu_isa_active()) {
    case MACE_ISA_AVX2: return 8;
    case MACE_ISA_AVX512: return 16;
    case MACE_ISA_NEON: return 4;
    default: return 0;
  }
}

/* ---- tensor names -> where they come from --------------------------------------------- */

enum { SRC_UNKNOWN = -3, SRC_CONST = -2, SRC_INPUT = -1 };  /* else: producing op index */

typedef struct name_map {
  const char **names;
  int *src;      /* SRC_* or op index */
  int *aux;      /* constant index for SRC_CONST */
  size_t size;   /* power of two */
} name_map;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603u;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static size_t map_slot(const name_map *m, const char *name) {
  size_t i = hash_str(name) & (m->size - 1);
  while (m->names[i] && strcmp(m->names[i], name) != 0) i = (i + 1) & (m->size - 1);
  return i;
}

static void map_put(name_map *m, const char *name, int src, int aux) {
  if (!name) return;
  const size_t i = map_slot(m, name);
  m->names[i] = name;
  m->src[i] = src;
  m->aux[i] = aux;
}

static int map_get(const name_map *m, const char *name, int *aux) {
  if (!name) return SRC_UNKNOWN;
  const size_t i = map_slot(m, name);
  if (!m->names[i]) return SRC_UNKNOWN;
  if (aux) *aux = m->aux[i];
  return m->src[i];
}

/* ---- which ops may run blocked -------------------------------------------------------- */

/* Asks op i's kind; MACE_NCHWC_NO on anything unusual (the net's validation reports it). */
static int op_accepts_(const Mace__NetDef *def, const name_map *m, int i, int block,
                       mace_tensor *consts, mace_tensor **inputs) {
  const Mace__OperatorDef *od = def->op[i];
  if (!od->type || !od->name || od->n_output != 1 || od->n_arg > 64) return MACE_NCHWC_NO;
  const mace_op_kind *kind = mace_registry_find(od->type, MACE_DEVICE_CPU, MACE_DT_F32);
  if (!kind || !kind->accepts_nchwc) return MACE_NCHWC_NO;
  for (size_t k = 0; k < od->n_input; ++k) {
    int ci = -1;
    const int src = map_get(m, od->input[k], &ci);
    inputs[k] = NULL;
    if (src == SRC_UNKNOWN) return MACE_NCHWC_NO;
    if (src != SRC_CONST) continue;
    if (k == 0) return MACE_NCHWC_NO;  /* a constant activation: nothing to block */
    const Mace__ConstTensor *ct = def->tensors[ci];
    if (ct->n_dims > MACE_MAX_DIMS) return MACE_NCHWC_NO;
    mace_tensor *t = &consts[k];
    memset(t, 0, sizeof(*t));
    t->dtype = (mace_dtype)ct->data_type;
    t->ndim = (int)ct->n_dims;
    for (size_t d = 0; d < ct->n_dims; ++d) t->dims[d] = ct->dims[d];
    t->role = MACE_TENSOR_CONST;
    inputs[k] = t;
  }
  mace_arg args[64];
  memset(args, 0, sizeof(args));
  int verdict = MACE_NCHWC_NO;
  size_t n_args = 0;
  void *state = kind->state_size ? calloc(1, kind->state_size) : NULL;
  if (kind->state_size && !state) return MACE_NCHWC_NO;
  for (; n_args < od->n_arg; ++n_args)
    if (mace_arg_from_proto(od->arg[n_args], &args[n_args]) != MACE_OK) goto done;
  mace_op op = {.kind = kind, .name = od->name, .type = od->type, .args = args,
                .n_args = (int)od->n_arg, .inputs = inputs, .n_inputs = (int)od->n_input,
                .n_outputs = 1, .state = state};
  verdict = kind->accepts_nchwc(&op, block);
done:
  for (size_t a = 0; a < n_args; ++a) free((char *)args[a].s);
  free(state);
  return verdict;
}

/* Any number of inputs: DenseNet-121's Concats gather up to 33 (with at most 8, its later
 * layers' Concats ran plain, between Reorders). */
static int op_accepts(const Mace__NetDef *def, const name_map *m, int i, int block) {
  const Mace__OperatorDef *od = def->op[i];
  if (od->n_input < 1 || od->n_input > (1 << 16)) return MACE_NCHWC_NO;
  mace_tensor *consts = calloc(od->n_input, sizeof(mace_tensor));
  mace_tensor **inputs = calloc(od->n_input, sizeof(mace_tensor *));
  const int verdict =
      consts && inputs ? op_accepts_(def, m, i, block, consts, inputs) : MACE_NCHWC_NO;
  free(consts);
  free(inputs);
  return verdict;
}

/* ---- chains ----------------------------------------------------------------------------- */

static int uf_find(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* Whether op i reads its input k plain whatever the chains: a first convolution's input
 * (MACE_NCHWC_FIRST), which links it to no chain and needs no Reorder to NCHWc. */
static int reads_plain(const int *cap, int i, size_t k) {
  return k == 0 && cap[i] == MACE_NCHWC_FIRST;
}

/* ---- building the new op list ----------------------------------------------------------- */

static char *str_cat(const char *a, const char *b) {
  const size_t la = strlen(a), lb = strlen(b);
  char *s = malloc(la + lb + 1);
  if (!s) return NULL;
  memcpy(s, a, la);
  memcpy(s + la, b, lb + 1);
  return s;
}

/* A Reorder op from `in` to `out` (copied): to NCHWc of `block` channels, or to NCHW when
 * block is 0. */
static Mace__OperatorDef *new_reorder(const char *in, const char *out, int block) {
  Mace__OperatorDef *od = malloc(sizeof(*od));
  Mace__Argument *arg = malloc(sizeof(*arg));
  if (!od || !arg) {
    free(od);
    free(arg);
    return NULL;
  }
  mace__operator_def__init(od);
  mace__argument__init(arg);
  od->input = calloc(1, sizeof(char *));
  od->output = calloc(1, sizeof(char *));
  od->arg = calloc(1, sizeof(Mace__Argument *));
  od->n_input = od->input ? 1 : 0;
  od->n_output = od->output ? 1 : 0;
  od->n_arg = od->arg ? 1 : 0;
  if (od->arg) od->arg[0] = arg;
  else free(arg);
  arg->name = str_cat("block", "");
  arg->has_i = 1;
  arg->i = block;
  od->type = str_cat("Reorder", "");
  od->name = str_cat(out, block ? "/to_nchwc" : "/to_nchw");
  if (od->input) od->input[0] = str_cat(in, "");
  if (od->output) od->output[0] = str_cat(out, "");
  if (!od->input || !od->output || !od->arg || !arg->name || !od->type || !od->name ||
      !od->input[0] || !od->output[0]) {
    mace__operator_def__free_unpacked(od, NULL);
    return NULL;
  }
  return od;
}

typedef struct pass {
  Mace__NetDef *def;
  int block;
  name_map map;
  int *cap;        /* per op: MACE_NCHWC_* (0 once its chain is dropped) */
  int *parent;     /* union-find over ops */
  char *plain_out; /* per op: its blocked output is read outside the chain or is an output */
  char *reordered; /* per name slot: its Reorder to NCHWc is in the new list */
  Mace__OperatorDef **ops; /* the new list */
  size_t n_ops, cap_ops;
} pass;

static void pass_free(pass *p) {
  free(p->map.names);
  free(p->map.src);
  free(p->map.aux);
  free(p->cap);
  free(p->parent);
  free(p->plain_out);
  free(p->reordered);
  for (size_t i = 0; i < p->n_ops; ++i)  /* only on failure: the new Reorders */
    if (p->ops[i]) mace__operator_def__free_unpacked(p->ops[i], NULL);
  free(p->ops);
}

static int is_output(const Mace__NetDef *def, const char *name) {
  for (size_t i = 0; i < def->n_output_info; ++i)
    if (def->output_info[i]->name && strcmp(def->output_info[i]->name, name) == 0) return 1;
  return 0;
}

static mace_status oom(void) {
  return mace_error(MACE_OUT_OF_RESOURCES, "out of memory (NCHWc layout pass)");
}

/* Appends the argument name = value to od (its arg array as protobuf-c's unpacker allocates). */
static mace_status add_int_arg(Mace__OperatorDef *od, const char *name, int64_t value) {
  Mace__Argument **args = realloc(od->arg, (od->n_arg + 1) * sizeof(*args));
  if (!args) return oom();
  od->arg = args;
  Mace__Argument *arg = malloc(sizeof(*arg));
  char *s = str_cat(name, "");
  if (!arg || !s) {
    free(arg);
    free(s);
    return oom();
  }
  mace__argument__init(arg);
  arg->name = s;
  arg->has_i = 1;
  arg->i = value;
  od->arg[od->n_arg++] = arg;
  return MACE_OK;
}

/* Renames *name to *name + suffix. */
static mace_status rename_blocked(char **name) {
  char *s = str_cat(*name, NCHWC_SUFFIX);
  if (!s) return oom();
  free(*name);
  *name = s;
  return MACE_OK;
}

/* Joins the ops that may run blocked into chains through the tensors they pass each other,
 * and marks the blocked outputs read outside their chain or returned (plain_out). */
static void link_chains(pass *p) {
  const Mace__NetDef *def = p->def;
  const int n = (int)def->n_op;
  for (int i = 0; i < n; ++i) p->parent[i] = i;
  memset(p->plain_out, 0, def->n_op);
  for (int i = 0; i < n; ++i) {
    if (!p->cap[i]) continue;
    const Mace__OperatorDef *od = def->op[i];
    for (size_t k = 0; k < od->n_input; ++k) {
      const int src = map_get(&p->map, od->input[k], NULL);
      if (src >= 0 && src < i && p->cap[src] && !reads_plain(p->cap, i, k))
        p->parent[uf_find(p->parent, i)] = uf_find(p->parent, src);
    }
  }
  for (int i = 0; i < n; ++i) {
    const Mace__OperatorDef *od = def->op[i];
    for (size_t k = 0; k < od->n_input; ++k) {
      const int src = map_get(&p->map, od->input[k], NULL);
      if (src >= 0 && p->cap[src] &&
          (!p->cap[i] || reads_plain(p->cap, i, k) ||
           uf_find(p->parent, i) != uf_find(p->parent, src)))
        p->plain_out[src] = 1;
    }
    if (p->cap[i] && is_output(def, od->output[0])) p->plain_out[i] = 1;
  }
}

/* Whether the chain reads `name` (a plain tensor) through any op but `skip`. */
static int chain_reads(const pass *p, const char *name, int chain, int skip) {
  for (int j = 0; j < (int)p->def->n_op; ++j) {
    if (j == skip || !p->cap[j] || uf_find(p->parent, j) != chain) continue;
    const Mace__OperatorDef *od = p->def->op[j];
    for (size_t k = 0; k < od->n_input; ++k)
      if (!reads_plain(p->cap, j, k) && od->input[k] && strcmp(od->input[k], name) == 0)
        return 1;
  }
  return 0;
}

/* Drops a chain's sinks (ops none of whose readers is in the chain) while that saves
 * Reorders: the sink's Reorder back to NCHW goes, and so do the Reorders to NCHWc of the
 * plain tensors only it reads, while each blocked input no other reader sends back to NCHW
 * needs one. SqueezeNet's first blocked chain ran into the fourth Fire module through the
 * max pool, where the 3x3 expand (32 input channels) stays plain: its 1x1 expand is such a
 * sink (one Reorder less), its squeeze is not (one for one), so the chain ends at the
 * squeeze's 32 channels. */
static void trim_sinks(pass *p) {
  const Mace__NetDef *def = p->def;
  const int n = (int)def->n_op;
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = n - 1; i >= 0; --i) {  /* a drop exposes earlier sinks: the pass goes on */
      if (!p->cap[i] || !p->plain_out[i] || p->cap[i] == MACE_NCHWC_ALONE) continue;
      const int chain = uf_find(p->parent, i);
      int sink = 1;
      for (int j = i + 1; j < n && sink; ++j) {
        if (!p->cap[j] || uf_find(p->parent, j) != chain) continue;
        const Mace__OperatorDef *od = def->op[j];
        for (size_t k = 0; k < od->n_input && sink; ++k)
          sink = reads_plain(p->cap, j, k) ||
                 !(od->input[k] && strcmp(od->input[k], def->op[i]->output[0]) == 0);
      }
      if (!sink) continue;
      const Mace__OperatorDef *od = def->op[i];
      int gain = 1;
      for (size_t k = 0; k < od->n_input; ++k) {
        const int src = map_get(&p->map, od->input[k], NULL);
        if (src == SRC_CONST || reads_plain(p->cap, i, k)) continue;
        int dup = 0;  /* an input read twice counts once */
        for (size_t q = 0; q < k; ++q) dup |= strcmp(od->input[q], od->input[k]) == 0;
        if (dup) continue;
        if (src >= 0 && p->cap[src]) gain -= !p->plain_out[src];
        else gain += !chain_reads(p, od->input[k], chain, i);
      }
      if (gain > 0) {
        p->cap[i] = MACE_NCHWC_NO;
        link_chains(p);
        changed = 1;
      }
    }
  }
}

mace_status mace_layout_nchwc(Mace__NetDef *def, int block, int *n_reorders) {
  *n_reorders = 0;
  const int n = (int)def->n_op;
  if (n == 0 || block <= 0) return MACE_OK;
  pass p = {.def = def, .block = block};
  mace_status st = MACE_OK;
  size_t names = def->n_tensors + def->n_input_info;
  for (int i = 0; i < n; ++i) names += def->op[i]->n_output;
  p.map.size = 16;
  while (p.map.size < 2 * names) p.map.size *= 2;
  p.map.names = calloc(p.map.size, sizeof(char *));
  p.map.src = calloc(p.map.size, sizeof(int));
  p.map.aux = calloc(p.map.size, sizeof(int));
  p.cap = calloc((size_t)n, sizeof(int));
  p.parent = malloc((size_t)n * sizeof(int));
  p.plain_out = calloc((size_t)n, 1);
  p.reordered = calloc(p.map.size, 1);
  if (!p.map.names || !p.map.src || !p.map.aux || !p.cap || !p.parent || !p.plain_out ||
      !p.reordered) {
    st = oom();
    goto out;
  }
  for (size_t i = 0; i < def->n_tensors; ++i) map_put(&p.map, def->tensors[i]->name, SRC_CONST, (int)i);
  for (size_t i = 0; i < def->n_input_info; ++i)
    map_put(&p.map, def->input_info[i]->name, SRC_INPUT, (int)i);
  /* Which ops may run blocked; any name already ending in the suffix turns the pass off. */
  for (int i = 0; i < n; ++i) {
    const Mace__OperatorDef *od = def->op[i];
    p.cap[i] = op_accepts(def, &p.map, i, block);
    for (size_t k = 0; k < od->n_output; ++k) {
      const char *o = od->output[k];
      if (!o || strstr(o, NCHWC_SUFFIX)) goto out;
      if (map_get(&p.map, o, NULL) == SRC_UNKNOWN) map_put(&p.map, o, i, 0);
    }
  }
  /* An element-wise op (activation, pooling, eltwise, ...) runs blocked only on tensors that
   * blocked ops produce: a Reorder to NCHWc in front of it buys nothing (the Reorder could as
   * well go after it), and its plain inputs can be of any rank (an Add's [W] operand) where
   * a Reorder takes only 4-D tensors. A MACE_NCHWC_GATHER op (Concat) that also reads a
   * blocked tensor is the exception: a Reorder of its plain inputs (4-D, as the blocked one
   * is) keeps the chain going where dropping it would need Reorders of the blocked ones
   * (DenseNet's block input, read by every Concat of the block). Ops come in execution
   * order, but dropping one can drop its readers, hence the loop. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < n; ++i) {
      if (p.cap[i] != MACE_NCHWC_ELEMENTWISE && p.cap[i] != MACE_NCHWC_GATHER) continue;
      const Mace__OperatorDef *od = def->op[i];
      int blocked = 0, plain = 0;
      for (size_t k = 0; k < od->n_input; ++k) {
        const int src = map_get(&p.map, od->input[k], NULL);
        if (src == SRC_CONST) continue;
        if (src >= 0 && p.cap[src]) ++blocked;
        else ++plain;
      }
      if (plain && !(blocked && p.cap[i] == MACE_NCHWC_GATHER)) {
        p.cap[i] = MACE_NCHWC_NO;
        changed = 1;
      }
    }
  }
  link_chains(&p);
  trim_sinks(&p);
  /* Per chain: convolutions against Reorders (one per plain tensor read, counted for the
   * first chain that reads it, as it is inserted once; one per output that goes back to
   * NCHW). Counted at the chain's root. A chain is kept when it holds more than two
   * convolutions per Reorder. A count, not a cost: a Reorder costs about what blocking saves
   * one or two convolutions on the same plane. With "more convolutions than Reorders",
   * EfficientNet-B0's and ShuffleNetV2's 3-convolution, 2-Reorder chains (between two
   * squeeze-excitations; inside a shuffle unit's branch) were blocked and ran slower than
   * plain (benchmarks/HISTORY.md), while MobileNetV1/V2's and MNASNet's bodies are one chain
   * of 2 Reorders. Since Pooling and
   * Eltwise run blocked, so is EfficientNet-B0's (its squeeze-excitations no longer cut it). */
  int *convs = calloc((size_t)n, sizeof(int)), *reorders = calloc((size_t)n, sizeof(int));
  if (!convs || !reorders) {
    free(convs);
    free(reorders);
    st = oom();
    goto out;
  }
  for (int i = 0; i < n; ++i) {
    if (!p.cap[i]) continue;
    const int r = uf_find(p.parent, i);
    const Mace__OperatorDef *od = def->op[i];
    convs[r] += p.cap[i] == MACE_NCHWC_CONV || p.cap[i] == MACE_NCHWC_FIRST;
    convs[r] += p.cap[i] == MACE_NCHWC_ALONE ? 5 : 0;  /* pays two Reorders of its own */
    reorders[r] += p.plain_out[i];
    for (size_t k = 0; k < od->n_input; ++k) {
      const int src = map_get(&p.map, od->input[k], NULL);
      if (src == SRC_CONST || reads_plain(p.cap, i, k) || (src >= 0 && p.cap[src])) continue;
      char *seen = &p.reordered[map_slot(&p.map, od->input[k])];
      reorders[r] += !*seen;
      *seen = 1;
    }
  }
  memset(p.reordered, 0, p.map.size);
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    if (!p.cap[i]) continue;
    const int r = uf_find(p.parent, i);
    if (convs[r] > 2 * reorders[r]) kept = 1;
    else p.cap[i] = 0;
  }
  free(convs);
  free(reorders);
  if (!kept) goto out;
  /* The new op list. */
  p.cap_ops = (size_t)n * 3 + 1;
  p.ops = calloc(p.cap_ops, sizeof(*p.ops));
  if (!p.ops) {
    st = oom();
    goto out;
  }
  size_t n_new = 0;
  for (int i = 0; i < n; ++i) {
    Mace__OperatorDef *od = def->op[i];
    if (p.cap[i]) {
      for (size_t k = 0; k < od->n_input; ++k) {
        const int src = map_get(&p.map, od->input[k], NULL);
        if (src == SRC_CONST || reads_plain(p.cap, i, k)) continue;
        char *done = &p.reordered[map_slot(&p.map, od->input[k])];
        if (!(src >= 0 && p.cap[src]) && !*done) {
          Mace__OperatorDef *ro = NULL;
          char *out_name = str_cat(od->input[k], NCHWC_SUFFIX);
          if (out_name) ro = new_reorder(od->input[k], out_name, block);
          free(out_name);
          if (!ro) {
            st = oom();
            goto out;
          }
          p.ops[p.n_ops++] = ro;
          ++n_new;
          *done = 1;
        }
      }
    }
    p.ops[p.n_ops++] = NULL;  /* op i, placed below once every allocation has succeeded */
    if (p.cap[i] && p.plain_out[i]) {
      char *blocked = str_cat(od->output[0], NCHWC_SUFFIX);
      Mace__OperatorDef *ro = blocked ? new_reorder(blocked, od->output[0], 0) : NULL;
      free(blocked);
      if (!ro) {
        st = oom();
        goto out;
      }
      p.ops[p.n_ops++] = ro;
      ++n_new;
    }
  }
  /* Renames (the old ops keep their place in the list): every name to rename is found
   * first, as renaming frees the strings the map's keys point to. */
  size_t n_names = 0;
  for (int i = 0; i < n; ++i) n_names += p.cap[i] ? def->op[i]->n_input + 1 : 0;
  char ***to_rename = malloc(n_names * sizeof(*to_rename));
  if (!to_rename) {
    st = oom();
    goto out;
  }
  n_names = 0;
  for (int i = 0; i < n; ++i) {
    if (!p.cap[i]) continue;
    Mace__OperatorDef *od = def->op[i];
    for (size_t k = 0; k < od->n_input; ++k)
      if (map_get(&p.map, od->input[k], NULL) != SRC_CONST && !reads_plain(p.cap, i, k))
        to_rename[n_names++] = &od->input[k];
    to_rename[n_names++] = &od->output[0];
  }
  for (size_t j = 0; j < n_names && st == MACE_OK; ++j) st = rename_blocked(to_rename[j]);
  free(to_rename);
  for (int i = 0; i < n && st == MACE_OK; ++i)
    if (p.cap[i] == MACE_NCHWC_FIRST) st = add_int_arg(def->op[i], MACE_NCHWC_OUT_ARG, block);
  if (st != MACE_OK) goto out;
  int next = 0;
  for (size_t j = 0; j < p.n_ops; ++j)
    if (!p.ops[j]) p.ops[j] = def->op[next++];
  free(def->op);
  def->op = p.ops;
  def->n_op = p.n_ops;
  p.ops = NULL;
  p.n_ops = 0;
  *n_reorders = (int)n_new;
out:
  pass_free(&p);
  return st;
}
