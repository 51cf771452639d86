/* The stress probe's per-set contention map.
 *
 * A probe walks, for each LLC set unit (slice, index) it measures, a cyclic
 * chain of `walk` congruent lines, and counts its own LLC misses per unit
 * while a target runs: more foreign lines entering a set, more probe misses
 * there (the Gaussian set-sampling paper §III; docs/METHODS.md §1).
 *
 * Counting backends share one interface (Mastik-style: prepare, measure
 * into plain arrays of counts, release):
 *   sim     the built-in simulator: target streams and the probe co-run in
 *           one simulated hierarchy; knows the target's true per-set
 *           occupancy (ground truth for accuracy tests).
 *   timing  every probe access timed (fenced rdtsc); slower than the
 *           calibrated LLC-hit/DRAM threshold = miss. Needs eviction sets.
 *   pmu     an LLC-miss event counted on the probe thread (libpfm4 +
 *           perf_event_open); one unit at a time.
 * Hardware backends self-test before mapping and refuse with the measured
 * numbers when the hardware does not let them see contention.
 *
 * Coverage plans (the driver, backend-independent):
 *   global  all units walked at once, interleaved (per-access attribution:
 *           sim, timing);
 *   sweep   units in groups of `group` walked together for a dwell each,
 *           round-robin, `sweeps` times (default; group 1 = one at a time);
 *   sets    only the listed units (also the sampling path).
 * Each unit's count is kept per sweep, so the test-retest correlation of
 * sweeps 1 and 2 tells whether set-to-set variation is signal or noise.
 */
#ifndef LLCPROBE_MAP_H
#define LLCPROBE_MAP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LLC_MAP_TEXT_LEN 320

/* The LLC as the probe sees it. */
struct llc_map_geometry {
    unsigned line_size;
    unsigned sets_per_slice;
    unsigned slices; /* 1 = slice-agnostic (units = indexes) */
    unsigned llc_ways;
    unsigned l2_ways, l2_sets; /* private level above, 0 if none */
    bool victim_llc;           /* exclusive victim LLC (AMD Zen) */
    uint64_t llc_bytes;
};

static inline uint32_t llc_map_units(const struct llc_map_geometry *g)
{
    return (uint32_t)g->slices * g->sets_per_slice;
}

/* The private L2 set that unit's lines (congruent in the LLC, so equal in
 * the low index bits) all fall into; g->l2_sets must not be 0. */
static inline uint32_t llc_map_l2_set_of(const struct llc_map_geometry *g, uint32_t unit)
{
    return (unit % g->sets_per_slice) % g->l2_sets;
}

/* Congruent lines per unit so that every probe access is served by the LLC
 * (docs/METHODS.md §1.2): W_LLC on an inclusive LLC; on an exclusive victim LLC
 * W_LLC + floor(W_L2 / u), where u is how many interleaved units share
 * each L2 set (u = 1 when one unit is walked at a time: W_L2 + W_LLC; the
 * L2 holds W_L2 lines of the walk and the LLC the rest). Rounding down
 * keeps the LLC's share at or below W_LLC: one line too many and a cyclic
 * LRU walk misses on every access. */
unsigned llc_map_walk_length(const struct llc_map_geometry *g, unsigned units_per_l2_set);

/* How many lines of unit i a co-runner's own L2 keeps on a victim LLC,
 * where lines reach the LLC only as L2 victims (calibrate's co-runner and
 * map --rate auto's planted one, on hardware and in the simulator): the
 * L2_ways of each L2 set
 * shared out among the probed units in it, the first ones in units[]
 * taking the remainder, so exactly l2_ways of every L2 set that holds a
 * probed unit go to the L2 and the rest of each unit's lines to the LLC.
 * Zero on an inclusive LLC. counts: [l2_sets] scratch, zero, left zero. */
void llc_map_corunner_l2_share(const struct llc_map_geometry *g, const uint32_t *units, size_t n,
                               uint32_t *counts, unsigned *share);

