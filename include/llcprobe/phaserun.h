/* One `llcprobe phase` run: a program sampled live, or a recorded trace,
 * classified window by window by the ScarPhase detector (llcprobe/phase.h),
 * with the optional references for evaluation (exp-bbv vectors, the
 * simulator's per-window LLC miss ratios), and its files.
 *
 *   llc_phaserun_init        an empty run (figures NAN)
 *   llc_phaserun_run         classify, check the run's length, compare
 *   llc_phaserun_write_json  PREFIX.phase.json (llcprobe-phase v1)
 *   llc_phaserun_write_csv   PREFIX.phase.csv, one row per window
 *   llc_phaserun_plot        PREFIX.phase.png, the phase timeline
 *   llc_phaserun_free
 *
 * A live run polls the stop flag (util/stopsig): stopped, it keeps the
 * windows seen so far and skips the references. */
#ifndef LLCPROBE_PHASERUN_H
#define LLCPROBE_PHASERUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/phase.h"
#include "llcprobe/sampling.h"
#include "llcprobe/target.h"

/* Live: fewer windows than this and the run is too short to show phases
 * (a leader-follower cluster and the run-length predictor need a few
 * windows of each phase); the user is told with the numbers. */
#define LLC_PHASERUN_SHORT_RUN_WINDOWS 8
/* --bbv: default largest gap between the trace's and exp-bbv's instruction
 * totals (a fraction of the larger) before the two are refused as different
 * runs. Runs of one program under lackey and exp-bbv were up to 1.1% apart
 * (perl, with rep iterations counted once) beyond exp-bbv's unwritten last
 * interval. */
#define LLC_PHASERUN_BBV_TOLERANCE_DEFAULT 0.02

struct llc_phaserun_config {
    const char *trace;        /* NULL: live, the program in argv */
    const char *bbv, *bbv_pc; /* trace: exp-bbv output and its block addresses */
    const char *sim, *noise;  /* trace: simulator preset, co-runner spec */
    struct llc_sampling_config samp;
    uint64_t trace_window, seed;
    enum llc_sampling_trace_unit trace_unit;
    double bbv_tolerance;
    struct llc_phase_config det;
};

/* One classified window with what the sampler and references said. */
struct llc_phaserun_row {
    struct llc_sampling_window s;
    struct llc_phase_window p;
    int predicted; /* prediction made before this window */
    unsigned pred_confidence;
    double sig[LLC_PHASE_BUCKETS];
    int bbv_phase;     /* reference label, if --bbv */
    int bbv32_phase;   /* label from the 32-entry BBV, if --bbv-pc */
    double miss_ratio; /* simulated, if --sim; NAN otherwise */
};

struct llc_phaserun {
    struct llc_phaserun_row *rows;
    size_t n, cap;
    bool live;
    int stopped_by; /* live: the signal that stopped the run early, 0 if none */
    char command[1024];
    struct llc_sampling_choice choice;
    struct llc_target_status status;
    /* live: CPU seconds (user, sys) of the target and its waited-for
     * descendants (llcprobe's only child while it runs), and of llcprobe
     * itself: the overhead the sampler imposes is the target's, the
     * monitor's own competes for the same CPUs. */
    double target_user_s, target_sys_s, monitor_user_s, monitor_sys_s;
    /* evaluation figures (NAN when not computed) */
    double ari, simdiff, cov_all, cov_phase, ccov_phase, cov_bbv, ccov_bbv, cov_bbv32, ccov_bbv32;
    /* against the 32-entry BBVs, with --bbv-pc */
    double ari32, simdiff32;
    size_t bbv_windows, bbv_dim, bbv_phases, bbv_phases32, compared;
    struct llc_phase_alignment align; /* --bbv: windows paired by instruction count */
    uint64_t bbv_tail; /* --bbv: exp-bbv's longest interval: how far the trace may run on */
    double bbv_gap;    /* --bbv: the totals' gap beyond that, a fraction of the larger */
    enum llc_sampling_trace_unit unit; /* --trace: windows by instructions or references */
    char recorder[32];                 /* --trace: the trace's recorder */
    /* live: the run was too short for its windows (LLC_PHASERUN_SHORT_RUN_WINDOWS) */
    bool short_run;
    double suggest_window;  /* a window giving SHORT_RUN_WINDOWS (ms of CPU, or instructions) */
    double suggest_samples; /* samples per window it would get at the source's rate */
    char short_msg[640];    /* the warning, printed after the summary */
    /* the detector's summary, once the run returned 0 */
    struct llc_phase_summary summary;
    uint64_t *counts; /* windows per stable phase, [0..nphases) */
    size_t nphases;
    double coverage; /* share of windows in a stable phase */
};

void llc_phaserun_init(struct llc_phaserun *r, bool live);
/* Runs argv (cfg->trace NULL) or reads cfg->trace, classifying each
 * window; then, unless stopped, the references cfg names. 0, or a negative
 * errno with err filled (a stopped live run returns 0 with stopped_by set). */
int llc_phaserun_run(const struct llc_phaserun_config *cfg, char **argv, struct llc_phaserun *r,
                     char *err, size_t errlen);
void llc_phaserun_free(struct llc_phaserun *r);

/* exp-bbv reference (cfg->bbv, cfg->bbv_pc): clustered alike and compared. */
int llc_phaserun_compare_bbv(const struct llc_phaserun_config *cfg, struct llc_phaserun *r,
                             char *err, size_t errlen);
/* CoV / CCoV of the simulated per-window LLC miss ratio (cfg->sim). */
int llc_phaserun_sim_metrics(const struct llc_phaserun_config *cfg, struct llc_phaserun *r,
                             char *err, size_t errlen);

int llc_phaserun_write_json(const char *path, const struct llc_phaserun_config *cfg,
                            const struct llc_phaserun *r, char *err, size_t errlen);
/* The plot refers to the CSV's columns by number (x: 2,3; phase: 11). */
int llc_phaserun_write_csv(const char *path, const struct llc_phaserun *r, char *err,
                           size_t errlen);
int llc_phaserun_plot(const char *csv, const char *png, const struct llc_phaserun *r, char *err,
                      size_t errlen);

#endif
