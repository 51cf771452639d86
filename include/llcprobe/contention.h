/* Shared-LLC contention models: programs profiled alone (StatStack reuse
 * curves, references per instruction, CPI without LLC misses) predicted
 * together. docs/METHODS.md, "Shared-cache contention", gives the
 * equations; §n below refers to its subsections.
 *
 * Pure computation: no I/O, no global state, deterministic.
 *
 *   docs/METHODS.md §12.2  LRU characteristic time: solve sum_j F_j(a_j T) = C for T*,
 *       MR_i = Q_i(a_i T*), O_i = F_i(a_i T*) (Eklov et al., StatCC).
 *   docs/METHODS.md §12.3  Random replacement: misses/s mu with sum_j a_j R_j(mu) = mu,
 *       R_i(mu) = E[1 - (1 - 1/C)^(d mu / a_i)], O_i = C a_i R_i / mu.
 *   docs/METHODS.md §12.5  Performance coupling: CPI_i = CPI0_i + API_i MR_i P_i,
 *       a_i = API_i f_i / CPI_i, damped fixed point.
 *   docs/METHODS.md §12.6  Probe anchor gamma (footprint time scale), set skew from the
 *       probe's per-set CV, unprofiled co-runners (footprint lambda T).
 *   docs/METHODS.md §12.7  Phases over time: co-simulation on instruction progress.
 *   docs/METHODS.md §12.8  Baselines FOA and SDC (Chandra et al., HPCA 2005).
 *
 * Other replacement policies are approximated (llc_contention_base_policy):
 * tree-PLRU, SRRIP, BRRIP and DRRIP by the LRU equilibrium, which is what
 * the recency-based policies approach when reuse is what keeps lines; the
 * simulator comparison in scripts/eval-predict.sh measures the error.
 */
#ifndef LLCPROBE_CONTENTION_H
#define LLCPROBE_CONTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"

enum llc_contention_policy {
    LLC_CONTENTION_LRU = 0,
    LLC_CONTENTION_RANDOM,
    LLC_CONTENTION_PLRU,
    LLC_CONTENTION_SRRIP,
    LLC_CONTENTION_BRRIP,
    LLC_CONTENTION_DRRIP,
};

/* "lru" ... "drrip" <-> enum; parse returns the value or -EINVAL. */
const char *llc_contention_policy_name(enum llc_contention_policy p);
int llc_contention_policy_parse(const char *s);
/* The model a policy is predicted with: LRU or RANDOM. */
enum llc_contention_policy llc_contention_base_policy(enum llc_contention_policy p);

struct llc_contention_strata;
struct llc_contention_layout;

/* ---- docs/METHODS.md §12.7 a phase's reuses across its program's other phases ---------------- */

#define LLC_CONTENTION_EXCESS_POINTS 64

/* Lines a program's other phases add to a reuse of one of its phases, by
 * the reuse's own distance (references): the mean over the phase's
 * windows of the lines the reuse spans, each phase's footprint over its
 * own references in the span, less the phase's footprint at that
 * distance. Geometric points x; 0 at distance 0, linear between
 * points, the last value past them. With the phases' miss ratios, also
 * the misses (insertions) they add: the mean of sum_h m_h r_h over the
 * same spans (r_h: phase h's references in the span), less m_g d; used by
 * the random model (docs/METHODS.md §12.7). */
struct llc_contention_excess {
    size_t n; /* points (0: none) */
    double x[LLC_CONTENTION_EXCESS_POINTS];
    double lines[LLC_CONTENTION_EXCESS_POINTS];
    bool has_misses; /* misses[] set (the miss ratios were given) */
    double misses[LLC_CONTENTION_EXCESS_POINTS];
    /* From measured spans (own distances): the share of the reuses that
     * meet another phase at all (the rest meet none: their excess is 0),
     * so that a reuse hits as the mixture of the two, not at the mean
     * excess. */
    bool has_cross;
    double cross[LLC_CONTENTION_EXCESS_POINTS];
};

