/* Probe-side helpers of `llcprobe mrc`: the instrumented runtime's profile
 * file, reuse-distance sampling of trace files, and the curve outputs
 * (JSON, CSV, gnuplot PNG). Private to probe/ (and the runtime in probe/rt,
 * which compiles profile.c into itself). */
#ifndef LLC_MRC_MRC_H
#define LLC_MRC_MRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/statmodel.h"

/* ---- Profile file ---------------------------------------------------------
 * Text, one "key value" per line in this order, the last line being the
 * histogram in statmodel's serialisation (llc_statmodel_hist_format):
 *
 *     llcprobe-rt-profile 1
 *     rate 0.0001
 *     seed 1
 *     refs 123456789
 *     samples 12346
 *     threads 1
 *     command ./app arg
 *     rdhist 1 inf=17 0:3 ...
 */
#define LLC_MRC_PROFILE_MAGIC "llcprobe-rt-profile 1"

struct llc_mrc_profile_info {
    double rate;
    uint64_t seed;
    uint64_t refs;     /* references executed by all sampled threads */
    uint64_t samples;  /* samples taken, finite + dangling */
    uint64_t threads;  /* threads that were sampled */
    char command[1024];
};

/* Writes the profile to f; -EIO if the stream fails, -ENOMEM. */
int llc_mrc_profile_write(FILE *f, const struct llc_mrc_profile_info *info,
                          const struct llc_statmodel_hist *h, char *err, size_t errlen);
/* Parses a profile; strict (every key once, in order, numbers checked,
 * samples equal to the histogram's total). h is replaced. Errors name the
 * file and the line. */
int llc_mrc_profile_parse(const char *text, const char *name, struct llc_mrc_profile_info *info,
                          struct llc_statmodel_hist *h, char *err, size_t errlen);
int llc_mrc_profile_read(const char *path, struct llc_mrc_profile_info *info,
                         struct llc_statmodel_hist *h, char *err, size_t errlen);

/* ---- Sampling a trace file ------------------------------------------------ */

struct llc_mrc_trace_stats {
    uint64_t records;  /* trace records read */
    uint64_t refs;     /* line references fed to the sampler */
    struct llc_statmodel_sampler_stats sampler;
};

/* Feeds every data reference of the trace to a sampler with cfg and adds
 * its samples to h. References are those of the simulator's trace replay
 * (llcprobe/simrun.h): load, store and modify are one reference each to
 * every 64-byte line their bytes touch; instruction records are skipped. */
int llc_mrc_sample_trace(const char *path, const struct llc_statmodel_sampler_config *cfg,
                         struct llc_statmodel_hist *h, struct llc_mrc_trace_stats *stats,
                         char *err, size_t errlen);
/* The same into a groups sink: group 0, or one group per time slot when
 * cfg->slot_refs > 0 (spec §4), each credited with its references. */
int llc_mrc_sample_trace_groups(const char *path, const struct llc_statmodel_sampler_config *cfg,
                                struct llc_statmodel_groups *groups,
                                struct llc_mrc_trace_stats *stats, char *err, size_t errlen);

/* ---- Running programs ----------------------------------------------------- */

/* Runs argv (linked with libllcprobe-rt) with the runtime told to sample at
 * rate/seed and write its profile to a temporary file, waits, and reads the
 * profile into h. *exit_status gets the program's exit code (128 + N if
 * killed by signal N). A program without the runtime writes no profile:
 * -ENOENT, and err says how to build it. */
int llc_mrc_run_rt(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                   struct llc_mrc_profile_info *info, int *exit_status, char *err, size_t errlen);
/* 1 if the executable argv0 (searched in PATH like execvp) carries the
 * runtime's marker string, 0 if not, negative if it cannot be read. */
int llc_mrc_has_runtime(const char *argv0, char *err, size_t errlen);
#define LLC_MRC_RT_MARKER "llcprobe-rt runtime marker v1"

/* PMU sampler (spec §2.2): precise memory samples give the sampled
 * reference's address, hardware watchpoints on that address catch its
 * reuse, a retired loads+stores counter gives the distance. Opens what it
 * needs first and refuses with the measured reason (-EOPNOTSUPP etc.) where
 * the PMU cannot do it, before running the program. */
struct llc_mrc_pmu_stats {
    uint64_t refs;        /* loads + stores counted */
    uint64_t samples;     /* precise samples taken */
    uint64_t dropped;     /* samples dropped: all watchpoints busy */
    uint64_t lost;        /* PERF_RECORD_LOST records */
    int exit_status;
};
int llc_mrc_sample_pmu(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                       struct llc_mrc_pmu_stats *stats, char *err, size_t errlen);

/* ---- This machine's caches ------------------------------------------------ */

struct llc_mrc_cache {
    char name[8];   /* "L1d", "L2", "LLC" */
    uint64_t bytes;
};
/* The L1 data, L2 and last-level cache sizes of this machine (CPUID when
 * the kernel has no sysfs cache info). Returns how many were found (0..3). */
int llc_mrc_machine_caches(struct llc_mrc_cache *out, size_t cap, char *err, size_t errlen);

/* ---- Curves and outputs --------------------------------------------------- */

#define LLC_MRC_MAX_MODELS 2

/* One model's curve over the common size grid. */
struct llc_mrc_series {
    enum llc_statmodel_method method;
    struct llc_statmodel_point *points; /* n of them */
    double *band_lo, *band_hi;          /* NULL without --band */
};

/* One time slot of the §4 (burst) mode: its own histogram's curves. */
struct llc_mrc_slot {
    int id;               /* slot index: references [id * slot_refs, (id + 1) * slot_refs) */
    double refs;          /* references executed in the slot */
    double samples, dangling;
    struct llc_statmodel_point *points[LLC_MRC_MAX_MODELS]; /* per series; NULL: no samples */
};

struct llc_mrc_result {
    size_t n;            /* sizes */
    const double *lines; /* ascending */
    unsigned n_series;
    struct llc_mrc_series series[LLC_MRC_MAX_MODELS];
    /* What the JSON records about the run. */
    const char *source;  /* "trace", "profile", "rt", "pmu" */
    const char *input;   /* file or command */
    double rate;
    uint64_t seed;
    uint64_t refs;
    double samples, dangling;
    enum llc_statmodel_cold cold;
    unsigned band_replicates; /* 0 = no band */
    /* Time-slot mode (n_slots > 0): per-slot curves and their reference-
     * weighted mean over the slots that have samples (spec §4). */
    uint64_t slot_refs;
    size_t n_slots, slots_skipped;
    const struct llc_mrc_slot *slots;
    struct llc_statmodel_point *slot_mean[LLC_MRC_MAX_MODELS];
};

const char *llc_mrc_method_name(enum llc_statmodel_method m);
/* Writes PREFIX.mrc.json and PREFIX.mrc.csv atomically, and in time-slot
 * mode PREFIX.slots.csv (one row per slot and size; slot "mean" last). */
int llc_mrc_write_outputs(const char *prefix, const struct llc_mrc_result *r, char *err,
                          size_t errlen);
/* Draws PREFIX.mrc.png from PREFIX.mrc.csv with gnuplot (log size axis).
 * -ENOENT (with a message) if gnuplot is not installed. */
int llc_mrc_plot(const char *prefix, const struct llc_mrc_result *r, const char *gnuplot,
                 char *err, size_t errlen);

#endif
