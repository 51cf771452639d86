/* The timing backend: every probe access timed with fenced rdtsc; slower
 * than the calibrated LLC-hit/memory threshold counts as a miss of the
 * access's unit, so one pass can measure many units (all_at_once). */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "util/tsc.h"

/* How often the threshold is measured again while mapping, and how. */
#define RECHECK_SECONDS 2.0
#define RECHECK_SAMPLES 64

static uint64_t now_ticks(void)
{
#if LLC_HAVE_TSC
    return llc_tsc_end();
#else
    return 0;
#endif
}

static int recheck(struct maphw *m, char *err, size_t errlen)
{
    const struct llc_map_geometry *g = &m->opt.geo;
    struct llc_evset_hw_config hc;
    llc_evset_hw_config_default(&hc);
    if (g->l2_ways && g->l2_sets)
        hc.l2_bytes = (size_t)g->l2_ways * g->l2_sets * g->line_size;
    hc.calib_samples = RECHECK_SAMPLES;
    struct llc_evset_calibration cal;
    char why[LLC_ERRLEN];
    const int rc = llc_evset_hw_selfcheck(&hc, &cal, why, sizeof(why));
    if (rc < 0 && rc != -EIO) /* -EIO: measured but not separable, judged below */
        return llc_errf(err, errlen, rc, "timing: threshold re-check: %s", why);
    m->rechecks++;
    return llc_maphw_recheck(m->threshold, &cal, &m->threshold, err, errlen);
}

/* On the worker. Units without a verified set get nothing (accesses 0).
 * At the occupancy search's pace the first rounds warm the shortened
 * walks and are not counted. */
int llc_maphw_timing_measure(struct maphw *m, const uint32_t *units, size_t n, double dwell_s,
                             uint64_t *misses, uint64_t *accesses, char *err, size_t errlen)
{
    const uint64_t now = now_ticks();
    if (now - m->last_recheck > llc_maphw_ticks(m->tsc_hz, RECHECK_SECONDS)) {
        const int rc = recheck(m, err, errlen);
        if (rc < 0)
            return rc;
        m->last_recheck = now_ticks();
    }
    uint32_t *list = malloc((n ? n : 1) * sizeof(*list));
    void **cur = malloc((n ? n : 1) * sizeof(*cur));
    uint64_t *scratch = m->occ_rate > 0 ? calloc(2 * (size_t)m->units, sizeof(*scratch)) : NULL;
    int rc = 0;
    if (!list || !cur || (m->occ_rate > 0 && !scratch)) {
        rc = llc_errf(err, errlen, -ENOMEM, "timing: out of memory for %zu units", n);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (units[i] >= m->units) {
            rc = llc_errf(err, errlen, -EINVAL, "timing: unit %u out of range (%u units)", units[i],
                          m->units);
            goto out;
        }
        if (m->sets->sets[units[i]].verified)
            list[k++] = units[i];
    }
    llc_maphw_relink(m, list, k, llc_maphw_walk_for(m, list, k));
    for (size_t i = 0; i < k; i++)
        cur[i] = m->cursor[list[i]];
    struct llc_maphw_walk_cfg c;
    llc_maphw_walk_cfg(m, k, &c);
    double warm, count;
    llc_maphw_warm_split(dwell_s, m->occ_rate, m->opt.geo.llc_ways, &warm, &count);
    struct llc_maphw_walk_stats st;
    if (warm > 0)
        rc = llc_maphw_walk_timed(&c, cur, list, k, warm, scratch, scratch + m->units, &st, err,
                                  errlen);
    if (rc == 0)
        rc = llc_maphw_walk_timed(&c, cur, list, k, count, misses, accesses, &st, err, errlen);
    for (size_t i = 0; i < k; i++)
        m->cursor[list[i]] = cur[i];
out:
    free(list);
    free(cur);
    free(scratch);
    return rc;
}

static const struct llc_map_backend_ops timing_ops = {
    .measure = llc_maphw_measure_op,
    .target_alive = llc_maphw_target_alive,
    .release = llc_maphw_release_op,
    .probe_set = llc_maphw_probe_set_op,
    .corunner = llc_maphw_corunner_op,
};

static void describe(struct maphw *m)
{
    const struct llc_evset_calibration *c = &m->cal;
    char rate[96];
    if (m->opt.delay_nops) {
        const double r = llc_maphw_nop_rate(c->hit_median, m->opt.delay_nops,
                                            llc_maphw_nop_ticks(1000000), m->tsc_hz);
        snprintf(rate, sizeof(rate), "%u null ops per access (~%.3g accesses/s per set)",
                 m->opt.delay_nops, r);
    } else if (m->opt.rate > 0) {
        snprintf(rate, sizeof(rate), "TSC-paced at %.3g accesses/s per set", m->opt.rate);
    } else {
        snprintf(rate, sizeof(rate), "unpaced");
    }
    snprintf(m->be.calibration, sizeof(m->be.calibration),
             "threshold %u ticks: LLC hit median %u (p90 %u), memory median %u (p10 %u), %.1f%% "
             "misclassified; loads over %u ticks = interrupted; re-checked every %.0f s; TSC "
             "%.3f GHz; CPU %d; %s",
             m->threshold, c->hit_median, c->hit_p90, c->miss_median, c->miss_p10,
             100 * c->error_rate, m->discard_ticks, RECHECK_SECONDS, (double)m->tsc_hz * 1e-9,
             m->probe_cpu, rate);
}

int llc_map_backend_timing(const struct llc_map_hw_options *opt, struct llc_map_backend **out,
                           struct llc_map_selftest *st, char *err, size_t errlen)
{
    struct llc_map_selftest local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    *out = NULL;
    struct maphw *m = NULL;
    int rc = llc_maphw_new("timing", opt, &m, err, errlen);
    if (rc < 0)
        goto out;
    m->measure = llc_maphw_timing_measure;
    rc = llc_maphw_start(m, err, errlen);
    if (rc == 0)
        rc = llc_maphw_build(m, err, errlen);
    if (rc < 0)
        goto out;
    m->last_recheck = now_ticks();
    rc = llc_maphw_walk_check(m, err, errlen);
    if (rc == 0)
        rc = llc_maphw_selftest(m, st, err, errlen);
    if (rc == 0)
        rc = llc_maphw_slow_check(m, err, errlen);
    if (rc < 0)
        goto out;
    describe(m);
    m->be.ops = &timing_ops;
    m->be.all_at_once = true;
    *out = &m->be;
    m = NULL;
out:
    llc_maphw_free(m);
    return rc;
}
