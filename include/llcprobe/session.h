/* Measurement sessions: what a measuring command sets up before it
 * measures, the measurements, and the restoring of every change.
 *
 *   llc_session_open(config)   machine facts, LLC geometry, CPU choice,
 *                              prefetchers, target launch or attach,
 *                              backend build and self-test, probe rate
 *                              choice, baseline sweep
 *   llc_session_map            the per-set contention map
 *   llc_sample_run             sampled sets interval by interval
 *   llc_calibrate_run          the occupancy calibration curve
 *   llc_session_close          target stopped, prefetchers and hugepages
 *                              restored, temporaries removed
 *
 * Signals only set the caller's stop flag (config.stop): every measurement
 * polls it and returns what it has, and close restores everything, so an
 * interrupted session leaves nothing behind either. */
#ifndef LLCPROBE_SESSION_H
#define LLCPROBE_SESSION_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/common.h"
#include "llcprobe/fit.h"
#include "llcprobe/map.h"
#include "llcprobe/mapfile.h"

/* The one error code meaning "the configuration asks for what cannot be"
 * (a usage error, exit 2 in the CLI); every other negative code is a
 * failure or a refusal. */
#define LLC_SESSION_EUSAGE (-EINVAL)

/* What the session is for: a map measures a baseline first and may
 * choose its rate; sample and calibrate measure their own sets. */
enum llc_session_purpose { LLC_SESSION_MAP = 0, LLC_SESSION_SAMPLE, LLC_SESSION_CALIBRATE };

/* How the probe rate is set: given, chosen against a planted pattern, or
 * by the linear-regime rule (docs/METHODS.md). Auto and linear are
 * simulator maps only. */
enum llc_session_rate_mode {
    LLC_SESSION_RATE_GIVEN = 0,
    LLC_SESSION_RATE_AUTO,
    LLC_SESSION_RATE_LINEAR
};

struct llc_session_config {
    const char *cmd; /* names the caller in notes ("map") */
    enum llc_session_purpose purpose;
    const char *backend; /* auto, pmu, timing or sim */
    /* The simulator: preset (NULL = amd32), LLC policy (NULL = lru), the
     * target (a workload spec, a trace file, or argv traced first under
     * valgrind), a noise agent; rates in accesses per simulated ns. */
    const char *preset, *policy, *workload, *trace, *noise;
    double target_rate, noise_rate;
    /* Hardware: a libpfm4 event (NULL = the LLC-miss event), the LLC's
     * ways x sets per slice x slices where the machine does not report
     * them (0 = detect), hugepages to reserve, 4 KiB pages allowed, and
     * the occupancy search's cycle to check a slow idle walk at (0 = none). */
    const char *event;
    unsigned llc_ways, llc_sets_per_slice, llc_slices;
    uint32_t reserve;
    bool small_pages_ok;
    double search_cycle_s;
    /* The map's plan: mode (unless mode_given: global in the simulator,
     * sweep on hardware), sets walked together (0 = the backend's best),
     * dwell per group (unless dwell_given: sized to the target in the
     * simulator's global map, else 0.002 s simulated / 0.02 s), sweeps,
     * and the sets of LLC_MAP_SETS (the caller's, kept while open). */
    enum llc_map_mode mode;
    bool mode_given;
    uint32_t group;
    double dwell_s;
    bool dwell_given;
    unsigned sweeps;
    const uint32_t *sets;
    size_t n_sets;
    /* The probe: accesses per second (per simulated second for sim), how
     * it is chosen, or --delay's null operations instead of clock pacing;
     * no_baseline skips the map's baseline sweep. */
    double rate;
    enum llc_session_rate_mode rate_mode;
    unsigned delay_nops;
    bool no_baseline;
    uint64_t seed;
    /* The target: a program (argv, NULL-terminated) or a running pid
     * (attach_pid >= 0); run as root under sudo; restarted when it ends
     * (repeat) or once per group (per_set_runs); its stdout and stderr to
     * target_output (NULL = ours). */
    char **argv;
    int attach_pid;
    bool as_root, repeat, per_set_runs;
    const char *target_output;
    volatile sig_atomic_t *stop; /* polled throughout; may be NULL */
    FILE *log;                   /* progress notes and warnings; NULL = quiet */
    void (*progress)(void *ctx, double done_fraction); /* the map's; may be NULL */
    void *progress_ctx;
};

