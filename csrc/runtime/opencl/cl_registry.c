/* The process-wide registry of shared OpenCL contexts and their built programs
 * (runtime/opencl/cl_registry.h), behind one mutex. */
#include "runtime/opencl/cl_runtime.h"

#ifdef MACE_HAVE_OPENCL_HEADERS

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/opencl/cl_registry.h"

typedef struct shared_program {
  char *key;               /* precision, program, options */
  char *cached_in;         /* binary cache path it is stored in / loaded from, or NULL */
  cl_program program;
} shared_program;

struct mace_cl_shared {
  const mace_cl_api *api;
  cl_device_id device;
  cl_context context;
  int refs;                /* runtimes holding it (under the mutex); 0: idle, kept listed */
  int listed;              /* in the registry's list (acquire finds it) */
  shared_program *programs;
  int n_programs, cap_programs;
  mace_cl_shared *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mace_cl_shared *g_list;  /* the listed entries */
static mace_cl_registry_stats g_stats;

static char *dup_or_null(const char *s) {
  if (!s) return NULL;
  const size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Removes s from the list if it is there. Under the mutex. */
static void unlist(mace_cl_shared *s) {
  if (!s->listed) return;
  for (mace_cl_shared **p = &g_list; *p; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      break;
    }
  }
  s->listed = 0;
  s->next = NULL;
  --g_stats.contexts_listed;
}

static void free_shared(mace_cl_shared *s) {
  for (int i = 0; i < s->n_programs; ++i) {
    s->api->clReleaseProgram(s->programs[i].program);
    free(s->programs[i].key);
    free(s->programs[i].cached_in);
  }
  free(s->programs);
  if (s->context) s->api->clReleaseContext(s->context);
  free(s);
}

mace_status mace_cl_shared_acquire(const mace_cl_api *api, cl_platform_id platform,
                                   cl_device_id device, int private_context,
                                   mace_cl_shared **out) {
  *out = NULL;
  mace_status st = MACE_OK;
  pthread_mutex_lock(&g_lock);
  if (!private_context) {
    for (mace_cl_shared *s = g_list; s; s = s->next) {
      if (s->api == api && s->device == device) {
        if (s->refs++ == 0) {  /* an idle context comes back into use */
          --g_stats.contexts_idle;
          ++g_stats.contexts_live;
        }
        *out = s;
        goto done;
      }
    }
  }
  /* Created under the mutex, so threads asking for the same device at once get one context. */
  mace_cl_shared *s = calloc(1, sizeof(*s));
  if (!s) {
    st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory for a context entry");
    goto done;
  }
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                         0};
  cl_int err = CL_SUCCESS;
  s->api = api;
  s->device = device;
  s->context = api->clCreateContext(props, 1, &device, NULL, NULL, &err);
  if (!s->context) {
    free(s);
    st = mace_error(err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES
                        ? MACE_OUT_OF_RESOURCES
                        : MACE_RUNTIME_ERROR,
                    "OpenCL: clCreateContext failed: %s (%d)", mace_cl_error_name(err),
                    (int)err);
    goto done;
  }
  s->refs = 1;
  ++g_stats.contexts_created;
  ++g_stats.contexts_live;
  if (!private_context) {
    s->listed = 1;
    s->next = g_list;
    g_list = s;
    ++g_stats.contexts_listed;
  }
  *out = s;
done:
  pthread_mutex_unlock(&g_lock);
  return st;
}

void mace_cl_shared_retain(mace_cl_shared *s) {
  pthread_mutex_lock(&g_lock);
  ++s->refs;
  pthread_mutex_unlock(&g_lock);
}

/* The last runtime of a listed context leaves it listed and idle, with its programs: the next
 * engine on the device then skips the driver's context creation and finds its programs built
 * (a context costs tens of milliseconds on some drivers, more than the rest of an engine's
 * creation). A private or discarded context goes at once. */
