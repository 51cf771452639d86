/* The batch path (sim/variants.c) built for AVX-512 (F, VL, BW): the set
 * searches compare all 16 tags in a few instructions (sim/cache.h), and VEX
 * encoding folds the metadata loads into them. sim_batch_for() uses it when
 * the host has the instructions. */
/* Before any other header, so that its inline functions get the target. */
#include "model/sim/isa.h"

#ifdef SIM_ISA_VARIANTS
#pragma GCC target("avx2,bmi,bmi2,popcnt,avx512f,avx512vl,avx512bw")
#define SIM_ISA avx512
#include "variants.c"
#else
/* ISO C wants a declaration in every translation unit. */
typedef int sim_variants_avx512_unused;
#endif
