/* Private to the hardware map backends (timing, pmu): what both share.
 *
 * Pure pieces (options, chains, pacing arithmetic, verdicts) are separate
 * functions so tests can drive them with synthetic inputs; the pieces that
 * touch the machine (threads, arena, eviction sets, timed walks) are built
 * on them. Everything that measures runs on one probe thread pinned with
 * sched_setaffinity (the "worker"); the caller's thread only dispatches.
 */
#ifndef LLCPROBE_MAP_HW_INTERNAL_H
#define LLCPROBE_MAP_HW_INTERNAL_H

#include <sched.h> /* cpu_set_t (_GNU_SOURCE is set by the build) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/evset.h"
#include "llcprobe/map.h"

/* ---- options and sizes (options.c) ------------------------------------ */

/* 0, or -EINVAL with "<backend>: <why>" for a geometry the probe cannot use
 * (zero ways or sets, non-power-of-two sets or line size, ...) or bad rate
 * and CPU fields. */
int llc_maphw_check_options(const char *backend, const struct llc_map_hw_options *o, char *err,
                            size_t errlen);
/* Congruent lines each unit's eviction set holds: the walk for one unit at
 * a time (W_LLC, or W_L2 + W_LLC on a victim LLC). */
unsigned llc_maphw_group(const struct llc_map_geometry *g);
/* Arena bytes: per LLC index, enough same-index lines for the finder's
 * pools (3 * slices * (G + 1)), the victim-LLC tail (2 * W_L2) and the
 * aggressor's own congruent lines, with room to spare. */
size_t llc_maphw_arena_bytes(const struct llc_map_geometry *g);
/* Most units of units[0..n) that share one L2 set (their lines all do: the
 * L2 index is the low part of the LLC index). counts: l2_sets zeros,
 * left zeroed. 1 when the geometry has no L2 or n == 0. */
unsigned llc_maphw_units_per_l2_set(const struct llc_map_geometry *g, const uint32_t *units,
                                    size_t n, uint32_t *counts);
/* Probe and aggressor CPUs from `allowed`: want >= 0 must be in it; -1
 * takes the lowest. other = the lowest allowed CPU != probe, -1 if none. */
int llc_maphw_pick_cpus(const cpu_set_t *allowed, int want, int *probe, int *other, char *err,
                        size_t errlen);

/* ---- random order and pointer chains (chain.c) ------------------------ */

/* A seeded random permutation of 0..n-1 (stream separates units). */
void llc_maphw_perm(uint64_t seed, uint64_t stream, uint32_t *perm, size_t n);
/* Links lines[perm[0]] -> lines[perm[1]] -> ... -> lines[perm[n-1]] ->
 * lines[perm[0]] by storing each next address in the first word of a line;
 * returns the head lines[perm[0]] (NULL if n == 0). */
void *llc_maphw_chain_link(void *const *lines, const uint32_t *perm, size_t n);
/* Length of the cycle through head, or 0 if the chain does not come back
 * to head within max steps. */
size_t llc_maphw_chain_cycle(const void *head, size_t max);

/* ---- rate control (pace.c) -------------------------------------------- */

/* TSC ticks in `seconds` (rounded, saturated). */
uint64_t llc_maphw_ticks(uint64_t tsc_hz, double seconds);
/* Clock pacing: access j of a walk over `units` interleaved units is
 * released at start + j * period, period = tsc_hz / (rate * units): rate
 * is per unit (the method's per-set rate r), so interleaving more units does
 * not slow each one down. rate <= 0: no pacing (period 0). */
struct llc_maphw_pace {
    uint64_t start;
    double period;
};
int llc_maphw_pace_init(struct llc_maphw_pace *p, uint64_t tsc_hz, double rate, size_t units,
                        uint64_t start, char *err, size_t errlen);
static inline uint64_t llc_maphw_pace_deadline(const struct llc_maphw_pace *p, uint64_t j)
{
    return p->start + (uint64_t)(p->period * (double)j);
}
/* Null-op rate control: accesses per second of one unit walked alone with
 * k null operations after each access (seed's r = 1 / (t_access + k t_nop)),
 * times in ticks. */
