/* The calibration co-runner of `calibrate` on hardware: a thread on
 * another core sharing the LLC that holds exactly k congruent lines in
 * each probed set, touching each at a known rate. Its lines are arena
 * lines outside the probe's own sets that the eviction test puts with a
 * probed set (found once per set list, on the probe thread, by the same
 * test the self-test's aggressor uses); on a victim LLC each set gets its
 * share of the L2 on top, which the co-runner's own L2 keeps, so the k
 * lines that reach the LLC are its victims (llc_map_corunner_l2_share). */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"

struct llc_maphw_corunner {
    uint32_t *units; /* the sets its lines were found for */
    size_t n;
    unsigned per_unit;  /* lines found per set: llc_ways + the L2's share */
    void **held;        /* [n * per_unit] */
    void **order;       /* [n * per_unit] touch order */
    unsigned *l2_share; /* [n] lines of each set the co-runner's L2 keeps */
    uint32_t *identity; /* [n * per_unit] */
    struct llc_maphw_aggressor *thread;
};

int llc_maphw_pick_congruent(const struct llc_evset_line *lines, size_t n, uint8_t *used,
                             unsigned line_size, unsigned sets_per_slice, uint32_t index,
                             unsigned want, unsigned max_tests, llc_maphw_congruent_fn test,
                             void *ctx, uint32_t *out, unsigned *tested, char *err, size_t errlen)
{
    unsigned found = 0;
    *tested = 0;
    for (size_t i = 0; i < n && found < want && *tested < max_tests; i++) {
        const uint64_t pa = lines[i].paddr;
        if (used[i] || pa == LLC_EVSET_NO_PADDR ||
            (uint32_t)((pa / line_size) % sets_per_slice) != index)
            continue;
        ++*tested;
        const int rc = test(ctx, (uint32_t)i, err, errlen);
        if (rc < 0)
            return rc;
        if (rc) {
            used[i] = 1;
            out[found++] = (uint32_t)i;
        }
    }
    return (int)found;
}

size_t llc_maphw_corunner_order(void *const *held, size_t n, unsigned per_unit, unsigned lines,
                                const unsigned *share, void **out)
{
    unsigned longest = 0;
    for (size_t i = 0; i < n; i++)
        if (lines + (share ? share[i] : 0) > longest)
            longest = lines + (share ? share[i] : 0);
    size_t k = 0;
    for (unsigned j = 0; j < longest; j++)
        for (size_t i = 0; i < n; i++)
            if (j < lines + (share ? share[i] : 0))
                out[k++] = held[i * per_unit + j];
    return k;
}

struct evicts_ctx {
    struct llc_evset_finder *finder;
    const uint32_t *set;
    unsigned group;
};

static int evicts(void *p, uint32_t cand, char *err, size_t errlen)
{
    const struct evicts_ctx *c = p;
    return llc_evset_evicts(c->finder, cand, c->set, c->group, err, errlen);
}

/* The probe's own set lines, marked by arena line id. */
static uint8_t *set_lines_mask(const struct maphw *m, uint32_t unit, uint32_t *set)
{
    const uintptr_t base = (uintptr_t)llc_arena_base(m->arena);
    uint8_t *used = calloc(m->n_lines, 1);
    if (!used)
        return NULL;
    for (uint32_t u = 0; u < m->units; u++) {
        const struct llc_evset_set *s = &m->sets->sets[u];
        if (s->source == LLC_EVSET_NONE)
            continue;
        for (unsigned k = 0; k < m->group; k++) {
            const size_t id =
                (size_t)(m->sets->lines[s->first + k].addr - base) / m->opt.geo.line_size;
            used[id] = 1;
            if (u == unit)
                set[k] = (uint32_t)id;
        }
    }
    return used;
}

int llc_maphw_find_congruent(struct maphw *m, uint32_t unit, unsigned want, uint8_t *used,
                             void **out, unsigned *found, unsigned *tested, char *err,
                             size_t errlen)
{
    const struct llc_map_geometry *g = &m->opt.geo;
    uint32_t *set = malloc(m->group * sizeof(*set));
    uint32_t *ids = malloc((want ? want : 1) * sizeof(*ids));
    uint8_t *mine = set ? set_lines_mask(m, unit, set) : NULL;
    int rc = 0;
    *found = *tested = 0;
    if (!set || !ids || !mine) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
        goto out;
    }
    /* the caller's picks so far are taken too */
    for (size_t i = 0; used && i < m->n_lines; i++)
        mine[i] |= used[i];
    struct evicts_ctx ec = {m->finder, set, m->group};
    rc = llc_maphw_pick_congruent(m->lines, m->n_lines, mine, g->line_size, g->sets_per_slice,
                                  unit % g->sets_per_slice, want, 4 * g->slices * want + 64, evicts,
                                  &ec, ids, tested, err, errlen);
    if (rc < 0)
        goto out;
    *found = (unsigned)rc;
    for (unsigned k = 0; k < *found; k++) {
        out[k] = (void *)(uintptr_t)m->lines[ids[k]].addr;
        if (used)
            used[ids[k]] = 1;
    }
    rc = 0;
out:
    free(set);
    free(ids);
    free(mine);
    return rc;
}