/* The excess of phase g of a program whose windows run phases
 * window_phase[w] (indices into models, n_phases of them) for
 * window_refs[w] references each; miss_ratio[h] (NULL: no misses) each
 * phase's misses per reference. Reuses start at 4 positions in each of
 * up to 64 of g's windows (evenly spread); a span counts at most 64 runs
 * as they ran, the rest by the phases' shares.
 * out->n = 0 where g has no windows or every point is 0 to 1e-9 lines
 * (and misses). */
int llc_contention_excess_build(const struct llc_statmodel_model *const *models, size_t n_phases,
                                const int *window_phase, const double *window_refs,
                                size_t n_windows, size_t g, const double *miss_ratio,
                                struct llc_contention_excess *out, char *err, size_t errlen);

/* The same from a phase's measured spans (own distances; docs/METHODS.md
 * §12.7, "Measured spans"): at each of n own distances (increasing; at
 * most LLC_CONTENTION_EXCESS_POINTS), the share of its reuses that meet
 * other phases and, over those, their references refs[k * stride + h] of
 * each model h (stride <= n_models; g's own ignored): the lines are the
 * share times sum_h F_h(refs), the misses the share times sum_h m_h refs. */
int llc_contention_excess_spans(const struct llc_statmodel_model *const *models, size_t n_models,
                                size_t g, const double *distance, const double *share,
                                const double *refs, size_t stride, size_t n,
                                const double *miss_ratio, struct llc_contention_excess *out,
                                char *err, size_t errlen);

/* The excess at own distance x (0 without points). */
double llc_contention_excess_at(const struct llc_contention_excess *e, double x);
/* The same for distances that grow from call to call: *k (0 at first)
 * keeps the point reached. */
double llc_contention_excess_next(const struct llc_contention_excess *e, size_t *k, double x);
/* The misses at own distance x (0 without them), as _at gives the lines. */
double llc_contention_excess_misses_at(const struct llc_contention_excess *e, double x);
/* The share of the spans at own distance x that meet another phase: in
 * (0, 1] with has_cross, else 1 (every span takes the mean). *k as in
 * _next (the same cursor may serve both). */
double llc_contention_excess_cross_next(const struct llc_contention_excess *e, size_t *k, double x);

/* One program in one phase. */
struct llc_contention_phase {
    /* StatStack model of the phase (not owned). NULL = unprofiled: the
     * program is known only by its footprint rate `lambda` (lines/s,
     * fp(T) = lambda T, every access a miss; docs/METHODS.md §12.6). */
    const struct llc_statmodel_model *model;
    double lambda;
    double api;     /* references per instruction (> 0 when profiled) */
    double cpi0;    /* cycles per instruction without LLC misses (> 0) */
    double penalty; /* cycles per LLC miss (>= 0) */
    double gamma;   /* probe anchor of the footprint's time scale; used with cfg.anchor */
    double cv;      /* per-set CV of the phase's set usage; used with cfg.skew */
    /* cv is the spread of lines laid out at random (docs/METHODS.md §12.3),
     * not a measured one: the skew takes these strata (not owned;
     * llc_contention_layout_strata of 1 / cv^2) instead of the 5 key
     * values. NULL: a measured CV. */
    const struct llc_contention_layout *layout;
    /* The CV of its lines per set laid out at random (pages at random: a
     * Poisson's, less a stream's lines, which press on every set alike),
     * whatever cv holds; what a co-runner's lines vary by in a program's
     * sets (cfg.skew_joint). 0: unknown or none. */
    double layout_cv;
    /* Distinct lines the phase touches in all (0 = unbounded). A finite run
     * has a finite footprint: its dangling samples are last touches, one
     * per line, so lines = n_inf / N_s x the phase's references. Caps the
     * LRU footprint, so programs that together fit the cache keep their
     * lines (T* = inf) instead of growing into it forever. */
    double lines;
    /* Cold start (docs/METHODS.md §12.2): the phase's references in its profile (0 = the
     * stationary model, cold misses spread over the run). With them, the
     * first touches a warm-up explains happen at the start (age below) and
     * only the rest (new data) are spread; see llc_contention_steady_share. */
    double references;
    /* Share of those references that were first touches in the profiled
     * run: the histogram's dangling share as recorded (a line's last touch
     * stands for its first). 0 = the model's own, which is the same unless
     * the model's histogram was uncensored (docs/METHODS.md §7.7): then the
     * model's few dangling samples describe the reuse of an endless run,
     * and the run's first touches still number these. */
    double firsts;
    /* Own references of the phase so far (0 = warm); set by the timeline. */
    double age;
    /* The age the phase starts at (0: a start from an empty cache, each of
     * its references' distances cut at its own references so far; larger:
     * data earlier phases touched first; INFINITY: warm from its first
     * window). See llc_contention_cold_age. */
    double age0;
    /* The phase's age is its program's references so far (plus age0), not
     * its own: a phase of windows from anywhere in the run (the pooled
     * one of unclassified windows), whose data is the whole program's. */
    bool program_age;
    /* Per-stratum reuse (docs/METHODS.md §12.6; not owned): when set, the
     * phase is solved per stratum of sets instead of with `model` and `cv`. */
    const struct llc_contention_strata *strata;
    /* 1 - the variance over mean of its lines per set (docs/METHODS.md
     * §12.2): 0 for lines spread at random (Poisson), 1 for as many in
     * every set. Used by the set-associative LRU equilibrium. */
    double evenness;
    /* The lines (and misses) its program's other phases add to a reuse of
     * this phase (docs/METHODS.md §12.7; not owned; NULL: none). The lines
     * are used by the set-associative LRU equilibrium, the misses by the
     * random one. */
    const struct llc_contention_excess *excess;
    /* Its misses when the phase runs alone (NULL: excess's): its other
     * phases miss less alone than beside co-runners, and a solo figure
     * (the slowdown's reference) is priced with theirs alone. */
    const struct llc_contention_excess *excess_alone;
};

