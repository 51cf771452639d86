/* Start-up checks of the hardware backends: the idle walk must be served
 * by the LLC, and a built-in aggressor thread on a known set must make that
 * set stand out against idle controls. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"
#include "util/tsc.h"

#define CHECK_UNITS 16
#define CHECK_TRACE 8192 /* timed accesses kept per checked unit */
#define SELFTEST_TRIALS 8
#define SELFTEST_CONTROLS 8
#define SELFTEST_DWELL 0.010

/* Median ticks of an L2 hit: a line loaded, then pushed out of the L1 (but
 * not the L2) by walking half the L2's size, then timed. 0 if unknown. */
static uint32_t l2_hit_median(size_t l2_bytes, unsigned line)
{
#if LLC_HAVE_TSC
    enum { SAMPLES = 201 };
    const size_t walk = l2_bytes / 2, bytes = walk + 4096;
    uint8_t *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 0;
    memset(mem, 1, bytes);
    uint32_t t[SAMPLES];
    for (unsigned s = 0; s < SAMPLES; s++) {
        const volatile uint8_t *x = mem + walk + (s * 7 % (4096 / line)) * line;
        (void)*x;
        for (size_t o = 0; o < walk; o += line)
            (void)((const volatile uint8_t *)mem)[o];
        t[s] = llc_tsc_time_load(x);
    }
    munmap(mem, bytes);
    /* insertion sort: 201 samples */
    for (unsigned i = 1; i < SAMPLES; i++)
        for (unsigned k = i; k > 0 && t[k - 1] > t[k]; k--) {
            const uint32_t v = t[k];
            t[k] = t[k - 1];
            t[k - 1] = v;
        }
    return t[SAMPLES / 2];
#else
    (void)l2_bytes, (void)line;
    return 0;
#endif
}

/* Up to max verified units spread evenly over the map, skipping `avoid`
 * indexes (and their adjacent-line buddies) when avoid_index >= 0. */
static size_t pick_units(const struct maphw *m, uint32_t *out, size_t max, long avoid_index,
                         uint32_t skip)
{
    size_t n = 0;
    const uint32_t step = m->units / (uint32_t)max ? m->units / (uint32_t)max : 1;
    for (uint32_t k = 0; k < m->units && n < max; k++) {
        const uint32_t u = (uint32_t)(((uint64_t)k * step + step / 2) % m->units);
        const uint32_t index = u % m->opt.geo.sets_per_slice;
        if (!m->sets->sets[u].verified || u == skip)
            continue;
        if (avoid_index >= 0 && (index | 1) == ((uint32_t)avoid_index | 1))
            continue;
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = out[i] == u;
        if (!dup)
            out[n++] = u;
    }
    return n;
}

struct check_call {
    struct maphw *m;
    char *err;
    size_t errlen;
};

static int walk_check_on_worker(void *p)
{
    struct check_call *c = p;
    struct maphw *m = c->m;
    const struct llc_map_geometry *g = &m->opt.geo;
    uint32_t units[CHECK_UNITS];
    const size_t n = pick_units(m, units, CHECK_UNITS, -1, UINT32_MAX);
    uint32_t *trace = malloc((size_t)CHECK_UNITS * CHECK_TRACE * sizeof(*trace));
    uint64_t *misses = calloc(m->units, sizeof(*misses));
    uint64_t *acc = calloc(m->units, sizeof(*acc));
    int rc = 0;
    if (!trace || !misses || !acc) {
        rc = llc_errf(c->err, c->errlen, -ENOMEM, "%s: out of memory", m->name);
        goto out;
    }
    const uint32_t l2 =
        g->l2_ways && g->l2_sets
            ? l2_hit_median((size_t)g->l2_ways * g->l2_sets * g->line_size, g->line_size)
            : 0;
    /* an L2 that times like the LLC cannot be told apart: no L2 check */
    m->l2_bound = l2 && m->cal.hit_median > l2 + l2 / 5 ? (l2 + m->cal.hit_median) / 2 : 0;
    struct llc_maphw_walk_cfg wc;
    llc_maphw_walk_cfg(m, 1, &wc);
    size_t total = 0;
    struct llc_maphw_walk_stats st;
    for (size_t i = 0; i < n; i++) {
        llc_maphw_relink(m, &units[i], 1, m->group);
        /* warm-up: the first rounds fill the caches from memory */
        wc.trace = NULL;
        rc = llc_maphw_walk_timed(&wc, &m->cursor[units[i]], &units[i], 1, 0.0005, misses, acc, &st,
                                  c->err, c->errlen);
        if (rc == 0) {
            wc.trace = trace + total;
            wc.trace_cap = CHECK_TRACE;
            rc = llc_maphw_walk_timed(&wc, &m->cursor[units[i]], &units[i], 1, 0.002, misses, acc,
                                      &st, c->err, c->errlen);
        }
        if (rc < 0)
            goto out;
        total += st.trace_n;
    }
    rc = llc_maphw_walk_verdict(m->name, "idle walk check", m->group, n, trace, total, m->l2_bound,
                                m->threshold, m->be.walk_check, sizeof(m->be.walk_check));
    rc = rc == 1 ? 0 : llc_errf(c->err, c->errlen, -EIO, "%s", m->be.walk_check);
out:
    free(trace);
    free(misses);
    free(acc);
    return rc;
}

