/* The CPU's runtime behind the device interface (runtime/device.h): host memory, copies as
 * memcpy, ops run by their kinds on the calling thread and the engine's pool, and at build the
 * blocked-layout pass (runtime/cpu/layout.h). */
#ifndef MACE_RUNTIME_CPU_CPU_DEVICE_H_
#define MACE_RUNTIME_CPU_CPU_DEVICE_H_

#include <stdint.h>

#include "runtime/device.h"

/* The process's one CPU runtime: stateless, never freed; the default device of a net. */
mace_runtime *mace_cpu_device(void);

/* fp16 / bf16 <-> fp32 conversion of n values with the active ISA's kernel (kernels/cpu/half.h;
 * the reference where the ISA has none): fp16 and bf16 weights widened at load, a GPU's fp16
 * uploads and downloads. The same bits on every ISA. */
void mace_cpu_f16_to_f32(const uint16_t *in, float *out, int64_t n);
void mace_cpu_bf16_to_f32(const uint16_t *in, float *out, int64_t n);
void mace_cpu_f32_to_f16(const float *in, uint16_t *out, int64_t n);

#endif /* MACE_RUNTIME_CPU_CPU_DEVICE_H_ */