/* Share of a phase's references that are first touches of new data at any
 * age: c_s = max(0, (f R - S) / (R - S)), S = sum_{n < R} q(n) the first
 * touches its warm-up explains (q = (Q - c) / (1 - c) the tail of the
 * finite reuse distances, c = n_inf / N_s of m), f = firsts (the run's
 * first touches per reference; 0 = c). 1 when nothing is reused.
 * docs/METHODS.md §12.2. */
double llc_contention_steady_share(const struct llc_statmodel_model *m, double firsts,
                                   double references);

/* The starting age a0 at which a phase that runs `run` references makes
 * `first_touches` first touches over them, with the cold start of
 * llc_contention_steady_share (c_s, k from `references`): c_s R + k (F(a0 +
 * R) - F(a0) - c R), R = run, which falls from its value at a0 = 0 (as if
 * the phase's data were its own: c R when run = references) to c_s R as a0
 * grows. 0 when first_touches is at least the first, INFINITY when it is
 * at most c_s R (to 1e-9 of R). docs/METHODS.md §12.2. */
double llc_contention_cold_age(const struct llc_statmodel_model *m, double firsts,
                               double references, double run, double first_touches);

struct llc_contention_config {
    double capacity; /* LLC lines C */
    unsigned ways;   /* W; sets = capacity / ways */
    enum llc_contention_policy policy;
    bool coupling; /* docs/METHODS.md §12.5 (else rates stay at the solo rates) */
    bool anchor;   /* docs/METHODS.md §12.6 gamma */
    bool skew;     /* docs/METHODS.md §12.6 set non-uniformity */
    /* With skew, a program taking its layout's strata or its profile's
     * (random in sets) is solved against its co-runners' lines in the same
     * sets, which vary too (strata of their combined count, from their
     * layout_cv), not against their mean (docs/METHODS.md §12.3). */
    bool skew_joint;
    /* Timeline summaries over the stretch in which every program is still
     * in its first pass (what a co-run that does not restart programs
     * measures, `sim --corun`), instead of each program's whole first pass
     * (docs/METHODS.md §12.7). */
    bool together;
    /* LRU in `ways`-way sets, lines spread over the sets at random: a reuse
     * hits with P(Pois(G(t) / sets) < ways) rather than iff G(t) < C
     * (docs/METHODS.md §12.2). Random replacement stays fully associative. */
    bool assoc;
    /* Timeline: warm tuples' coupling too starts from the previous tuple's
     * slowdowns (young ones' always does), not from the solo rates: fewer
     * steps to the same tolerance, but a warm tuple's figures then depend
     * (within that tolerance) on the tuple before it. For callers that do
     * not compare tuples with fresh solves (study; predict's pair grid
     * copies warm tuples). */
    bool guess_warm;
    /* Random replacement's R and the set-associative LRU grid's hit
     * probability interpolated on tables filled as the solves need them,
     * instead of the exact sums at every step (not owned; NULL = the exact
     * sums). See llc_contention_tables. */
    struct llc_contention_tables *tables;
    /* Lines of each core's private cache when the LLC is exclusive (a
     * victim cache it fills): the random model sees each program's lines
     * only once they left it (llc_contention_party_private). 0 =
     * inclusive. The LRU models too with exclusive_lru: exact in a fully
     * associative victim cache, but in W-way sets the lines its hits take
     * back to the L2 leave holes that later arrivals refill, so a line's
     * rank is not monotone in time and it is evicted at the first time
     * it reaches W, sooner than the shifted count says (docs/METHODS.md
     * §12.2). */
    double private_lines;
    bool exclusive_lru;
    /* With private_lines and without exclusive_lru: the LRU models shifted
     * as well, except that the set-associative grid counts every line that
     * entered the LLC during a line's wait (whole footprints; the tail
     * still shifted), an upper bound on the largest count above the line,
     * which is what evicts it in a W-way victim set (docs/METHODS.md
     * §12.2). */
    bool exclusive_entered;
    /* Timeline: a young program's window (cold start) is one segment priced
     * at its middle age unless that misprices the phase's first touches
     * over it by more than this many per reference; then it is cut where
     * the age leaves each age class (docs/METHODS.md §12.2). 0 cuts every
     * young window, INFINITY none; llc_contention_config_default: 1e-3. */
    double first_touch_tol;
};