double llc_maphw_nop_rate(double access_ticks, unsigned k, double nop_ticks, uint64_t tsc_hz);
/* Ticks per null operation of llc_maphw_nops, measured over n of them. */
double llc_maphw_nop_ticks(unsigned n);
/* k null operations (cheap ALU work that stays in the core, not pause). */
static inline void llc_maphw_nops(unsigned k)
{
    for (unsigned i = 0; i < k; i++)
        __asm__ volatile("nop");
}

/* ---- statistics and verdicts (stats.c) -------------------------------- */

/* Mean and sample standard deviation of the finite values of x (NaNs are
 * samples without accesses); returns how many were finite. mean = sd = NaN
 * when none, sd = 0 when one. */
size_t llc_maphw_mean_sd(const double *x, size_t n, double *mean, double *sd);

/* The self-test rule: the aggressor's set must exceed the idle control's
 * mean miss fraction by min_effect idle standard deviations, the sd taken
 * as at least sd_floor (a quiet control must not let a 0.1% difference
 * pass), with at least min_samples dwells of each. */
struct llc_maphw_rule {
    double min_effect;  /* 3.0 */
    double sd_floor;    /* 0.01: one percentage point */
    size_t min_samples; /* 3 */
};
void llc_maphw_rule_default(struct llc_maphw_rule *r);
/* Fills st (ran = true) and its text: "<backend>: self-test passed|failed:
 * aggressor set 45.2% <what> vs idle 0.8% ± 0.5% (effect ..)". Returns
 * st->passed. aggr/idle: per-dwell miss fractions (NaN = no accesses). */
bool llc_maphw_selftest_verdict(const char *backend, const char *what, const double *aggr,
                                size_t n_aggr, const double *idle, size_t n_idle,
                                const struct llc_maphw_rule *rule, struct llc_map_selftest *st);

/* The idle-walk check: an idle walk must be served by the LLC, neither by
 * the L2 (the walk is too short for the hierarchy) nor by memory (too long,
 * or the lines are not congruent). ticks (sorted in place) are timed
 * accesses; l2_bound 0 = no L2 check; slower than dram_threshold = memory.
 * Passes with at most 5% memory and 10% L2-fast accesses. text gets the
 * measured figures, named "<backend>: <check> passed|failed". Returns 1
 * pass, 0 fail, -EINVAL without samples. */
int llc_maphw_walk_verdict(const char *backend, const char *check, unsigned walk, size_t units,
                           uint32_t *ticks, size_t n, uint32_t l2_bound, uint32_t dram_threshold,
                           char *text, size_t len);

/* Periodic threshold re-check: adopts a fresh calibration's threshold if
 * it still separates LLC hits from memory (0, *next set), else -EIO with
 * the measured figures in err. */
int llc_maphw_recheck(uint32_t current, const struct llc_evset_calibration *fresh, uint32_t *next,
                      char *err, size_t errlen);

/* ---- walks (walk.c) ---------------------------------------------------- */

struct llc_maphw_walk_cfg {
    uint64_t tsc_hz;
    uint32_t threshold;     /* timed: slower = LLC miss */
    uint32_t discard_ticks; /* one access slower = interrupted: drop its batch */
    unsigned delay_nops;    /* > 0: null-op rate control */
    double rate;            /* else per-unit accesses/s, 0 = flat out */
    unsigned batch;         /* accesses per preemption check, <= journal size */
    uint32_t *journal;      /* [batch] scratch */
    uint32_t *trace;        /* optional: raw ticks of kept accesses */
    size_t trace_cap;
};

struct llc_maphw_walk_stats {
    uint64_t accesses;  /* kept */
    uint64_t discarded; /* accesses in dropped batches */
    uint64_t batches, batches_dropped;
    uint64_t late; /* paced accesses released a period or more late */
    size_t trace_n;
};

/* Walks units[0..n) interleaved (one access per unit per round, cursors[i]
 * is units[i]'s chain position, advanced) in whole rounds until dwell_s
 * has passed, timing every access: misses[units[i]] / accesses[units[i]]
 * get each kept access. A batch in which the thread was switched out
 * (getrusage) or one access exceeded discard_ticks is dropped whole: the
 * cache state it leaves behind is not the probe's alone. */
int llc_maphw_walk_timed(const struct llc_maphw_walk_cfg *c, void **cursors, const uint32_t *units,
                         size_t n, double dwell_s, uint64_t *misses, uint64_t *accesses,
                         struct llc_maphw_walk_stats *st, char *err, size_t errlen);

