/* The CPU's runtime behind the device interface (runtime/device.h): host memory, copies as
 * memcpy, ops run by their kinds on the calling thread and the engine's pool, and at build the
 * blocked-layout pass (runtime/cpu/layout.h). */
#ifndef MACE_RUNTIME_CPU_CPU_DEVICE_H_
#define MACE_RUNTIME_CPU_CPU_DEVICE_H_

#include "runtime/device.h"

/* The process's one CPU runtime: stateless, never freed; the default device of a net. */
mace_runtime *mace_cpu_device(void);

#endif /* MACE_RUNTIME_CPU_CPU_DEVICE_H_ */