void llc_contention_config_default(struct llc_contention_config *cfg);

/* What one program gets in a co-run (or alone). */
struct llc_contention_share {
    double miss_ratio; /* LLC misses per reference, cold included (NaN: unprofiled) */
    double miss_rate;  /* misses per second */
    double occupancy;  /* lines */
    double cpi;        /* cycles per instruction (NaN: unprofiled) */
    double rate;       /* references per second (unprofiled: lambda) */
};

struct llc_contention_info {
    double
        t_star; /* s: LRU characteristic time, random: mean line lifetime C / mu; inf = all fits */
    double mu;  /* misses per second, all programs */
    double occ_error;    /* |sum O - C| / C (0 when everything fits) */
    unsigned iterations; /* coupling iterations (0 without coupling) */
    double beta;         /* damping that converged */
    bool converged;      /* coupling converged (true without coupling) */
};

/* ---- one equilibrium at fixed rates (docs/METHODS.md §12.2, §12.3) -------------------------- */

/* A participant of one equilibrium. Footprint F(gamma * rate * T) weighted
 * by `weight` (set skew: the share of the program's lines in the sets
 * solved for, times the number of sets; 1 = uniform). */
struct llc_contention_party {
    const struct llc_statmodel_model *model; /* NULL: lambda lines/s */
    double lambda;
    double rate;      /* references per second */
    double gamma;     /* 1 = no anchor */
    double weight;    /* >= 0 */
    double lines_max; /* footprint / occupancy cap in lines before weighting (0 = none) */
    /* Cold start (docs/METHODS.md §12.2): with `cold`, the tail and footprint are those of
     * a program whose steady share of first touches is `steady` (the rest
     * at its start), `age` own references after its start (0 = warm). */
    bool cold;
    double steady;
    double age;
    /* Random replacement's R and the set-associative grid's hit
     * probability from these tables (NULL: the exact sums). */
    struct llc_contention_tables *tables;
    double evenness; /* as llc_contention_phase's */
    /* Exclusive hierarchies (docs/METHODS.md §12.2): own references a line
     * spends in the private cache after its last touch before the LLC
     * takes it (0 = inclusive; INFINITY = all the party touches fits
     * there), and the party's lines the private cache holds (F at shift).
     * Set by llc_contention_party_private. */
    double shift, shift_lines;
    /* In the set-associative LRU grid, count the party's whole footprint
     * (every line that entered the LLC during a wait) with its tail
     * shifted: llc_contention_config.exclusive_entered. */
    bool entered;
    /* As llc_contention_phase's (NULL: none). */
    const struct llc_contention_excess *excess;
    /* RRIP's scan resistance (docs/METHODS.md §12.4): a line that was hit
     * stays `protect` times as long as one that was not (0 or 1: LRU).
     * Used by the LRU equilibria; llc_contention_rrip_protect gives it. */
    double protect;
};

