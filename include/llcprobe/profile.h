/* Profile files: one program, profiled alone (format "llcprobe-profile" v1,
 * docs/FORMATS-profile.md). Written by `llcprobe profile`, read by
 * `llcprobe predict`.
 *
 * The in-memory form mirrors the file. Every pointer in it is owned by the
 * profile: strings and arrays are malloc'd (llc_profile_free calls free on
 * them), histograms are freed with llc_statmodel_hist_destroy. A writer
 * fills it like this:
 *
 *     struct llc_profile p;
 *     llc_profile_init(&p);                       // zeros, NaN for "unknown"
 *     llc_profile_stamp(&p, err, errlen);         // llcprobe_version, created
 *     p.program.name = strdup("xz"); ...
 *     llc_profile_alloc_windows(&p, nwin, err, errlen);   // fill phase_of[], ...
 *     llc_profile_alloc_phases(&p, nphases, err, errlen); // rdhist created empty
 *     llc_statmodel_hist_merge(p.phases[k].rdhist, h, ...); p.phases[k].samples = ...
 *     llc_profile_write("xz.profile.json", &p, err, errlen);  // + xz.profile.csv
 *     llc_profile_free(&p);
 *
 * llc_profile_write checks the profile with the same rules as the reader
 * (llc_profile_check), so a file it writes always reads back.
 */
#ifndef LLCPROBE_PROFILE_H
#define LLCPROBE_PROFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/statmodel.h"

struct llc_sim_config;

#define LLC_PROFILE_FORMAT "llcprobe-profile"
#define LLC_PROFILE_VERSION 1
/* Probe rates per phase: the method uses 3 spanning 10x; up to this many are kept. */
#define LLC_PROFILE_MAX_RATES 8
/* Key values of the set distribution (z = -2..2) and their strata. */
#define LLC_PROFILE_KEYS 5

struct llc_profile_program {
    char *name;     /* label in predictions; required, non-empty */
    char *source;   /* "workload", "trace" or "live" */
    char **command; /* argv, n_command entries (may be 0) */
    size_t n_command;
    char *binary;   /* NULL = null in the file */
    char *sha256;   /* 64 lower-case hex digits, or NULL */
    char *workload; /* workload spec, or NULL */
    char *trace;    /* trace path, or NULL */
};

struct llc_profile_llc {
    uint64_t bytes, lines, sets; /* lines = bytes / 64, sets * ways = lines */
    unsigned ways, slices;
    char *policy;    /* lru random plru srrip brrip drrip */
    char *inclusion; /* inclusive exclusive nine */
};

struct llc_profile_machine {
    char *kind;   /* "preset" or "host" */
    char *preset; /* preset name (kind preset), else NULL */
    struct llc_profile_llc llc;
    char *info_json; /* host: `llcprobe info --json` summary as compact JSON; NULL = {} */
};

struct llc_profile_timing {
    double freq_hz;                          /* > 0 */
    double base_cpi;                         /* > 0 */
    double mlp;                              /* >= 1 */
    double lat_l1, lat_l2, lat_llc, lat_mem; /* cycles, >= 0 */
    double miss_penalty_cycles;              /* P: cycles added per LLC miss, >= 0 */
};

struct llc_profile_sampler {
    char *kind;  /* trace rt lackey qemu pmu */
    double rate; /* (0, 1] */
    uint64_t seed;
};

struct llc_profile_windows {
    char *unit;      /* "instructions" or "references" */
    uint64_t length; /* > 0 */
    size_t count;    /* entries of each array */
    int *phase_of;   /* phase id, or -1 (unclassified) */
    double *instructions, *references;
    /* Lines the program touched for the first time in each window (its cold
     * misses in any cache); NULL = not measured. Optional in the file
     * ("first_touches"; older profiles and live ones have none). */
    double *first_touches;
};

struct llc_profile_solo {
    double cpi;                        /* > 0, required */
    double llc_miss_ratio;             /* [0, 1] or NaN (unknown) */
    double llc_accesses_per_reference; /* [0, 1] or NaN */
    double occupancy_lines;            /* >= 0 or NaN */
};

