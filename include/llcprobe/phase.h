/* Online program phase detection (ScarPhase) and phase-guided profiling.
 *
 * Pure computation: no I/O, no global state, deterministic given a seed.
 * The algorithm and every constant are in docs/METHODS.md §10-§11; the
 * section numbers below (§n) refer to it.
 *
 * Typical use, window by window (live sampler or offline trace replayer):
 *
 *     llc_phase_config_default(&cfg);
 *     llc_phase_detector_create(&cfg, &det, err, sizeof err);
 *     llc_phase_schedule_create(&scfg, &sched, err, sizeof err);
 *     for each window:
 *         profile = llc_phase_schedule_decide(sched, predicted_so_far);
 *         sample the window with period P_base * llc_phase_detector_multiplier(det)
 *         llc_phase_detector_feed_ips(det, ips, n, &w, err, sizeof err);
 *         llc_phase_schedule_observe(sched, w.phase, profile, err, sizeof err);
 *         predicted_so_far = w.predicted;
 *     llc_phase_detector_summary(det, &sum);
 *
 * Phase ids are small non-negative integers handed out in order of first
 * stable appearance; LLC_PHASE_TRANSITION and LLC_PHASE_UNCLASSIFIED are the
 * only negative labels a window can get.
 */
#ifndef LLCPROBE_PHASE_H
#define LLCPROBE_PHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A window that joined (or founded) a cluster that has not yet reached the
 * transition threshold (docs/METHODS.md §10.6 step 4). */
#define LLC_PHASE_TRANSITION (-1)
/* Too few samples (docs/METHODS.md §10.4) or a low-rate window that matched nothing
 * (docs/METHODS.md §10.8). */
#define LLC_PHASE_UNCLASSIFIED (-2)

/* Signature vector length for sampled code addresses (docs/METHODS.md §10.4). */
#define LLC_PHASE_BUCKETS 32
#define LLC_PHASE_MIN_SAMPLES 10

/* ---- Signature vectors (docs/METHODS.md §10.4, §10.5) ---------------------------------------- */

/* GF(2) projection mask of bucket bit b (0..4): splitmix64(0x5CA4 + b), where
 * splitmix64(x) is the first output of the SplitMix64 generator seeded with x
 * (x + 0x9E3779B97F4A7C15, then the Stafford variant 13 mixer). Never change
 * these: vectors from different runs are compared. */
uint64_t llc_phase_hash_mask(unsigned bit);
/* Code granule hashed (docs/METHODS.md §10.4 (ours)): addresses are hashed by their
 * 64-byte line, ip >> 6. A per-instruction projection scatters one basic
 * block's instructions over all 32 buckets (neighbouring addresses differ in
 * the low bits, and each mask bit flips the parity), so any sizeable code
 * region gives a near-uniform vector and phases lose their contrast; a block
 * counted as a whole lands in one bucket, as in the hashed BBV of the ScarPhase paper
 * Fig. 2 (Sherwood). A line holds one to a few blocks. */
#define LLC_PHASE_IP_GRANULE_BITS 6
/* Bucket of one code address: bit b = parity((ip >> LLC_PHASE_IP_GRANULE_BITS)
 * & mask_b). */
unsigned llc_phase_hash_ip(uint64_t ip);
/* Bucket counts of n code addresses, normalised to sum 1 (all zeros if n is
 * 0). Returns n; the caller decides whether n reaches LLC_PHASE_MIN_SAMPLES. */
size_t llc_phase_signature_ips(const uint64_t *ips, size_t n, double out[LLC_PHASE_BUCKETS]);
/* Divides a non-negative vector by its sum (L1 norm 1). Returns -EINVAL if an
 * element is negative or not finite, -EDOM if the sum is 0 (v untouched). */
int llc_phase_normalize(double *v, size_t dim);
/* Manhattan distance halved, d~ = sum |u_i - v_i| / 2, in [0,1] for
 * normalised vectors. */
double llc_phase_distance(const double *u, const double *v, size_t dim);

/* ---- Leader-follower clustering (docs/METHODS.md §10.6) ------------------------------------ */

struct llc_phase_lf_config {
    size_t dim;                    /* vector length, > 0 */
    double theta;                  /* join if d~ < theta; in (0,1] */
    unsigned transition_threshold; /* T_tr: members before a stable id; 0 or 1 = at once */
    size_t max_clusters; /* 0 = unbounded; else K_max, evicting the least recently matched */
};
/* Bounded variant: the evicted cluster's id is retired and the new cluster
 * gets the next id (as lib does), so an id never names two code regions; a
 * phase that comes back after eviction gets a new id. */

