/* Stable names of the module's enums, as written to JSON and printed. */
#include <string.h>

#include "llcprobe/fit.h"

#define NAME_OF(table, v) \
    ((unsigned)(v) < sizeof(table) / sizeof((table)[0]) && (table)[v] ? (table)[v] : "unknown")

const char *llc_fit_status_name(enum llc_fit_status s)
{
    static const char *const names[] = {
        [LLC_FIT_OK] = "ok",
        [LLC_FIT_DEGENERATE] = "degenerate",
        [LLC_FIT_NOT_APPLICABLE] = "not-applicable",
        [LLC_FIT_NO_CONVERGENCE] = "no-convergence",
    };
    return NAME_OF(names, s);
}

const char *llc_fit_binning_name(enum llc_fit_binning b)
{
    static const char *const names[] = {
        [LLC_FIT_BINS_PAPER] = "paper",
        [LLC_FIT_BINS_INTEGER] = "integer",
        [LLC_FIT_BINS_AUTO] = "auto",
    };
    return NAME_OF(names, b);
}

const char *llc_fit_family_name(enum llc_fit_family f)
{
    static const char *const names[] = {
        [LLC_FIT_GAUSSIAN] = "gaussian",   [LLC_FIT_GAMMA] = "gamma",
        [LLC_FIT_POISSON] = "poisson",     [LLC_FIT_POISSON_EVENTS] = "poisson-events",
        [LLC_FIT_BETA] = "beta",           [LLC_FIT_STUDENT_T] = "student-t",
        [LLC_FIT_LOGNORMAL] = "lognormal",
    };
    return NAME_OF(names, f);
}

const char *llc_fit_method_name(enum llc_fit_method m)
{
    static const char *const names[] = {
        [LLC_FIT_METHOD_NONE] = "none", [LLC_FIT_METHOD_SAMPLE_MOMENTS] = "sample-moments",
        [LLC_FIT_METHOD_MLE] = "mle",   [LLC_FIT_METHOD_MOM] = "mom",
        [LLC_FIT_METHOD_EM] = "em",
    };
    return NAME_OF(names, m);
}

const char *llc_fit_verdict_name(enum llc_fit_verdict v)
{
    static const char *const names[] = {
        [LLC_FIT_VERDICT_NO_SIGNAL] = "no-signal",
        [LLC_FIT_VERDICT_TOO_FEW] = "too-few-units",
        [LLC_FIT_VERDICT_UNCHECKED] = "unchecked",
        [LLC_FIT_VERDICT_COUNTING_NOISE] = "counting-noise",
        [LLC_FIT_VERDICT_UNDERDISPERSED] = "underdispersed",
        [LLC_FIT_VERDICT_MOSTLY_NOISE] = "mostly-noise",
        [LLC_FIT_VERDICT_NOT_REPEATABLE] = "not-repeatable",
        [LLC_FIT_VERDICT_STRUCTURED] = "structured",
    };
    return NAME_OF(names, v);
}

const char *llc_fit_verdict_text(enum llc_fit_verdict v)
{
    static const char *const texts[] = {
        [LLC_FIT_VERDICT_NO_SIGNAL] =
            "no probe misses: the target's activity did not reach the probed sets",
        [LLC_FIT_VERDICT_TOO_FEW] = "too few units to judge the spread",
        [LLC_FIT_VERDICT_UNCHECKED] =
            "spread not checked against counting noise (no way count W given)",
        [LLC_FIT_VERDICT_COUNTING_NOISE] =
            "spread is consistent with counting noise: the Gaussian shape carries no "
            "information about the program",
        [LLC_FIT_VERDICT_UNDERDISPERSED] =
            "spread is smaller than counting noise: check the way count W and that the "
            "values are raw miss counts, not rates",
        [LLC_FIT_VERDICT_MOSTLY_NOISE] =
            "spread is mostly counting noise (less than 30% of the variance is structure): "
            "key-point selection is little better than random",
        [LLC_FIT_VERDICT_NOT_REPEATABLE] =
            "set-to-set variation does not repeat between sweeps (test-retest r < 0.3): "
            "key-point selection is no better than random",
        [LLC_FIT_VERDICT_STRUCTURED] =
            "spread exceeds counting noise: sets differ in activity and key-point "
            "selection can use it",
    };
    return NAME_OF(texts, v);
}

const char *llc_fit_key_mode_name(enum llc_fit_key_mode m)
{
    static const char *const names[] = {
        [LLC_FIT_KEYS_SIGMA2] = "sigma2",
        [LLC_FIT_KEYS_RANGE] = "range",
        [LLC_FIT_KEYS_QUANTILE] = "quantile",
        [LLC_FIT_KEYS_AUTO] = "auto",
    };
    return NAME_OF(names, m);
}

const char *llc_fit_key_name(enum llc_fit_key k)
{
    static const char *const names[] = {
        [LLC_FIT_KEY_PEAK] = "mu",       [LLC_FIT_KEY_MINUS] = "mu-sigma",
        [LLC_FIT_KEY_PLUS] = "mu+sigma", [LLC_FIT_KEY_START] = "start",
        [LLC_FIT_KEY_END] = "end",       [LLC_FIT_KEY_EVEN] = "even",
        [LLC_FIT_KEY_ALL] = "all",       [LLC_FIT_KEY_Q50] = "median",
        [LLC_FIT_KEY_Q16] = "q15.9",     [LLC_FIT_KEY_Q84] = "q84.1",
        [LLC_FIT_KEY_Q02] = "q2.3",      [LLC_FIT_KEY_Q98] = "q97.7",
    };
    return NAME_OF(names, k);
}

enum llc_fit_key llc_fit_key_label(enum llc_fit_key_mode m, size_t j)
{
    return (enum llc_fit_key)(m == LLC_FIT_KEYS_QUANTILE ? LLC_FIT_KEY_Q50 + j : j);
}

const char *llc_fit_estimator_name(enum llc_fit_estimator e)
{
    static const char *const names[] = {
        [LLC_FIT_EST_STRATIFIED_RATIO] = "stratified-ratio",
        [LLC_FIT_EST_STRATIFIED] = "stratified",
        [LLC_FIT_EST_RATIO] = "ratio",
        [LLC_FIT_EST_SCALE_UP] = "scale-up",
    };
    return NAME_OF(names, e);
}

int llc_fit_estimator_parse(const char *name, enum llc_fit_estimator *out)
{
    for (int e = 0; e < LLC_FIT_EST_COUNT; e++) {
        if (strcmp(name, llc_fit_estimator_name((enum llc_fit_estimator)e)) == 0) {
            *out = (enum llc_fit_estimator)e;
            return 0;
        }
    }
    return -1;
}

const char *llc_fit_select_status_name(enum llc_fit_select_status s)
{
    static const char *const names[] = {
        [LLC_FIT_SELECT_KEYS] = "keys",
        [LLC_FIT_SELECT_EVEN] = "even",
        [LLC_FIT_SELECT_ALL] = "all",
    };
    return NAME_OF(names, s);
}
