/* Eviction sets: for every LLC set unit (slice, index), a group of lines
 * that are congruent (same slice and same index), found by timing.
 *
 * The stress probe needs, per set unit, G congruent lines, where
 *   G = W_LLC          on an inclusive LLC,
 *   G = W_L2 + W_LLC   on an exclusive (victim) LLC, so that a cyclic walk
 *                      keeps W_L2 of them in the L2 and is served by the LLC.
 * Index bits come from physical addresses; the slice hash is unknown, so
 * congruence is decided by eviction tests against an oracle:
 *
 *   oracle    "access these addresses in order, then time a load of the
 *             victim", a flush, and a calibrated hit/miss threshold. Two
 *             implementations: the simulator (latency model, optional noise
 *             agent) and real hardware (rdtscp-timed loads, clflush).
 *   test      load the victim, walk the candidates (shuffled, several
 *             passes), time the victim; repeated, decided by vote.
 *   reduce    Vila, Koepf, Morales (S&P 2019) group testing: split into G+1
 *             groups, drop one whose removal keeps eviction, backtrack when
 *             noise led astray.
 *   verify    a set counts only if it evicts a congruent victim in at least
 *             verify_min of verify_trials trials.
 *   prune     lines the new set evicts join its class and leave the pool, so
 *             all slices of an index come out of one pool.
 *   reuse     the same frames at another line offset of the page form a
 *             candidate set of another index; verified, never assumed.
 *   solve     if verified classes fit a linear XOR slice hash, solve it once
 *             over GF(2) and compute every remaining set from physical
 *             addresses (verified as configured).
 *
 * A slice hash is observable by eviction only up to a relabelling of the
 * slices at each index (index bits add a constant per index), so solved
 * masks cover address bits above the index bits, and slice labels are
 * consistent within one index, not across indexes.
 */
#ifndef LLCPROBE_EVSET_H
#define LLCPROBE_EVSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct llc_sim;

#define LLC_EVSET_MAX_HASH_BITS 6     /* up to 64 slices */
#define LLC_EVSET_NO_PADDR UINT64_MAX /* physical address unknown */

/* One candidate line: addr is what the oracle accesses (a virtual address on
 * hardware, a physical or agent-virtual address in the simulator), paddr its
 * physical address (LLC_EVSET_NO_PADDR if unknown). */
struct llc_evset_line {
    uint64_t addr;
    uint64_t paddr;
};

/* ---- oracle ------------------------------------------------------------- */

struct llc_evset_oracle_ops {
    /* Accesses addrs[0..n) in order (repeats allowed), then times one load of
     * victim; 0 and *ticks, or a negative code with a message. */
    int (*timed_walk)(void *ctx, const uint64_t *addrs, size_t n, uint64_t victim, uint32_t *ticks,
                      char *err, size_t errlen);
    /* Removes addr from every cache level. */
    void (*flush)(void *ctx, uint64_t addr);
    void (*destroy)(void *ctx);
};

struct llc_evset_oracle {
    const struct llc_evset_oracle_ops *ops;
    void *ctx;
    uint32_t threshold; /* a timed load slower than this (ticks) missed the LLC */
};

/* Destroys an oracle made by one of the constructors below (NULL is fine). */
void llc_evset_oracle_destroy(struct llc_evset_oracle *o);

/* Threshold calibration from two latency samples: loads known to hit the
 * LLC and loads known to go to memory. */
struct llc_evset_calibration {
    uint32_t threshold; /* minimises misclassified samples; middle of ties */
    uint32_t hit_median, miss_median;
    uint32_t hit_p90, miss_p10;
    double error_rate; /* misclassified fraction of all samples at threshold */
    bool separable;    /* error_rate <= 5% and miss_median > 1.5 * hit_median */
    size_t hits, misses;
};
/* Sorts both arrays in place. 0, or -EINVAL if either is empty. */
int llc_evset_calibrate(uint32_t *hit, size_t n_hit, uint32_t *miss, size_t n_miss,
                        struct llc_evset_calibration *out, char *err, size_t errlen);

/* Simulator oracle. The simulator's latency model must be enabled. */
struct llc_evset_sim_config {
    unsigned agent;     /* agent issuing the probe's accesses */
    bool virtual_addrs; /* addrs are that agent's virtual addresses */
    /* Background traffic: noise_agent (!= agent) issues on average noise_rate
     * accesses to uniformly random lines of [noise_base, noise_base +
     * noise_bytes) after every probe access. noise_rate 0 = none. */
    unsigned noise_agent;
    double noise_rate;
    uint64_t noise_base, noise_bytes;
    uint64_t seed;
    /* 0 = calibrate from the latency histograms of LLC hits and memory loads
     * of a short random stream (levels known from the simulator). */
    uint32_t threshold;
};
void llc_evset_sim_config_default(struct llc_evset_sim_config *c);
/* The oracle keeps a pointer to sim, which must outlive it. If calib is not
 * NULL and the threshold is calibrated, it receives the calibration. */