/* ---- backends ------------------------------------------------------------ */

struct llc_map_backend_ops {
    /* Walks units[0..n) together for dwell_s seconds (simulated seconds for
     * sim), adding each unit's probe misses and accesses to misses[u] and
     * accesses[u] (indexed by unit id). Returns 0, 1 when the target has
     * ended (the counts of this call are kept), or a negative code. */
    int (*measure)(void *ctx, const uint32_t *units, size_t n, double dwell_s, uint64_t *misses,
                   uint64_t *accesses, char *err, size_t errlen);
    /* Whether the target is still running. */
    bool (*target_alive)(void *ctx);
    void (*release)(void *ctx);
    /* The probe's pace and walk for the measure() calls that follow (the
     * occupancy search of `sample` and `calibrate`). per_set_rate > 0:
     * each unit is accessed per_set_rate times per second (simulated for
     * sim) while `together` units are walked per call; 0 = the pace the
     * backend was built with. llc_walk[units]: LLC lines walked in each
     * unit, 1..llc_ways (plus the L2's share on a victim LLC); NULL = the
     * full walk again. Lines a shorter walk stops using are flushed from
     * every cache level (left in place they hold ways, and an RRIP policy
     * keeps such recently hit lines over a shorter walk's newcomers).
     * NULL when the backend cannot. */
    int (*probe_set)(void *ctx, double per_set_rate, size_t together, const uint8_t *llc_walk,
                     char *err, size_t errlen);
    /* The calibration co-runner of `calibrate`: from this call on, a thread
     * on another core sharing the LLC holds `lines` congruent lines in each
     * of units[0..n) (0..llc_ways; plus what its own L2 keeps on a victim
     * LLC), each touched touch_rate times per second; lines 0 stops it.
     * NULL when the co-runner is fixed at construction (sim: calib_lines). */
    int (*corunner)(void *ctx, const uint32_t *units, size_t n, unsigned lines, double touch_rate,
                    char *err, size_t errlen);
};

struct llc_map_backend {
    const struct llc_map_backend_ops *ops;
    void *ctx;
    const char *name; /* "sim", "timing", "pmu" */
    struct llc_map_geometry geo;
    unsigned walk;                          /* lines per unit actually walked */
    bool all_at_once;                       /* can attribute per access (global mode) */
    char walk_check[LLC_MAP_TEXT_LEN];      /* the idle-walk verification */
    char slow_walk_check[LLC_MAP_TEXT_LEN]; /* hardware, search_cycle_s > 0: the same at the
                                               search's pace */
    char calibration[LLC_MAP_TEXT_LEN];     /* threshold or event, as text */
    char warning[LLC_MAP_TEXT_LEN];         /* e.g. small-page fallback; "" if none */
    /* The page size the target's memory is mapped with ("4K", "2M"), ""
     * when unknown (a launched program): with small pages its per-set
     * structure belongs to one run (docs/METHODS.md §5.4). */
    char target_pages[16];
};

/* Releases a backend made by one of the constructors (NULL is fine). */
void llc_map_backend_release(struct llc_map_backend *b);

/* ---- the simulator backend ------------------------------------------------ */

struct llc_sim_config;