void llc_maphw_corunner_free(struct llc_maphw_corunner *c)
{
    if (!c)
        return;
    llc_maphw_aggressor_stop(c->thread);
    free(c->units);
    free(c->held);
    free(c->order);
    free(c->l2_share);
    free(c->identity);
    free(c);
}

struct find_call {
    struct maphw *m;
    struct llc_maphw_corunner *c;
    char *err;
    size_t errlen;
};

/* On the probe thread: per_unit lines for every set, or -EIO naming the
 * first set that has too few. */
static int find_all(void *p)
{
    const struct find_call *f = p;
    struct maphw *m = f->m;
    struct llc_maphw_corunner *c = f->c;
    uint8_t *used = calloc(m->n_lines, 1);
    int rc = 0;
    if (!used)
        return llc_errf(f->err, f->errlen, -ENOMEM, "%s: out of memory", m->name);
    for (size_t i = 0; i < c->n; i++) {
        unsigned found, tested;
        rc = llc_maphw_find_congruent(m, c->units[i], c->per_unit, used, c->held + i * c->per_unit,
                                      &found, &tested, f->err, f->errlen);
        if (rc < 0)
            break;
        if (found < c->per_unit) {
            rc = llc_errf(f->err, f->errlen, -EIO,
                          "%s: calibration co-runner: only %u of the %u lines it needs tested "
                          "congruent with set %u (%u candidates tested)",
                          m->name, found, c->per_unit, c->units[i], tested);
            break;
        }
        llc_maphw_progress(m, "co-runner lines", (i + 1.0) / (double)c->n);
    }
    free(used);
    return rc;
}

/* The co-runner's lines for units[0..n), found unless it has them. */
static int corunner_lines(struct maphw *m, const uint32_t *units, size_t n, unsigned per_unit,
                          char *err, size_t errlen)
{
    struct llc_maphw_corunner *c = m->corunner;
    if (c && c->n == n && c->per_unit == per_unit && !memcmp(c->units, units, n * sizeof(*units)))
        return 0;
    llc_maphw_corunner_free(c);
    m->corunner = c = calloc(1, sizeof(*c));
    if (!c)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
    c->n = n;
    c->per_unit = per_unit;
    c->units = malloc(n * sizeof(*c->units));
    c->held = calloc(n * per_unit, sizeof(*c->held));
    c->order = calloc(n * per_unit, sizeof(*c->order));
    c->identity = malloc(n * per_unit * sizeof(*c->identity));
    c->l2_share = malloc(n * sizeof(*c->l2_share));
    if (!c->units || !c->held || !c->order || !c->identity || !c->l2_share) {
        llc_maphw_corunner_free(c);
        m->corunner = NULL;
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
    }
    memcpy(c->units, units, n * sizeof(*units));
    for (size_t i = 0; i < n * per_unit; i++)
        c->identity[i] = (uint32_t)i;
    struct find_call f = {m, c, err, errlen};
    const int rc = llc_maphw_worker_call(m->worker, find_all, &f);
    if (rc < 0) { /* found again next time, not half-kept */
        llc_maphw_corunner_free(c);
        m->corunner = NULL;
    }
    return rc;
}

int llc_maphw_corunner_op(void *ctx, const uint32_t *units, size_t n, unsigned lines,
                          double touch_rate, char *err, size_t errlen)
{
    struct maphw *m = ctx;
    const struct llc_map_geometry *g = &m->opt.geo;
    if (m->corunner) {
        llc_maphw_aggressor_stop(m->corunner->thread);
        m->corunner->thread = NULL;
    }
    if (!lines)
        return 0;
    if (lines > g->llc_ways || !n || !(touch_rate > 0) || !isfinite(touch_rate))
        return llc_errf(err, errlen, -EINVAL,
                        "%s: co-runner of %u lines in %zu sets at %g touches per line per second "
                        "(1..%u lines, a positive rate)",
                        m->name, lines, n, touch_rate, g->llc_ways);
    if (m->other_cpu < 0)
        return llc_errf(err, errlen, -ENOTSUP, "%s: the co-runner needs a CPU besides the probe's",
                        m->name);
    for (size_t i = 0; i < n; i++)
        if (units[i] >= m->units || !m->sets->sets[units[i]].verified)
            return llc_errf(err, errlen, -EINVAL, "%s: set %u has no verified eviction set",
                            m->name, units[i]);
    int rc =
        corunner_lines(m, units, n, g->llc_ways + (g->victim_llc ? g->l2_ways : 0), err, errlen);
    if (rc < 0)
        return rc;
    struct llc_maphw_corunner *c = m->corunner;
    llc_map_corunner_l2_share(g, units, n, m->l2_counts, c->l2_share);
    const size_t chain =
        llc_maphw_corunner_order(c->held, n, c->per_unit, lines, c->l2_share, c->order);
    void *head = llc_maphw_chain_link(c->order, c->identity, chain);
    struct llc_maphw_pace pace;
    rc = llc_maphw_pace_init(&pace, m->tsc_hz, touch_rate, chain, 0, err, errlen);
    if (rc == 0)
        rc = llc_maphw_aggressor_start(m->other_cpu, head, pace.period, &c->thread, err, errlen);
    return rc;
}