int llc_evset_oracle_sim(struct llc_sim *sim, const struct llc_evset_sim_config *cfg,
                         struct llc_evset_oracle **out, struct llc_evset_calibration *calib,
                         char *err, size_t errlen);

/* Hardware oracle (x86-64: rdtscp/lfence timing, clflush). addrs are virtual
 * addresses of the caller's memory. */
struct llc_evset_hw_config {
    size_t l2_bytes;        /* private L2 size; a walk of 1.5x this makes
                               LLC hits for calibration. 0 = 1 MiB */
    unsigned calib_samples; /* per class, 0 = 400 */
    uint32_t threshold;     /* 0 = calibrate */
};
void llc_evset_hw_config_default(struct llc_evset_hw_config *c);
/* Measures LLC-hit and memory latencies of this machine. Returns 0 if they
 * separate; -EIO with the measured figures in err if not; -ENOTSUP where
 * there is no x86-64 timing. *out is filled whenever something was measured. */
int llc_evset_hw_selfcheck(const struct llc_evset_hw_config *cfg, struct llc_evset_calibration *out,
                           char *err, size_t errlen);
/* Calibrates (unless cfg->threshold is set) and refuses (-EIO) when LLC hits
 * and memory loads do not separate. */
int llc_evset_oracle_hw(const struct llc_evset_hw_config *cfg, struct llc_evset_oracle **out,
                        struct llc_evset_calibration *calib, char *err, size_t errlen);

/* Lines of a caller's memory with physical addresses from
 * /proc/self/pagemap (LLC_EVSET_NO_PADDR where the kernel hides frames).
 * *out (free()) gets bytes / line_size lines; returns how many have a paddr. */
int llc_evset_arena_lines(const void *base, size_t bytes, unsigned line_size,
                          struct llc_evset_line **out, size_t *n, char *err, size_t errlen);

/* ---- finder ------------------------------------------------------------- */

struct llc_evset_params {
    /* geometry */
    unsigned line_size;        /* 64 */
    unsigned sets_per_slice;   /* power of two */
    unsigned slices;           /* classes per index, >= 1 */
    unsigned llc_ways;         /* W_LLC */
    unsigned l2_ways, l2_sets; /* private L2 below the LLC (0, 0 if none) */
    /* Exclusive (victim) LLC: a set needs G = l2_ways + llc_ways lines, and
     * congruence tests append a tail of 2 * l2_ways lines that share the
     * victim's L2 set but not its LLC index (needs l2_sets < sets_per_slice),
     * so every tested line is pushed out of the L2 into the LLC and only
     * LLC-congruent lines count: a clean "at least W_LLC" group test. */
    bool victim_llc;
    unsigned page_size; /* physically contiguous unit of the arena, for
                           reuse across offsets; 4096 */
    /* eviction test */
    unsigned trials;     /* repetitions per test (odd), 5 */
    double vote;         /* fraction of trials that must evict, 0.8: noise
                            mostly adds evictions, so demand more than a
                            majority */
    unsigned traversals; /* passes over the candidates per trial, 2 */
    /* verification */
    unsigned verify_trials; /* 20 */
    double verify_min;      /* 0.9 */
    /* reduction */
    unsigned max_backtracks; /* per reduction, 64 */
    unsigned max_failures;   /* failed victims per index before giving up, 0 = 2 * slices */
    unsigned pool_max;       /* candidate lines per index, 0 = 3 * slices * (G + 1) */
    /* shortcuts */
    bool reuse_offsets;          /* true */
    bool solve_hash;             /* true */
    double hash_verify_fraction; /* of the sets computed from a solved hash, 1.0 */
    uint64_t seed;               /* 1 */
};
void llc_evset_params_default(struct llc_evset_params *p);
/* G for a hierarchy: w_llc if inclusive, w_l2 + w_llc if exclusive. */
unsigned llc_evset_group_size(bool exclusive_llc, unsigned w_l2, unsigned w_llc);

struct llc_evset_finder;

/* lines (the arena: every line the finder may use) must outlive the finder
 * and have physical addresses. */
int llc_evset_finder_create(const struct llc_evset_oracle *oracle,
                            const struct llc_evset_params *params,
                            const struct llc_evset_line *lines, size_t n_lines,
                            struct llc_evset_finder **out, char *err, size_t errlen);
void llc_evset_finder_destroy(struct llc_evset_finder *f);

/* Building blocks, on line ids (indexes into the arena). */

/* G (lines per set) and R (lines a reduction ends with: W_LLC). */
unsigned llc_evset_finder_group_size(const struct llc_evset_finder *f);
unsigned llc_evset_finder_reduce_size(const struct llc_evset_finder *f);

/* Congruence test (trials, vote; with the tail on a victim LLC): 1 = set
 * holds at least W_LLC lines congruent with victim, 0 = not, < 0 error. */
