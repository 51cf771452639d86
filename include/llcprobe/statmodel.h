/* Reuse-distance statistics and cache models (StatCache, StatStack).
 *
 * Pure computation: no I/O, no global state, deterministic given a seed.
 * Formulas and resolutions are in docs/METHODS.md §6-§9; §n below refers
 * to it. Distances count intervening references (docs/METHODS.md §6.1); cache sizes are in
 * 64-byte lines and need not be integers or powers of two.
 *
 * Typical use:
 *
 *     llc_statmodel_groups_create(&groups, err, sizeof err);
 *     llc_statmodel_sampler_create(&scfg, groups, &smp, err, sizeof err);
 *     llc_statmodel_sampler_set_group(smp, phase, err, sizeof err);   // optional
 *     for each reference: llc_statmodel_sampler_access(smp, addr >> 6);
 *     llc_statmodel_sampler_finish(smp, err, sizeof err);
 *     llc_statmodel_prepare(llc_statmodel_groups_hist(groups, phase), &model, ...);
 *     n = llc_statmodel_grid(&gcfg, NULL, 0, ...); ... llc_statmodel_grid(&gcfg, lines, n, ...);
 *     llc_statmodel_curve(model, &opts, lines, n, points, err, sizeof err);
 */
#ifndef LLCPROBE_STATMODEL_H
#define LLCPROBE_STATMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Histogram buckets (docs/METHODS.md §6.4) ------------------------------------------- */

/* Distances below this have a bin each. */
#define LLC_STATMODEL_EXACT_LIMIT 1024u
/* Above it, each power of two [2^e, 2^(e+1)) is split into this many buckets. */
#define LLC_STATMODEL_SUBBUCKETS 32u
/* Every uint64_t distance maps to one of these buckets (1024 + 54 * 32). */
#define LLC_STATMODEL_BUCKETS (LLC_STATMODEL_EXACT_LIMIT + 54u * LLC_STATMODEL_SUBBUCKETS)
/* Distance of a reference that has none (first touch / never reused). */
#define LLC_STATMODEL_COLD UINT64_MAX

size_t llc_statmodel_bucket_of(uint64_t distance);
/* Smallest distance of bucket b (b < LLC_STATMODEL_BUCKETS). */
uint64_t llc_statmodel_bucket_lo(size_t b);
/* Number of distances in bucket b (1 in the exact region). */
uint64_t llc_statmodel_bucket_width(size_t b);
/* Representative distance (lo + hi - 1) / 2 with hi = lo + width. */
double llc_statmodel_bucket_mid(size_t b);

/* ---- Histogram ---------------------------------------------------------- */

/* Counts are doubles so that histograms can be scaled and averaged; a
 * sampler adds 1 per sample. Storage is allocated in small pages on first
 * use, so a histogram of a few samples stays small (time slots, windows). */
struct llc_statmodel_hist;

struct llc_statmodel_bucket_count {
    size_t bucket;
    double count;
};

int llc_statmodel_hist_create(struct llc_statmodel_hist **out, char *err, size_t errlen);
void llc_statmodel_hist_destroy(struct llc_statmodel_hist *h);
void llc_statmodel_hist_clear(struct llc_statmodel_hist *h);
/* Adds count (finite, >= 0) samples of the given distance; LLC_STATMODEL_COLD
 * adds dangling samples. -ENOMEM is the only runtime failure. */
int llc_statmodel_hist_add(struct llc_statmodel_hist *h, uint64_t distance, double count, char *err,
                           size_t errlen);
int llc_statmodel_hist_add_dangling(struct llc_statmodel_hist *h, double count, char *err,
                                    size_t errlen);
/* dst += src (dst != src). */
int llc_statmodel_hist_merge(struct llc_statmodel_hist *dst, const struct llc_statmodel_hist *src,
                             char *err, size_t errlen);
/* Multiplies every count and n_inf by factor (finite, > 0). */
int llc_statmodel_hist_scale(struct llc_statmodel_hist *h, double factor, char *err, size_t errlen);
/* Replaces h's content with the pairs (buckets in any order, repeats add up)
 * and n_inf. On error h is left empty. */