int llc_maphw_walk_check(struct maphw *m, char *err, size_t errlen)
{
    struct check_call c = {m, err, errlen};
    llc_maphw_progress(m, "idle walk check", 0);
    return llc_maphw_worker_call(m->worker, walk_check_on_worker, &c);
}

/* The occupancy search walks each set slowly (a line revisited once per
 * search cycle): its lines must outlive that in the LLC when nothing else
 * runs, or every walk length would look too long. Walks CHECK_UNITS units
 * together at that pace, LLC_MAPHW_WARM_ROUNDS rounds to warm, as many
 * timed. */
static int slow_check_on_worker(void *p)
{
    struct check_call *c = p;
    struct maphw *m = c->m;
    uint32_t units[CHECK_UNITS];
    void *cur[CHECK_UNITS];
    const size_t n = pick_units(m, units, CHECK_UNITS, -1, UINT32_MAX);
    const size_t cap = (size_t)CHECK_UNITS * CHECK_TRACE;
    uint32_t *trace = malloc(cap * sizeof(*trace));
    uint64_t *misses = calloc(m->units, sizeof(*misses));
    uint64_t *acc = calloc(m->units, sizeof(*acc));
    const double saved = m->occ_rate;
    int rc = 0;
    if (!trace || !misses || !acc) {
        rc = llc_errf(c->err, c->errlen, -ENOMEM, "%s: out of memory", m->name);
        goto out;
    }
    const unsigned walk = llc_maphw_walk_for(m, units, n);
    llc_maphw_relink(m, units, n, walk);
    for (size_t i = 0; i < n; i++)
        cur[i] = m->cursor[units[i]];
    struct llc_maphw_walk_cfg wc;
    m->occ_rate = m->slow_rate;
    llc_maphw_walk_cfg(m, n, &wc);
    double warm, count;
    llc_maphw_warm_split(2.0 * LLC_MAPHW_WARM_ROUNDS * m->opt.search_cycle_s, m->slow_rate,
                         m->opt.geo.llc_ways, &warm, &count);
    struct llc_maphw_walk_stats st;
    rc = llc_maphw_walk_timed(&wc, cur, units, n, warm, misses, acc, &st, c->err, c->errlen);
    if (rc == 0) {
        wc.trace = trace;
        wc.trace_cap = cap;
        rc = llc_maphw_walk_timed(&wc, cur, units, n, count, misses, acc, &st, c->err, c->errlen);
    }
    for (size_t i = 0; i < n; i++)
        m->cursor[units[i]] = cur[i];
    if (rc < 0)
        goto out;
    char what[96];
    snprintf(what, sizeof(what), "slow idle walk check (%.4g accesses per set per second)",
             m->slow_rate);
    rc = llc_maphw_walk_verdict(m->name, what, walk, n, trace, st.trace_n, m->l2_bound,
                                m->threshold, m->be.slow_walk_check, sizeof(m->be.slow_walk_check));
    m->slow_passed = rc == 1;
    rc = rc == 1 ? 0 : llc_errf(c->err, c->errlen, -EIO, "%s", m->be.slow_walk_check);
out:
    m->occ_rate = saved;
    free(trace);
    free(misses);
    free(acc);
    return rc;
}

int llc_maphw_slow_check(struct maphw *m, char *err, size_t errlen)
{
    m->slow_rate = 0;
    m->slow_passed = false;
    if (!(m->opt.search_cycle_s > 0))
        return 0;
    m->slow_rate = m->opt.geo.llc_ways / m->opt.search_cycle_s;
    struct check_call c = {m, err, errlen};
    llc_maphw_progress(m, "slow idle walk check", 0);
    return llc_maphw_worker_call(m->worker, slow_check_on_worker, &c);
}

/* ---- self-test ----------------------------------------------------------- */