/* Fills the defaults of `llcprobe map` (backend auto, 2 sweeps, seed 1,
 * target and noise rates 0.01, no attach). */
void llc_session_config_default(struct llc_session_config *c);

/* What the open session found and chose, for outputs and summaries. */
struct llc_session_info {
    bool sim;
    const char *backend;    /* the backend's name */
    const char *machine;    /* one line: CPU or simulator preset */
    const char *target;     /* the command, workload or trace */
    const char *policy;     /* sim: the LLC policy; NULL elsewhere */
    enum llc_map_mode mode; /* resolved */
    double dwell_s;         /* resolved */
    double rate;            /* the probe rate in use */
    unsigned delay_nops;    /* --delay, 0 if clock-paced */
    uint64_t seed;
    const struct llc_map_rate_selection *rate_selection; /* NULL = given */
    const struct llc_map_baseline *baseline;             /* NULL = none */
    const char *prefetch;                                /* what was done about prefetchers */
};

struct llc_session;

/* Opens a session: on success *out owns everything set up; on failure
 * everything is already undone. */
int llc_session_open(const struct llc_session_config *config, struct llc_session **out, char *err,
                     size_t errlen);
/* Stops the target, restores prefetchers and hugepages, removes
 * temporaries; notes how often a repeated target ran. NULL is fine. */
void llc_session_close(struct llc_session *s);

const struct llc_session_info *llc_session_info(const struct llc_session *s);
struct llc_map_backend *llc_session_backend(struct llc_session *s);
/* How many times the target has started (1 unless repeated). */
unsigned llc_session_target_runs(const struct llc_session *s);

/* The default output prefix of a configuration: the program's, trace's or
 * workload kind's name ("attached" for --attach). */
const char *llc_session_default_prefix(const struct llc_session_config *c, char *buf, size_t len);

/* ---- map -------------------------------------------------------------- */

struct llc_session_map_result {
    struct llc_map_result *result;
    struct llc_map_plan plan;          /* as run */
    double *truth;                     /* sim: true target occupancy per unit, else NULL */
    char start_time[32], end_time[32]; /* ISO 8601 UTC */
};

/* Maps with the session's plan, subtracts the baseline, reads the
 * simulator's ground truth. An interrupted map is returned, incomplete. */
int llc_session_map(struct llc_session *s, struct llc_session_map_result *out, char *err,
                    size_t errlen);
/* What llc_map_write_json/csv record beside the counts. */
void llc_session_map_meta(const struct llc_session *s, const struct llc_session_map_result *m,
                          struct llc_map_meta *meta);
void llc_session_map_result_free(struct llc_session_map_result *m);

/* ---- the walk-length occupancy search (sample, calibrate) ------------- */

#define LLC_OCC_DEFAULT_CYCLE 0.1     /* seconds for W probe accesses in a set */
#define LLC_OCC_DEFAULT_CYCLES 2      /* measured cycles per step, after 2 warm ones */
#define LLC_OCC_DEFAULT_THRESHOLD 0.1 /* miss ratio above which a walk no longer fits */
struct llc_occ_params {
    double cycle_s;
    unsigned cycles;
    double threshold;
};
void llc_occ_params_default(struct llc_occ_params *p);
/* For units[0..n): held[i] = ways - the longest LLC walk of unit i whose
 * miss ratio stays at or below the threshold, the probe paced at
 * ways / cycle_s accesses per set per second through the backend's
 * probe_set (-ENOTSUP with the reason in err where it has none; a
 * hardware backend refuses a pace its slow idle-walk check did not pass).
 * Restores the full walk at the backend's own pace afterwards. */
int llc_occ_search(struct llc_map_backend *b, const uint32_t *units, size_t n,
                   const struct llc_occ_params *p, volatile sig_atomic_t *stop, double *held,
                   char *err, size_t errlen);

/* ---- sample ------------------------------------------------------------ */

/* How the sampled sets are chosen: a fit's key-point sets (Gaussian-25), or
 * a baseline. */
enum llc_sample_method {
    LLC_SAMPLE_GAUSSIAN = 0,
    LLC_SAMPLE_RANDOM,
    LLC_SAMPLE_CONTINUOUS,
    LLC_SAMPLE_GLOBAL,
    LLC_SAMPLE_SETS
};
const char *llc_sample_method_name(enum llc_sample_method m);