int llc_statmodel_hist_set_pairs(struct llc_statmodel_hist *h,
                                 const struct llc_statmodel_bucket_count *pairs, size_t n,
                                 double n_inf, char *err, size_t errlen);
double llc_statmodel_hist_count(const struct llc_statmodel_hist *h, size_t bucket);
double llc_statmodel_hist_dangling(const struct llc_statmodel_hist *h);
/* sum_d h(d), excluding dangling samples. */
double llc_statmodel_hist_finite(const struct llc_statmodel_hist *h);
/* N_s = finite + dangling. */
double llc_statmodel_hist_total(const struct llc_statmodel_hist *h);
/* First non-empty bucket >= from, or LLC_STATMODEL_BUCKETS if none:
 *   for (b = next(h, 0); b < LLC_STATMODEL_BUCKETS; b = next(h, b + 1)) */
size_t llc_statmodel_hist_next(const struct llc_statmodel_hist *h, size_t from);

/* Text form, one line without newline:
 *   "rdhist 1 inf=<n_inf>" followed by " <lo>:<count>" for each non-empty
 *   bucket in increasing order, <lo> = bucket_lo, counts printed exactly
 *   (%.17g; assumes the "C" LC_NUMERIC, which a program has unless it calls
 *   setlocale).
 * format returns the length (without NUL) and writes buf if cap > length;
 * buf = NULL, cap = 0 just returns the length; a too small buffer is -ENOSPC. */
int llc_statmodel_hist_format(const struct llc_statmodel_hist *h, char *buf, size_t cap, char *err,
                              size_t errlen);
/* Strict parser of that form (no extra spaces, increasing bucket edges,
 * positive finite counts, nothing after the last pair). Replaces h's content;
 * on error h is left empty and err names the offending position. */
int llc_statmodel_hist_parse(const char *text, struct llc_statmodel_hist *h, char *err,
                             size_t errlen);

/* Exact cold misses (docs/METHODS.md §7.2): a dangling sample is the last reference
 * to its line, so over a stream of refs references touching `lines`
 * distinct lines the expected dangling fraction n_inf / N_s is lines /
 * refs. Sets n_inf to the value that makes it exactly that, keeping the
 * finite samples, so the curve's large-cache end (n_inf / N_s) is the
 * exact cold miss ratio instead of the count of a few dangling samples.
 * Needs 0 < lines <= refs and, unless lines == refs, finite samples
 * (-EINVAL, h unchanged). */
int llc_statmodel_hist_set_cold(struct llc_statmodel_hist *h, uint64_t lines, uint64_t refs,
                                char *err, size_t errlen);

/* Reuse of a run that ended (docs/METHODS.md §7.7): the share of samples
 * taken like the references of the stretches [start_i, start_i + len_i)
 * of a run of `end` references whose reuse at distance d falls inside the
 * run. */
double llc_statmodel_seen_share(const double *start, const double *len, size_t n, double end,
                                double d);
/* out = h with each finite sample weighted by 1 / seen_share(its bucket's
 * middle distance), the dangling count lowered by the weight added (N_s
 * kept; at 0 the finite counts are scaled instead): the reuse of the run's
 * middle, not cut by its end. With kept in [0, 1] the dangling count is
 * kept x h's instead (a histogram of few samples taking a larger one's
 * ratio) and the finite counts are scaled to keep N_s; any other kept
 * (-1) estimates it from h. The stretches are in order and do not
 * overlap. out != h. -EINVAL for stretches outside the run, out of order
 * or holding nothing, -ENOMEM. */
int llc_statmodel_hist_uncensor(const struct llc_statmodel_hist *h, const double *start,
                                const double *len, size_t n, double end, double kept,
                                struct llc_statmodel_hist *out, char *err, size_t errlen);

/* ---- Distinct lines ----------------------------------------------------- */

/* Exact set of the lines (address >> 6) a stream touched: a bitmap per
 * touched 16 MiB of addresses. */
struct llc_statmodel_lineset;
int llc_statmodel_lineset_create(struct llc_statmodel_lineset **out, char *err, size_t errlen);
void llc_statmodel_lineset_destroy(struct llc_statmodel_lineset *s);
/* 1 if line is new, 0 if already in the set, -ENOMEM. */
int llc_statmodel_lineset_add(struct llc_statmodel_lineset *s, uint64_t line);
uint64_t llc_statmodel_lineset_count(const struct llc_statmodel_lineset *s);