/* Walks one chain untimed for dwell_s, reading a counter through read()
 * around every batch; batches with a context switch, or in which read()
 * says the counter did not run all the time, are dropped. *misses and
 * *accesses get the kept batches' counter deltas and access counts. */
typedef int (*llc_maphw_counter_read)(void *ctx, uint64_t *value, bool *complete);
int llc_maphw_walk_counted(const struct llc_maphw_walk_cfg *c, void **cursor, double dwell_s,
                           llc_maphw_counter_read read, void *read_ctx, uint64_t *misses,
                           uint64_t *accesses, struct llc_maphw_walk_stats *st, char *err,
                           size_t errlen);

/* ---- threads (thread.c) ----------------------------------------------- */

/* The probe thread: pinned to one CPU; runs calls synchronously for the
 * caller, so every measurement and the perf counter live on it. */
struct llc_maphw_worker;
int llc_maphw_worker_start(int cpu, struct llc_maphw_worker **out, char *err, size_t errlen);
/* Runs fn(arg) on the worker and returns its result. */
int llc_maphw_worker_call(struct llc_maphw_worker *w, int (*fn)(void *), void *arg);
/* Joins the thread (NULL is fine). */
void llc_maphw_worker_stop(struct llc_maphw_worker *w);

/* The self-test's aggressor and the calibration co-runner: a thread
 * pinned to `cpu` chasing a pointer chain until stopped, flat out
 * (period 0) or one access per `period` TSC ticks (llc_maphw_pace). */
struct llc_maphw_aggressor;
int llc_maphw_aggressor_start(int cpu, void *head, double period, struct llc_maphw_aggressor **out,
                              char *err, size_t errlen);
/* Stops and joins it; returns the accesses it made (0 for NULL). */
uint64_t llc_maphw_aggressor_stop(struct llc_maphw_aggressor *a);

/* ---- the occupancy search's arithmetic (occ.c) ------------------------ */

/* A batch with a context switch is dropped whole, so a paced batch must be
 * short against the scheduler's tick: at most this long. */
#define LLC_MAPHW_BATCH_SECONDS 0.002
/* Rounds of a paced call walked before its accesses count: a slow walk's
 * first rounds find its lines gone (as the simulator's WARM_ROUNDS). */
#define LLC_MAPHW_WARM_ROUNDS 2

/* Lines walked in unit u: `full` (the walk for the group, llc_maphw_walk_for)
 * when llc_walk is NULL, else the L2's share (full - llc_ways) plus
 * llc_walk[u], at least 1. */
unsigned llc_maphw_unit_walk(unsigned full, unsigned llc_ways, const uint8_t *llc_walk, uint32_t u);
/* Accesses per batch for units walked together, each paced at rate
 * accesses/s: as many as fit in batch_s, at least 1, at most max; max
 * when unpaced (rate 0). */
unsigned llc_maphw_batch_for(double rate, size_t units, double batch_s, unsigned max);
/* A paced call of dwell_s seconds: its first LLC_MAPHW_WARM_ROUNDS rounds
 * of a `ways`-line walk at rate accesses per unit per second warm up
 * (*warm_s, at most half the dwell), the rest counts (*count_s). rate 0:
 * no warm-up. */
void llc_maphw_warm_split(double dwell_s, double rate, unsigned ways, double *warm_s,
                          double *count_s);
/* The pace probe_set asks for against the one the slow idle walk was
 * checked at: 0 if they agree (within 1e-9 relative), else -EINVAL or
 * -ENOTSUP (nothing checked) with "<backend>: <why>" in err. */
int llc_maphw_pace_checked(const char *backend, double asked, double checked, bool passed,
                           const char *check_text, char *err, size_t errlen);

/* ---- the calibration co-runner's lines (corunner.c) -------------------- */

/* Whether line id `cand` is congruent with the unit being filled: the
 * eviction test against its set (1 yes, 0 no, < 0 error). */
typedef int (*llc_maphw_congruent_fn)(void *ctx, uint32_t cand, char *err, size_t errlen);
/* Picks up to `want` lines of lines[0..n) for one unit: a known physical
 * address with set index `index`, not marked in used[] (the probe's own
 * sets, lines already picked), and congruent by test(); at most max_tests
 * candidates tested. Picked ids go to out[] and are marked used. Returns
 * how many were found (*tested: how many tested), or test()'s error. */