struct llc_map_sim_options {
    const char *preset; /* recorded in the output */
    /* The target: a synthetic workload spec or a trace file (one of them). */
    const char *workload;
    const char *trace;
    const char *noise; /* optional background workload spec */
    double noise_rate; /* its accesses per tick */
    /* Accesses per simulated nanosecond (1 tick = 1 ns): the target's, and
     * the probe's. */
    double target_rate, probe_rate;
    /* Units walked together per measure() call at most (for the walk
     * length rule); 0 = all units. */
    uint32_t max_group;
    bool repeat; /* restart a trace target when it ends (a synthetic
                  * workload never ends) */
    /* A measure() over the same units array (same pointer and count) as
     * the call before goes on with that walk: no warm-up rounds, so
     * back-to-back dwells (a target's windows, a pace change between
     * them) lose nothing. Off: every call re-plans its group. */
    bool continue_group;
    /* Calibration co-runner (llcprobe calibrate): an agent that holds
     * calib_lines congruent lines (0..ways) in each unit being measured,
     * touching them in turn at calib_rate accesses per simulated ns in all
     * (so each held line is touched every calib_lines * n / calib_rate ns
     * with n units walked). 0 lines = no co-runner. */
    unsigned calib_lines;
    double calib_rate;
    /* Planted co-runner (--rate auto): plant_lines[u] congruent lines of
     * unit u (0..ways; NULL = no co-runner) held beside the target, each
     * touched plant_rate times per simulated ns, whichever units the probe
     * walks. A known per-set pattern the map must recover. Not together
     * with calib_lines. */
    const uint8_t *plant_lines;
    double plant_rate;
    /* Baseline sweep (docs/METHODS.md §1.2): no target at all (workload and trace
     * ignored); noise and co-runners still run. */
    bool baseline;
    /* Polled between the slices of a dwell: a long dwell (a global map is
     * one) ends early when it is set, with the counts so far. May be NULL. */
    volatile sig_atomic_t *stop;
};
void llc_map_sim_options_default(struct llc_map_sim_options *o);

/* Builds the simulator (cfg: preset plus policy changes; cfg->agents is
 * set here), places the probe's congruent lines for every unit (the
 * simulator's own geometry and slice hash say where they are: the sim
 * backend maps what the probe would see once its eviction sets exist) and
 * verifies with an idle walk that the probe's accesses are LLC hits. */
int llc_map_backend_sim(const struct llc_sim_config *cfg, const struct llc_map_sim_options *opt,
                        struct llc_map_backend **out, char *err, size_t errlen);

/* Ground truth the sim backend kept while measuring, per unit: the
 * target's occupancy in lines averaged over measure() calls (sampled at
 * the end of each), its LLC lookups and misses. NULL arrays are skipped.
 * -EINVAL if b is not a sim backend. */
int llc_map_sim_truth(const struct llc_map_backend *b, double *occupancy, uint64_t *accesses,
                      uint64_t *misses);

/* The simulator's DRRIP set-dueling leader sets (both policies' leaders):
 * leaders[units] set true for each; returns how many (0 when the LLC is
 * not DRRIP), -EINVAL if b is not a sim backend. */
int llc_map_sim_leaders(const struct llc_map_backend *b, bool *leaders);

/* Paces the sim backend's target at rate accesses per simulated ns from
 * now on (measure() dwells then count that many target accesses per ns):
 * a timed target's per-window rate. -EINVAL for a bad rate, a baseline or
 * a backend that is not the simulator's. */
int llc_map_sim_pace_target(struct llc_map_backend *b, double rate);

/* How many times the sim backend's target has started (--repeat restarts
 * a trace at its end; 1 otherwise). */
unsigned llc_map_sim_target_runs(const struct llc_map_backend *b);

/* Starts the ground-truth average afresh (per-interval truth in `sample`). */
int llc_map_sim_truth_reset(struct llc_map_backend *b);

/* ---- hardware backends (timing, pmu) ------------------------------------- */

struct llc_map_hw_options {
    struct llc_map_geometry geo; /* from llc_sysinfo (the caller checks it) */
    int probe_cpu;               /* CPU to pin the probe thread to, -1 = any */
    /* Arena: hugepage size wanted, pool reservation (--reserve), fallback to
     * small pages allowed (with a warning in `warning`). */
    bool small_pages_ok;
    uint32_t reserve;
    /* Rate control: delay_nops null operations after each access (the
     * seed's method) when > 0, else clock pacing at rate accesses/s
     * (0 = as fast as possible). */
    unsigned delay_nops;
    double rate;
    const char *event; /* pmu: libpfm4 event string, NULL = the
                          LLC-miss event for this CPU */
    uint64_t seed;
    /* Whether the target is alive (the caller owns it); NULL = always. */
    bool (*target_alive)(void *ctx);
    void *target_ctx;
    void (*progress)(void *ctx, const char *stage, double fraction);
    void *progress_ctx;
    volatile sig_atomic_t *stop;
    /* The occupancy search's cycle (sample --calibration, calibrate): a
     * line of each walked unit revisited every search_cycle_s, i.e. a pace
     * of llc_ways / search_cycle_s accesses per set per second. > 0: the
     * constructor checks that an idle walk at that pace stays LLC hits
     * (slow_walk_check) and probe_set accepts that pace only; 0 = no
     * search (probe_set refuses a pace). */
    double search_cycle_s;
};

