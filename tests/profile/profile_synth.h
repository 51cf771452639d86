/* Synthetic profiles for the profile, contention and predict tests.
 *
 * A phase's references go to classes of lines: with probability p[c] to a
 * uniformly random line of class c (lines[c] lines), else a never-seen line
 * (streaming). A given line of class c is then re-touched after a
 * geometric number of references with parameter r = p[c] / lines[c], so the
 * reuse histogram is known in closed form:
 *     h(d) = N_s sum_c p[c] r_c (1 - r_c)^d,   n_inf = N_s (1 - sum_c p[c]).
 */
#ifndef TESTS_PROFILE_SYNTH_H
#define TESTS_PROFILE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/profile.h"
#include "llcprobe/statmodel.h"

#define PSYN_MAX_CLASSES 4

struct psyn_mix {
    size_t n;
    double p[PSYN_MAX_CLASSES];
    double lines[PSYN_MAX_CLASSES];
};

/* Fills h with N_s = samples samples of the mix (bucket sums exact). */
int psyn_hist(const struct psyn_mix *mix, double samples, struct llc_statmodel_hist *h, char *err,
              size_t errlen);

/* A complete, valid profile: machine = preset intel8 or amd32 geometry,
 * n_phases phases with mixes[k], windows cycling through the phases
 * (windows_per_phase each, n_cycles times), refs/instruction api[k],
 * solo CPI from cpi0[k] + api * mr * P (mr from StatStack at the LLC size),
 * and probe readings when with_probe. */
struct psyn_profile_spec {
    const char *name;
    const char *preset; /* "intel8" or "amd32" */
    size_t n_phases;
    const struct psyn_mix *mixes;
    const double *api, *cpi0;
    unsigned windows_per_phase, n_cycles;
    uint64_t window_instructions;
    double samples; /* per phase */
    int with_probe;
    double probe_cv;
    double probe_gamma; /* probe footprint = F(gamma a tau); 0 means 1 */
};

int psyn_profile(const struct psyn_profile_spec *s, struct llc_profile *p, char *err,
                 size_t errlen);

#endif