/* What one vector did to (or found in) the clustering. */
struct llc_phase_match {
    int phase;       /* stable id, LLC_PHASE_TRANSITION, or LLC_PHASE_UNCLASSIFIED (match only) */
    long cluster;    /* cluster slot, -1 if none */
    double distance; /* d~ to the nearest centroid before any update, -1 if there was none */
    bool created;    /* a new cluster was founded by this vector */
    bool evicted;    /* creating it replaced the least recently matched cluster */
};

struct llc_phase_lf;

int llc_phase_lf_create(const struct llc_phase_lf_config *cfg, struct llc_phase_lf **out, char *err,
                        size_t errlen);
void llc_phase_lf_destroy(struct llc_phase_lf *lf);
/* Learns from a normalised vector: joins the nearest cluster (ties -> lowest
 * slot) if d~ < theta, updating its centroid as a running mean, else founds a
 * new cluster. */
int llc_phase_lf_classify(struct llc_phase_lf *lf, const double *v, struct llc_phase_match *m,
                          char *err, size_t errlen);
/* Match only (low-rate windows, docs/METHODS.md §10.8): nearest cluster with d~ < threshold,
 * reported without touching any centroid, count or recency; phase
 * LLC_PHASE_UNCLASSIFIED if none is close enough. */
int llc_phase_lf_match(const struct llc_phase_lf *lf, const double *v, double threshold,
                       struct llc_phase_match *m);
size_t llc_phase_lf_count(const struct llc_phase_lf *lf);  /* clusters (slots in use) */
size_t llc_phase_lf_phases(const struct llc_phase_lf *lf); /* stable ids handed out */
/* Per-slot views; NULL / 0 / LLC_PHASE_UNCLASSIFIED for a slot out of range. */
const double *llc_phase_lf_centroid(const struct llc_phase_lf *lf, size_t cluster);
uint64_t llc_phase_lf_members(const struct llc_phase_lf *lf, size_t cluster);
int llc_phase_lf_phase(const struct llc_phase_lf *lf, size_t cluster);

/* ---- Next-phase predictors (docs/METHODS.md §10.7) ----------------------------------------- */

enum llc_phase_predictor_kind {
    LLC_PHASE_PREDICT_LAST_VALUE = 0,
    LLC_PHASE_PREDICT_RUN_LENGTH = 1,
};

struct llc_phase_predictor_config {
    enum llc_phase_predictor_kind kind;
    unsigned table_size;           /* run-length table entries (256) */
    unsigned pattern_length;       /* newest run-length records in a pattern (2) */
    unsigned confidence_threshold; /* table entry used when confidence >= this (1) */
    unsigned confidence_max;       /* counters saturate in [0, this] (100) */
    unsigned history;              /* run-length records kept (20) */
};

struct llc_phase_prediction {
    int phase;           /* predicted phase of the next window */
    unsigned confidence; /* counter of the entry that gave it */
};

struct llc_phase_predictor;

void llc_phase_predictor_config_default(struct llc_phase_predictor_config *cfg);
int llc_phase_predictor_create(const struct llc_phase_predictor_config *cfg,
                               struct llc_phase_predictor **out, char *err, size_t errlen);
void llc_phase_predictor_destroy(struct llc_phase_predictor *p);
/* Feeds the actual phase of the window that just ended (any label, negative
 * ones included: they are part of the history like any phase). */
void llc_phase_predictor_update(struct llc_phase_predictor *p, int phase);
/* Prediction for the next window. Before any update: LLC_PHASE_UNCLASSIFIED,
 * confidence 0. The last-value fallback's confidence is a per-phase counter
 * that rises while the phase stays and falls when it changes (lib). */
struct llc_phase_prediction llc_phase_predictor_predict(const struct llc_phase_predictor *p);

/* ---- Per-window classifier (docs/METHODS.md §10.4-§10.8 together) -----------------------------
 */

struct llc_phase_config {
    size_t dim;                    /* LLC_PHASE_BUCKETS for code addresses; any for dense vectors */
    double theta;                  /* 0.2 */
    double theta_dsr;              /* 0.5: low-rate windows match only, with this threshold */
    unsigned transition_threshold; /* 0 */
    size_t max_clusters;           /* 0 = unbounded */
    uint64_t min_samples;          /* fewer -> UNCLASSIFIED (10) */
    bool dynamic_rate;             /* docs/METHODS.md §10.8 (on) */
    unsigned max_multiplier;       /* 8; a power of two */
    struct llc_phase_predictor_config predictor; /* run-length by default */
};

