/* CPU feature detection (once per process) and the ISA level kernels are dispatched on. */
#ifndef MACE_RUNTIME_CPU_CPU_FEATURES_H_
#define MACE_RUNTIME_CPU_CPU_FEATURES_H_

/* What the CPU and the OS support (x86: CPUID + XGETBV; aarch64: getauxval(AT_HWCAP)). */
typedef struct mace_cpu_features {
  int avx2, fma, f16c, avx512f, avx512bw, avx512vnni; /* x86-64; AVX* also need OS support */
  int neon, dotprod;                            /* aarch64 */
} mace_cpu_features;

/* ISA levels, ordered: a level implies the ones below it on its architecture. */
typedef enum mace_cpu_isa {
  MACE_ISA_REF = 0,    /* portable C only */
  MACE_ISA_AVX2 = 1,   /* AVX2 + FMA + F16C */
  MACE_ISA_AVX512 = 2, /* AVX-512 F + BW (+ FMA) */
  MACE_ISA_NEON = 3    /* aarch64 Advanced SIMD */
} mace_cpu_isa;

/* Detected once, thread-safe. */
const mace_cpu_features *mace_cpu_features_get(void);

/* Best ISA the CPU supports. */
mace_cpu_isa mace_cpu_isa_detected(void);

/* The ISA kernels use: the detected one, lowered by the environment variable
 * MACE_CPU_ISA=ref|avx2|avx512|neon. Asking for an ISA the CPU lacks (or an unknown name)
 * logs a warning and keeps the best available one. Read once per process. Never above the
 * best ISA the build has kernels for (a single-ISA build: kernels/cpu/isa.h). */
mace_cpu_isa mace_cpu_isa_active(void);

/* Whether the CPU supports `isa` (MACE_ISA_REF always). */
int mace_cpu_isa_supported(mace_cpu_isa isa);

/* "ref", "avx2", "avx512", "neon". */
const char *mace_cpu_isa_name(mace_cpu_isa isa);

#endif /* MACE_RUNTIME_CPU_CPU_FEATURES_H_ */