/* The protection factor a policy is predicted with: LLC_CONTENTION_RRIP_PROTECT
 * for SRRIP in an inclusive LLC, 0 (none) for the others. An exclusive
 * (victim) LLC hands a line that hits to the private cache, so no line
 * stays protected in it. */
double llc_contention_rrip_protect(enum llc_contention_policy p, bool exclusive);
#define LLC_CONTENTION_RRIP_PROTECT 1.8

/* Places a private cache of `lines` lines (per core, LRU) in front of an
 * exclusive LLC for party p (its model, cold start, age and lines cap
 * set): shift = the own distance at which its footprint reaches `lines`.
 * lines <= 0 clears it. */
void llc_contention_party_private(struct llc_contention_party *p, double lines);

/* Solves one equilibrium; out[i] gets miss ratio, miss rate, occupancy and
 * rate (cpi NaN). base must be LRU or RANDOM. -EDOM if a check fails (sum
 * of occupancies off by more than 1e-6 of C, miss ratio out of range). */
int llc_contention_equilibrium(const struct llc_contention_party *p, size_t n, double capacity,
                               enum llc_contention_policy base, struct llc_contention_share *out,
                               struct llc_contention_info *info, char *err, size_t errlen);

/* The LRU equilibrium of a `ways`-way cache of capacity / ways sets, lines
 * spread over the sets at random (docs/METHODS.md §12.2): a reuse hits with
 * P(Pois(G(t) / sets) < ways). The occupancies add up to at most C. */
int llc_contention_equilibrium_assoc(const struct llc_contention_party *p, size_t n,
                                     double capacity, unsigned ways,
                                     struct llc_contention_share *out,
                                     struct llc_contention_info *info, char *err, size_t errlen);

/* ---- one phase tuple (docs/METHODS.md §12.2-§12.3, §12.6) ------------------------------------ */

/* The co-run of n programs, each in phase ph[i], on cores of clock freq[i]:
 * equilibrium (+ coupling, anchor, skew as cfg says). solo[i] (may be
 * NULL) gets each program alone with the same options. Coupled, the rates
 * stop once a step of the fixed point moves none by more than
 * LLC_CONTENTION_COUPLING_TOL of itself (a rate within about that of
 * API f / CPI). */
#define LLC_CONTENTION_COUPLING_TOL 1e-4
int llc_contention_tuple(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                         const struct llc_contention_config *cfg, struct llc_contention_share *out,
                         struct llc_contention_share *solo, struct llc_contention_info *info,
                         char *err, size_t errlen);

/* The two halves of llc_contention_tuple, for callers that meet the same
 * phase in many tuples: one program alone (its solo figures and rate), and
 * the co-run started from the solo rates solo[i] (the rates it keeps
 * without coupling). */
int llc_contention_solo(const struct llc_contention_phase *ph, double freq,
                        const struct llc_contention_config *cfg, struct llc_contention_share *out,
                        char *err, size_t errlen);
int llc_contention_corun(const struct llc_contention_phase *const *ph, const double *freq, size_t n,
                         const struct llc_contention_config *cfg,
                         const struct llc_contention_share *solo, struct llc_contention_share *out,
                         struct llc_contention_info *info, char *err, size_t errlen);

/* ---- tables of the random model's R (docs/METHODS.md §12.3) ------------------ */
/* (and of P(Pois(x) < W), the set-associative LRU grid's hit probability,
 * one per W <= 64, made whole when first asked for: within 5e-13 of the
 * exact sum at W = 16, 5e-10 at W < 8, docs/METHODS.md §12.2) */