void mace_cl_shared_release(mace_cl_shared *s) {
  if (!s) return;
  pthread_mutex_lock(&g_lock);
  const int last = --s->refs == 0;
  const int drop = last && !s->listed;
  if (last) {
    --g_stats.contexts_live;
    if (!drop) ++g_stats.contexts_idle;
  }
  pthread_mutex_unlock(&g_lock);
  if (drop) free_shared(s);  /* no one else can reach it now */
}

void mace_cl_shared_discard(mace_cl_shared *s) {
  pthread_mutex_lock(&g_lock);
  unlist(s);
  pthread_mutex_unlock(&g_lock);
}

int mace_cl_registry_release_idle(void) {
  mace_cl_shared *idle = NULL;
  pthread_mutex_lock(&g_lock);
  for (mace_cl_shared **p = &g_list; *p;) {
    mace_cl_shared *s = *p;
    if (s->refs == 0) {
      *p = s->next;
      s->listed = 0;
      --g_stats.contexts_listed;
      --g_stats.contexts_idle;
      s->next = idle;
      idle = s;
    } else {
      p = &s->next;
    }
  }
  pthread_mutex_unlock(&g_lock);
  int n = 0;
  while (idle) {
    mace_cl_shared *next = idle->next;
    free_shared(idle);
    idle = next;
    ++n;
  }
  return n;
}

cl_context mace_cl_shared_context(const mace_cl_shared *s) { return s->context; }

cl_program mace_cl_shared_find_program(mace_cl_shared *s, const char *key,
                                       const char **cached_in) {
  cl_program prog = NULL;
  *cached_in = NULL;
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < s->n_programs; ++i) {
    if (strcmp(s->programs[i].key, key) == 0) {
      prog = s->programs[i].program;
      *cached_in = s->programs[i].cached_in;  /* never changed once added */
      ++g_stats.programs_reused;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return prog;
}

mace_status mace_cl_shared_add_program(mace_cl_shared *s, const char *key, cl_program prog,
                                       const char *cached_in, cl_program *out) {
  mace_status st = MACE_OK;
  *out = NULL;
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < s->n_programs; ++i) {
    if (strcmp(s->programs[i].key, key) == 0) {  /* another runtime built it meanwhile */
      s->api->clReleaseProgram(prog);
      *out = s->programs[i].program;
      goto done;
    }
  }
  if (s->n_programs == s->cap_programs) {
    const int cap = s->cap_programs ? s->cap_programs * 2 : 32;
    shared_program *p = realloc(s->programs, (size_t)cap * sizeof(*p));
    if (!p) {
      st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
      goto fail;
    }
    s->programs = p;
    s->cap_programs = cap;
  }
  shared_program e = {dup_or_null(key), dup_or_null(cached_in), prog};
  if (!e.key || (cached_in && !e.cached_in)) {
    free(e.key);
    free(e.cached_in);
    st = mace_error(MACE_OUT_OF_RESOURCES, "OpenCL: no memory");
    goto fail;
  }
  s->programs[s->n_programs++] = e;
  ++g_stats.programs_built;
  *out = prog;
  goto done;
fail:
  s->api->clReleaseProgram(prog);
done:
  pthread_mutex_unlock(&g_lock);
  return st;
}

int mace_cl_error_is_fatal(cl_int err) {
  return err == CL_DEVICE_NOT_AVAILABLE || err == CL_INVALID_CONTEXT ||
         err == CL_INVALID_COMMAND_QUEUE || err == CL_INVALID_DEVICE ||
         err == CL_OUT_OF_RESOURCES;
}

void mace_cl_registry_get_stats(mace_cl_registry_stats *out) {
  pthread_mutex_lock(&g_lock);
  *out = g_stats;
  pthread_mutex_unlock(&g_lock);
}

#endif /* MACE_HAVE_OPENCL_HEADERS (else cl_stub.c) */