/* ---- Groups: per-phase / per-window / per-slot histograms (docs/METHODS.md §7.5, §9) ------- */

/* A set of histograms keyed by an int group id (phase id, window id or time
 * slot; negative ids allowed), each with the number of memory references
 * executed while it was current (A_p of docs/METHODS.md §9). Ids are kept sorted. */
struct llc_statmodel_groups;

int llc_statmodel_groups_create(struct llc_statmodel_groups **out, char *err, size_t errlen);
void llc_statmodel_groups_destroy(struct llc_statmodel_groups *g);
/* Histogram of group id, created empty if missing. */
int llc_statmodel_groups_ensure(struct llc_statmodel_groups *g, int id,
                                struct llc_statmodel_hist **hist, char *err, size_t errlen);
/* NULL if the group does not exist. */
struct llc_statmodel_hist *llc_statmodel_groups_hist(const struct llc_statmodel_groups *g, int id);
int llc_statmodel_groups_add_refs(struct llc_statmodel_groups *g, int id, double refs, char *err,
                                  size_t errlen);
double llc_statmodel_groups_refs(const struct llc_statmodel_groups *g, int id);
size_t llc_statmodel_groups_count(const struct llc_statmodel_groups *g);
/* i-th id in increasing order (i < count). */
int llc_statmodel_groups_id_at(const struct llc_statmodel_groups *g, size_t i);
/* dst = sum of all groups' histograms (the pooled histogram of docs/METHODS.md §9). */
int llc_statmodel_groups_pool(const struct llc_statmodel_groups *g, struct llc_statmodel_hist *dst,
                              char *err, size_t errlen);
/* Exact cold misses for a mixture (docs/METHODS.md §7.2, §9): a run of refs
 * references touched `lines` distinct lines, so the reference-weighted
 * mixture's cold fraction sum_g refs_g n_inf_g / N_s,g / sum_g refs_g must be
 * lines / refs. Scales every group's dangling count by one factor (found
 * by bisection) that makes it so: each group keeps its share of the
 * sampled cold misses, their total becomes exact. Groups without samples
 * carry no weight (as in llc_statmodel_groups_curve). Needs 0 < lines <
 * refs and a group with both dangling and reused samples, or -EINVAL
 * (nothing changed). */
int llc_statmodel_groups_set_cold(struct llc_statmodel_groups *g, uint64_t lines, uint64_t refs,
                                  char *err, size_t errlen);
/* Moves group `from` into group `to` (histograms and references added, `from`
 * removed): turns window groups into phase groups once windows are classified. */
int llc_statmodel_groups_fold(struct llc_statmodel_groups *g, int from, int to, char *err,
                              size_t errlen);
/* docs/METHODS.md §9: windows grouped by phase. The i-th group of src (id order; n must be
 * src's group count) goes into group labels[i] of dst, which must be empty
 * (histograms and references added up). A negative label
 * (unclassified or transition window), and a label whose windows hold no
 * sample, is modelled with the pooled histogram of all of src's samples,
 * its references kept: the method's rule for unclassified windows, so no
 * reference drops out of the mixture. Returns how many of dst's groups got
 * the pooled histogram (>= 0), or a negative error. */
int llc_statmodel_groups_regroup(const struct llc_statmodel_groups *src, const int *labels,
                                 size_t n, struct llc_statmodel_groups *dst, char *err,
                                 size_t errlen);

/* ---- Sampler (docs/METHODS.md §6.1, §6.2) ------------------------------------------------- */

struct llc_statmodel_sampler_config {
    double rate; /* rho in (0, 1]: mean gap 1/rho references */
    uint64_t seed;
    uint64_t slot_refs; /* > 0: time-slot mode (docs/METHODS.md §7.5), group = reference index /
                           slot_refs */
    size_t watch_hint;  /* expected pending watches (table pre-size); 0 = default */
    bool log_reuses;    /* keep every finite sample (llc_statmodel_sampler_reuses) */
};

/* A finite sample: the sampled reference's index, its reuse distance and
 * the group it was taken in. */
