/* Per-set miss distributions: histogram, Gaussian and other fits, goodness
 * of fit, dispersion check, key-point set selection, whole-cache estimators
 * and the sampling baselines they are compared with.
 *
 * Pure computation: no I/O, no global state, deterministic given a seed.
 * The algorithm and every constant are in docs/METHODS.md §1-§5;
 * the section numbers below (§n) refer to it.
 *
 * Inputs are per-unit arrays `x[k]`, `0 <= k < n`, with an optional
 * exclusion mask (`excluded[k] != 0` drops unit k; NULL = none). Excluded
 * units are outside the population everywhere: they are not binned, not
 * fitted, never selected, and totals and scale factors count only the
 * "usable" units. Values must be finite.
 *
 * Typical use:
 *
 *     llc_fit_options_default(&opt);
 *     llc_fit_report_create(miss, n, mask, &opt, &rep, err, sizeof err);
 *     llc_fit_select_config_default(&scfg);
 *     llc_fit_select(miss, n, mask, &scfg, &sel, err, sizeof err);
 *     ... measure only sel->unit[0..sel->n-1] in a later run -> x_sel[] ...
 *     llc_fit_estimate(sel, x_sel, &est, err, sizeof err);
 *     llc_fit_selection_destroy(sel); llc_fit_report_destroy(rep);
 *
 * Errors: negative errno codes (-EINVAL bad argument, -ENOMEM, -ENODATA no
 * usable data or no signal) with a message in err. A NaN in a result means
 * "undefined" and always comes with a status that says why.
 *
 * GSL is called only inside the ranges where its routines converge, so
 * GSL's error handler (which aborts by default) is never reached from
 * valid input; the module does not touch the handler itself.
 */
#ifndef LLCPROBE_FIT_H
#define LLCPROBE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default seed of the selection's hash tie-break (docs/METHODS.md §3.2). */
#define LLC_FIT_DEFAULT_SEED UINT64_C(0x9E3779B97F4A7C15)
/* The paper accepts the Gaussian when R^2 exceeds this (docs/METHODS.md §2.3). */
#define LLC_FIT_R2_ACCEPT 0.85
/* Below this test-retest correlation, set-to-set variation is mostly noise (docs/METHODS.md §1.5).
 */
#define LLC_FIT_RETEST_MIN 0.3
/* Significance level of the Poisson dispersion test (docs/METHODS.md §2.4). */
#define LLC_FIT_DISP_ALPHA 0.01
/* At most five key points (docs/METHODS.md §3.1). */
#define LLC_FIT_MAX_KEYS 5

/* Outcome of a fit or check. */
enum llc_fit_status {
    LLC_FIT_OK = 0,
    LLC_FIT_DEGENERATE,     /* sigma = 0, b == a, or R undefined (a vector without variance) */
    LLC_FIT_NOT_APPLICABLE, /* the data are outside the family's support (e.g. lognormal with x <=
                               0) */
    LLC_FIT_NO_CONVERGENCE, /* the iterative estimator did not converge */
};
const char *llc_fit_status_name(enum llc_fit_status s);

/* ---- Histogram (docs/METHODS.md §2.1) ---------------------------------------------------- */

enum llc_fit_binning {
    LLC_FIT_BINS_PAPER,   /* m equal real-valued bins over [a,b] (rates) */
    LLC_FIT_BINS_INTEGER, /* integer-aware bins for raw counts; values must be whole numbers */
    LLC_FIT_BINS_AUTO,    /* INTEGER if every usable value is a whole number, else PAPER */
};
const char *llc_fit_binning_name(enum llc_fit_binning b);

/* m = max(1, lround(1.87 (n-1)^0.4)); 1 for n <= 1. */
size_t llc_fit_bin_count(size_t n);

struct llc_fit_histogram {
    enum llc_fit_binning binning; /* PAPER or INTEGER (AUTO resolved) */
    size_t n;                     /* usable units binned (N) */
    size_t m;                     /* bins (m, or m' in integer mode) */
    double a, b;                  /* min and max of the data */
    double width;                 /* w; 0 when b == a in PAPER mode */
    double *edges;                /* m+1 edges e_i */
    double *centres;              /* m bin midpoints x_i */
    size_t *counts;               /* m counts v_i (empty bins kept) */
    double *density;              /* m densities y_i = v_i / (N w); NaN if w == 0 */
    bool degenerate;              /* b == a: one bin, nothing to fit */
};