struct aggr_call {
    struct maphw *m;
    uint32_t unit;
    void **lines; /* out: congruent lines not in any set */
    unsigned want, found, tested;
    char *err;
    size_t errlen;
};

/* Same-index arena lines outside every set that the eviction test puts
 * with the unit's set: lines the aggressor may touch to fill that set. */
static int find_aggressor_lines(void *p)
{
    struct aggr_call *c = p;
    return llc_maphw_find_congruent(c->m, c->unit, c->want, NULL, c->lines, &c->found, &c->tested,
                                    c->err, c->errlen);
}

struct measure_call {
    struct maphw *m;
    uint32_t unit;
    uint64_t *misses, *accesses;
    char *err;
    size_t errlen;
};

static int measure_one(void *p)
{
    struct measure_call *c = p;
    return c->m->measure(c->m, &c->unit, 1, SELFTEST_DWELL, c->misses, c->accesses, c->err,
                         c->errlen);
}

static double fraction(uint64_t misses, uint64_t accesses)
{
    return accesses ? (double)misses / (double)accesses : NAN;
}

int llc_maphw_selftest(struct maphw *m, struct llc_map_selftest *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    llc_maphw_progress(m, "self-test", 0);
    void **lines = calloc(m->group, sizeof(*lines));
    uint32_t *perm = malloc(m->group * sizeof(*perm));
    uint64_t *misses = calloc(m->units, sizeof(*misses));
    uint64_t *acc = calloc(m->units, sizeof(*acc));
    double aggr[SELFTEST_TRIALS], idle[SELFTEST_TRIALS * SELFTEST_CONTROLS];
    struct llc_maphw_aggressor *ag = NULL;
    int rc = 0;
    if (!lines || !perm || !misses || !acc) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
        goto out;
    }
    uint32_t pick[1];
    if (pick_units(m, pick, 1, -1, UINT32_MAX) != 1) {
        rc = llc_errf(err, errlen, -EIO, "%s: self-test: no verified set", m->name);
        goto out;
    }
    const uint32_t target = pick[0];
    uint32_t controls[SELFTEST_CONTROLS];
    const size_t nc = pick_units(m, controls, SELFTEST_CONTROLS,
                                 (long)(target % m->opt.geo.sets_per_slice), target);
    struct aggr_call ac = {m, target, lines, m->group, 0, 0, err, errlen};
    rc = llc_maphw_worker_call(m->worker, find_aggressor_lines, &ac);
    if (rc < 0)
        goto out;
    if (ac.found < ac.want) {
        rc = llc_errf(err, errlen, -EIO,
                      "%s: self-test failed: only %u of the %u lines the aggressor needs tested "
                      "congruent with set %u (%u candidates tested)",
                      m->name, ac.found, ac.want, target, ac.tested);
        goto out;
    }
    llc_maphw_perm(m->opt.seed, m->units + 1ull, perm, m->group);
    void *head = llc_maphw_chain_link(lines, perm, m->group);
    rc = llc_maphw_aggressor_start(m->other_cpu, head, 0, &ag, err, errlen);
    if (rc < 0)
        goto out;
    const struct timespec settle = {0, 2000000};
    nanosleep(&settle, NULL);
    size_t ni = 0;
    for (unsigned t = 0; t < SELFTEST_TRIALS; t++) {
        for (size_t k = 0; k <= nc; k++) {
            const uint32_t u = k == 0 ? target : controls[k - 1];
            const uint64_t m0 = misses[u], a0 = acc[u];
            struct measure_call mc = {m, u, misses, acc, err, errlen};
            rc = llc_maphw_worker_call(m->worker, measure_one, &mc);
            if (rc < 0)
                goto out;
            const double f = fraction(misses[u] - m0, acc[u] - a0);
            if (k == 0)
                aggr[t] = f;
            else
                idle[ni++] = f;
        }
        llc_maphw_progress(m, "self-test", (t + 1.0) / SELFTEST_TRIALS);
        rc = llc_maphw_stopped(m, err, errlen);
        if (rc < 0)
            goto out;
    }
    llc_maphw_aggressor_stop(ag);
    ag = NULL;
    struct llc_maphw_rule rule;
    llc_maphw_rule_default(&rule);
    const bool timing = strcmp(m->name, "timing") == 0;
    if (!llc_maphw_selftest_verdict(m->name, timing ? "slow" : "missed", aggr, SELFTEST_TRIALS,
                                    idle, ni, &rule, st))
        rc = llc_errf(err, errlen, -EIO, "%s", st->text);
out:
    llc_maphw_aggressor_stop(ag);
    free(lines);
    free(perm);
    free(misses);
    free(acc);
    return rc;
}