struct llc_statmodel_reuse {
    uint64_t pos;
    uint64_t distance;
    int group;
};

struct llc_statmodel_sampler_stats {
    uint64_t refs;     /* references seen */
    uint64_t taken;    /* samples taken */
    uint64_t reused;   /* samples resolved with a finite distance */
    uint64_t dangling; /* samples still pending at finish */
    uint64_t pending;  /* watched lines now */
    uint64_t lines;    /* distinct lines referenced (exact) */
};

struct llc_statmodel_sampler;

void llc_statmodel_sampler_config_default(struct llc_statmodel_sampler_config *cfg);
/* Samples go into sink (not owned; must outlive the sampler). The first
 * group is 0 (slot 0 in slot mode). Pending watches point at the sink's
 * histograms: do not fold groups of the sink before finish. */
int llc_statmodel_sampler_create(const struct llc_statmodel_sampler_config *cfg,
                                 struct llc_statmodel_groups *sink,
                                 struct llc_statmodel_sampler **out, char *err, size_t errlen);
void llc_statmodel_sampler_destroy(struct llc_statmodel_sampler *s);
/* Group of samples taken from now on (not in slot mode). */
int llc_statmodel_sampler_set_group(struct llc_statmodel_sampler *s, int group, char *err,
                                    size_t errlen);
/* One reference to a line (address >> 6; UINT64_MAX is reserved). No
 * allocation except when a sample is taken and the watch table or a slot
 * histogram must grow; an allocation failure is kept and reported by finish
 * and status. */
void llc_statmodel_sampler_access(struct llc_statmodel_sampler *s, uint64_t line);
/* n references; returns 0 or the first error. */
int llc_statmodel_sampler_access_batch(struct llc_statmodel_sampler *s, const uint64_t *lines,
                                       size_t n, char *err, size_t errlen);
/* 0 or the sticky error of a failed allocation in access. */
int llc_statmodel_sampler_status(const struct llc_statmodel_sampler *s, char *err, size_t errlen);
/* End of stream: pending watches become dangling samples of the group they
 * were taken in, and references are credited to groups. Call once. */
int llc_statmodel_sampler_finish(struct llc_statmodel_sampler *s, char *err, size_t errlen);
void llc_statmodel_sampler_stats(const struct llc_statmodel_sampler *s,
                                 struct llc_statmodel_sampler_stats *out);
/* The finite samples so far, in the order their reuses came (log_reuses;
 * else none); valid until the next access or destroy. */
const struct llc_statmodel_reuse *llc_statmodel_sampler_reuses(
    const struct llc_statmodel_sampler *s, size_t *n);

/* ---- A phase's own references (docs/METHODS.md §12.7) -------------------- */

/* Windows in order, refs[w] (finite, >= 0) references each, labels[w] its
 * phase (negative: none). */
struct llc_statmodel_own_clock;
int llc_statmodel_own_clock_create(const double *refs, const int *labels, size_t n,
                                   struct llc_statmodel_own_clock **out, char *err, size_t errlen);
void llc_statmodel_own_clock_destroy(struct llc_statmodel_own_clock *c);
/* The label of the window holding reference index pos (-1: none, or
 * past the windows). */
int llc_statmodel_own_clock_label(const struct llc_statmodel_own_clock *c, uint64_t pos);
/* A reuse's distance in its phase's own references: of the references
 * pos + 1 .. pos + distance, those in windows labelled like pos's (past
 * the windows all count). An unlabelled start keeps the distance. */
uint64_t llc_statmodel_own_distance(const struct llc_statmodel_own_clock *c, uint64_t pos,
                                    uint64_t distance);
/* The labels (>= 0) in the order of their first window; *n of them. */
const int *llc_statmodel_own_clock_labels(const struct llc_statmodel_own_clock *c, size_t *n);
/* Of the references pos + 1 .. pos + distance, refs[j] in the windows of
 * the j-th label (refs has room for all; past the windows, the start's
 * label, as llc_statmodel_own_distance counts them); returns the rest
 * (unlabelled windows). */
double llc_statmodel_own_clock_span(const struct llc_statmodel_own_clock *c, uint64_t pos,
                                    uint64_t distance, double *refs);