/* The self-test's verdict, kept for the output and for refusals. */
struct llc_map_selftest {
    bool ran, passed;
    double aggressor_rate, idle_rate, idle_sd; /* miss fractions */
    double effect;                             /* (aggressor - idle) / idle_sd */
    char text[LLC_MAP_TEXT_LEN];
};

/* Build eviction sets (arena, pagemap, group testing), calibrate, run the
 * self-test (built-in aggressor thread on a known set vs an idle control;
 * the aggressor's set must stand out by a stated effect size). -EIO with
 * the measured numbers when the self-test fails ("timing: self-test
 * failed: ..."), -ENOTSUP when the machine lacks what is needed. st (may
 * be NULL) receives the self-test either way. */
int llc_map_backend_timing(const struct llc_map_hw_options *opt, struct llc_map_backend **out,
                           struct llc_map_selftest *st, char *err, size_t errlen);
int llc_map_backend_pmu(const struct llc_map_hw_options *opt, struct llc_map_backend **out,
                        struct llc_map_selftest *st, char *err, size_t errlen);

/* ---- the map -------------------------------------------------------------- */

enum llc_map_mode { LLC_MAP_SWEEP = 0, LLC_MAP_GLOBAL, LLC_MAP_SETS };
const char *llc_map_mode_name(enum llc_map_mode m);

#define LLC_MAP_MAX_SWEEPS 64

struct llc_map_plan {
    enum llc_map_mode mode;
    uint32_t group;       /* SWEEP: units per group (0 = backend's best) */
    double dwell_s;       /* per group (GLOBAL: per round) */
    unsigned sweeps;      /* >= 1; 2+ gives the test-retest figure */
    const uint32_t *sets; /* SETS: the units */
    size_t n_sets;
    uint64_t seed;               /* group composition and order */
    volatile sig_atomic_t *stop; /* polled between dwells; may be NULL */
    /* Per-group target runs (the paper's sequential method): called before
     * every group to start a fresh target; the group's dwell then lasts
     * until that run ends (measure() returning 1 ends the group, not the
     * map). NULL = one target for the whole map. */
    int (*restart_target)(void *ctx, char *err, size_t errlen);
    void *restart_ctx;
    void (*progress)(void *ctx, double done_fraction);
    void *progress_ctx;
};

struct llc_map_result {
    uint32_t units;          /* all units of the geometry */
    unsigned sweeps;         /* sweeps done (the last may be partial) */
    unsigned sweeps_planned; /* rows of sweep_misses / sweep_accesses */
    bool complete;           /* every planned unit measured in every sweep */
    char incomplete_reason[LLC_MAP_TEXT_LEN];
    bool *measured;              /* [units]: in the plan and measured at least once */
    uint64_t *misses, *accesses; /* [units], summed over sweeps */
    double *dwell_s;             /* [units], total dwell */
    /* After llc_map_baseline_apply (NULL before): the exclusion mask, the
     * misses before the baseline was subtracted. misses and sweep_misses
     * are then baseline-corrected. */
    bool *excluded;
    uint64_t *raw_misses;
    uint64_t *sweep_misses;   /* [sweeps * units]: misses per sweep */
    uint64_t *sweep_accesses; /* [sweeps * units] */
    double seconds;           /* wall time of the measurement */
};

int llc_map_run(struct llc_map_backend *b, const struct llc_map_plan *plan,
                struct llc_map_result **out, char *err, size_t errlen);
