/* llcprobe mrc's pieces: what the command line asked for (mrc_args), the
 * reuse samples gathered for it (mrc_input, cmd/mrc_input.c) and the curves
 * solved from them (cmd/mrc_solve.c). Private to the mrc command. */
#ifndef LLC_CMD_MRC_CMD_H
#define LLC_CMD_MRC_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"
#include "mrc/mrc.h"

/* In the order of --sampler's names. */
enum sampler { SAMPLER_AUTO, SAMPLER_RT, SAMPLER_TRACE, SAMPLER_PMU, SAMPLER_QEMU };

struct mrc_args {
    const char *trace, *profile, *prefix, *gnuplot;
    char **argv;
    enum sampler sampler;
    double rate;
    bool rate_given;
    uint64_t samples; /* without --rate: samples to aim at */
    uint64_t seed;
    double *sizes; /* lines, from --sizes */
    size_t n_sizes;
    bool statcache, statstack, band, quiet;
    enum llc_statmodel_cold cold;
    unsigned ways, replicates;
    unsigned time_slots; /* 0: off */
    bool phases;
    uint64_t phase_window;
    bool phase_window_given;
    enum llc_mrc_window_unit phase_unit;
};

/* What the samples are and where they came from. */
struct mrc_input {
    struct llc_statmodel_hist *hist;
    const char *source;
    char input[1024];
    uint64_t refs;
    uint64_t lines; /* distinct lines, exact; 0: not counted */
    double rate;
    uint64_t seed;
    /* Time-slot mode: the same samples grouped by slot. */
    struct llc_statmodel_groups *slots;
    uint64_t slot_refs;
    /* Phase mode: windows, their phases, one histogram per phase. */
    struct llc_mrc_phase_run phase_run;
};

/* Collects the reuse samples from the source the arguments name: a trace,
 * a profile, or a run under the runtime, lackey, QEMU or the PMU. */
int mrc_gather(const struct mrc_args *a, struct mrc_input *in, char *err, size_t errlen);

/* The sizes to solve: --sizes, or the default grid plus the machine's caches. */
int mrc_size_grid(const struct mrc_args *a, const struct llc_mrc_cache *caches, size_t n_caches,
                  double **out, size_t *n, char *err, size_t errlen);
/* The model options of one curve: method, cold misses, ways, distinct lines. */
void mrc_series_options(const struct mrc_args *a, uint64_t distinct, enum llc_statmodel_method m,
                        struct llc_statmodel_options *o);
/* The pooled curves (StatCache and/or StatStack) of one histogram. */
int mrc_solve(const struct mrc_args *a, const struct llc_statmodel_hist *h,
              const struct llc_statmodel_model *model, struct llc_mrc_result *r, char *err,
              size_t errlen);
/* One curve per group that has samples, and the groups' reference-weighted
 * mean: the slot average of docs/METHODS.md §7.5 or the phase mixture of §9. */
int mrc_solve_groups(const struct mrc_args *a, const struct llc_statmodel_groups *groups,
                     const struct llc_statmodel_model *splice, double span,
                     const struct llc_statmodel_timeline *tl, struct llc_mrc_result *r,
                     struct llc_mrc_groupset *gs, char *err, size_t errlen);
/* StatStack on the phase timeline (docs/METHODS.md §9), built from the
 * phases' final histograms (after exact cold misses); *out NULL when the
 * run has no per-window samples or LLCPROBE_MRC_PHASE_SPLICE=1 asks for the
 * older splice rule (kept for comparison). */
int mrc_phase_timeline(const struct mrc_input *in, struct llc_statmodel_timeline **out, char *err,
                       size_t errlen);
/* Mean window length in references: past it a reuse spans other windows. */
double mrc_phase_span(const struct mrc_input *in);
/* docs/METHODS.md §9: per-phase curves; their mixture becomes the headline
 * series. tl (may be NULL: the splice rule) gives the StatStack series. */
int mrc_solve_phases(const struct mrc_args *a, const struct mrc_input *in,
                     const struct llc_statmodel_model *pooled,
                     const struct llc_statmodel_timeline *tl, struct llc_mrc_result *r, char *err,
                     size_t errlen);
void mrc_free_groups(struct llc_mrc_groupset *gs);

#endif
