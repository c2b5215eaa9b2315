/* The process-wide registry of OpenCL contexts: one context per (loaded library, device),
 * shared by every runtime (engine) on that device, with the programs built in it. Included only
 * by csrc/runtime/opencl/ sources. Thread-safe (one mutex); contexts and programs are
 * thread-safe OpenCL objects, kernels are not and stay per runtime. */
#ifndef MACE_RUNTIME_OPENCL_CL_REGISTRY_H_
#define MACE_RUNTIME_OPENCL_CL_REGISTRY_H_

#include "runtime/opencl/cl_loader.h"

/* One shared context: its device, its built programs and how many runtimes hold it. */
typedef struct mace_cl_shared mace_cl_shared;

/* The shared context of (api, device), created on first use; a reference the caller gives
 * back with mace_cl_shared_release. `private_context` creates one that is never shared.
 * A creation that fails leaves nothing behind (the next call tries again). */
mace_status mace_cl_shared_acquire(const mace_cl_api *api, cl_platform_id platform,
                                   cl_device_id device, int private_context,
                                   mace_cl_shared **out);
/* One more reference (a runtime created sharing another's). */
void mace_cl_shared_retain(mace_cl_shared *s);
/* Drops a reference. The last one of a listed context leaves it idle in the registry, its
 * programs built, for the next runtime on the device (mace_cl_registry_release_idle frees it);
 * the last one of a private or discarded context releases it. */
void mace_cl_shared_release(mace_cl_shared *s);
/* Takes the context out of the registry (its device failed): runtimes holding it keep it until
 * they go, the next mace_cl_shared_acquire creates a new one. */
void mace_cl_shared_discard(mace_cl_shared *s);
cl_context mace_cl_shared_context(const mace_cl_shared *s);

/* The program built for `key` (precision, program, options) in this context, or NULL; owned by
 * the registry entry (valid while the caller holds its reference). `*cached_in` is set to the
 * binary cache path the program was stored in or loaded from (NULL: none; registry-owned). */
cl_program mace_cl_shared_find_program(mace_cl_shared *s, const char *key,
                                       const char **cached_in);
/* Adds `prog` (the caller's reference passes to the registry). If another thread added one for
 * `key` meanwhile, `prog` is released and *out is that one. */
mace_status mace_cl_shared_add_program(mace_cl_shared *s, const char *key, cl_program prog,
                                       const char *cached_in, cl_program *out);

/* Whether an OpenCL error says the context or device is no longer usable (device lost). */
int mace_cl_error_is_fatal(cl_int err);

#endif /* MACE_RUNTIME_OPENCL_CL_REGISTRY_H_ */