void llc_map_result_free(struct llc_map_result *r);

/* Parses a unit list like "0-15,100,4096-4100" (ids unchecked against a
 * geometry: llc_map_run does that; at most LLC_MAP_MAX_SET_IDS of them,
 * more than any LLC has sets). *out is malloc'd. */
#define LLC_MAP_MAX_SET_IDS (1u << 22)
int llc_map_parse_sets(const char *list, uint32_t **out, size_t *n, char *err, size_t errlen);

/* Summary over measured units not excluded: misses per unit. */
struct llc_map_summary {
    uint32_t n;
    uint64_t total_misses, total_accesses;
    double mean, sd, min, max;
    double retest_pearson; /* sweeps 1 vs 2 over units; NAN if < 2 sweeps */
    uint32_t hottest[10];  /* unit ids, most misses first */
    unsigned n_hottest;
};
void llc_map_summarize(const struct llc_map_result *r, struct llc_map_summary *out);

/* Rank and linear correlation of two series (NAN when undefined). */
double llc_map_spearman(const double *x, const double *y, size_t n);
double llc_map_pearson(const double *x, const double *y, size_t n);

/* ---- baseline and exclusion mask (docs/METHODS.md §1.2, §1.4) ----------------------- */

/* A unit whose probe misses with no target exceed this share of its
 * probe accesses is excluded (docs/METHODS.md §1.2). */
#define LLC_MAP_BASELINE_MAX_Q 0.01

enum llc_map_exclusion { LLC_MAP_KEEP = 0, LLC_MAP_EXCL_BASELINE = 1, LLC_MAP_EXCL_LEADER = 2 };

struct llc_map_baseline {
    uint32_t units;
    double *q;    /* [units] baseline misses per probe access (NAN: not measured) */
    uint8_t *why; /* [units] enum llc_map_exclusion bits */
    uint32_t n_baseline, n_leader, n_excluded;
    double dwell_s; /* of the baseline sweep, per group */
};

/* From a baseline map (no target) and optional known leader sets
 * (leaders may be NULL). */
int llc_map_baseline_new(const struct llc_map_result *base, const bool *leaders,
                         struct llc_map_baseline **out, char *err, size_t errlen);
void llc_map_baseline_free(struct llc_map_baseline *b);
/* Subtracts each unit's baseline rate (q x its accesses, per sweep, never
 * below 0) and records the mask in r. -EINVAL if the unit counts differ. */
int llc_map_baseline_apply(const struct llc_map_baseline *b, struct llc_map_result *r, char *err,
                           size_t errlen);

/* ---- hardware prefetchers (docs/METHODS.md §1.2) -------------------------------------- */

#define LLC_MAP_MSR_DEV "/dev/cpu/%d/msr"
#define LLC_MAP_MSR_PREFETCH 0x1A4
#define LLC_MAP_PREFETCH_BITS 0xFULL /* L2 streamer, L2 adjacent line, DCU, DCU IP */
#define LLC_MAP_PREFETCH_MAX_CPUS 64

struct llc_map_prefetch_facts {
    bool intel;
    const char *vendor; /* for the message */
    bool hypervisor;
    bool msr_device, msr_writable;
};
/* Whether to switch the prefetchers off (1) or not (0); why says which
 * and, when not, the reason (recorded in the map). */
int llc_map_prefetch_decide(const struct llc_map_prefetch_facts *f, char *why, size_t len);
/* Fills the facts for cpu from the msr device (dev_fmt NULL = /dev/cpu/%d/msr). */
void llc_map_prefetch_facts_probe(bool intel, const char *vendor, bool hypervisor, int cpu,
                                  const char *dev_fmt, struct llc_map_prefetch_facts *f);

struct llc_map_prefetch_saved {
    char dev_fmt[48];
    unsigned n;
    int cpu[LLC_MAP_PREFETCH_MAX_CPUS];
    uint64_t value[LLC_MAP_PREFETCH_MAX_CPUS];
};
/* Sets the prefetcher bits of MSR 0x1A4 on each CPU, saving the old
 * values; on failure restores what it changed. */