/* A prediction solves many random-replacement equilibria with the same
 * reuse models; each model's R(x) (at a capacity and an age) is then
 * interpolated between nodes of a grid in ln x (32 per octave, cubic
 * Hermite on the exact R and dR/dx), each node computed once, when a
 * query first needs it. Within 1e-9 of R's exact sum for warm phases,
 * 2e-8 for young ones (tests/contention/test_contention_rtab.c states the
 * bounds it checks); an ill-conditioned equilibrium (Phi nearly flat at
 * its root) can amplify that: docs/METHODS.md §12.3 gives what it moved.
 * Filled as it is used: one thread at a time, and the models (and the
 * phases' excesses, llc_contention_phase.excess) must stay in place and
 * unchanged while the tables live. */
struct llc_contention_tables;
int llc_contention_tables_create(struct llc_contention_tables **out, char *err, size_t errlen);
void llc_contention_tables_free(struct llc_contention_tables *t);
/* Tables made, nodes computed, queries interpolated so far. */
void llc_contention_tables_stats(const struct llc_contention_tables *t, size_t *tables,
                                 size_t *nodes, size_t *queries);

/* ---- probe combination (docs/METHODS.md §12.6) ----------------------------------------- */

/* gamma minimising sum_j (ln F(gamma a tau_j) - ln phi_hat_j)^2 by golden
 * section on ln gamma in [-3, 3]; points with phi_hat <= 0 are skipped.
 * -ENODATA (gamma = 1) if none is left. *rms (may be NULL) gets the
 * remaining log residual. */
int llc_contention_anchor(const struct llc_statmodel_model *m, double rate, const double *tau,
                          const double *phi_hat, size_t n, double *gamma, double *rms, char *err,
                          size_t errlen);
/* The anchor is accepted when |ln gamma| <= ln 1.25. */
bool llc_contention_anchor_ok(double gamma);
#define LLC_CONTENTION_ANCHOR_TOL 1.25
/* Footprint rate bound of an unprofiled program from its probe readings:
 * max_j phi_hat_j / tau_j (footprints are concave, so the smallest window
 * gives the steepest, an upper bound on pressure). */
double llc_contention_unprofiled_lambda(const double *tau, const double *phi_hat, size_t n);

/* Key values and stratum weights of the set skew (z = -2..2). */
#define LLC_CONTENTION_STRATA 5
extern const double llc_contention_stratum_z[LLC_CONTENTION_STRATA];
extern const double llc_contention_stratum_pi[LLC_CONTENTION_STRATA];

/* Strata of a layout's skew (llc_contention_phase.layout): sets holding
 * k ~ Poisson(lam) lines, in at most LLC_CONTENTION_LAYOUT_STRATA runs of
 * consecutive k of equal probability (a run of less than 1e-4 of the sets
 * goes on into the next), each at its mean k / lam (w) with its
 * probability (pi). lam <= 0 or not finite: one stratum, w = 1. */
#define LLC_CONTENTION_LAYOUT_STRATA 16
struct llc_contention_layout {
    size_t n;
    double w[LLC_CONTENTION_LAYOUT_STRATA];
    double pi[LLC_CONTENTION_LAYOUT_STRATA];
};
void llc_contention_layout_strata(double lam, struct llc_contention_layout *out);
/* The same in at most `runs` runs (1..LLC_CONTENTION_LAYOUT_STRATA). */
void llc_contention_layout_strata_runs(double lam, size_t runs, struct llc_contention_layout *out);

/* ---- per-stratum reuse (docs/METHODS.md §12.6) ----------------------------------------- */

/* A program's sets grouped by how often it uses them: each stratum has its
 * share of the LLC's sets, its share of the phase's references, and the
 * reuse of those references (distances counted in all of the phase's own
 * references, so a stratum's footprint in d references is refs x F_g(d)). */