/* Per-stratum reuse of a phase (docs/METHODS.md §12.6): the LLC's sets
 * grouped by how often the phase references them, each group with the
 * reuse histogram of its references (distances in all of the phase's
 * references). Optional in the file ("strata"; older profiles have none). */
#define LLC_PROFILE_MAX_STRATA 8
struct llc_profile_stratum {
    double sets;                       /* share of the LLC's sets, (0, 1]; adding up to 1 */
    double refs;                       /* share of the phase's references, [0, 1]; adding up to 1 */
    double rate_lo, rate_hi;           /* references per line of its sets, lowest and highest */
    double samples;                    /* = llc_statmodel_hist_total(rdhist); > 0 when refs > 0 */
    struct llc_statmodel_hist *rdhist; /* owned */
    struct llc_statmodel_hist *rdhist_own; /* owned, NULL = none: as the phase's */
};

/* A phase's reuses that span its program's other phases, measured on its
 * samples (docs/METHODS.md §12.7, "Measured spans"): per bin of own
 * distance (half octaves; only bins with samples), the samples' mean own
 * distance, their count, the share whose span holds another phase's
 * references and, over those, the mean references of each phase
 * (phases[] order) and of unclassified windows (last): refs[k *
 * (n_phases + 1) + h]. Optional in the file ("cross_spans"). */
#define LLC_PROFILE_SPAN_BINS 64
struct llc_profile_spans {
    size_t n;         /* bins (0 = none) */
    double *distance; /* increasing, >= 0 */
    double *samples;  /* > 0 */
    double *share;    /* [0, 1] */
    double *refs;     /* >= 0; the phase's own entry 0 */
};

struct llc_profile_phase {
    int id;                            /* >= 0, unique */
    uint64_t windows;                  /* windows with phase_of == id */
    double instructions, references;   /* >= 0 */
    double refs_per_instruction;       /* references / instructions (1e-3 relative) */
    double samples;                    /* reuse samples = llc_statmodel_hist_total(rdhist) */
    struct llc_statmodel_hist *rdhist; /* owned; text form in the file */
    /* The same samples with their distances in the phase's own references
     * (docs/METHODS.md §12.7), the same total; owned, NULL = not recorded
     * (optional in the file, "rdhist_own") */
    struct llc_statmodel_hist *rdhist_own;
    struct llc_profile_solo solo;
    double cpi0; /* CPI with no LLC misses, > 0 */
    /* Variance over mean of the phase's distinct lines per LLC set
     * (docs/METHODS.md §12.2): 1 when pages land at random, 0 when every
     * set holds as many. NaN = not measured (optional in the file). */
    double set_dispersion;
    size_t n_strata;                    /* 0 = none */
    struct llc_profile_stratum *strata; /* owned, n_strata entries */
    struct llc_profile_spans spans;     /* owned */
};

/* docs/METHODS.md §12.6 probe readings of one phase. */
struct llc_profile_probe_phase {
    int phase;                             /* a phase id of the profile */
    size_t n_rates;                        /* 1..LLC_PROFILE_MAX_RATES */
    double rates[LLC_PROFILE_MAX_RATES];   /* probe accesses/s per set, > 0 */
    double tau_s[LLC_PROFILE_MAX_RATES];   /* probe line lifetime W / rate, > 0 */
    double phi_hat[LLC_PROFILE_MAX_RATES]; /* lines: (Ns/25) sum -ln(1 - q_k), >= 0 */
    double q_max[LLC_PROFILE_MAX_RATES];   /* largest probe miss ratio, [0, 1] */
    double cv;                             /* noise-corrected per-set CV, >= 0 */
    double keys[LLC_PROFILE_KEYS];         /* key values of the fit */
    uint32_t *sets[LLC_PROFILE_KEYS];      /* set indices (< llc.sets) per stratum */
    size_t n_sets[LLC_PROFILE_KEYS];
    /* What limits these readings (no rate in the linear regime, no probe
     * misses, too few events); NULL = nothing. Optional in the file. */
    char *note;
};

struct llc_profile_probe {
    bool ok;      /* status "ok" (true) or "missing" */
    char *reason; /* why missing; may be NULL when ok */
    size_t n_phases;
    struct llc_profile_probe_phase *per_phase;
};