int llc_map_prefetch_disable(const char *dev_fmt, const int *cpus, unsigned n,
                             struct llc_map_prefetch_saved *s, char *err, size_t errlen);
/* Writes the saved values back (idempotent). */
void llc_map_prefetch_restore(struct llc_map_prefetch_saved *s);

/* ---- probe rate selection (--rate auto) ----------------------------------- */

/* The best probe rate depends on the replacement policy (LRU-like LLCs
 * want a fast probe, set dueling a slow one), which the probe does not
 * know. So before mapping, a co-runner with a known per-set pattern is
 * mapped beside the target at each candidate rate, and the rate whose map
 * recovers the pattern best is kept. */

#define LLC_MAP_RATE_MAX_TRIALS 16
#define LLC_MAP_PLANT_LEVELS 4 /* planted k = 1, 2, 4, 8 lines (capped at ways) */

/* The known pattern: n_planted units (in distinct L2 sets where the
 * geometry has an L2, spread over slices and indexes) hold k lines, k
 * cycling through the levels; as many other units, idle, are scored
 * beside them. k[units] is filled (0 = idle), scored[] gets the 2 *
 * n_planted scored units. n_planted is capped by the L2 sets and by a
 * quarter of the units; the number used is returned (0 on bad input). */
uint32_t llc_map_plant_pattern(const struct llc_map_geometry *g, uint32_t n_planted, uint8_t *k,
                               uint32_t *scored);

struct llc_map_rate_trial {
    double rate;     /* probe accesses per second */
    double spearman; /* probe misses vs planted k over the scored units */
    double effect;   /* (mean misses, planted - idle) / sd of idle; NAN if idle sd is 0 */
    /* Probe miss ratio q of the units without planted lines (the
     * target's own), the method's linear-regime statistics (docs/METHODS.md §1.3). */
    double q_median, q_p95, q_max;
    /* Paired score (--rate auto): the same units mapped once with and
     * once without planted lines, so the target's own per-unit level
     * cancels from the increment d = misses with - misses without.
     * score = Spearman(k, d), which rewards increments that grow with k
     * and stand above their noise; score_se its standard error. */
    double score, score_se;
    double increment[LLC_MAP_PLANT_LEVELS]; /* mean d per level k = 1, 2, 4, 8 */
    bool measured;                          /* false if the trial could not run */
};

/* Scores one trial's map: r measured the scored units with planted k
 * (q is computed even with no scored units; measured then stays false). */
void llc_map_rate_score(const struct llc_map_result *r, const uint8_t *k, const uint32_t *scored,
                        size_t n_scored, struct llc_map_rate_trial *t);

/* The pattern with planted and idle scored units swapped (the second
 * trial of a pair): kb[units] gets the levels of k moved from
 * scored[i] to scored[n_planted + i]. */
void llc_map_plant_swap(uint32_t units, const uint8_t *k, const uint32_t *scored,
                        uint32_t n_planted, uint8_t *kb);

/* The paired score from increments d[i] at planted level k[i] (n pairs):
 * sets t->score, t->score_se and t->increment; NAN when fewer than 8
 * pairs or no spread. */
void llc_map_rate_paired(const double *d, const uint8_t *k, size_t n, struct llc_map_rate_trial *t);

/* Scores a pair of trials: a mapped with pattern ka, b with kb (the
 * swap of ka over the same scored units). t gets a's single-map
 * statistics (Spearman, effect, q) and the paired score. */
void llc_map_rate_score_pair(const struct llc_map_result *a, const struct llc_map_result *b,
                             const uint8_t *ka, const uint8_t *kb, const uint32_t *scored,
                             size_t n_scored, struct llc_map_rate_trial *t);