int llc_fit_histogram_create(const double *x, size_t n, const uint8_t *excluded,
                             enum llc_fit_binning binning, struct llc_fit_histogram **out,
                             char *err, size_t errlen);
void llc_fit_histogram_destroy(struct llc_fit_histogram *h);
/* Bin of value x by the rule of docs/METHODS.md §2.1, clamped to [0, m-1] for values outside [a,b].
 */
size_t llc_fit_histogram_bin(const struct llc_fit_histogram *h, double x);
/* True if every usable value is a whole number (AUTO binning uses this). */
bool llc_fit_all_integers(const double *x, size_t n, const uint8_t *excluded);

/* ---- Distribution families (docs/METHODS.md §2.2, §2.6) ---------------------------------- */

/* Every family is scored on the same x and the same histogram, so R^2, LL
 * and AIC compare across families. The discrete families' LL is of the pmf
 * per unit of x (for integer data this is on a par with a density). */
enum llc_fit_family {
    LLC_FIT_GAUSSIAN = 0,   /* mu, sigma                      (sample moments, N-1) */
    LLC_FIT_GAMMA,          /* alpha (shape), theta (scale)   (MLE; MoM if any x <= 0 or CV < ~1e-7;
                               NOT_APPLICABLE if alpha > 1e10: not evaluable in doubles) */
    LLC_FIT_POISSON,        /* lambda                         (raw counts only) */
    LLC_FIT_POISSON_EVENTS, /* lambda, ways: e = round(x/W) ~ Poisson(lambda) (docs/METHODS.md
                             §2.4), pmf(e) spread evenly over the W-wide x interval that rounds to
                             e; needs options.ways */
    LLC_FIT_BETA,           /* alpha, beta, lo = a - w/2, hi = b + w/2 (MoM, optional MLE) */
    LLC_FIT_STUDENT_T,      /* mu, scale, nu                  (EM over the nu grid) */
    LLC_FIT_LOGNORMAL,      /* zeta = mean ln x, sigma = sd ln x (MLE, 1/N; x > 0 only) */
    LLC_FIT_FAMILY_COUNT,
};
#define LLC_FIT_FAMILY_NONE (-1)
const char *llc_fit_family_name(enum llc_fit_family f);
/* Name of parameter i of family f ("mu", "alpha", ...), NULL past the last. */
const char *llc_fit_param_name(enum llc_fit_family f, size_t i);

enum llc_fit_method {
    LLC_FIT_METHOD_NONE = 0,
    LLC_FIT_METHOD_SAMPLE_MOMENTS, /* mean and N-1 variance: the paper's "MLE" (docs/METHODS.md
                                      §2.2) */
    LLC_FIT_METHOD_MLE,
    LLC_FIT_METHOD_MOM, /* method of moments */
    LLC_FIT_METHOD_EM,
};
const char *llc_fit_method_name(enum llc_fit_method m);

#define LLC_FIT_MAX_PARAMS 4

struct llc_fit_family_result {
    enum llc_fit_family family;
    enum llc_fit_status status;
    enum llc_fit_method method;
    size_t n;       /* data points used */
    size_t nparams; /* entries of param[] (see llc_fit_param_name) */
    size_t nfree;   /* parameters estimated from the data: p in the AIC */
    double param[LLC_FIT_MAX_PARAMS];
    double loglik;       /* LL; -INFINITY if a point has zero density */
    double aic;          /* 2 p - 2 LL */
    double r, r2;        /* binned Pearson R and R^2 (docs/METHODS.md §2.3); NaN if undefined */
    unsigned iterations; /* of the iterative estimator, 0 for closed forms */
};

