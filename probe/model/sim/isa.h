/* Which instruction-set copies of the batch path are built. Includes
 * nothing, so sim/variants_*.c can read it before choosing their target. */
#ifndef LLC_SIM_ISA_H
#define LLC_SIM_ISA_H

/* Copies of the batch path by instruction set (sim/variants*.c): with GCC
 * on x86-64 also built for AVX2 (+BMI2) and AVX-512 (F, VL, BW), chosen at
 * run time; elsewhere, or with SIM_PORTABLE, only the base one.
 * SIM_BASE_ISA_ONLY (the sanitizer build) also keeps only the base copy:
 * the copies are one source, each checked against the golden digests in
 * the normal build, and instrumenting three copies of the inlined paths
 * cost the sanitizer build minutes per file. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SIM_PORTABLE) && \
    !defined(SIM_BASE_ISA_ONLY)
#define SIM_ISA_VARIANTS 1
#endif

enum sim_isa { SIM_ISA_BASE = 0, SIM_ISA_AVX2, SIM_ISA_AVX512 };

#endif