/* Gaussian-25 without a fit file: a map of every set (global where the
 * backend attributes per access, else one set at a time), in the run the
 * selection will then be used in. out->result is complete or an error is
 * returned. */
int llc_sample_in_run_map(struct llc_session *s, struct llc_session_map_result *out, char *err,
                          size_t errlen);

/* A baseline's sets: count random sets (the session's seed), count
 * consecutive sets from start, every set, or the given ones. */
int llc_sample_pick(struct llc_session *s, enum llc_sample_method m, uint32_t count, uint32_t start,
                    const uint32_t *sets, size_t n_sets, uint32_t **units, size_t *n, char *err,
                    size_t errlen);

struct llc_sample_config {
    enum llc_sample_method method;
    const uint32_t *units; /* the sampled sets */
    size_t n;
    const struct llc_fit_selection
        *sel;        /* the fit's strata (stratified, ratio); NULL for baselines */
    double interval; /* seconds (simulated for sim) */
    unsigned intervals;
    const struct llc_calib
        *calib; /* with it, the occupancy search after the intervals; NULL = none */
};

/* One interval's whole-cache estimates of probe misses, the probe's own
 * accesses, and occupancy in lines (NaN where not measured; the truth only
 * in the simulator). */
struct llc_sample_interval {
    double t0, t1;
    double scale_up, stratified, ratio, sampled;
    double stratified_ratio; /* NaN without a selection */
    double headline;         /* the selection's estimator (fit --estimator); NaN without one */
    double probe_accesses;
    double occ_lines;
    double true_occ_lines, true_target_misses;
};

struct llc_sample_result {
    struct llc_sample_interval *iv;
    size_t count;                     /* intervals measured (fewer when the target ended) */
    struct llc_sample_interval total; /* counts summed; occupancy the search's (or mean truth) */
    double *occ_raw, *occ_lines;      /* with a calibration: per sampled set */
    double search_cycle_s;            /* NaN without a calibration */
    bool truth;                       /* the simulator's ground truth is in */
    unsigned target_runs;             /* a replayed simulated trace's runs; 0 otherwise */
};

/* Measures the sampled sets interval by interval and scales up; with a
 * calibration, then runs the occupancy search in them. */
int llc_sample_run(struct llc_session *s, const struct llc_sample_config *c,
                   struct llc_sample_result *out, char *err, size_t errlen);
void llc_sample_result_free(struct llc_sample_result *r);

/* What a sampling run's files record besides the result. */
struct llc_sample_output {
    const char *prefix, *machine, *target;
    const char *calib_path; /* with cfg->calib */
    const struct llc_map_backend *b;
    const struct llc_sample_config *cfg;
    const struct llc_sample_result *r;
    uint64_t seed;
    double rate;
};
/* PREFIX.sample.json (format llcprobe-sample v1) and PREFIX.sample.csv,
 * written atomically. */
int llc_sample_write(const struct llc_sample_output *so, char *err, size_t errlen);

/* ---- calibrate --------------------------------------------------------- */

struct llc_calibrate_config {
    double touch_rate; /* per held line per second; 0 = per-set probe rate / (2 W^2) */
    uint32_t probed;   /* sets probed together */
    struct llc_occ_params search;
};

/* The curves against k = 0..ways lines held by the co-runner in each
 * probed set: [(ways + 1) * probed] each, row k. */
struct llc_calibrate_result {
    struct llc_map_geometry geo;
    unsigned ways;
    uint32_t probed;
    uint32_t *units;   /* the probed sets, evenly spaced */
    double *per_set;   /* probe misses per set per second */
    double *estimate;  /* the occupancy search's raw estimate */
    double rate;       /* probe accesses per second over all probed sets */
    double touch_rate; /* as used */
};

/* For k = 0..ways: the co-runner holds k lines in each probed set (the
 * simulator rebuilds its backend per k, a hardware backend sets its
 * co-runner thread), the probed sets are walked together for two dwells,
 * then searched as `sample --calibration` does. A session opened for
 * LLC_SESSION_CALIBRATE on an idle target. */
int llc_calibrate_run(struct llc_session *s, const struct llc_calibrate_config *c,
                      struct llc_calibrate_result *out, char *err, size_t errlen);
void llc_calibrate_result_free(struct llc_calibrate_result *r);

#endif
