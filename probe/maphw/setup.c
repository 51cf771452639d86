/* The hardware backends' common state: clock, CPUs, the pinned probe
 * thread, the arena, the eviction sets for every unit and their chains;
 * and its release on every path. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"

/* Units whose set must verify before the map is worth making. */
#define MIN_VERIFIED 0.9

int llc_maphw_new(const char *name, const struct llc_map_hw_options *opt, struct maphw **out,
                  char *err, size_t errlen)
{
    *out = NULL;
    const int rc = llc_maphw_check_options(name, opt, err, errlen);
    if (rc < 0)
        return rc;
    struct maphw *m = calloc(1, sizeof(*m));
    if (!m)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
    m->opt = *opt;
    m->name = name;
    m->fd = -1;
    m->probe_cpu = m->other_cpu = -1;
    m->units = llc_map_units(&opt->geo);
    m->group = llc_maphw_group(&opt->geo);
    m->be.ctx = m;
    m->be.name = name;
    m->be.geo = opt->geo;
    m->be.walk = m->group;
    m->flush = llc_maphw_clflush;
    *out = m;
    return 0;
}

int llc_maphw_stopped(const struct maphw *m, char *err, size_t errlen)
{
    if (m->opt.stop && *m->opt.stop)
        return llc_errf(err, errlen, -EINTR, "%s: interrupted", m->name);
    return 0;
}

void llc_maphw_progress(const struct maphw *m, const char *stage, double fraction)
{
    if (m->opt.progress)
        m->opt.progress(m->opt.progress_ctx, stage, fraction);
}

bool llc_maphw_target_alive(void *ctx)
{
    const struct maphw *m = ctx;
    return m->opt.target_alive ? m->opt.target_alive(m->opt.target_ctx) : true;
}

int llc_maphw_start(struct maphw *m, char *err, size_t errlen)
{
    char why[LLC_ERRLEN];
    struct llc_cpuid_dump *dump = calloc(1, sizeof(*dump));
    struct llc_cpu_info *cpu = calloc(1, sizeof(*cpu));
    int rc = 0;
    if (!dump || !cpu) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
        goto out;
    }
    rc = llc_cpuid_dump_live(dump, why, sizeof(why));
    if (rc == 0)
        rc = llc_cpuid_decode(dump, cpu, why, sizeof(why));
    if (rc < 0) {
        rc = llc_errf(err, errlen, -ENOTSUP, "%s: no CPUID: %s", m->name, why);
        goto out;
    }
    struct llc_clock_check clock;
    llc_clock_check(cpu, true, &clock);
    if (!clock.usable || !clock.tsc_hz) {
        rc = llc_errf(err, errlen, -ENOTSUP, "%s: no usable clock: %s%s", m->name, clock.reason,
                      clock.usable ? " (TSC rate unknown)" : "");
        goto out;
    }
    m->tsc_hz = clock.tsc_hz;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: sched_getaffinity: %s", m->name, strerror(errno));
        goto out;
    }
    rc = llc_maphw_pick_cpus(&allowed, m->opt.probe_cpu, &m->probe_cpu, &m->other_cpu, why,
                             sizeof(why));
    if (rc < 0) {
        rc = llc_errf(err, errlen, rc, "%s: %s", m->name, why);
        goto out;
    }
    /* the self-test's aggressor needs a CPU of its own: refuse before the
     * expensive part rather than after it */
    if (m->other_cpu < 0) {
        rc = llc_errf(err, errlen, -ENOTSUP,
                      "%s: the self-test needs a second CPU for its aggressor thread; this "
                      "process may run on CPU %d only",
                      m->name, m->probe_cpu);
        goto out;
    }
    rc = llc_maphw_worker_start(m->probe_cpu, &m->worker, why, sizeof(why));
    if (rc < 0)
        rc = llc_errf(err, errlen, rc, "%s: %s", m->name, why);
out:
    free(dump);
    free(cpu);
    return rc;
}