int llc_maphw_pick_congruent(const struct llc_evset_line *lines, size_t n, uint8_t *used,
                             unsigned line_size, unsigned sets_per_slice, uint32_t index,
                             unsigned want, unsigned max_tests, llc_maphw_congruent_fn test,
                             void *ctx, uint32_t *out, unsigned *tested, char *err, size_t errlen);
/* The touch order of a co-runner holding held[i * per_unit ..] for unit i
 * (n units): out[] gets the first lines + share[i] of each unit (share NULL:
 * none) interleaved, line 0 of each unit, then line 1, ..., so every set is
 * touched evenly and in turn and the last lines of each unit in the cycle,
 * the ones its L2 keeps, come last. Returns how many entries. */
size_t llc_maphw_corunner_order(void *const *held, size_t n, unsigned per_unit, unsigned lines,
                                const unsigned *share, void **out);

/* ---- the shared backend state (setup.c, selftest.c) ---------------- */

struct llc_arena;
struct maphw;

/* Measures units on the worker, the backend's way; same contract as
 * llc_map_backend_ops.measure, without the target check. */
typedef int (*llc_maphw_measure_fn)(struct maphw *m, const uint32_t *units, size_t n,
                                    double dwell_s, uint64_t *misses, uint64_t *accesses, char *err,
                                    size_t errlen);

struct maphw {
    struct llc_map_backend be; /* handed out; freed with the rest by release */
    struct llc_map_hw_options opt;
    const char *name; /* "timing" / "pmu" */
    int probe_cpu, other_cpu;
    uint64_t tsc_hz;
    struct llc_maphw_worker *worker;
    /* memory and eviction sets */
    struct llc_arena *arena;
    struct llc_evset_line *lines;
    size_t n_lines;
    struct llc_evset_oracle *oracle;
    struct llc_evset_calibration cal;
    struct llc_evset_finder *finder;
    struct llc_evset_result *sets;
    unsigned group;         /* G lines per set */
    uint32_t units, usable; /* units, units with a verified set */
    uint32_t *perm;         /* [units * group] walk order per unit */
    void **head, **cursor;  /* [units]: chain start, position */
    unsigned *linked;       /* [units]: chain length now linked */
    uint32_t *l2_counts;    /* [l2_sets] scratch */
    uint32_t *journal;      /* walk batch scratch */
    unsigned batch;
    /* timing */
    uint32_t threshold, discard_ticks, l2_bound;
    uint64_t last_recheck, rechecks;
    /* pmu */
    int fd;
    uint64_t enabled, running; /* the counter's times at the last read */
    char event[200];
    llc_maphw_measure_fn measure;
    /* occupancy search (probe_set): LLC lines walked per unit ([units],
     * NULL = full walks) and the pace (accesses per unit per second, 0 =
     * opt's); the slow idle walk's pace and verdict */
    uint8_t *llc_walk;
    double occ_rate;
    double slow_rate;
    bool slow_passed;
    /* Removes a line from every cache level, on the probe thread (clflush;
     * tests record instead). */
    void (*flush)(const void *line);
    struct llc_maphw_corunner *corunner;
};

/* Allocates the state and the backend struct inside it. */
int llc_maphw_new(const char *name, const struct llc_map_hw_options *opt, struct maphw **out,
                  char *err, size_t errlen);
/* Clock (TSC rate), CPUs and the pinned probe thread. */
int llc_maphw_start(struct maphw *m, char *err, size_t errlen);
/* On the worker: arena, calibration, eviction sets for every unit,
 * chains. -EIO when too few sets verify, with the figures. */
int llc_maphw_build(struct maphw *m, char *err, size_t errlen);
/* Walk orders and chains for every unit with a verified set in m->sets
 * (part of llc_maphw_build; alone for tests that bring their own sets). */
int llc_maphw_chains(struct maphw *m, char *err, size_t errlen);
/* Relinks units[0..n)'s chains where they differ from what is linked:
 * `full` lines each, or per unit llc_maphw_unit_walk(full, .., m->llc_walk,
 * u) while probe_set has walks set. A unit whose walk shrinks has the
 * lines it stops using flushed through m->flush. */
