/* The timed co-run kernel (sim/timed_kernel.c) built for AVX-512 (F, VL, BW),
 * as sim/variants_avx512.c builds the batch path; sim/timed.c uses it when
 * the host has the instructions. */
/* Before any other header, so that its inline functions get the target. */
#include "model/sim/isa.h"

#ifdef SIM_ISA_VARIANTS
#pragma GCC target("avx2,bmi,bmi2,popcnt,avx512f,avx512vl,avx512bw")
#define SIM_ISA avx512
#include "timed_kernel.c"
#else
/* ISO C wants a declaration in every translation unit. */
typedef int sim_timed_avx512_unused;
#endif
