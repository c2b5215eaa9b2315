/* Local work sizes: the default choice, the tuned-parameter file (seed 003's
 * opencl_parameter_file) and the tuner that fills it (MACE_TUNING=1). Internal to the runtime. */
#ifndef MACE_RUNTIME_OPENCL_CL_TUNING_H_
#define MACE_RUNTIME_OPENCL_CL_TUNING_H_

#include <stddef.h>

#include "core/status.h"
#include "runtime/opencl/cl_runtime.h"

typedef struct mace_cl_tuning_entry {
  char *key;          /* kernel key ("program\nname\noptions", newlines kept in memory) */
  int dims;
  size_t gws[3], lws[3];
} mace_cl_tuning_entry;

/* Owned by the runtime. The file is text, one launch a line:
 *   dims gws0 gws1 gws2 lws0 lws1 lws2 key      (key's newlines written as '|')
 * Lines that do not parse are skipped with a warning (a damaged file only costs speed). */
typedef struct mace_cl_tuning {
  char *path;         /* owned, NULL: none */
  int tuning;         /* MACE_TUNING=1: unknown launches are tuned and recorded */
  int dirty;
  mace_cl_tuning_entry *entries;
  int n, cap;
} mace_cl_tuning;

mace_status mace_cl_tuning_load(mace_cl_tuning *t, const char *path);
/* Writes the file when the tuner added entries (and a path is set). */
void mace_cl_tuning_save(mace_cl_tuning *t);
void mace_cl_tuning_free(mace_cl_tuning *t);
int mace_cl_tuning_active(const mace_cl_tuning *t);
/* 1 and lws set when the file has this kernel and global size. */
int mace_cl_tuning_find(const mace_cl_tuning *t, const char *key, int dims, const size_t *gws,
                        size_t *lws);
/* Times a few work-group shapes for the launch (running the kernel several times, so its
 * output must not alias its inputs, as no mace kernel's does), records the fastest in t and
 * returns it in lws. */
mace_status mace_cl_tuning_run(mace_cl_tuning *t, mace_cl_runtime *rt, mace_cl_kernel *k,
                               int dims, const size_t *gws, size_t *lws);
/* The work-group shape used without a tuned one: up to 64 items (and the kernel's limit),
 * spread over the first dimensions, not much larger than the global size. */
void mace_cl_default_lws(int dims, const size_t *gws, size_t max_wg, size_t *lws);

/* From cl_runtime.c, for the tuner: the key of a kernel, its work-group limit, and one
 * blocking launch over `gws` rounded up to `lws`, its time in *ms (MACE_RUNTIME_ERROR when
 * the driver refuses that lws). */
const char *mace_cl_kernel_key(const mace_cl_kernel *k);
size_t mace_cl_kernel_max_work_group(const mace_cl_kernel *k);
mace_status mace_cl_launch_timed(mace_cl_runtime *rt, mace_cl_kernel *k, int dims,
                                 const size_t *gws, const size_t *lws, double *ms);

#endif /* MACE_RUNTIME_OPENCL_CL_TUNING_H_ */