struct llc_contention_stratum {
    const struct llc_statmodel_model *model; /* not owned; may be NULL when refs = 0 */
    double sets;                             /* (0, 1], adding up to 1 */
    double refs;                             /* [0, 1], adding up to 1 */
    double firsts;                           /* its first touches per reference (0 = the model's
                                              * own dangling share); see llc_contention_phase */
};
struct llc_contention_strata {
    size_t n; /* 1..LLC_CONTENTION_STRATA_MAX */
    const struct llc_contention_stratum *s;
};
#define LLC_CONTENTION_STRATA_MAX 8
/* Stratum combinations solved per equilibrium at most: programs whose
 * strata would exceed it are taken as uniform (their whole model). */
#define LLC_CONTENTION_STRATA_CELLS 256

/* 0, or -EINVAL / -ENODATA naming what is wrong (shares not adding up to 1,
 * a stratum with references and no samples). NULL or n = 0 is valid. */
int llc_contention_strata_check(const struct llc_contention_strata *st, char *err, size_t errlen);

/* One equilibrium with per-stratum reuse. st[i] (st may be NULL; NULL or
 * n = 0: one histogram for all sets) stratifies program i, whose party
 * p[i] gives rate, gamma, weight, cold start and lines cap; references[i]
 * (may be NULL) are its phase's references for the cold start's steady
 * share. The sets of the cache fall into cells, one per combination of
 * the stratified programs' strata (their strata independent of each
 * other), a cell holding the product of their set shares. Each cell is
 * the equilibrium of llc_contention_equilibrium (set-associative LRU with
 * ways > 0 and base LRU) over the whole cache, program i's party weighted
 * by refs_g / sets_g of its stratum in the cell (1 for uniform ones); the
 * miss ratio of i is the mean over cells weighted by i's references in
 * each, occupancy the sum over cells of the cell's share of its lines. */
int llc_contention_strata_equilibrium(const struct llc_contention_party *p,
                                      const struct llc_contention_strata *const *st,
                                      const double *references, size_t n, double capacity,
                                      enum llc_contention_policy base, unsigned ways,
                                      struct llc_contention_share *out,
                                      struct llc_contention_info *info, char *err, size_t errlen);

/* ---- baselines (docs/METHODS.md §12.8) ---------------------------------------------------- */

enum llc_contention_baseline { LLC_CONTENTION_FOA = 0, LLC_CONTENTION_SDC };

/* FOA / SDC at the programs' solo rates (no CPI feedback; the CPI in out
 * is CPI0 + API MR P at the baseline's miss ratio). Per-set profiles come
 * from StatStack: a reuse bucket goes to LRU position floor(F(d) / sets)
 * + 1, beyond `ways` to the misses. Unprofiled programs are not supported
 * (-EINVAL). */
int llc_contention_baseline(const struct llc_contention_phase *const *ph, const double *freq,
                            size_t n, const struct llc_contention_config *cfg,
                            enum llc_contention_baseline which, struct llc_contention_share *out,
                            char *err, size_t errlen);

/* ---- phases over time (docs/METHODS.md §12.7) --------------------------------------------- */

struct llc_contention_prog {
    double freq_hz;
    const struct llc_contention_phase *phases; /* n_phases */
    size_t n_phases;
    const int *window_phase;           /* index into phases, per window */
    const double *window_instructions; /* > 0 */
    size_t n_windows;
    /* The whole program as one phase (every window's reuse), one of
     * `phases` (NULL: none). Where a tuple's T* is at least the program's
     * current phase run, its co-runners see it through this footprint: a
     * line of theirs waits across its phase changes (docs/METHODS.md
     * §12.7). */
    const struct llc_contention_phase *whole;
};

/* One interval of the co-simulation in which no program changed window. */
struct llc_contention_segment {
    double t0, dt; /* s */
    size_t tuple;  /* index into the run's tuples */
};

/* A phase tuple solved once (memoised). */
struct llc_contention_tuple_result {
    /* [n] phase index per program, then [n] age class per program (-1 =
     * warm; else the key of a young age class, whose age is in age[]),
     * then [n] per program: 0, or 2 + the age class of its `whole` phase
     * when its co-runners see it through that (llc_contention_prog.whole;
     * its own figures stay its phase's) */
    int *phase;
    struct llc_contention_share *share; /* [n] co-run */
    struct llc_contention_share *solo;  /* [n] alone, same phase */
    double *age;                     /* [n] own references each phase was priced at (NAN: warm) */
    struct llc_contention_info info; /* with marks: the unmarked tuple's */
    double seconds;                  /* co-simulated time spent in this tuple */
    double min_window_s;             /* shortest phase run (s) seen with it, see warn_* */
};

