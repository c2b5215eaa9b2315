/* Compiler hints shared by the kernels (and Conv2D's im2col); plain C where the compiler has
 * none of them. */
#ifndef MACE_KERNELS_CPU_COMPILER_H_
#define MACE_KERNELS_CPU_COMPILER_H_

#if defined(__GNUC__) || defined(__clang__)
/* A helper inlined into every caller, so the caller's constants (kernel size, stride, panel
 * width) specialize it. */
#define MACE_INLINE static inline __attribute__((always_inline))
#define MACE_NOINLINE __attribute__((noinline))
#define MACE_UNROLL16 _Pragma("GCC unroll 16")
#define MACE_PREFETCH(p) __builtin_prefetch(p)
#define MACE_PREFETCHW(p) __builtin_prefetch((p), 1)
#define MACE_PREFETCH_L2(p) __builtin_prefetch((p), 0, 2) /* into L2, not L1 */
#else
#define MACE_INLINE static inline
#define MACE_NOINLINE
#define MACE_UNROLL16
#define MACE_PREFETCH(p) ((void)(p))
#define MACE_PREFETCHW(p) ((void)(p))
#define MACE_PREFETCH_L2(p) ((void)(p))
#endif

#endif /* MACE_KERNELS_CPU_COMPILER_H_ */