static int make_arena(struct maphw *m, char *err, size_t errlen)
{
    char why[LLC_ERRLEN];
    const struct llc_arena_options aopt = {
        .page = LLC_ARENA_PAGE_2M,
        .allow_fallback = m->opt.small_pages_ok,
        .reserve = m->opt.reserve,
    };
    const size_t bytes = llc_maphw_arena_bytes(&m->opt.geo);
    int rc = llc_arena_create(bytes, &aopt, &m->arena, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: arena of %zu MiB: %s", m->name, bytes >> 20, why);
    const struct llc_arena_info *ai = llc_arena_info(m->arena);
    if (ai->fallback)
        snprintf(m->be.warning, sizeof(m->be.warning), "%s", ai->fallback_reason);
    if (!llc_arena_frames_known(m->arena))
        return llc_errf(err, errlen, -ENOTSUP, "%s: physical addresses unknown: %s", m->name,
                        ai->frames_reason);
    const void *base = llc_arena_base(m->arena);
    rc = llc_evset_arena_lines(base, llc_arena_size(m->arena), m->opt.geo.line_size, &m->lines,
                               &m->n_lines, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: arena lines: %s", m->name, why);
    return 0;
}

static int make_sets(struct maphw *m, char *err, size_t errlen)
{
    char why[LLC_ERRLEN];
    const struct llc_map_geometry *g = &m->opt.geo;
    struct llc_evset_hw_config hc;
    llc_evset_hw_config_default(&hc);
    if (g->l2_ways && g->l2_sets)
        hc.l2_bytes = (size_t)g->l2_ways * g->l2_sets * g->line_size;
    int rc = llc_evset_oracle_hw(&hc, &m->oracle, &m->cal, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: calibration: %s", m->name, why);
    m->threshold = m->cal.threshold;
    /* one load this slow was interrupted: no memory access takes 20 us,
     * nor 16 times the memory latency */
    const uint64_t interrupted = llc_maphw_ticks(m->tsc_hz, 20e-6);
    const uint64_t slow = 16ull * m->cal.miss_median;
    const uint64_t discard = interrupted > slow ? interrupted : slow;
    m->discard_ticks = discard > UINT32_MAX ? UINT32_MAX : (uint32_t)discard;
    struct llc_evset_params p;
    llc_evset_params_default(&p);
    p.line_size = g->line_size;
    p.sets_per_slice = g->sets_per_slice;
    p.slices = g->slices;
    p.llc_ways = g->llc_ways;
    p.l2_ways = g->l2_ways;
    p.l2_sets = g->l2_sets;
    p.victim_llc = g->victim_llc;
    p.seed = m->opt.seed ? m->opt.seed : 1;
    /* Offsets may be carried over only within what is physically
     * contiguous: a hypervisor may back a guest hugepage with 4 KiB pages. */
    const struct llc_arena_info *ai = llc_arena_info(m->arena);
    const long base_page = sysconf(_SC_PAGESIZE);
    p.page_size = ai->guest_physical || !ai->contiguous ? (unsigned)base_page
                                                        : (unsigned)llc_arena_page_size(m->arena);
    rc = llc_evset_finder_create(m->oracle, &p, m->lines, m->n_lines, &m->finder, why, sizeof(why));
    if (rc == 0)
        rc = llc_evset_build(m->finder, &m->sets, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: eviction sets: %s", m->name, why);
    const struct llc_evset_report *r = &m->sets->report;
    m->usable = 0;
    for (uint32_t u = 0; u < m->units; u++)
        m->usable += m->sets->sets[u].verified;
    if ((double)m->usable < MIN_VERIFIED * m->units)
        return llc_errf(err, errlen, -EIO,
                        "%s: eviction sets: %u of %u sets verified (%.1f%%; %.0f%% needed; %u "
                        "reduced, %u reduction failures, %u of %u checked sets passed) in %.1f s; "
                        "threshold %u ticks (LLC-hit median %u, memory median %u)",
                        m->name, m->usable, m->units, 100.0 * m->usable / m->units,
                        100 * MIN_VERIFIED, r->reduced, r->reduce_failures, r->verified, r->checked,
                        r->build_seconds, m->cal.threshold, m->cal.hit_median, m->cal.miss_median);
    return 0;
}

int llc_maphw_chains(struct maphw *m, char *err, size_t errlen)
{
    const struct llc_map_geometry *g = &m->opt.geo;
    m->perm = malloc((size_t)m->units * m->group * sizeof(*m->perm));
    m->head = calloc(m->units, sizeof(*m->head));
    m->cursor = calloc(m->units, sizeof(*m->cursor));
    m->linked = calloc(m->units, sizeof(*m->linked));
    m->l2_counts = calloc(g->l2_sets ? g->l2_sets : 1, sizeof(*m->l2_counts));
    m->batch = 1024;
    m->journal = malloc(m->batch * sizeof(*m->journal));
    if (!m->perm || !m->head || !m->cursor || !m->linked || !m->l2_counts || !m->journal)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory for %u chains", m->name, m->units);
    for (uint32_t u = 0; u < m->units; u++)
        if (m->sets->sets[u].verified) {
            llc_maphw_perm(m->opt.seed, u, m->perm + (size_t)u * m->group, m->group);
            llc_maphw_relink(m, &u, 1, m->group);
        }
    return 0;
}

struct build_call {
    struct maphw *m;
    char *err;
    size_t errlen;
};

static int build_on_worker(void *p)
{
    struct build_call *c = p;
    struct maphw *m = c->m;
    llc_maphw_progress(m, "arena", 0);
    int rc = make_arena(m, c->err, c->errlen);
    if (rc == 0)
        rc = llc_maphw_stopped(m, c->err, c->errlen);
    if (rc == 0) {
        llc_maphw_progress(m, "eviction sets", 0);
        rc = make_sets(m, c->err, c->errlen);
    }
    if (rc == 0)
        rc = llc_maphw_chains(m, c->err, c->errlen);
    if (rc == 0)
        llc_maphw_progress(m, "eviction sets", 1);
    return rc;
}

int llc_maphw_build(struct maphw *m, char *err, size_t errlen)
{
    struct build_call c = {m, err, errlen};
    return llc_maphw_worker_call(m->worker, build_on_worker, &c);
}

void llc_maphw_relink(struct maphw *m, const uint32_t *units, size_t n, unsigned full)
{
    void *lines[64 + 64]; /* G <= W_L2 + W_LLC, both checked <= 64 */
    for (size_t i = 0; i < n; i++) {
        const uint32_t u = units[i];
        const unsigned want = llc_maphw_unit_walk(full, m->opt.geo.llc_ways, m->llc_walk, u);
        const unsigned walk = want > m->group ? m->group : want;
        if (!m->sets->sets[u].verified || m->linked[u] == walk)
            continue;
        /* Lines a shorter walk stops using leave every level first: left
         * in place they hold ways the walk means to leave to others (the
         * simulator's DRRIP kept them over the newcomers and overestimated
         * the occupancy without this). */
        const size_t dropped = llc_maphw_dropped(m, u, m->linked[u], walk, lines);
        for (size_t k = 0; k < dropped; k++)
            m->flush(lines[k]);
        const struct llc_evset_set *s = &m->sets->sets[u];
        const uint32_t *perm = m->perm + (size_t)u * m->group;
        for (unsigned k = 0; k < m->group; k++)
            lines[k] = (void *)(uintptr_t)m->sets->lines[s->first + k].addr;
        /* the first `walk` entries of the unit's order, as one cycle */
        m->head[u] = m->cursor[u] = llc_maphw_chain_link(lines, perm, walk);
        m->linked[u] = walk;
    }
}

unsigned llc_maphw_walk_for(struct maphw *m, const uint32_t *units, size_t n)
{
    if (!m->opt.geo.victim_llc)
        return m->group;
    const unsigned u = llc_maphw_units_per_l2_set(&m->opt.geo, units, n, m->l2_counts);
    const unsigned w = llc_map_walk_length(&m->opt.geo, u);
    return w < 1 ? 1 : w > m->group ? m->group : w;
}

void llc_maphw_free(struct maphw *m)
{
    if (!m)
        return;
    llc_maphw_corunner_free(m->corunner); /* its lines are in the arena */
    llc_maphw_worker_stop(m->worker);
    if (m->fd >= 0)
        close(m->fd);
    llc_evset_result_free(m->sets);
    llc_evset_finder_destroy(m->finder);
    llc_evset_oracle_destroy(m->oracle);
    free(m->lines);
    char why[LLC_ERRLEN];
    /* release() has no error path: a pool that cannot be put back must
     * still be reported, or the machine keeps the hugepages */
    if (llc_arena_release(m->arena, why, sizeof(why)) < 0)
        fprintf(stderr, "llcprobe: %s: %s\n", m->name, why);
    free(m->perm);
    free(m->head);
    free(m->cursor);
    free(m->linked);
    free(m->l2_counts);
    free(m->journal);
    free(m->llc_walk);
    free(m);
}

/* ---- the backend ops both share -------------------------------------- */

struct call {
    struct maphw *m;
    const uint32_t *units;
    size_t n;
    double dwell_s;
    uint64_t *misses, *accesses;
    char *err;
    size_t errlen;
};

static int measure_on_worker(void *p)
{
    const struct call *c = p;
    return c->m->measure(c->m, c->units, c->n, c->dwell_s, c->misses, c->accesses, c->err,
                         c->errlen);
}

/* The backend op, on the caller's thread: dispatches to the probe thread. */
int llc_maphw_measure_op(void *ctx, const uint32_t *units, size_t n, double dwell_s,
                         uint64_t *misses, uint64_t *accesses, char *err, size_t errlen)
{
    struct maphw *m = ctx;
    struct call c = {m, units, n, dwell_s, misses, accesses, err, errlen};
    const int rc = llc_maphw_worker_call(m->worker, measure_on_worker, &c);
    if (rc < 0)
        return rc;
    return llc_maphw_target_alive(m) ? 0 : 1;
}

void llc_maphw_release_op(void *ctx)
{
    llc_maphw_free(ctx);
}
