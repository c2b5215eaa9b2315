/* Which SIMD ISAs this build compiles kernels for (MACE_ENABLE_<ISA> = 0 / 1) and the macros
 * that expand the kernel manifest (kernels/cpu/manifest.inc) for the enabled ones only. */
#ifndef MACE_KERNELS_CPU_ISA_H_
#define MACE_KERNELS_CPU_ISA_H_

/* The build (CMake's MACE_SIMD_ISAS, through cmake/kernels.cmake) defines each of these to 0 or
 * 1; a build that does not says nothing and gets every ISA of the target's architecture. */
#if defined(__x86_64__) || defined(_M_X64)
#define MACE_ARCH_X86_64_ 1
#else
#define MACE_ARCH_X86_64_ 0
#endif
#if defined(__aarch64__)
#define MACE_ARCH_AARCH64_ 1
#else
#define MACE_ARCH_AARCH64_ 0
#endif
#ifndef MACE_ENABLE_AVX2
#define MACE_ENABLE_AVX2 MACE_ARCH_X86_64_
#endif
#ifndef MACE_ENABLE_AVX512
#define MACE_ENABLE_AVX512 MACE_ARCH_X86_64_
#endif
#ifndef MACE_ENABLE_NEON
#define MACE_ENABLE_NEON MACE_ARCH_AARCH64_
#endif

/* MACE_IF_<isa>(x...): x when the build compiles that ISA's kernels, else nothing. */
#if MACE_ENABLE_AVX2
#define MACE_IF_avx2(...) __VA_ARGS__
#else
#define MACE_IF_avx2(...)
#endif
#if MACE_ENABLE_AVX512
#define MACE_IF_avx512(...) __VA_ARGS__
#else
#define MACE_IF_avx512(...)
#endif
#if MACE_ENABLE_NEON
#define MACE_IF_neon(...) __VA_ARGS__
#else
#define MACE_IF_neon(...)
#endif
/* Sub-ISAs (units compiled with extra flags, dispatched on an extra CPU feature): built with
 * their parent ISA. */
#define MACE_IF_avx512vnni MACE_IF_avx512
#define MACE_IF_neondot MACE_IF_neon

/* MACE_ISA_SELECT(isa, want)(x...): x when isa and want name the same ISA, else nothing (to
 * pick one ISA's lines out of the manifest; want may be a macro naming the ISA). */
#define MACE_ISA_SELECT(isa, want) MACE_ISA_SELECT_(isa, want)
#define MACE_ISA_SELECT_(isa, want) MACE_ISA_SELECT_##isa##_##want
#define MACE_ISA_SELECT_avx2_avx2(...) __VA_ARGS__
#define MACE_ISA_SELECT_avx2_avx512(...)
#define MACE_ISA_SELECT_avx2_neon(...)
#define MACE_ISA_SELECT_avx512_avx2(...)
#define MACE_ISA_SELECT_avx512_avx512(...) __VA_ARGS__
#define MACE_ISA_SELECT_avx512_neon(...)
#define MACE_ISA_SELECT_neon_avx2(...)
#define MACE_ISA_SELECT_neon_avx512(...)
#define MACE_ISA_SELECT_neon_neon(...) __VA_ARGS__

/* The kernel of ISA isa of a function: mace_f32_activation, avx2 -> mace_f32_activation__avx2. */
#define MACE_UKERNEL_NAME(function, isa) function##__##isa

#endif /* MACE_KERNELS_CPU_ISA_H_ */