struct llc_fit_options {
    enum llc_fit_binning binning; /* default AUTO */
    bool bin_integrated; /* model Y_i as bin mass / w instead of density at x_i (docs/METHODS.md
                            §2.2) */
    bool beta_mle;       /* refine the beta MoM by 2-D Newton (docs/METHODS.md §2.6) */
    unsigned ways;       /* W for the dispersion check and POISSON_EVENTS; 0 = unknown */
};
void llc_fit_options_default(struct llc_fit_options *opt);

/* Fits one family to the usable x and scores it against histogram h (made
 * from the same data). model, if not NULL, receives the h->m model values
 * Y_i; they, LL, AIC and R are NaN unless the parameters were estimated
 * (status OK, or DEGENERATE because R is undefined). */
int llc_fit_family(enum llc_fit_family f, const double *x, size_t n, const uint8_t *excluded,
                   const struct llc_fit_histogram *h, const struct llc_fit_options *opt,
                   struct llc_fit_family_result *out, double *model, char *err, size_t errlen);
/* The fitted density (or, for the Poisson families, the pmf spread per unit
 * of x) at x; NaN if the result holds no parameters. For plotting. */
double llc_fit_family_pdf(const struct llc_fit_family_result *r, double x);
/* Pearson R between the histogram densities y and model values Y over m bins.
 * Returns LLC_FIT_OK, or LLC_FIT_DEGENERATE with *r = NaN when either vector
 * has no variance or m < 2. */
enum llc_fit_status llc_fit_pearson(const double *y, const double *Y, size_t m, double *r);

/* ---- Dispersion check (docs/METHODS.md §2.4) and test-retest (docs/METHODS.md §1.5)
 * --------------------- */

enum llc_fit_verdict {
    LLC_FIT_VERDICT_NO_SIGNAL,      /* mean 0 */
    LLC_FIT_VERDICT_TOO_FEW,        /* fewer than 2 units */
    LLC_FIT_VERDICT_UNCHECKED,      /* dispersion NOT_APPLICABLE (no W) and no failed retest */
    LLC_FIT_VERDICT_COUNTING_NOISE, /* Disp not significantly above 1 */
    LLC_FIT_VERDICT_UNDERDISPERSED, /* Disp significantly below 1 */
    LLC_FIT_VERDICT_MOSTLY_NOISE,   /* overdispersed, but structure < LLC_FIT_RETEST_MIN of the
                                       variance */
    LLC_FIT_VERDICT_NOT_REPEATABLE, /* test-retest r < LLC_FIT_RETEST_MIN */
    LLC_FIT_VERDICT_STRUCTURED,     /* sets differ beyond counting noise */
};
const char *llc_fit_verdict_name(enum llc_fit_verdict v);
/* One plain-words sentence a CLI can print. */
const char *llc_fit_verdict_text(enum llc_fit_verdict v);

struct llc_fit_dispersion {
    enum llc_fit_status status; /* DEGENERATE if fewer than 2 units or mean(e) == 0 */
    size_t n;
    unsigned ways;          /* W */
    double mean_events;     /* mean(e), e_k = miss_k / W */
    double var_events;      /* var(e), N-1 */
    double disp;            /* var(e) / mean(e) */
    double cv_true;         /* sqrt(max(0, var - mean)) / mean */
    double structure_share; /* max(0, 1 - 1/Disp): share of var(e) that is not Poisson noise */
    double p_over;          /* P(chi2_{N-1} >= (N-1) Disp): Poisson noise explains this spread */
    double p_under;         /* P(chi2_{N-1} <= (N-1) Disp) */
};

/* miss must be raw counts (not rates) for e_k to be event counts. */
int llc_fit_dispersion(const double *miss, size_t n, const uint8_t *excluded, unsigned ways,
                       struct llc_fit_dispersion *out, char *err, size_t errlen);
/* Pearson r of two sweeps over the usable units; NaN if undefined. */
double llc_fit_test_retest(const double *sweep1, const double *sweep2, size_t n,
                           const uint8_t *excluded);
/* retest_r: NaN if only one sweep is available. */
enum llc_fit_verdict llc_fit_verdict(const struct llc_fit_dispersion *d, double retest_r);

/* ---- All families at once ------------------------------------------------ */