/* ---- Exact reference (every reference; tests and ground truth) ---------- */

/* For each of the n references, its reuse distance (docs/METHODS.md §6.1) and LRU stack
 * distance (distinct lines in between), LLC_STATMODEL_COLD for first
 * touches. Either output may be NULL. O(n log n), O(n) memory. */
int llc_statmodel_exact_distances(const uint64_t *lines, size_t n, uint64_t *reuse, uint64_t *stack,
                                  char *err, size_t errlen);
/* Miss ratio (cold misses included) of a fully associative LRU cache of
 * lines[k] lines, from stack distances: fraction with distance >= C or cold. */
int llc_statmodel_exact_lru_curve(const uint64_t *stack, size_t n, const double *lines,
                                  size_t n_lines, double *miss_ratio, char *err, size_t errlen);

/* ---- Prepared model ----------------------------------------------------- */

/* A histogram compiled for solving: compact arrays, StatStack tables. It
 * copies what it needs; the histogram may change or go afterwards. */
struct llc_statmodel_model;

int llc_statmodel_prepare(const struct llc_statmodel_hist *h, struct llc_statmodel_model **out,
                          char *err, size_t errlen);
void llc_statmodel_release(struct llc_statmodel_model *m);
double llc_statmodel_model_total(const struct llc_statmodel_model *m);    /* N_s */
double llc_statmodel_model_dangling(const struct llc_statmodel_model *m); /* n_inf */

enum llc_statmodel_method { LLC_STATMODEL_STATCACHE = 0, LLC_STATMODEL_STATSTACK };
/* docs/METHODS.md §7.2: COUNT keeps dangling samples as certain misses that also evict;
 * IGNORE is the paper's variant (StatCache only). */
enum llc_statmodel_cold { LLC_STATMODEL_COLD_COUNT = 0, LLC_STATMODEL_COLD_IGNORE };

struct llc_statmodel_point {
    double lines;
    double bytes;      /* lines * 64 */
    double r_total;    /* misses per reference, cold included */
    double r_capacity; /* r_total - n_inf / N_s */
};

/* StatCache (docs/METHODS.md §7) at one size by GSL Brent exactly as docs/METHODS.md §7.3
 * describes: the reference solver. In IGNORE mode the equation's R is the paper's miss ratio of
 * reusing references; it is reported per reference like COUNT: r_capacity = R * finite / N_s,
 * r_total = r_capacity + n_inf / N_s. -ENODATA if the model has no samples. */
int llc_statmodel_statcache(const struct llc_statmodel_model *m, double lines,
                            enum llc_statmodel_cold cold, struct llc_statmodel_point *out,
                            char *err, size_t errlen);

/* StatStack (docs/METHODS.md §8): expected-stack-distance LRU miss ratio at C lines. */
int llc_statmodel_statstack(const struct llc_statmodel_model *m, double lines,
                            struct llc_statmodel_point *out, char *err, size_t errlen);
/* docs/METHODS.md §8.4 associativity correction for a `ways`-way cache of `lines` lines
 * (sets = lines / ways, at least 1): P(miss | d) = P(Bin(round(F(d)), 1/sets) >= ways). */
int llc_statmodel_statstack_assoc(const struct llc_statmodel_model *m, double lines, unsigned ways,
                                  struct llc_statmodel_point *out, char *err, size_t errlen);
/* m's footprint beyond `span` references follows pool's: F(d) = F_m(s) +
 * F_pool(d) - F_pool(s) for d > s, s the last bucket edge at or below span
 * (docs/METHODS.md §9). */
void llc_statmodel_splice(struct llc_statmodel_model *m, const struct llc_statmodel_model *pool,
                          double span);
/* Tail Q(d) and footprint F(d) = expected distinct lines in a window of d
 * references (docs/METHODS.md §8.2), d >= 0 real; F grows by n_inf/N_s per reference past
 * the last bucket. These are what docs/METHODS.md §12.2 uses. */
double llc_statmodel_tail(const struct llc_statmodel_model *m, double d);
double llc_statmodel_footprint(const struct llc_statmodel_model *m, double d);
/* The tables behind them: n edges (increasing distances) with Q and F at
 * each edge, linear in between, and F's slope past the last edge. Pointers
 * stay valid until release. */
