/* Probe-side helpers of `llcprobe mrc`: reuse-distance sampling of trace
 * files, the runtime's and QEMU's runs (their profiles are
 * llcprobe/reusefile.h), and the curve outputs (JSON, CSV, gnuplot PNG). */
#ifndef LLC_MRC_MRC_H
#define LLC_MRC_MRC_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/phase.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/reusefile.h"
#include "llcprobe/trace.h"

/* ---- Sampling a trace file ------------------------------------------------ */

struct llc_mrc_trace_stats {
    uint64_t records; /* trace records read */
    uint64_t refs;    /* line references fed to the sampler */
    struct llc_statmodel_sampler_stats sampler;
};

/* Feeds every data reference of the trace to a sampler with cfg and adds
 * its samples to h. References are those of the simulator's trace replay
 * (llcprobe/simrun.h): load, store and modify are one reference each to
 * every 64-byte line their bytes touch; instruction records are skipped. */
int llc_mrc_sample_trace(const char *path, const struct llc_statmodel_sampler_config *cfg,
                         struct llc_statmodel_hist *h, struct llc_mrc_trace_stats *stats, char *err,
                         size_t errlen);
/* The same into a groups sink: group 0, or one group per time slot when
 * cfg->slot_refs > 0 (docs/METHODS.md §7.5), each credited with its references. */
int llc_mrc_sample_trace_groups(const char *path, const struct llc_statmodel_sampler_config *cfg,
                                struct llc_statmodel_groups *groups,
                                struct llc_mrc_trace_stats *stats, char *err, size_t errlen);

/* Windows of the trace sampler: before() is called for every record with
 * the line references fed before it; it returns 1 to start the next window
 * at this record (the sampler's group becomes 1, 2, ... in turn; the first
 * window is group 0), 0 to stay in the current one, or a negative error
 * with err filled. */
struct llc_mrc_window_hook {
    int (*before)(void *ctx, const struct llc_trace_rec *rec, uint64_t refs, char *err,
                  size_t errlen);
    void *ctx;
    /* With cfg->log_reuses: the sampler's finite samples (groups are the
     * windows), handed over at the end (the caller frees them). */
    struct llc_statmodel_reuse **reuses;
    size_t *n_reuses;
};
/* llc_mrc_sample_trace_groups with windows as groups (cfg->slot_refs 0). */
int llc_mrc_sample_trace_windows(const char *path, const struct llc_statmodel_sampler_config *cfg,
                                 const struct llc_mrc_window_hook *hook,
                                 struct llc_statmodel_groups *groups,
                                 struct llc_mrc_trace_stats *stats, char *err, size_t errlen);

/* ---- Per-phase sampling of a trace (docs/METHODS.md §9) -----------------
 * The trace is cut into windows, each window is classified by the phase
 * library's ScarPhase detector from its code addresses, and the reuse
 * samples are grouped by the phase of the window they were *taken* in (a
 * reuse that ends in a later window still belongs to the window of its
 * sample, as in time-slot mode): one histogram per phase. */
enum llc_mrc_window_unit { /* in the order of mrc --phase-unit's names */
                           LLC_MRC_WINDOW_AUTO =
                               0, /* instructions if the trace has instruction records */
                           LLC_MRC_WINDOW_INSTRUCTIONS, /* instruction records; the signature is
                                                           phase --trace
                                                           --no-dynamic-rate's: sampled instruction
                                                           addresses */
                           LLC_MRC_WINDOW_REFERENCES,   /* line references; the signature counts the
                                                           code   address (pc) of every data record in
                                                           the window */
};

struct llc_mrc_phase_config {
    struct llc_statmodel_sampler_config sampler; /* slot_refs must be 0 */
    enum llc_mrc_window_unit unit;
    uint64_t window;                  /* window length in unit, > 0 */
    unsigned ip_samples;              /* instructions: sampled addresses per window (400) */
    uint64_t ip_seed;                 /* instructions: seed of their positions */
    struct llc_phase_config detector; /* its dynamic rate is turned off (offline) */
};

void llc_mrc_phase_config_default(struct llc_mrc_phase_config *cfg);

struct llc_mrc_phase_window {
    int phase;      /* stable id, LLC_PHASE_TRANSITION or LLC_PHASE_UNCLASSIFIED */
    double refs;    /* line references */
    double samples; /* reuse samples taken in it */
};