struct llc_fit_report {
    struct llc_fit_options options;
    struct llc_fit_histogram *hist;
    struct llc_fit_family_result fit[LLC_FIT_FAMILY_COUNT]; /* indexed by family */
    double *model[LLC_FIT_FAMILY_COUNT];                    /* hist->m values Y_i each */
    int best_aic;           /* family with the lowest finite AIC, or LLC_FIT_FAMILY_NONE */
    int best_r2;            /* family with the highest finite R^2, or LLC_FIT_FAMILY_NONE */
    bool gaussian_accepted; /* Gaussian R^2 > LLC_FIT_R2_ACCEPT */
    struct llc_fit_dispersion dispersion; /* status NOT_APPLICABLE when options.ways == 0 */
};

int llc_fit_report_create(const double *x, size_t n, const uint8_t *excluded,
                          const struct llc_fit_options *opt, struct llc_fit_report **out, char *err,
                          size_t errlen);
void llc_fit_report_destroy(struct llc_fit_report *r);

/* ---- Key points and selection (docs/METHODS.md §3, §2.5) --------------------------------- */

enum llc_fit_key_mode {
    LLC_FIT_KEYS_SIGMA2,   /* start, end = mu -+ 2 sigma clipped to [a,b] (default) */
    LLC_FIT_KEYS_RANGE,    /* start, end = a, b (paper-literal) */
    LLC_FIT_KEYS_QUANTILE, /* empirical quantiles at the Gaussian's -2..2 sigma probabilities */
    /* The method's rule (docs/METHODS.md §3.1): sigma2 when the Gaussian is accepted
     * (R^2 > LLC_FIT_R2_ACCEPT), else quantile; a selection records the mode it resolved to
     * (default). */
    LLC_FIT_KEYS_AUTO,
};
const char *llc_fit_key_mode_name(enum llc_fit_key_mode m);

/* Key labels in processing order K1..K5, plus labels for the docs/METHODS.md §2.5 cases. */
enum llc_fit_key {
    LLC_FIT_KEY_PEAK = 0, /* K1 = mu */
    LLC_FIT_KEY_MINUS,    /* K2 = mu - sigma */
    LLC_FIT_KEY_PLUS,     /* K3 = mu + sigma */
    LLC_FIT_KEY_START,    /* K4 */
    LLC_FIT_KEY_END,      /* K5 */
    LLC_FIT_KEY_EVEN,     /* sigma == 0: evenly spaced unit */
    LLC_FIT_KEY_ALL,      /* fewer usable units than points * per_point: every unit */
    /* QUANTILE mode: K1..K5 are empirical quantiles, not mu and sigma
     * points; labelled by the probability they stand for (the median, the
     * Gaussian's 15.9% point, ...), in the same processing order. */
    LLC_FIT_KEY_Q50,
    LLC_FIT_KEY_Q16,
    LLC_FIT_KEY_Q84,
    LLC_FIT_KEY_Q02,
    LLC_FIT_KEY_Q98,
};
#define LLC_FIT_KEY_COUNT (LLC_FIT_KEY_Q98 + 1)
const char *llc_fit_key_name(enum llc_fit_key k);
/* The label of key j (0-based, processing order) in mode m. */
enum llc_fit_key llc_fit_key_label(enum llc_fit_key_mode m, size_t j);

/* The whole-cache estimator a selection is read with (docs/METHODS.md §4). */
enum llc_fit_estimator {
    LLC_FIT_EST_STRATIFIED_RATIO = 0, /* per stratum, the profile total times the selected units'
                                         ratio of new to profile values (separate ratio estimator);
                                         exact on the profile itself (default) */
    LLC_FIT_EST_STRATIFIED,           /* per stratum, its share times the selected units' mean
                                         (docs/METHODS.md §4) */
    LLC_FIT_EST_RATIO,    /* the profile total times one ratio over all selected units */
    LLC_FIT_EST_SCALE_UP, /* the paper's N / n times the sum */
    LLC_FIT_EST_COUNT,
};
const char *llc_fit_estimator_name(enum llc_fit_estimator e);
/* 0 and *out, or -1 for a name that is none of the above. */
int llc_fit_estimator_parse(const char *name, enum llc_fit_estimator *out);