void llc_statmodel_footprint_table(const struct llc_statmodel_model *m, const double **edges,
                                   const double **q, const double **f, size_t *n,
                                   double *slope_beyond);

/* ---- Size grid and working-set graph (docs/METHODS.md §7.4) ----------------------------- */

struct llc_statmodel_grid_config {
    double min_lines;          /* default 16 (1 KiB) */
    double max_lines;          /* default 2^22 (256 MiB) */
    unsigned per_octave;       /* default 8 */
    const double *extra_lines; /* machine cache sizes etc., may be NULL */
    size_t n_extra;
};

void llc_statmodel_grid_config_default(struct llc_statmodel_grid_config *cfg);
/* Sizes in lines, rounded to whole lines, sorted, deduplicated. Returns the
 * count; out = NULL, cap = 0 just counts; too small a cap is -ENOSPC. */
int llc_statmodel_grid(const struct llc_statmodel_grid_config *cfg, double *out, size_t cap,
                       char *err, size_t errlen);

struct llc_statmodel_options {
    enum llc_statmodel_method method;
    enum llc_statmodel_cold cold; /* StatCache only */
    unsigned assoc_ways;          /* StatStack only: 0 = fully associative */
    /* The stream's distinct lines when known exactly (0: unknown): a
     * cache of at least that many lines keeps every line once loaded, so
     * its misses are the cold ones only, whatever the reuse model's
     * footprint says (a phase's footprint, extrapolated past its windows,
     * can exceed the whole run's). */
    double distinct_lines;
    /* Phase mixtures (llc_statmodel_groups_curve): beyond span references,
     * a group's footprint grows as this model's (the run's pooled one)
     * does, not by extrapolating its own: a reuse longer than the group's
     * windows spans windows of other phases. NULL: each group alone. */
    const struct llc_statmodel_model *splice;
    double splice_span;
};

void llc_statmodel_options_default(struct llc_statmodel_options *o);
/* Miss-ratio curve at n sizes (any order; fastest ascending). StatCache uses
 * warm-started Newton steps, certified against the docs/METHODS.md §7.3 tolerance, with
 * Brent as fallback. Returns -ERANGE (after filling out) if the curve
 * is not non-increasing in size beyond the solver tolerance. */
int llc_statmodel_curve(const struct llc_statmodel_model *m, const struct llc_statmodel_options *o,
                        const double *lines, size_t n, struct llc_statmodel_point *out, char *err,
                        size_t errlen);
/* 0 if r_total is non-increasing as lines increase (sizes in any order,
 * tolerance tol absolute), else -ERANGE naming the first violation. */
int llc_statmodel_check_monotone(const struct llc_statmodel_point *pts, size_t n, double tol,
                                 char *err, size_t errlen);

/* ---- Mixtures: phases and time slots (docs/METHODS.md §7.5, §9) --------------------------- */

/* out[k] = sum_i w_i curve_i(lines[k]) / sum_i w_i over the models (weights
 * >= 0, sum > 0): the reference-weighted whole-program curve of docs/METHODS.md §9, or the
 * time-slot average of docs/METHODS.md §7.5. */
int llc_statmodel_mixture_curve(const struct llc_statmodel_model *const *models,
                                const double *weights, size_t n_models,
                                const struct llc_statmodel_options *o, const double *lines,
                                size_t n, struct llc_statmodel_point *out, char *err,
                                size_t errlen);

enum llc_statmodel_weighting { LLC_STATMODEL_WEIGHT_REFS = 0, LLC_STATMODEL_WEIGHT_EQUAL };

/* The mixture over all groups of g that have samples, weighted by their
 * references (REFS) or equally (EQUAL: windows of equal length). Groups
 * without samples are skipped; *skipped (may be NULL) says how many, and
 * their weight is dropped from the average. -ENODATA if no group has data. */
int llc_statmodel_groups_curve(const struct llc_statmodel_groups *g,
                               enum llc_statmodel_weighting weighting,
                               const struct llc_statmodel_options *o, const double *lines, size_t n,
                               struct llc_statmodel_point *out, size_t *skipped, char *err,
                               size_t errlen);

