/* llcprobe study: N programs, K cores per shared LLC. Every group of K is
 * predicted (the contention model over phases in time, as `predict` does),
 * then the programs are partitioned into groups (co-schedules) for a
 * metric. What the model, search, output and report files share. */
#ifndef LLC_CMD_STUDY_H
#define LLC_CMD_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/predict.h"

#define STUDY_MAX_PROGRAMS 64
#define STUDY_MAX_K PRED_MAX_PROGRAMS
/* Up to this many co-schedules are enumerated (and ranked) exhaustively. */
#define STUDY_EXACT_LIMIT 1000000.0
/* Random co-schedules drawn for the median when the count is larger. */
#define STUDY_SAMPLES 20000
#define STUDY_TOP 10
#define STUDY_LINE 1024

enum study_metric { STUDY_THROUGHPUT = 0, STUDY_WORST, STUDY_FAIRNESS, STUDY_MISSES };

/* One predicted group: its programs (ascending indices), their slowdown,
 * LLC misses (first pass), mean occupancy (lines) and miss ratio. */
struct study_group {
    uint64_t mask;
    uint8_t n;
    uint8_t m[STUDY_MAX_K];
    float slow[STUDY_MAX_K], occ[STUDY_MAX_K], mr[STUDY_MAX_K];
    double misses[STUDY_MAX_K];
    /* metric ingredients: sum 1/slowdown, max and min slowdown, sum misses */
    double ws, smax, smin, miss;
};

/* A co-schedule: ng group indices and its metric value. */
struct study_sched {
    uint32_t g[STUDY_MAX_PROGRAMS];
    size_t ng;
    double value; /* the metric (WS, worst slowdown, max/min, misses) */
};

struct study_search {
    const char *method; /* "exhaustive" or "branch-and-bound" */
    double n_schedules; /* count of co-schedules (may be huge) */
    double evaluated;   /* co-schedules valued (exhaustive) or B&B nodes */
    bool best_exact, worst_exact;
    double best_bound, worst_bound; /* the bound the search proved (= value when exact) */
    double gap_pct, worst_gap_pct;  /* |value - bound| / |value| in % */
    bool median_sampled;
    size_t samples;
    uint64_t seed;
};

struct study {
    size_t n, k;
    enum study_metric metric;
    struct pred_prog *progs; /* n */
    struct pred_machine machine;
    struct llc_contention_config cfg;
    size_t strata_phases; /* phases solved per stratum of their sets (all programs) */
    char forced[512];
    /* groups: every K-subset (and the remainder size's subsets, N % K != 0) */
    struct study_group *groups;
    size_t n_groups;
    size_t rem; /* N % K */
    double predict_s, search_s;
    /* pairwise slowdown [i * n + j]: i run with j alone (NaN on the diagonal) */
    double *pair;
    /* ranked co-schedules: best first (STUDY_TOP at most), then median and worst */
    struct study_sched *top;
    size_t n_top;
    struct study_sched median, worst;
    double median_rank; /* fraction of co-schedules better than the median */
    struct study_search search;
    /* the best co-schedule's groups over time (one run per group) */
    struct llc_contention_run **runs;
    size_t warn_groups; /* groups where the equilibrium warning fired */
    /* groups where some program's co-runners saw its whole-program
     * footprint (docs/METHODS.md §12.7); phase_local: none (--phase-local) */
    size_t whole_groups;
    bool phase_local;
    /* every group's phases alone, solved once (s->progs' phases, s->cfg) */
    struct llc_contention_solo_cache *solo_cache;
    /* programs that could not be profiled or read: "name: why" */
    char **failed;
    size_t n_failed;
};

const char *study_metric_name(enum study_metric m);
int study_metric_parse(const char *s);
/* Direction of the metric: true when larger is better (throughput). */
bool study_metric_higher_better(enum study_metric m);

/* study_profile.c: profiles the programs of argv (items split by ";;"; an
 * item starting with '-' is `llcprobe profile` options, else a program and
 * its arguments) into dir, --jobs at once, reusing what is there. Failures
 * go to s->failed; files gets the profiles to study. -EINTR on SIGINT.
 * no_run: nothing is profiled, a missing profile is a failure (the study
 * job after Slurm's profiling tasks). */
/* The signal that interrupted profiling (or the Slurm wait), 0 if none:
 * the study then exits 128 + it, keeping what finished. */
int study_profile_signal(void);
int study_slurm_signal(void);
int study_profile_all(char **argv, size_t argc, const char *dir, size_t jobs, bool no_run,
                      bool quiet, struct study *s, char ***files, size_t *n_files, char *err,
                      size_t errlen);

/* Appends "name: why" to s->failed. */
int study_add_failed(struct study *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* study_slurm.c: submits the profiling of the items still without a
 * profile in cache as a job array, and the study (this command line with
 * --reuse-only for --slurm and its options) as a job depending on it;
 * waits, reports failed tasks, prints the study's output. Returns 0 when
 * the study job wrote out/study.json, else the reason. */
int study_slurm(int argc, char **argv, char **items, size_t n_items, const char *cache,
                const char *out, const char *partition, const char *sbatch_args, bool quiet,
                char *err, size_t errlen);

/* study.c: why two profiles' machines differ ("" if the same); the
 * *.profile.json files of dir, sorted (malloc'd paths). */
void study_machine_differs(const struct llc_profile *a, const struct llc_profile *b, char *why,
                           size_t len);
int study_list_profiles(const char *dir, char ***out, size_t *n, char *err, size_t errlen);

/* study_model.c */
int study_predict_groups(struct study *s, bool quiet, char *err, size_t errlen);
int study_best_runs(struct study *s, char *err, size_t errlen);
void study_free(struct study *s);

/* study_search.c */
int study_optimise(struct study *s, uint64_t node_budget, char *err, size_t errlen);
/* value of a co-schedule given by its groups */
double study_value(const struct study *s, const uint32_t *g, size_t ng);

/* study_out.c: study.json, groups.csv, coschedules.csv, timeline.csv */
int study_write(const char *dir, const struct study *s, char *err, size_t errlen);
void study_print(const struct study *s);
/* The model's assumptions and the study's warnings, one line each (<= max). */
size_t study_assumptions(const struct study *s, char lines[][STUDY_LINE], size_t max);
/* Distance of a co-schedule's value from the best's, in % (positive = worse). */
double study_from_best(const struct study *s, double v);

/* study_html.c: report.html */
int study_report(const char *dir, const struct study *s, char *err, size_t errlen);

#endif
