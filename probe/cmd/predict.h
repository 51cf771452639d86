/* llcprobe predict: what the model, output and plot files of the command
 * share. */
#ifndef LLC_CMD_PREDICT_H
#define LLC_CMD_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "llcprobe/contention.h"
#include "llcprobe/profile.h"

#define PRED_MAX_PROGRAMS 8

/* The cache predicted for. */
struct pred_machine {
    char label[128]; /* "preset intel8", "host AMD EPYC" */
    char kind[16];   /* preset or host */
    char preset[32]; /* preset name, "" for hosts */
    unsigned long long bytes, lines, sets;
    unsigned ways;
    char policy[16]; /* the machine's policy */
    char inclusion[16];
    /* Lines of each core's private cache when the LLC is exclusive (a
     * preset's L2), 0 otherwise or unknown (hosts). */
    double private_lines;
};

enum pred_anchor { PRED_ANCHOR_NONE = 0, PRED_ANCHOR_OK, PRED_ANCHOR_FLAGGED };

/* One program: its profile and the model inputs built from it. Phase
 * index k < prof.n_phases is the profile's k-th phase; one more (the
 * pooled histogram of all phases) models unclassified windows. */
struct pred_prog {
    const char *file;
    struct llc_profile prof;
    size_t n_phases; /* profile phases (+ 1 if pooled: unclassified windows, or 2 or more phases) */
    /* the phases outputs list: the profile's, and the pooled one where
     * unclassified windows run it (else it only stands for the whole
     * program to its co-runners, docs/METHODS.md §12.7) */
    size_t n_shown;
    struct llc_statmodel_model **models;
    struct llc_contention_phase *plain;    /* gamma 1, cv from the probe */
    struct llc_contention_phase *anchored; /* gamma from the probe */
    /* FOA and SDC's inputs: plain's phases with the reuse as recorded (the
     * end-of-run censoring kept; raw[k] NULL where models[k] is that) */
    struct llc_contention_phase *baseline;
    struct llc_statmodel_model **raw;
    int *phase_id; /* profile id, -1 = pooled */
    double *gamma, *gamma_rms;
    enum pred_anchor *anchor;
    int *window_phase;
    double *window_ins;
    size_t n_windows;
    bool probe_used;
    bool uncensor; /* reuse models of the run's middle (docs/METHODS.md §7.7) */
    /* Set before pred_prog_build: each phase's model on its reuse in its
     * own references where the profile has it (--own-distances;
     * docs/METHODS.md §12.7) */
    bool own_distances;
    /* Per model phase: its model's reuse is in its own references */
    bool *own;
    /* The run's distinct lines: counted first touches where the profile
     * has them, else the sampled estimate; firsts_scale = counted over
     * sampled (1 without a count), applied to every recorded dangling
     * share that stands for first touches. */
    double lines, firsts_scale;
    double *probe_cv; /* each phase's per-set CV as the probe measured it */
    /* each phase's layout strata where its skew is its layout's spread
     * (pred_prog_layout_cv; plain[k].layout points here) */
    struct llc_contention_layout *layout;
    double *disp;               /* each phase's lines per set, variance over mean (NAN: none) */
    struct pred_strata *strata; /* predict_strata.c; NULL: the profile has none */
    /* Co-runners see each phase's own footprint even where T* spans its
     * phase runs (--phase-local; docs/METHODS.md §12.7) */
    bool phase_local;
    /* Per profile phase: the lines the program's other phases add to its
     * reuses (docs/METHODS.md §12.7); NULL for a program of one phase.
     * With random replacement also their misses: in excess those of the
     * co-run, in excess_alone (NULL until then) those alone, in
     * excess_first those of each phase on its own (pred_cross_phase_misses). */
    struct llc_contention_excess *excess, *excess_alone, *excess_first;
    double *mr_alone; /* [n_phases] each phase's miss ratio alone (NULL: not yet) */
};

/* Results of the prediction. */
struct pred_baseline_sum {
    double refs, misses, ins, cycles, solo_cycles, occ_time, time;
};

struct pred_result {
    struct llc_contention_run *run;      /* the model (plain gamma) */
    struct llc_contention_run *anchored; /* NULL without probe readings */
    /* baselines per tuple of run: [tuple][program] */
    struct llc_contention_share *foa, *sdc, *foa_solo, *sdc_solo;
    struct pred_baseline_sum foa_sum[PRED_MAX_PROGRAMS], sdc_sum[PRED_MAX_PROGRAMS];
    /* Phase-pair grid of the first two programs alone together:
     * [pa * n_b + pb][2] shares and solo shares. */
    size_t grid_a, grid_b;
    struct llc_contention_share *grid, *grid_solo;
    double seconds;     /* time the prediction took */
    double cpu_seconds; /* its CPU time (the same, on an idle machine) */
};

struct pred_opts {
    const char *prefix, *gnuplot;
    enum llc_contention_policy policy;
    bool policy_given, coupling, probe, force, plot, quiet;
    bool cold;          /* cold start (not --stationary) */
    bool assoc;         /* LRU in W-way sets (not --fully-associative) */
    bool exclusive;     /* an exclusive LLC's private caches (not --no-exclusive) */
    bool exclusive_lru; /* ... in the LRU models too (--exclusive-lru) */
    bool strata;        /* per-stratum reuse where profiles have it (not --no-strata) */
    bool anchored;      /* the anchored variant's timeline too (--anchored) */
    bool first_touches; /* phases start at the age of their measured first touches */
    bool uncensor;      /* undo end-of-run censoring of the reuse (not --censored) */
    bool phase_local;   /* co-runners see each phase's own footprint (--phase-local) */
    bool own_distances; /* each phase's model on its own references (--own-distances) */
    char forced[512];   /* what --force let through, "" if nothing */
};