/* Safety bounds on q, a check, not the rule. The method's linear-regime
 * bounds (docs/METHODS.md §1.3: median q <= 0.05) would refuse the rates that map best
 * here (amd32 DRRIP hotsets maps at Spearman 0.99 with median q 0.41),
 * so the bound is the saturation limit of docs/METHODS.md §12.11 instead:
 * sets with q > 0.5 carry little information, and a candidate whose
 * median set is past it is refused; below 0.002 is the method's "signal
 * too weak". Unsafe candidates are chosen only if none other is left. */
#define LLC_MAP_RATE_Q_MAX 0.5
#define LLC_MAP_RATE_Q_MIN 0.002
bool llc_map_rate_safe(const struct llc_map_rate_trial *t);

/* Picks among the safe trials by paired score. Candidates within noise
 * of the best (score difference under LLC_MAP_RATE_TIE_SE combined
 * standard errors) tie; a tie goes to prefer_rate if it is among them,
 * else to the lowest median q. Returns its index, or -1 if no trial has
 * a score. why (may be NULL) says how it was chosen. */
#define LLC_MAP_RATE_TIE_SE 2.0
int llc_map_rate_pick(const struct llc_map_rate_trial *t, size_t n, double prefer_rate, char *why,
                      size_t whylen);

/* The linear-regime rule of docs/METHODS.md §1.3 (--rate linear): the next rate of a
 * binary search on log r between lo and hi given the q statistics at the
 * current rate; returns 0 when the current rate satisfies the rule
 * (median q <= 0.05, p95 <= 0.1, max <= 0.3, median >= 0.002), else 1
 * and sets *next, narrowing [lo, hi]; -1 when the trial has no q. */
int llc_map_rate_linear_step(double rate, const struct llc_map_rate_trial *t, double *lo,
                             double *hi, double *next);

/* What a rate selection did, for the output. */
struct llc_map_rate_selection {
    const char *method; /* "auto" or "linear" */
    size_t n;
    struct llc_map_rate_trial trials[LLC_MAP_RATE_MAX_TRIALS];
    int chosen;  /* index into trials, -1 = none (the default kept) */
    double rate; /* the rate chosen */
    char why[LLC_MAP_TEXT_LEN];
    uint32_t planted_units;  /* auto: units holding planted lines */
    double plant_touch_rate; /* auto: touches per planted line per second */
    double dwell_s;          /* per trial */
    double seconds;          /* wall time of the selection */
};

/* ---- output --------------------------------------------------------------- */

/* What is recorded beside the counts. */
struct llc_map_meta {
    const char *machine; /* one line: CPU or "simulator preset X" */
    const char *target;  /* the target command, workload or trace */
    const char *policy;  /* sim: LLC replacement policy; NULL elsewhere */
    double rate;         /* probe accesses per second (sim: per sim second) */
    unsigned delay_nops; /* --delay, 0 if clock-paced */
    uint64_t seed;
    const char *start_time, *end_time; /* ISO 8601 UTC */
    const struct llc_map_plan *plan;
    /* sim only (NULL elsewhere): ground truth per unit */
    const double *truth_occupancy;
    const char *prefetch; /* what was done about hardware prefetchers; NULL = not recorded */
    /* The baseline and its mask; NULL = none measured */
    const struct llc_map_baseline *baseline;
    /* --rate auto|linear: how the rate was chosen; NULL = given */
    const struct llc_map_rate_selection *rate_selection;
};

/* Writes PATH (JSON, format "llcprobe-map" version 1) atomically. */
int llc_map_write_json(const struct llc_map_backend *b, const struct llc_map_result *r,
                       const struct llc_map_meta *m, const char *path, char *err, size_t errlen);
/* Writes PATH (CSV: set,slice,index,misses,accesses,dwell_s[,true_occupancy]). */
int llc_map_write_csv(const struct llc_map_backend *b, const struct llc_map_result *r,
                      const struct llc_map_meta *m, const char *path, char *err, size_t errlen);
/* The summary lines printed on stdout. */
void llc_map_print_summary(FILE *out, const struct llc_map_backend *b,
                           const struct llc_map_result *r);

#endif