struct llc_contention_prog_summary {
    double instructions, references, misses; /* first pass */
    double seconds;                          /* co-run time of the first pass */
    double solo_seconds;                     /* the same instructions alone */
    double miss_ratio;                       /* misses / references */
    double occupancy;                        /* time-weighted mean over the first pass */
    double cpi, solo_cpi, slowdown;          /* slowdown = seconds / solo_seconds */
};

struct llc_contention_run {
    size_t n; /* programs */
    size_t n_tuples;
    struct llc_contention_tuple_result *tuples;
    size_t n_segments;
    struct llc_contention_segment *segments;
    /* per segment and program: the program's current window (n per segment) */
    size_t *segment_window;
    struct llc_contention_prog_summary *summary; /* [n] */
    double total_s;
    /* Equilibrium warning (docs/METHODS.md §12.7): segments and time where T* > 10% of the
     * shortest phase run then running (consecutive windows of one phase:
     * the cache settles once per phase change, not once per window). */
    size_t warn_segments;
    double warn_seconds, worst_tstar_ratio;
    /* Segments and time in which some program's co-runners saw it through
     * its whole-program phase (llc_contention_prog.whole) */
    size_t whole_segments;
    double whole_seconds;
};

/* Co-simulates until every program has finished its windows once
 * (programs that finish earlier restart from their first window so the
 * pressure stays; their summary counts the first pass only). */
int llc_contention_timeline(const struct llc_contention_prog *progs, size_t n,
                            const struct llc_contention_config *cfg,
                            struct llc_contention_run **out, char *err, size_t errlen);
void llc_contention_run_free(struct llc_contention_run *r);

/* ---- docs/METHODS.md §12.7 evictions of a program's phases (random replacement) ---- */

/* A phase's evictions per reference alone (the miss ratios
 * llc_contention_excess_build takes for random replacement): its
 * equilibrium's insertions over its references, 0 where they do not
 * evict (its lines fit: the cache never fills). ph's own excess should be
 * unset (its own reuses only). */
int llc_contention_evictions_alone(const struct llc_contention_phase *ph, double freq,
                                   const struct llc_contention_config *cfg, double *ev, char *err,
                                   size_t errlen);
/* The same for program i's phases (indices below n_phases) in a co-run's
 * timeline: all programs' insertions while the phase ran, where they
 * evict, over its references then (the co-runners' count over the phase's
 * own time: a reuse that spans a slower phase meets more of them), from
 * the first segment on whose equilibrium fills the cache (then the
 * lines of phases that stopped running stay in it). Phases the run did
 * not meet keep ev[k]. -ENOMEM. */
int llc_contention_evictions_in(const struct llc_contention_run *run, size_t i, size_t n_phases,
                                double capacity, double *ev);

/* Phases solved alone, shared by the timelines of many groups of the same
 * programs (a study): each phase alone, warm and at each young age class,
 * is solved once for all of them (the timeline solves it the same way
 * without the cache: the figures are the same). Keyed by the phase's
 * address and clock: the phases must stay in place and unchanged while
 * the cache is used, and every timeline given it must have the same
 * configuration (-EINVAL otherwise). */
struct llc_contention_solo_cache;
int llc_contention_solo_cache_create(struct llc_contention_solo_cache **out, char *err,
                                     size_t errlen);
void llc_contention_solo_cache_free(struct llc_contention_solo_cache *c);
/* llc_contention_timeline with a solo cache (NULL: none). */
int llc_contention_timeline_cached(const struct llc_contention_prog *progs, size_t n,
                                   const struct llc_contention_config *cfg,
                                   struct llc_contention_solo_cache *cache,
                                   struct llc_contention_run **out, char *err, size_t errlen);

#endif