/* predict.c: a profile read and checked as predict takes it (sets
 * p->file, which stays the caller's); the machine a profile was made on. */
int pred_prog_load(struct pred_prog *p, const char *file, char *err, size_t errlen);
void pred_machine_of_profile(const struct llc_profile *p, struct pred_machine *m);

/* predict_model.c: the model inputs of a loaded profile; cold: the cold
 * start of docs/METHODS.md §12.2 (each phase's references in its profile),
 * else the stationary model. */
int pred_prog_build(struct pred_prog *p, bool use_probe, bool cold, bool uncensor, char *err,
                    size_t errlen);
/* Each profile phase's reuses count the lines of the program's other
 * phases (on), or only its own (off: --phase-local). */
void pred_cross_phase_use(struct pred_prog *p, bool on);
/* With random replacement (cfg's policy), the misses the program's other
 * phases add to each phase's reuses (docs/METHODS.md §12.7), their
 * references in the spans weighted by their miss ratios: alone, each
 * phase's alone (both excesses); with corun (a timeline in which this is
 * program i), each phase's time-weighted mean in that co-run (the co-run
 * excess only; phases it did not meet keep theirs alone). A no-op for
 * other policies, programs of one phase, and without cross-phase reuse. */
int pred_cross_phase_misses(struct pred_prog *p, size_t i, const struct llc_contention_config *cfg,
                            const struct llc_contention_run *corun, char *err, size_t errlen);
/* The reuse model of histogram h of model phase k (the pooled phase: all
 * windows), end-of-run censoring undone where p->uncensor and the profile
 * says where the phase's references lie (its windows; own: h's distances
 * are in the phase's own references, whose windows are one run). */
int pred_reuse_model(const struct pred_prog *p, size_t k, const struct llc_statmodel_hist *h,
                     bool own, double kept, struct llc_statmodel_model **out, char *err,
                     size_t errlen);
/* Dangling samples per sample of h as recorded, scaled by p->firsts_scale
 * (at most 1; 0 without samples): the profiled run's first touches per
 * reference. */
double pred_recorded_firsts(const struct pred_prog *p, const struct llc_statmodel_hist *h);
/* Each phase's set skew (plain and anchored cv) for a cache of `sets` sets
 * and the model cfg: the probe's CV, less what lines placed at random
 * spread over the sets when cfg's model is the set-associative LRU grid,
 * which models that spread already (docs/METHODS.md §12.6). */
void pred_prog_layout_cv(struct pred_prog *p, const struct llc_contention_config *cfg, double sets);
void pred_prog_free(struct pred_prog *p);
int pred_run(struct pred_prog *progs, size_t n, const struct pred_machine *m,
             const struct pred_opts *o, struct pred_result *r, char *err, size_t errlen);
void pred_result_free(struct pred_result *r);
/* Not a solve of a whole program's stand-in (a pooled phase no window
 * runs, solved only for its co-runners' view, docs/METHODS.md §12.7): the
 * tuples the outputs list and the phase-pair grid may take. */
bool pred_tuple_shown(const struct pred_prog *progs, size_t n,
                      const struct llc_contention_tuple_result *tr);

/* predict_strata.c: per-stratum reuse (docs/METHODS.md §12.6) of the
 * profile's phases as models (build once after pred_prog_build), hung on
 * the phases or taken off (use), and how many phases carry them. */
int pred_strata_build(struct pred_prog *p, char *err, size_t errlen);
void pred_strata_use(struct pred_prog *p, bool on);
/* Cold start from the profile's first touches per window (sim profiles
 * record them), on or off: each phase starts at the age at which the
 * model makes as many first touches over its windows as the profiled run
 * did (docs/METHODS.md §12.2); off (and without them) every phase starts
 * from an empty cache, except the pooled phase of unclassified windows,
 * which is as old as its program. */
void pred_first_touches_use(struct pred_prog *p, bool on);
/* p as the contention model's program (its plain or anchored phases). */
struct llc_contention_prog pred_contention_prog(const struct pred_prog *p, bool anchored);
size_t pred_strata_phases(const struct pred_prog *p);
void pred_strata_free(struct pred_prog *p);

/* predict_out.c: PREFIX.prediction.json, .csv, .tuples.csv; and stdout */
int pred_write(const char *prefix, const struct pred_prog *progs, size_t n,
               const struct pred_machine *m, const struct pred_opts *o, const struct pred_result *r,
               char *err, size_t errlen);
void pred_print(FILE *out, const struct pred_prog *progs, size_t n, const struct pred_machine *m,
                const struct pred_opts *o, const struct pred_result *r);
/* The warnings and flags, one line each (caller frees each and the array). */
size_t pred_flags(const struct pred_prog *progs, size_t n, const struct pred_machine *m,
                  const struct pred_opts *o, const struct pred_result *r, char ***out);

/* predict_plot.c: PREFIX.occupancy.png, .missratio.png, .slowdown.png */
int pred_plot(const char *prefix, const struct pred_prog *progs, size_t n,
              const struct pred_machine *m, const struct pred_opts *o, const struct pred_result *r,
              char *err, size_t errlen);

#endif