enum llc_fit_select_status {
    LLC_FIT_SELECT_KEYS = 0, /* normal key-point selection */
    LLC_FIT_SELECT_EVEN,     /* sigma == 0: evenly spaced units */
    LLC_FIT_SELECT_ALL,      /* fewer usable units than wanted: all of them */
};
const char *llc_fit_select_status_name(enum llc_fit_select_status s);

struct llc_fit_select_config {
    enum llc_fit_key_mode mode;   /* default AUTO */
    enum llc_fit_binning binning; /* of the histogram behind the bin rule; default AUTO */
    size_t points;                /* keys used, K1..K_points, 1..5; default 5 */
    size_t per_point;             /* units per key c; default 5 */
    uint64_t seed;                /* default LLC_FIT_DEFAULT_SEED */
    unsigned ways;                /* W, to store Disp with the selection; 0 = unknown (Disp NaN) */
    enum llc_fit_estimator estimator; /* recorded with the selection; default STRATIFIED_RATIO */
    bool pick_mean; /* per key, the sets nearest the mean of the key's stratum (not
                     * nearest the key): sets typical of their stratum; default true
                     * (false: the paper's sets nearest the key, docs/METHODS.md §3.2) */
};
void llc_fit_select_config_default(struct llc_fit_select_config *cfg);

/* Strata for the stratified estimator (docs/METHODS.md §4): one per distinct key value. */
struct llc_fit_strata {
    size_t count;
    double key[LLC_FIT_MAX_KEYS];     /* distinct key values, increasing */
    double upper[LLC_FIT_MAX_KEYS];   /* upper boundary of stratum g (midpoint); +INFINITY for the
                                         last */
    double pi[LLC_FIT_MAX_KEYS];      /* share of usable profile units in stratum g */
    size_t members[LLC_FIT_MAX_KEYS]; /* usable profile units in stratum g */
    double
        profile_sum[LLC_FIT_MAX_KEYS]; /* sum of their profile values; NaN if unknown (old files) */
    size_t centre;                     /* stratum holding mu: empty strata merge towards it */
};
/* Stratum of profile value v: the first g with v < upper[g]. */
size_t llc_fit_stratum_of(const struct llc_fit_strata *s, double v);

struct llc_fit_selection {
    enum llc_fit_select_status status;
    enum llc_fit_key_mode mode;
    enum llc_fit_estimator estimator; /* the headline estimator of later runs */
    bool pick_mean;                   /* sets picked at their key's stratum mean */
    enum llc_fit_binning binning;     /* resolved */
    uint64_t seed;
    size_t points, per_point;
    size_t n_units;         /* length of the input arrays */
    size_t n_usable;        /* non-excluded units: the population */
    double mu, sigma, a, b; /* of the usable profile values; sigma with N-1 */
    double profile_total;   /* sum of usable profile values (G_profile) */
    double r2;              /* Gaussian R^2 on the histogram below; NaN if undefined */
    double disp;            /* docs/METHODS.md §2.4 Disp if config.ways > 0, else NaN */
    size_t bins;            /* histogram bins behind the bin rule */
    size_t nkeys;
    double key[LLC_FIT_MAX_KEYS];   /* key values in processing order K1.. */
    double key_p[LLC_FIT_MAX_KEYS]; /* QUANTILE mode: the key's probability; else NaN */
    struct llc_fit_strata strata;
    size_t n;                /* selected units */
    size_t *unit;            /* n unit ids, key by key */
    enum llc_fit_key *label; /* n key labels */
    double *profile;         /* n profile values miss_k */
    size_t *stratum;         /* n strata of the profile values */
};

/* Returns -ENODATA when no unit is usable or mu == 0 (no measurable probe
 * misses: docs/METHODS.md §2.5 says report and stop). */
int llc_fit_select(const double *miss, size_t n, const uint8_t *excluded,
                   const struct llc_fit_select_config *cfg, struct llc_fit_selection **out,
                   char *err, size_t errlen);
void llc_fit_selection_destroy(struct llc_fit_selection *s);

/* ---- Estimators (docs/METHODS.md §4) ---------------------------------------------------- */

/* T = (population / n) * sum x_sel. */
int llc_fit_scale_up(const double *x_sel, size_t n, double population, double *total, char *err,
                     size_t errlen);