/* Everything known about one window once it is classified. */
struct llc_phase_window {
    uint64_t window;          /* 0-based index */
    uint64_t samples;         /* samples behind the vector */
    unsigned multiplier;      /* sample-rate multiplier this window was sampled with */
    int phase;                /* stable id, LLC_PHASE_TRANSITION or LLC_PHASE_UNCLASSIFIED */
    long cluster;             /* cluster slot, -1 if none */
    double distance;          /* d~ to the nearest centroid, -1 if none was compared */
    bool new_cluster;         /* this window founded a cluster */
    int predicted;            /* predicted phase of the next window */
    unsigned confidence;      /* the prediction's confidence */
    unsigned next_multiplier; /* multiplier to sample the next window with */
};

struct llc_phase_summary {
    uint64_t windows;
    uint64_t samples;          /* total over all windows */
    size_t phases;             /* stable ids handed out */
    size_t clusters;           /* clusters alive at the end */
    uint64_t unclassified;     /* windows labelled LLC_PHASE_UNCLASSIFIED */
    uint64_t transition;       /* windows labelled LLC_PHASE_TRANSITION */
    uint64_t low_rate;         /* windows sampled with multiplier > 1 */
    double unclassified_share; /* unclassified / windows */
    double mean_rate;          /* mean of 1/multiplier over windows: sample rate vs static */
    uint64_t predictions; /* windows 1..n-1, each checked against the prediction made before it */
    uint64_t predictions_correct;
    double prediction_accuracy; /* correct / predictions, 0 if none */
    uint64_t phase_changes;     /* windows whose label differs from the previous window's */
};

struct llc_phase_detector;

void llc_phase_config_default(struct llc_phase_config *cfg);
int llc_phase_detector_create(const struct llc_phase_config *cfg, struct llc_phase_detector **out,
                              char *err, size_t errlen);
void llc_phase_detector_destroy(struct llc_phase_detector *d);
/* Multiplier the caller must sample the next window with (1 if dynamic rate is
 * off). The next feed assumes the window was sampled at exactly this rate. */
unsigned llc_phase_detector_multiplier(const struct llc_phase_detector *d);
/* One window of sampled code addresses (cfg.dim must be LLC_PHASE_BUCKETS). */
int llc_phase_detector_feed_ips(struct llc_phase_detector *d, const uint64_t *ips, size_t n,
                                struct llc_phase_window *out, char *err, size_t errlen);
/* One window as a dense non-negative vector of cfg.dim weights (e.g. an
 * exp-bbv basic-block vector), normalised here; `samples` is the count behind
 * it (sampled branches, or instructions for a BBV) for the min_samples rule. */
int llc_phase_detector_feed_dense(struct llc_phase_detector *d, const double *weights, size_t dim,
                                  uint64_t samples, struct llc_phase_window *out, char *err,
                                  size_t errlen);
/* Every window fed so far, in order; valid until the next feed or destroy. */
const struct llc_phase_window *llc_phase_detector_windows(const struct llc_phase_detector *d,
                                                          size_t *n);
void llc_phase_detector_summary(const struct llc_phase_detector *d, struct llc_phase_summary *s);
/* Windows per stable phase id: counts[i] for id i < n. Returns the number of
 * phases (may exceed n: then only n are written). */
size_t llc_phase_detector_phase_counts(const struct llc_phase_detector *d, uint64_t *counts,
                                       size_t n);
const struct llc_phase_lf *llc_phase_detector_clusters(const struct llc_phase_detector *d);

/* ---- Phase-guided profiling schedules (docs/METHODS.md §11) ----------------------------- */

enum llc_phase_schedule_kind {
    LLC_PHASE_SCHEDULE_ONCE = 0, /* docs/METHODS.md §11.1: each phase once, after K_seen windows */
    LLC_PHASE_SCHEDULE_SPREAD =
        1, /* docs/METHODS.md §11.2: exponential gaps per phase, period doubling */
    LLC_PHASE_SCHEDULE_PERIODIC = 2, /* baseline: exponential gaps, phase-blind */
};

struct llc_phase_schedule_config {
    enum llc_phase_schedule_kind kind;
    unsigned k_seen;      /* windows of a phase before it is eligible (2) */
    unsigned g0;          /* spread: first period in windows of the phase (1) */
    unsigned g_max;       /* spread: period cap (64) */
    double periodic_mean; /* periodic: mean gap in windows (8) */
    uint64_t seed;
};

struct llc_phase_schedule;

void llc_phase_schedule_config_default(struct llc_phase_schedule_config *cfg);
int llc_phase_schedule_create(const struct llc_phase_schedule_config *cfg,
                              struct llc_phase_schedule **out, char *err, size_t errlen);