int llc_evset_evicts(struct llc_evset_finder *f, uint32_t victim, const uint32_t *set, size_t n,
                     char *err, size_t errlen);
/* Fraction of `trials` plain walks (no tail: what a stress probe walking
 * exactly these lines does) in which set evicted victim. */
int llc_evset_eviction_rate(struct llc_evset_finder *f, uint32_t victim, const uint32_t *set,
                            size_t n, unsigned trials, double *rate, char *err, size_t errlen);
/* Group-testing reduction of cands (victim not among them) to R lines that
 * evict victim (congruence test), written to out. 0, -ESRCH if cands do not
 * evict victim or the reduction gave up, other negative codes on errors. */
int llc_evset_reduce(struct llc_evset_finder *f, uint32_t victim, const uint32_t *cands, size_t n,
                     uint32_t *out, char *err, size_t errlen);

struct llc_evset_counters {
    uint64_t tests;    /* eviction tests (each up to `trials` trials) */
    uint64_t trials;   /* timed walks */
    uint64_t accesses; /* addresses walked */
    uint64_t backtracks;
};
void llc_evset_finder_counters(const struct llc_evset_finder *f, struct llc_evset_counters *out);

/* ---- linear slice hash ------------------------------------------------------ */

struct llc_evset_hash {
    unsigned bits;                           /* log2(slices), rounded up */
    uint64_t masks[LLC_EVSET_MAX_HASH_BITS]; /* label bit b = parity(paddr & masks[b]) */
    uint64_t domain;                         /* address bits the masks may use */
};

/* Solves for a linear hash explaining congruence classes: paddrs[i] belongs
 * to class class_of[i]; members of one class must share the index (line_size,
 * sets_per_slice). domain = address bits to consider (0: bits above the index
 * that vary among paddrs). Succeeds (0) only if the masks are determined
 * (solution space of dimension exactly bits) and predict every class: one
 * label per class, distinct labels for distinct classes of one index. Else
 * -EDOM (not linear / inconsistent) or -EAGAIN (underdetermined: more classes
 * needed), with the reason in err. */
int llc_evset_hash_solve(const uint64_t *paddrs, const uint32_t *class_of, size_t n,
                         unsigned line_size, unsigned sets_per_slice, unsigned slices,
                         uint64_t domain, struct llc_evset_hash *out, char *err, size_t errlen);
uint32_t llc_evset_hash_label(const struct llc_evset_hash *h, uint64_t paddr);

/* ---- the whole map ------------------------------------------------------ */

enum llc_evset_source {
    LLC_EVSET_NONE = 0, /* not found */
    LLC_EVSET_REDUCED,  /* group-testing reduction */
    LLC_EVSET_REUSED,   /* frames of a set found at another page offset */
    LLC_EVSET_HASHED,   /* computed from the solved slice hash */
};

/* One set unit, id = label * sets_per_slice + index. Its G lines were
 * verified with a plain walk (as the stress probe walks them). */
struct llc_evset_set {
    uint32_t index;
    uint32_t label;        /* slice label, consistent within one index */
    uint8_t source;        /* enum llc_evset_source */
    bool verified;         /* verification ran and passed */
    double verify_rate;    /* fraction of verification trials evicted, -1 = not run */
    size_t first;          /* lines[first .. first + group_size) of the result */
    uint64_t victim_paddr; /* the congruent line used as verification victim */
};

struct llc_evset_report {
    double build_seconds;
    uint32_t units;           /* slices * sets_per_slice */
    uint32_t found;           /* units with a set */
    uint32_t checked;         /* candidate sets whose verification ran */
    uint32_t verified;        /* units whose set passed verification */
    double verified_fraction; /* verified / units */
    double pass_rate;         /* verified / checked */
    double coverage;          /* found / units (found may include unverified
                                 hashed sets when hash_verify_fraction < 1) */
    uint32_t reduced, reduce_failures;
    uint32_t reuse_tried, reuse_held; /* offset-derived candidate sets, verified ones */
    uint32_t hashed, hash_rejected;   /* computed from the hash; failed verification */
    bool hash_solved;
    struct llc_evset_hash hash;
    char hash_note[160]; /* why the hash was not solved, if it was not */
    struct llc_evset_counters counters;
};

struct llc_evset_result {
    unsigned group_size, sets_per_slice, slices;
    struct llc_evset_set *sets;   /* units entries; source NONE where not found */
    struct llc_evset_line *lines; /* group_size lines per found set */
    struct llc_evset_report report;
};

/* Finds sets for all units of the arena. Units it cannot find stay NONE;
 * returns 0 unless the oracle fails. */
int llc_evset_build(struct llc_evset_finder *f, struct llc_evset_result **out, char *err,
                    size_t errlen);
void llc_evset_result_free(struct llc_evset_result *r);
/* Report lines "name: value unit" (build time, tests, fraction verified,...). */
void llc_evset_report_print(FILE *fp, const struct llc_evset_report *r);

#endif