struct llc_profile {
    char *llcprobe_version, *created; /* created: ISO 8601 UTC */
    struct llc_profile_program program;
    struct llc_profile_machine machine;
    struct llc_profile_timing timing;
    struct llc_profile_sampler sampler;
    struct llc_profile_windows windows;
    size_t n_phases;
    struct llc_profile_phase *phases;
    struct llc_profile_probe probe;
};

/* Zeros p; the nullable solo figures become NaN. */
void llc_profile_init(struct llc_profile *p);
/* Releases everything p owns and re-inits it. Safe on an init'd profile. */
void llc_profile_free(struct llc_profile *p);
/* Sets llcprobe_version (this build's) and created (now, UTC ISO 8601),
 * replacing old values. */
int llc_profile_stamp(struct llc_profile *p, char *err, size_t errlen);
/* Allocates the window arrays (zeroed, phase_of = -1) for n windows,
 * replacing any old ones; sets windows.count. */
int llc_profile_alloc_windows(struct llc_profile *p, size_t n, char *err, size_t errlen);
/* Allocates windows.first_touches (zeroed, windows.count entries),
 * replacing an old one. */
int llc_profile_alloc_first_touches(struct llc_profile *p, char *err, size_t errlen);
/* Allocates n phases (ids 0..n-1, each with an empty rdhist, NaN solo
 * figures), replacing any old ones. */
int llc_profile_alloc_phases(struct llc_profile *p, size_t n, char *err, size_t errlen);
/* Allocates n strata of a phase (zeroed, each with an empty rdhist),
 * replacing any old ones; n = 0 removes them. */
int llc_profile_alloc_strata(struct llc_profile_phase *ph, size_t n, char *err, size_t errlen);
/* Allocates n probe entries (zeroed, no sets), replacing any old ones. */
int llc_profile_alloc_probe(struct llc_profile *p, size_t n, char *err, size_t errlen);

/* Reads and checks path (every field; error "<path>: <field>: <why>", e.g.
 * "a.profile.json: phases[2].rdhist: ..."). On error p is left init'd. */
int llc_profile_read(const char *path, struct llc_profile *p, char *err, size_t errlen);
/* Checks p by the reader's rules (name is the file name for messages). */
int llc_profile_check(const struct llc_profile *p, const char *name, char *err, size_t errlen);
/* Writes path (JSON, atomically) and the window series beside it as CSV:
 * "x.profile.json" -> "x.profile.csv" (a name not ending in .json gets
 * ".csv" appended). Columns: window,phase,instructions,references. */
int llc_profile_write(const char *path, const struct llc_profile *p, char *err, size_t errlen);
/* Path of the CSV llc_profile_write puts beside path (malloc'd; NULL on ENOMEM). */
char *llc_profile_csv_path(const char *path);

/* Lookups: index of phase id (or -1), the probe entry of a phase (or NULL). */
long llc_profile_phase_index(const struct llc_profile *p, int id);
const struct llc_profile_probe_phase *llc_profile_probe_of(const struct llc_profile *p, int id);

/* Own distances (docs/METHODS.md §12.7): each logged reuse r[k] (pos in
 * the program's references, on the profile's windows) whose start is in
 * a phase's window goes, with its distance in that phase's references,
 * into the histogram pick() gives for the phase index and the reuse's
 * group (created on first use; NULL: not filed). Then _complete gives
 * every rdhist_own its rdhist's dangling samples, and drops one whose
 * finite samples are not all rdhist's. */
int llc_profile_own_distances(struct llc_profile *p, const struct llc_statmodel_reuse *r, size_t n,
                              struct llc_statmodel_hist **(*pick)(void *ctx, struct llc_profile *p,
                                                                  size_t phase, int group),
                              void *ctx, char *err, size_t errlen);
int llc_profile_own_complete(struct llc_profile *p, char *err, size_t errlen);
/* Each phase's spans from the same log (replacing any); a phase without
 * logged reuses keeps none. */
int llc_profile_own_spans(struct llc_profile *p, const struct llc_statmodel_reuse *r, size_t n,
                          char *err, size_t errlen);
