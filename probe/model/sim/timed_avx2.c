/* The timed co-run kernel (sim/timed_kernel.c) built for AVX2 (with BMI2's flag-free shifts),
 * as sim/variants_avx2.c builds the batch path; sim/timed.c uses it when
 * the host has the instructions. */
/* Before any other header, so that its inline functions get the target. */
#include "model/sim/isa.h"

#ifdef SIM_ISA_VARIANTS
#pragma GCC target("avx2,bmi,bmi2,popcnt")
#define SIM_ISA avx2
#include "timed_kernel.c"
#else
/* ISO C wants a declaration in every translation unit. */
typedef int sim_timed_avx2_unused;
#endif