/* T = profile_total * sum x_sel / sum profile_sel; -EDOM if sum profile_sel == 0. */
int llc_fit_ratio(const double *x_sel, const double *profile_sel, size_t n, double profile_total,
                  double *total, char *err, size_t errlen);

struct llc_fit_stratified {
    double total;                /* stratum means (LLC_FIT_EST_STRATIFIED) */
    double ratio_total;          /* stratum ratios (LLC_FIT_EST_STRATIFIED_RATIO); NaN without
                                    the strata's profile sums */
    size_t count;                /* strata (as in llc_fit_strata) */
    double pi[LLC_FIT_MAX_KEYS]; /* weights after merging empty strata (0 for merged-away ones) */
    size_t sampled[LLC_FIT_MAX_KEYS]; /* selected units per stratum before merging */
};
/* total: T = population * sum_g pi_g * mean_{k in S_g} x_k, S_g by the
 * units' profile values; an empty S_g gives its weight (and its profile
 * sum) to its neighbour towards the centre stratum.
 * ratio_total: T = sum_g P_g * sum_{S_g} x / sum_{S_g} profile, P_g the
 * stratum's profile sum; a stratum whose selected units all read 0 in the
 * profile takes its mean term instead. Applied to the profile itself it
 * gives back the profile's total. */
int llc_fit_stratified_total(const struct llc_fit_strata *s, const double *profile_sel,
                             const double *x_sel, size_t n, double population,
                             struct llc_fit_stratified *out, char *err, size_t errlen);

struct llc_fit_estimates {
    double scale_up;         /* paper */
    double stratified;       /* stratum means (docs/METHODS.md §4) */
    double stratified_ratio; /* stratum ratios; NaN without the strata's profile sums */
    double ratio;            /* NaN if the selected profile values sum to 0 */
    double headline;         /* the selection's estimator */
    struct llc_fit_stratified strata;
};
/* All three for a selection; x_sel holds the new values of sel->unit[], in order. */
int llc_fit_estimate(const struct llc_fit_selection *sel, const double *x_sel,
                     struct llc_fit_estimates *out, char *err, size_t errlen);

/* ---- Baselines and deviation (docs/METHODS.md §5) ---------------------------------------- */

/* Sum of the usable x: the Global total G. */
double llc_fit_global_total(const double *x, size_t n, const uint8_t *excluded);
/* n_pick distinct usable units by partial Fisher-Yates driven by
 * xoshiro256** seeded (through splitmix64) with seed. */
int llc_fit_random_units(size_t n, const uint8_t *excluded, size_t n_pick, uint64_t seed,
                         size_t *units, char *err, size_t errlen);
/* n_pick consecutive usable units from start on (excluded ones skipped,
 * wrapping past n-1). */
int llc_fit_continuous_units(size_t n, const uint8_t *excluded, size_t start, size_t n_pick,
                             size_t *units, char *err, size_t errlen);

/* Paper eq. 8. defined is false when G == 0; then percent is NaN. */
struct llc_fit_deviation {
    double abs_diff; /* |T - G| */
    double percent;  /* |T - G| / G * 100 */
    bool defined;
};
struct llc_fit_deviation llc_fit_deviation(double total, double global);

/* Deviation of scale-up over repeated baseline picks against G of the same x. */
struct llc_fit_baseline_summary {
    size_t trials;
    double global;
    double first_total, first_percent, first_abs; /* seed 0 / start 0 */
    double mean_percent, worst_percent;           /* NaN when G == 0 */
    double mean_abs, worst_abs;
};
/* Random-n with seeds 0..seeds-1. */
int llc_fit_eval_random(const double *x, size_t n, const uint8_t *excluded, size_t n_pick,
                        size_t seeds, struct llc_fit_baseline_summary *out, char *err,
                        size_t errlen);
/* Continuous-n over every aligned window start = j n_pick, j < floor(n / n_pick). */
int llc_fit_eval_continuous(const double *x, size_t n, const uint8_t *excluded, size_t n_pick,
                            struct llc_fit_baseline_summary *out, char *err, size_t errlen);

#endif