/* ---- StatStack on the phase timeline (docs/METHODS.md §9) --------------------------------- */

/* A reuse (t1, t2) has expected stack distance sum over the references t
 * in between of S_ph(t)(t2 - t): each reference's forward-reuse tail is
 * that of the phase of its window. Over a run of windows of one phase at
 * distances [a, b) back from t2 that is F_p(b) - F_p(a), so a sample's
 * stack distance needs each phase's footprint F_p and the sequence of
 * windows (phase, references). */
struct llc_statmodel_timeline;

struct llc_statmodel_timeline_config {
    unsigned positions; /* start points of a sample spread over its window (default 4) */
    size_t max_runs;    /* runs walked back from a reuse's end; the part of the reuse
                         * beyond them uses the reference-weighted mean footprint
                         * (default 64). Cost per sample bucket: positions * 2
                         * walks of at most max_runs footprint differences and
                         * 3 mean footprints (one look-up per phase each). */
};

void llc_statmodel_timeline_config_default(struct llc_statmodel_timeline_config *cfg);
/* phases: one group per phase id as llc_statmodel_groups_regroup made it
 * (unclassified and sample-less phases hold the pooled histogram), their
 * dangling counts final (llc_statmodel_groups_set_cold). windows: one group
 * per window, ids in time order, with the window's references and the
 * samples taken in it; labels[i] the phase id of the i-th window (a group
 * of phases). A phase with its own samples is modelled by the samples
 * taken in its windows, a pooled group by every window's samples; every
 * sample is walked from its own window. */
int llc_statmodel_timeline_create(const struct llc_statmodel_groups *phases,
                                  const struct llc_statmodel_groups *windows, const int *labels,
                                  const struct llc_statmodel_timeline_config *cfg,
                                  struct llc_statmodel_timeline **out, char *err, size_t errlen);
void llc_statmodel_timeline_destroy(struct llc_statmodel_timeline *t);
/* StatStack curves (o->method must be STATSTACK; o->assoc_ways and
 * o->distinct_lines apply as in llc_statmodel_curve): mean (may be NULL)
 * the reference-weighted mixture over the phases with samples, as
 * llc_statmodel_groups_curve; groups (may be NULL) one array per phase in
 * id order, filled for phases with samples (NULL entries skipped). */
int llc_statmodel_timeline_curve(const struct llc_statmodel_timeline *t,
                                 const struct llc_statmodel_options *o, const double *lines,
                                 size_t n, struct llc_statmodel_point *mean,
                                 struct llc_statmodel_point *const *groups, char *err,
                                 size_t errlen);

/* docs/METHODS.md §9.1 CDF error at one size: mean |ref_sorted[k] - est_sorted[k]| over n
 * windows (1-Wasserstein distance). weights (may be NULL = equal) give
 * unequal windows; each window's weight goes with its value through the
 * sort, and the two quantile functions are integrated exactly. */
int llc_statmodel_cdf_error(const double *ref, const double *est, const double *weights, size_t n,
                            double *out, char *err, size_t errlen);

/* ---- Bootstrap confidence band (docs/METHODS.md §7.6) ------------------------------------- */

struct llc_statmodel_bootstrap_config {
    unsigned replicates; /* default 200 */
    uint64_t seed;
    double lo_quantile;   /* default 0.05 */
    double hi_quantile;   /* default 0.95 */
    double cold_fraction; /* in (0, 1): n_inf / N_s is exact (llc_statmodel_hist_set_cold):
                           * replicates resample the finite samples only and keep
                           * that fraction; 0 (default): n_inf resampled too */
};

void llc_statmodel_bootstrap_config_default(struct llc_statmodel_bootstrap_config *cfg);
/* Resamples the N_s = round(total) samples of h with replacement
 * (multinomial over buckets and n_inf), solves each replicate's curve and
 * writes the per-size quantiles of r_total to lo[k], hi[k]. */
int llc_statmodel_bootstrap(const struct llc_statmodel_hist *h,
                            const struct llc_statmodel_bootstrap_config *cfg,
                            const struct llc_statmodel_options *o, const double *lines, size_t n,
                            double *lo, double *hi, char *err, size_t errlen);

#endif