void llc_maphw_relink(struct maphw *m, const uint32_t *units, size_t n, unsigned full);
/* Lines of unit u's walk order from position `to` up to `from` (the ones a
 * walk shrinking from `from` to `to` lines stops using), into out[];
 * returns how many. */
size_t llc_maphw_dropped(const struct maphw *m, uint32_t u, unsigned from, unsigned to, void **out);
/* clflush of one line (m->flush by default); a no-op off x86-64. */
void llc_maphw_clflush(const void *line);
/* The walk configuration of a measure over `units` units walked together:
 * the pace probe_set set (clock-paced, short batches, no null ops) or
 * opt's; journal and threshold from m. */
void llc_maphw_walk_cfg(const struct maphw *m, size_t units, struct llc_maphw_walk_cfg *c);
/* The walk length for measuring units[0..n) together. */
unsigned llc_maphw_walk_for(struct maphw *m, const uint32_t *units, size_t n);
/* Idle-walk check (on the worker), fills be.walk_check; -EIO on failure. */
int llc_maphw_walk_check(struct maphw *m, char *err, size_t errlen);
/* The slow idle-walk check (on the worker), for search_cycle_s > 0: 16
 * units walked together at the search's pace (llc_ways / search_cycle_s
 * per unit), warmed, then timed: with nothing else running their lines
 * must stay LLC hits that slowly. Fills be.slow_walk_check, m->slow_rate
 * and m->slow_passed; -EIO on failure. 0 without a search. */
int llc_maphw_slow_check(struct maphw *m, char *err, size_t errlen);
/* The self-test (aggressor thread vs idle control) through m->measure. */
int llc_maphw_selftest(struct maphw *m, struct llc_map_selftest *st, char *err, size_t errlen);
/* Up to `want` arena lines outside every probe set that the eviction test
 * puts with unit's set (on the worker: the test times loads). used
 * (n_lines, may be NULL) marks lines already taken and gets the picks. */
int llc_maphw_find_congruent(struct maphw *m, uint32_t unit, unsigned want, uint8_t *used,
                             void **out, unsigned *found, unsigned *tested, char *err,
                             size_t errlen);
/* Frees everything: threads joined, arena unmapped, pool restored. */
void llc_maphw_free(struct maphw *m);
/* The backend ops both share: measure dispatches m->measure to the probe
 * thread and says 1 once the target has ended; release frees m. */
int llc_maphw_measure_op(void *ctx, const uint32_t *units, size_t n, double dwell_s,
                         uint64_t *misses, uint64_t *accesses, char *err, size_t errlen);
void llc_maphw_release_op(void *ctx);
/* probe_set for both (occ.c): checks the pace against the slow idle
 * walk's, keeps the walks for the next measure (relinked and flushed
 * there, on the probe thread). */
int llc_maphw_probe_set_op(void *ctx, double per_set_rate, size_t together, const uint8_t *llc_walk,
                           char *err, size_t errlen);
/* corunner for both (corunner.c): lines found once per unit list (on
 * the worker), a paced thread on m->other_cpu. */
int llc_maphw_corunner_op(void *ctx, const uint32_t *units, size_t n, unsigned lines,
                          double touch_rate, char *err, size_t errlen);
/* Stops the co-runner and frees its lines (NULL is fine). */
void llc_maphw_corunner_free(struct llc_maphw_corunner *c);
/* The backends' measures, for tests that bring their own sets (pmu reads
 * its counter from m->fd: count, time enabled, time running). */
int llc_maphw_timing_measure(struct maphw *m, const uint32_t *units, size_t n, double dwell_s,
                             uint64_t *misses, uint64_t *accesses, char *err, size_t errlen);
int llc_maphw_pmu_measure(struct maphw *m, const uint32_t *units, size_t n, double dwell_s,
                          uint64_t *misses, uint64_t *accesses, char *err, size_t errlen);
/* Whether the caller's target lives. */
bool llc_maphw_target_alive(void *ctx);
/* Calls the caller's progress hook, if any. */
void llc_maphw_progress(const struct maphw *m, const char *stage, double fraction);
/* -EINTR when the caller's stop flag is set. */
int llc_maphw_stopped(const struct maphw *m, char *err, size_t errlen);

#endif