/* Allocates n bins of a phase's spans (zeroed; p's phase count sizes the
 * rows), replacing any; n = 0 frees them. */
int llc_profile_alloc_spans(const struct llc_profile *p, struct llc_profile_phase *ph, size_t n,
                            char *err, size_t errlen);

/* What a prediction needs beyond a readable file: every phase has
 * references and reuse samples. Error "<name>: phases[i].<field>: <why>". */
int llc_profile_check_predictable(const struct llc_profile *p, const char *name, char *err,
                                  size_t errlen);

/* ---- probe readings in the simulator (docs/METHODS.md §12.6) ---------- */

/* The linear regime: probe miss ratio at most this in every selected set. */
#define LLC_PROFILE_PROBE_Q_LINEAR 0.1
/* Defaults: sets in each phase's map (a seeded random subset when the LLC
 * has more), and the mean foreign insertions per mapped set at which a
 * phase's map stops (bounds the probe's cost). */
#define LLC_PROFILE_PROBE_MAP_SETS 4096u
#define LLC_PROFILE_PROBE_MAP_EVENTS 20.0
/* Fewer foreign insertions than this at some rate: the entry notes it. */
#define LLC_PROFILE_PROBE_MIN_EVENTS 30

struct llc_profile_probe_config {
    size_t n_rates; /* 0 = 3 rates spanning 10x from the map; else 2..MAX_RATES given */
    double rates[LLC_PROFILE_MAX_RATES]; /* per set per simulated second */
    uint32_t map_sets;                   /* 0 = every set */
    double map_events;
    uint64_t seed;               /* the map subset and fit's tie-break */
    volatile sig_atomic_t *stop; /* may be NULL */
    FILE *log;                   /* progress lines; NULL = quiet */
};
void llc_profile_probe_config_default(struct llc_profile_probe_config *c);

/* The target as the timed solo run saw it, window by window (the windows
 * of p): accesses, seconds (cycles / clock) and LLC insertions (misses;
 * on a victim LLC its accesses) per window. */
struct llc_profile_probe_run {
    const char *workload, *trace; /* one of them */
    size_t n_windows;
    const double *accesses, *seconds, *insertions;
};

/* Fills p->probe (status ok, one entry per phase of p) from two simulated
 * co-runs of the stress probe with the target (docs/METHODS.md §12.6):
 * per phase the map of `map_sets` sets, fit's Gaussian-25 selection and
 * noise-corrected CV, and the readings Phi_hat(tau_j) of those sets at
 * the rates. p needs windows, phases and machine filled. */
int llc_profile_probe_sim(const struct llc_sim_config *cfg, const struct llc_profile_probe_run *run,
                          const struct llc_profile_probe_config *pc, struct llc_profile *p,
                          char *err, size_t errlen);

/* ---- per-stratum reuse in the simulator (docs/METHODS.md §12.6) ------- */

/* Strata per phase at most by default, and the noise-corrected per-set CV
 * of a phase's reference counts below which it keeps none. */
#define LLC_PROFILE_STRATA_DEFAULT 5
#define LLC_PROFILE_STRATA_MIN_CV 0.1

struct llc_profile_strata_config {
    size_t max_strata; /* 2..LLC_PROFILE_MAX_STRATA; 0 = first touches only */
    double min_cv;
};
void llc_profile_strata_config_default(struct llc_profile_strata_config *c);

/* Fills the strata of every phase of p (windows, phases and sampler
 * filled) from the trace its phases were sampled from, and the windows'
 * first touches (every line's first reference in the trace, by window;
 * only these with sc->max_strata = 0): references located
 * in cfg's LLC (workload: the synthetic workload spec the trace was written
 * from, whose addresses may be physical; NULL for a recorded trace, whose
 * pages the simulator places), sets of each phase grouped by their
 * reference counts, and the reuse sampler run again per phase and group. */
int llc_profile_strata_sim(const struct llc_sim_config *cfg, const char *trace,
                           const char *workload, const struct llc_profile_strata_config *sc,
                           struct llc_profile *p, char *err, size_t errlen);

#endif
