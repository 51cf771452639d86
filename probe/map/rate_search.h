/* The linear-regime probe rate search (docs/METHODS.md §1.3 as
 * docs/METHODS.md states it): find a probe rate at which the probe miss
 * ratio q = misses / accesses is small in almost every set, so that probe
 * misses stay proportional to the target's activity in the set.
 *
 * In the linear regime one foreign line costs the probe about W misses
 * whatever the probe's rate, so q falls as 1 / rate: each trial's q
 * statistics predict the rate that meets the rule, and the search jumps
 * there instead of bisecting a fixed range. A trial is whatever the caller
 * measures at one rate (a short map of the target); the search only reads
 * its q statistics (median, 95th percentile, maximum over the sets). */
#ifndef LLC_MAP_RATE_SEARCH_H
#define LLC_MAP_RATE_SEARCH_H

#include <stddef.h>

#include "llcprobe/map.h"

struct llc_map_rate_search_config {
    double start;        /* first rate tried (probe accesses per second) */
    double lo, hi;       /* rates outside [lo, hi] are never tried */
    unsigned max_trials; /* at most LLC_MAP_RATE_MAX_TRIALS */
    double p95_max;      /* the rule: q p95 <= p95_max (0.1), */
    double median_max;   /* median q <= median_max (0.05), */
    double max_max;      /* max q <= max_max (0.3): reported, not searched for, */
    double median_min;   /* median q >= median_min (0.002): a signal to read */
};
/* start 1e8, range 1e6..1e11, 6 trials, the method's bounds. */
void llc_map_rate_search_config_default(struct llc_map_rate_search_config *c);

/* One trial: measure at rate and fill t->q_median, q_p95, q_max (NaN when
 * nothing was counted). Returns 0 or a negative errno code with err set. */
typedef int (*llc_map_rate_trial_fn)(void *ctx, double rate, struct llc_map_rate_trial *t,
                                     char *err, size_t errlen);

/* Runs trials until one meets the rule (p95, median bounds), the next
 * predicted rate is within 15% of one already tried, or max_trials are
 * spent. sel gets every trial, the chosen one (the lowest rate that meets
 * the rule; else the lowest rate in the linear regime with a weak signal,
 * why saying so; else the trial nearest the regime, why saying so), its
 * rate and method "linear"; why also says when the busiest sets stay
 * above max_max.
 * sel->seconds and sel->dwell_s are left to the caller. Returns 0, or the
 * trial's error, or -ENODATA with err set when a trial counted nothing. */
int llc_map_rate_search(const struct llc_map_rate_search_config *c, llc_map_rate_trial_fn trial,
                        void *ctx, struct llc_map_rate_selection *sel, char *err, size_t errlen);

#endif
