/* Writes a synthetic llcprobe-profile for the predict tests and benchmark:
 *   gen_profile OUT NAME PRESET PHASES SEED [probe] [cv=X] [gamma=G] [windows=N]
 *               [window=I]
 * Phase k of seed s uses working sets drawn from s and k (hot 50-2000
 * lines, medium 5000-400000 lines, 5-25% streaming), 0.2-0.5 references
 * per instruction, CPI0 0.7-1.3; windows of I instructions (default 10^7)
 * cycle through the phases (N per phase, 3 cycles). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/profile.h"
#include "profile_synth.h"

static double uni(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(
            stderr,
            "usage: gen_profile OUT NAME PRESET PHASES SEED [probe] [cv=X] [gamma=G] [windows=N] "
            "[window=I]\n");
        return 2;
    }
    const size_t n = (size_t)atoi(argv[4]);
    uint64_t seed = strtoull(argv[5], NULL, 10);
    struct psyn_profile_spec s = {.name = argv[2],
                                  .preset = argv[3],
                                  .n_phases = n,
                                  .windows_per_phase = 2,
                                  .n_cycles = 3,
                                  .window_instructions = 10000000,
                                  .samples = 20000};
    for (int i = 6; i < argc; i++) {
        if (strcmp(argv[i], "probe") == 0)
            s.with_probe = 1;
        else if (strncmp(argv[i], "cv=", 3) == 0)
            s.probe_cv = atof(argv[i] + 3);
        else if (strncmp(argv[i], "gamma=", 6) == 0)
            s.probe_gamma = atof(argv[i] + 6);
        else if (strncmp(argv[i], "windows=", 8) == 0)
            s.windows_per_phase = (unsigned)atoi(argv[i] + 8);
        else if (strncmp(argv[i], "window=", 7) == 0)
            s.window_instructions = strtoull(argv[i] + 7, NULL, 10);
    }
    if (n < 1 || n > 64) {
        fprintf(stderr, "gen_profile: 1 to 64 phases\n");
        return 2;
    }
    struct psyn_mix mixes[64];
    double api[64], cpi0[64];
    for (size_t k = 0; k < n; k++) {
        const double stream = 0.05 + 0.2 * uni(&seed),
                     hot = (0.3 + 0.4 * uni(&seed)) * (1 - stream);
        mixes[k] = (struct psyn_mix){
            .n = 2,
            .p = {hot, 1 - stream - hot},
            .lines = {floor(50 * pow(40, uni(&seed))), floor(5000 * pow(80, uni(&seed)))}};
        api[k] = 0.2 + 0.3 * uni(&seed);
        cpi0[k] = 0.7 + 0.6 * uni(&seed);
    }
    s.mixes = mixes;
    s.api = api;
    s.cpi0 = cpi0;
    struct llc_profile p;
    char err[LLC_ERRLEN];
    if (psyn_profile(&s, &p, err, sizeof err) < 0 ||
        llc_profile_write(argv[1], &p, err, sizeof err) < 0) {
        fprintf(stderr, "gen_profile: %s\n", err);
        return 1;
    }
    llc_profile_free(&p);
    return 0;
}