struct llc_mrc_phase_run {
    enum llc_mrc_window_unit unit; /* as resolved */
    uint64_t window;               /* window length in unit */
    size_t n_windows;
    struct llc_mrc_phase_window *windows;
    /* One group per phase id, plus LLC_PHASE_UNCLASSIFIED / TRANSITION
     * groups modelled with the pooled histogram (statmodel regroup). */
    struct llc_statmodel_groups *phases;
    /* One group per window (ids in time order): the samples taken in it
     * and its references, for StatStack on the timeline. */
    struct llc_statmodel_groups *window_hists;
    size_t pooled_groups;              /* groups given the pooled histogram */
    struct llc_statmodel_hist *pooled; /* every sample */
    /* cfg->sampler.log_reuses: every finite sample, its group the window
     * (own distances, docs/METHODS.md §12.7); else NULL */
    struct llc_statmodel_reuse *reuses;
    size_t n_reuses;
    struct llc_phase_summary summary;
    struct llc_mrc_trace_stats stats;
};

int llc_mrc_sample_trace_phases(const char *path, const struct llc_mrc_phase_config *cfg,
                                struct llc_mrc_phase_run *out, char *err, size_t errlen);
/* The same from a profile's windows (the runtime's, windows of references
 * whose signatures count sampled code addresses): classified by the same
 * detector, samples grouped by the window they were taken in, the same
 * outputs. cfg->sampler is not used; cfg->window must be 0 or the recorded
 * length. Refuses a profile without windows or with truncated ones. */
int llc_mrc_profile_phases(const char *name, const struct llc_reusefile_info *info,
                           const struct llc_reusefile_windows *pw,
                           const struct llc_mrc_phase_config *cfg, struct llc_mrc_phase_run *out,
                           char *err, size_t errlen);
void llc_mrc_phase_run_free(struct llc_mrc_phase_run *r);
/* Windows of phase id (any label) in r. */
size_t llc_mrc_phase_windows_of(const struct llc_mrc_phase_run *r, int phase);
/* StatStack on r's phase timeline (docs/METHODS.md §9), default
 * configuration; *out is NULL if r kept no per-window histograms. */
int llc_mrc_phase_timeline(const struct llc_mrc_phase_run *r, struct llc_statmodel_timeline **out,
                           char *err, size_t errlen);

/* ---- Running programs ----------------------------------------------------- */

struct llc_mrc_rt_config {
    double rate;
    uint64_t seed;
    uint64_t window;     /* references per window (LLCPROBE_RT_WINDOW); 0: no windows */
    unsigned window_pcs; /* signature samples per window; 0: the runtime's default */
    const volatile sig_atomic_t *stop; /* polled: nonzero stops the program (-EINTR) */
    uint64_t samples;                  /* > 0 (window 0 only): adaptive rate aiming at this many
                                        * samples (LLCPROBE_RT_SAMPLES), rate ignored */
};
/* Runs argv (linked with libllcprobe-rt) with the runtime told to sample
 * as cfg says and write its profile to a temporary file, waits, and reads
 * the profile into h (and its windows into w, if not NULL). *exit_status
 * gets the program's exit code (128 + N if killed by signal N). A program
 * without the runtime writes no profile: -ENOENT, and err says how to
 * build it. */
int llc_mrc_run_rt(char *const *argv, const struct llc_mrc_rt_config *cfg,
                   struct llc_statmodel_hist *h, struct llc_reusefile_info *info,
                   struct llc_reusefile_windows *w, int *exit_status, char *err, size_t errlen);
/* 1 if the executable argv0 (searched in PATH like execvp) carries the
 * runtime's marker string, 0 if not, negative if it cannot be read. */
int llc_mrc_has_runtime(const char *argv0, char *err, size_t errlen);

/* The QEMU sampler: argv (any x86-64 ELF program) runs under qemu-x86_64
 * (LLCPROBE_QEMU, else PATH) with the libllcprobe-qemu plugin
 * (LLCPROBE_QEMU_PLUGIN, else beside the llcprobe executable), which
 * samples like the runtime and writes the same profile; read as
 * llc_mrc_run_rt reads the runtime's. Multi-threaded programs: each thread
 * sampled on its own. -ENOENT with the reason if qemu or the plugin is
 * missing, -ENOEXEC for a script. */
int llc_mrc_run_qemu(char *const *argv, const struct llc_mrc_rt_config *cfg,
                     struct llc_statmodel_hist *h, struct llc_reusefile_info *info,
                     struct llc_reusefile_windows *w, int *exit_status, char *err, size_t errlen);
/* The same plugin recording argv's full trace (instruction and data
 * records, lackey's reference semantics) into output. A program that starts
 * a second thread leaves no trace (the plugin says why): -EIO. */
int llc_mrc_qemu_trace(char *const *argv, const char *output, int *exit_status, char *err,
                       size_t errlen);