void llc_phase_schedule_destroy(struct llc_phase_schedule *s);
/* Before a window: whether to profile it, given its predicted phase. Does not
 * change the schedule; observe() does. */
bool llc_phase_schedule_decide(const struct llc_phase_schedule *s, int predicted);
/* After the window: its actual phase and whether it was profiled (samples are
 * credited to the actual phase, docs/METHODS.md §11.2 misprediction rule). */
int llc_phase_schedule_observe(struct llc_phase_schedule *s, int actual, bool profiled, char *err,
                               size_t errlen);
/* Per-phase state (0 for a phase never observed). */
uint64_t llc_phase_schedule_seen(const struct llc_phase_schedule *s, int phase);
uint64_t llc_phase_schedule_profiled(const struct llc_phase_schedule *s, int phase);
unsigned llc_phase_schedule_period(const struct llc_phase_schedule *s, int phase); /* g_p */
long llc_phase_schedule_countdown(const struct llc_phase_schedule *s, int phase);  /* next_p;
                                                        periodic: the global countdown, any phase */

/* docs/METHODS.md §11.1 whole-program estimate from profiled windows: per phase the median of
 * its profiled values, weighted by the phase's window count over the phases
 * that have one. Negative labels are not phases. `coverage` = share of
 * windows whose phase was profiled. -EDOM if nothing was profiled. */
int llc_phase_profile_estimate(const int *phases, const bool *profiled, const double *values,
                               size_t n, double *estimate, double *coverage, char *err,
                               size_t errlen);

/* ---- Quality metrics (docs/METHODS.md §10.9, the ScarPhase paper Fig. 3c)
 * ----------------------------- */

/* CoV of a per-window metric (CPI) under a labelling: sum over phases of
 * (n_p/n) sd_p/|mean_p| with the population sd. All negative labels
 * (UNCLASSIFIED, TRANSITION) form one junk phase. -EDOM if a phase has mean 0
 * and sd > 0. */
int llc_phase_cov(const int *phases, const double *metric, size_t n, double *cov, char *err,
                  size_t errlen);
/* Corrected CoV: windows in runs of length 1 go to a virtual phase whose CoV
 * is the whole-program CoV (junk windows stay in the junk phase). */
int llc_phase_ccov(const int *phases, const double *metric, size_t n, double *ccov, char *err,
                   size_t errlen);
/* Mean absolute element-wise difference of the two sequences' similarity
 * matrices (d~ of every window pair i < j). a: n rows of dim_a, b: n rows of
 * dim_b, row-major; each row is normalised to sum 1 on the fly (an all-zero
 * row stays zero). Needs n >= 2. */
int llc_phase_similarity_diff(const double *a, size_t dim_a, const double *b, size_t dim_b,
                              size_t n, double *diff, char *err, size_t errlen);
/* Adjusted Rand index of two labellings of n items (any int labels); 1 when
 * both are trivial (n < 2, or the index is undefined and they agree). */
int llc_phase_ari(const int *a, const int *b, size_t n, double *ari, char *err, size_t errlen);

/* ---- Aligning two cuttings of one run (docs/METHODS.md §10.9) ----------- */

/* Two analyses of one run may cut it differently: exp-bbv ends an interval
 * at the first block boundary past its size, a trace's windows are exact,
 * reference-count windows hold any number of instructions. Window i of a
 * sequence covers [sum of len[<i], sum of len[<=i]) of a common unit
 * (instructions); both sequences start at 0. */
#define LLC_PHASE_NO_WINDOW SIZE_MAX
struct llc_phase_alignment {
    uint64_t total_a, total_b; /* summed lengths */
    double total_diff;         /* |total_a - total_b| / max(total_a, total_b), 0 if both 0 */
    size_t matched;            /* windows of a with a partner in b */
};
/* map[i] (n_a entries) = the window of b overlapping window i of a the most
 * (ties: the earlier), LLC_PHASE_NO_WINDOW if that covers less than half of
 * window i (i mostly past b's end; or of length 0). -EOVERFLOW if a total
 * passes 2^64 - 1. */
int llc_phase_align(const uint64_t *len_a, size_t n_a, const uint64_t *len_b, size_t n_b,
                    size_t *map, struct llc_phase_alignment *info, char *err, size_t errlen);
/* ARI of a's labels against the labels of their partners in b (map from
 * llc_phase_align), over the `compared` windows of a that have one. */
int llc_phase_ari_aligned(const int *labels_a, size_t n_a, const int *labels_b, size_t n_b,
                          const size_t *map, double *ari, size_t *compared, char *err,
                          size_t errlen);

#endif