/* Paths of qemu-x86_64 and the plugin, or -ENOENT saying what is missing. */
int llc_mrc_qemu_find(char *qemu, size_t qlen, char *plugin, size_t plen, char *err, size_t errlen);

/* PMU sampler (docs/METHODS.md §6.3): precise memory samples give the sampled
 * reference's address, hardware watchpoints on that address catch its
 * reuse, a retired loads+stores counter gives the distance. Opens what it
 * needs first and refuses with the measured reason (-EOPNOTSUPP etc.) where
 * the PMU cannot do it, before running the program. */
struct llc_mrc_pmu_stats {
    uint64_t refs;    /* loads + stores counted */
    uint64_t samples; /* precise samples taken */
    uint64_t dropped; /* samples dropped: all watchpoints busy */
    uint64_t lost;    /* PERF_RECORD_LOST records */
    int exit_status;
};
int llc_mrc_sample_pmu(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                       struct llc_mrc_pmu_stats *stats, char *err, size_t errlen);

/* ---- This machine's caches ------------------------------------------------ */

struct llc_mrc_cache {
    char name[8]; /* "L1d", "L2", "LLC" */
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

/* One group of samples with its own histogram's curves: a time slot of the
 * docs/METHODS.md §7.5 (burst) mode, or a phase (docs/METHODS.md §9). */
struct llc_mrc_group {
    int id;                   /* slot index (references [id * slot_refs, (id + 1) * slot_refs)),
                                 or phase id (negative: unclassified / transition windows) */
    double refs;              /* references executed in it */
    double samples, dangling; /* of its histogram */
    size_t windows;           /* phases: windows classified into it */
    bool pooled;              /* phases: modelled with every sample (no own samples, or
                                 unclassified windows) */
    struct llc_statmodel_point *points[LLC_MRC_MAX_MODELS]; /* per series; NULL: no samples */
};

/* Slots or phases: each group's curves and their reference-weighted mean. */
struct llc_mrc_groupset {
    size_t n, skipped; /* groups; groups without samples left out of the mean */
    struct llc_mrc_group *groups;
    struct llc_statmodel_point *mean[LLC_MRC_MAX_MODELS];
};

struct llc_mrc_result {
    size_t n;            /* sizes */
    const double *lines; /* ascending */
    unsigned n_series;
    /* The headline curves: the pooled histogram's, or with phases their
     * mixture (then `pooled` holds the pooled histogram's). */
    struct llc_mrc_series series[LLC_MRC_MAX_MODELS];
    struct llc_statmodel_point *pooled[LLC_MRC_MAX_MODELS];
    /* What the JSON records about the run. */
    const char *source; /* "trace", "profile", "rt", "pmu" */
    const char *input;  /* file or command */
    double rate;
    uint64_t seed;
    uint64_t refs;
    double samples, dangling;
    enum llc_statmodel_cold cold;
    unsigned band_replicates; /* 0 = no band */
    uint64_t distinct_lines;  /* exact (then the curve ends at distinct_lines /
                               * refs); 0: the cold misses are the samples' */
    /* Time-slot mode (slots.n > 0): per-slot curves and their mean (docs/METHODS.md §7.5). */
    uint64_t slot_refs;
    struct llc_mrc_groupset slots;
    /* Phase mode (phase_run != NULL): per-phase curves; series[] is their
     * mixture (docs/METHODS.md §9). */
    const struct llc_mrc_phase_run *phase_run;
    uint64_t phase_window;
    struct llc_mrc_groupset phases;
};

const char *llc_mrc_method_name(enum llc_statmodel_method m);
/* Writes PREFIX.mrc.json and PREFIX.mrc.csv atomically, in time-slot
 * mode PREFIX.slots.csv (one row per slot and size; slot "mean" last), in
 * phase mode PREFIX.phases.csv (one row per phase and size; "mixture" last). */
int llc_mrc_write_outputs(const char *prefix, const struct llc_mrc_result *r, char *err,
                          size_t errlen);
/* Draws PREFIX.mrc.png from PREFIX.mrc.csv with gnuplot (log size axis);
 * in phase mode also each phase's curves from PREFIX.phases.csv.
 * -ENOENT (with a message) if gnuplot is not installed. */
/* With bands: one line per series on stdout, the 5-95% band at up to 8
 * sizes spread over the curve ("band statcache: 64 KiB 0.41-0.44 ..."). */
void llc_mrc_print_bands(const struct llc_mrc_result *r);
int llc_mrc_plot(const char *prefix, const struct llc_mrc_result *r, const char *gnuplot, char *err,
                 size_t errlen);

#endif
