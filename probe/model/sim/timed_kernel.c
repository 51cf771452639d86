/* The timed co-run kernel (llc_sim_run_timed): several agents, each with
 * its own clock, always the earliest first. Built once, for the base
 * instruction set: copies for AVX2 and AVX-512, as the batch path has
 * (sim/variants.c), ran no faster here (co-run of 4, CPU time, medians of
 * 5 interleaved rounds: 0.93x of the base copy) and cost two minutes of
 * compilation each (docs/RESULTS.md §9).
 *
 * Why a kernel of its own: the order of the accesses depends on the levels
 * that served the previous ones, so nothing can be batched per agent the
 * way llc_sim_run does. What keeps it fast: the earliest agent runs on
 * without a new scan while its clock stays before the runner-up's; in a
 * hierarchy without inclusion the L2 half of each buffer is done ahead
 * (llc_sim_timed_prepare), the L2 hits between two LLC accesses are
 * issued at once (timed_skip_hits: only the LLC accesses need the clock
 * order), and the LLC blocks are prefetched several of the agent's L2
 * misses ahead; otherwise each agent's L2 and LLC blocks are prefetched a
 * few of its own accesses ahead (with k agents interleaved that is about
 * k times as many accesses of the whole run); and the path is specialised
 * per hierarchy mode and LLC policy like the batch path. */
#include <errno.h>

#include "model/sim/split.h"
#include "model/sim/timed.h"

/* Accesses of the same agent between a prefetch and its use: the L2 block
 * first, then (read from the host-cached L2 block) the LLC blocks an L2
 * miss will touch. */
#define TIMED_AHEAD_L2 8
#define TIMED_AHEAD_LLC 4
/* A prepared buffer's LLC blocks are prefetched this many of the agent's
 * L2 misses ahead, as the batch path does (its L2 hits, issued at once by
 * timed_skip_hits, take no time to speak of). */
#define TIMED_AHEAD_MISSES 8

/* Tags, metadata, and the agent's counters, which lie beyond the first two
 * host lines for the fourth agent on. */
SIM_INLINE void timed_prefetch_llc(const struct sim_path *p, uint32_t set)
{
    const uint8_t *b = path_llc_block(p, set);
    __builtin_prefetch(b, 1);
    if (p->stride > 64)
        __builtin_prefetch(b + 64, 1);
    if (p->stride > 128)
        __builtin_prefetch(b + p->ctr_off + p->agent * sizeof(struct sim_ctr), 1);
}

SIM_INLINE void timed_prefetch_l2(const struct sim_path *p, const struct llc_sim_timed_agent *a,
                                  uint32_t i)
{
    if (p->mode == SIM_MODE_NO_L2)
        return;
    const uint8_t *b2 = path_l2_block(p, a->paddr[i] >> p->line_bits);
    __builtin_prefetch(b2, 1);
    if (p->l2_stride > 64)
        __builtin_prefetch(b2 + 64, 1);
}

/* If access i will miss the L2 (as the L2 is now), prefetches its LLC set
 * and, in an exclusive hierarchy, the set its L2 victim will go to. */
SIM_INLINE void timed_prefetch_miss(const struct sim_path *p, const struct llc_sim_timed_agent *a,
                                    uint32_t i)
{
    if (p->mode == SIM_MODE_NO_L2 || !p->fast) {
        timed_prefetch_llc(p, a->set[i]);
        return;
    }
    const uint64_t line = a->paddr[i] >> p->line_bits;
    const uint8_t *b2 = path_l2_block(p, line);
    if (path_match(b2, p->l2w, (uint32_t)(line >> p->l2_bits)))
        return;
    timed_prefetch_llc(p, a->set[i]);
    if (p->mode != SIM_MODE_EXCLUSIVE || b2[p->l2_count_off] < p->l2w)
        return;
    /* The fast path's L2 is LRU and keeps its lines' LLC sets. */
    const uint64_t lru = sim_match8(b2 + P_META(p->l2w), p->l2w, (uint8_t)(p->l2w - 1));
    const uint16_t *lset = (const uint16_t *)(const void *)(b2 + p->l2_lset_off);
    if (lru)
        timed_prefetch_llc(p, lset[__builtin_ctzll(lru)]);
}

/* The LLC blocks a known L2 miss will touch. */
SIM_INLINE void timed_prefetch_victim(const struct sim_path *p, const struct sim_l2_miss *m)
{
    timed_prefetch_llc(p, m->set);
    if (p->mode == SIM_MODE_EXCLUSIVE && m->victim != SIM_NO_LINE)
        timed_prefetch_llc(p, m->victim_set);
}

/* Issues the prepared agent's L2 hits up to its next event: an access
 * that goes to the LLC, reaches stop_at, or is the last one buffered (the
 * caller's refill touches the shared page allocator). Its L2 was run ahead
 * (llc_sim_timed_prepare) and a hit touches only its own clock and
 * counters, so where the hits fall among the other agents' accesses
 * changes nothing; the events keep the clock order, and the clock is the
 * same sum in the same order. Without a prepared buffer every access is
 * an event. */
SIM_INLINE void timed_skip_hits(struct llc_sim_timed_agent *g)
{
    const struct llc_sim_timed_prep *q = g->prep;
    if (!q || !q->ready || g->pos >= g->len)
        return;
    uint32_t i = g->pos;
    const uint32_t last = g->len - 1;
    const double step = g->cost[LLC_SIM_HIT_L2];
    uint64_t ins = g->instructions, hits = 0;
    double clock = g->clock;
    while (i < last && q->hit[i] && ins + g->instr[i] < g->stop_at) {
        ins += g->instr[i];
        clock += (double)g->instr[i] * g->cpi + step;
        hits++;
        i++;
    }
    g->pos = i;
    g->instructions = ins;
    g->clock = clock;
    g->levels[LLC_SIM_HIT_L2] += hits;
}

/* Whether agent x runs before agent y: the earlier clock, ties to the
 * lower index. */
SIM_INLINE bool timed_before(const struct llc_sim_timed_agent *ag, unsigned x, unsigned y)
{
    return ag[x].clock < ag[y].clock || (ag[x].clock == ag[y].clock && x < y);
}

/* fast: the common geometry (timed_fast) with an L2 of l2w ways. */
SIM_INLINE void timed_paths(struct llc_sim *sim, struct sim_path *p, unsigned n, enum sim_mode mode,
                            enum llc_sim_policy lp, bool fast, uint32_t l2w)
{
    for (unsigned i = 0; i < n; i++) {
        p[i] = path_make(sim, i, fast, mode, lp, SIM_LAYOUT_ASIS);
        if (fast && mode != SIM_MODE_NO_L2)
            p[i] = path_l2_ways(&p[i], l2w);
    }
}

SIM_INLINE int timed_run(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n,
                         enum sim_mode mode, enum llc_sim_policy lp, bool fast, uint32_t l2w)
{
    struct sim_path p[LLC_SIM_MAX_AGENTS];
    timed_paths(sim, p, n, mode, lp, fast, l2w);
    for (unsigned i = 0; i < n; i++) {
        const uint32_t end = ag[i].done ? ag[i].pos : ag[i].len;
        const struct llc_sim_timed_prep *q = ag[i].prep && ag[i].prep->ready ? ag[i].prep : NULL;
        for (uint32_t k = ag[i].pos; !q && k < end && k < ag[i].pos + TIMED_AHEAD_L2; k++)
            timed_prefetch_l2(&p[i], &ag[i], k);
        for (uint32_t k = ag[i].pos; !q && k < end && k < ag[i].pos + TIMED_AHEAD_LLC; k++)
            timed_prefetch_miss(&p[i], &ag[i], k);
        for (uint32_t r = q ? q->next : 0; q && r < q->n_misses && r < q->next + TIMED_AHEAD_MISSES;
             r++)
            timed_prefetch_victim(&p[i], &q->miss[q->misses[r]]);
    }
    /* The agents still running in clock order, ties to the lower index:
     * ord[0] issues next. Only its clock moves, and only forward, so after
     * its turn it goes back to its place among the others by insertion. */
    unsigned ord[LLC_SIM_MAX_AGENTS], m = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ag[i].done)
            continue;
        timed_skip_hits(&ag[i]);
        unsigned j = m++;
        for (; j > 0 && timed_before(ag, i, ord[j - 1]); j--)
            ord[j] = ord[j - 1];
        ord[j] = i;
    }
    if (m == 0)
        return (int)n;
    for (;;) {
        const int a = (int)ord[0], b = m > 1 ? (int)ord[1] : -1;
        const double tb = b >= 0 ? ag[b].clock : 0;
        struct llc_sim_timed_agent *g = &ag[a];
        const struct sim_path *pa = &p[a];
        if (g->pos == g->len)
            return a;
        for (;;) {
            const uint32_t i = g->pos;
            const uint64_t paddr = g->paddr[i];
            /* (prepared buffers were checked by llc_sim_timed_prepare) */
            if (paddr & sim->paddr_reject)
                return -ERANGE;
            if (paddr & sim->narrow_reject) {
                const int rc = sim_make_room(sim, paddr);
                if (rc < 0)
                    return rc;
                timed_paths(sim, p, n, mode, lp, fast, l2w);
            }
            int level;
            if (g->prep && g->prep->ready) {
                struct llc_sim_timed_prep *q = g->prep;
                uint64_t evicted;
                if (q->hit[i]) {
                    level = LLC_SIM_HIT_L2;
                } else {
                    const uint32_t ahead = ++q->next + TIMED_AHEAD_MISSES - 1;
                    if (ahead < q->n_misses)
                        timed_prefetch_victim(pa, &q->miss[q->misses[ahead]]);
                    level = path_llc_part(sim, pa, &q->miss[i], &evicted);
                }
            } else {
                if (i + TIMED_AHEAD_L2 < g->len)
                    timed_prefetch_l2(pa, g, i + TIMED_AHEAD_L2);
                if (i + TIMED_AHEAD_LLC < g->len)
                    timed_prefetch_miss(pa, g, i + TIMED_AHEAD_LLC);
                struct llc_sim_result res;
                level = path_access(sim, pa, paddr, g->set[i], &res);
            }
            g->pos = i + 1;
            g->instructions += g->instr[i];
            g->clock += (double)g->instr[i] * g->cpi + g->cost[level];
            g->levels[level]++;
            if (g->pos == g->len || g->instructions >= g->stop_at)
                return a;
            timed_skip_hits(g);
            if (b >= 0 && !(g->clock < tb || (g->clock == tb && a < b)))
                break;
        }
        unsigned j = 1;
        for (; j < m && timed_before(ag, ord[j], (unsigned)a); j++)
            ord[j - 1] = ord[j];
        ord[j - 1] = (unsigned)a;
    }
}

static int timed_generic(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n)
{
    return timed_run(sim, ag, n, sim->mode, sim->llc.policy, false, 0);
}

/* The common geometry of sim_path_fast, whatever the LLC block layout (which
 * path_make reads at run time): several agents widen the blocks beyond the
 * layout the batch path has in constants. */
static bool timed_fast(const struct llc_sim *sim)
{
    return sim->geo.hash == LLC_SIM_HASH_XOR && sim->geo.n_chunks <= SIM_GEO_FEW_CHUNKS &&
           sim->llc.ways == SIM_FAST_WAYS && sim->line_bits == SIM_FAST_LINE_BITS &&
           (!sim->has_l2 || ((sim->l2[0].ways == 16 || sim->l2[0].ways == 8) &&
                             sim->l2[0].lset_off && sim->l2[0].policy == LLC_SIM_LRU));
}

#define TIMED_VARIANT(name, mode, lp)                                                \
    static int name(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n) \
    {                                                                                \
        return sim->l2[0].ways == 16 ? timed_run(sim, ag, n, mode, lp, true, 16)     \
                                     : timed_run(sim, ag, n, mode, lp, true, 8);     \
    }

#ifdef SIM_FEW_VARIANTS
/* The sanitizer build (see sim/variants.c): LRU only; the other policies
 * run the generic copy, which is the same source. */
TIMED_VARIANT(incl_lru, SIM_MODE_INCLUSIVE, LLC_SIM_LRU)
TIMED_VARIANT(excl_lru, SIM_MODE_EXCLUSIVE, LLC_SIM_LRU)
#define incl_random timed_generic
#define excl_random timed_generic
#define incl_drrip timed_generic
#define excl_drrip timed_generic
#else
/* The presets' hierarchies with the policies the evaluations use. */
TIMED_VARIANT(incl_lru, SIM_MODE_INCLUSIVE, LLC_SIM_LRU)
TIMED_VARIANT(excl_lru, SIM_MODE_EXCLUSIVE, LLC_SIM_LRU)
TIMED_VARIANT(incl_random, SIM_MODE_INCLUSIVE, LLC_SIM_RANDOM)
TIMED_VARIANT(excl_random, SIM_MODE_EXCLUSIVE, LLC_SIM_RANDOM)
TIMED_VARIANT(incl_drrip, SIM_MODE_INCLUSIVE, LLC_SIM_DRRIP)
TIMED_VARIANT(excl_drrip, SIM_MODE_EXCLUSIVE, LLC_SIM_DRRIP)
#endif

int sim_timed_run(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n)
{
    const bool incl = sim->mode == SIM_MODE_INCLUSIVE, excl = sim->mode == SIM_MODE_EXCLUSIVE;
    if (!timed_fast(sim) || !(incl || excl))
        return timed_generic(sim, ag, n);
    switch (sim->llc.policy) {
    case LLC_SIM_LRU:
        return incl ? incl_lru(sim, ag, n) : excl_lru(sim, ag, n);
    case LLC_SIM_RANDOM:
        return incl ? incl_random(sim, ag, n) : excl_random(sim, ag, n);
    case LLC_SIM_DRRIP:
        return incl ? incl_drrip(sim, ag, n) : excl_drrip(sim, ag, n);
    default:
        return timed_generic(sim, ag, n);
    }
}

/* Translation as the batch path does it (sim/split.h): each chunk's
 * page-table entries are looked up and prefetched in a tight loop, then
 * read during the chunk's translation (pages mapped in access order), the
 * next chunk's prefetched meanwhile. */
SIM_INLINE int timed_locate(const struct sim_path *p, const uint64_t *addrs, size_t n,
                            uint64_t *paddr, uint32_t *set)
{
    const uint64_t *slots[2][SIM_SPLIT_CHUNK];
    split_prefetch_pages(p, addrs, n < SIM_SPLIT_CHUNK ? n : SIM_SPLIT_CHUNK, slots[0]);
    for (size_t done = 0, c = 0; done < n; c ^= 1) {
        const size_t m = n - done < SIM_SPLIT_CHUNK ? n - done : SIM_SPLIT_CHUNK;
        const size_t rest = n - done - m;
        split_prefetch_pages(p, addrs + done + m, rest < SIM_SPLIT_CHUNK ? rest : SIM_SPLIT_CHUNK,
                             slots[c ^ 1]);
        for (size_t i = 0; i < m; i++) {
            const int rc = path_translate_at(p, addrs[done + i], slots[c][i], &paddr[done + i],
                                             &set[done + i]);
            if (rc < 0)
                return rc;
        }
        done += m;
    }
    return 0;
}

int sim_timed_locate(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                     bool phys, uint64_t *paddr, uint32_t *set)
{
    const struct sim_path p =
        path_make(sim, agent, false, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
    if (phys) {
        for (size_t i = 0; i < n; i++) {
            if (addrs[i] & sim->paddr_reject)
                return -ERANGE;
            paddr[i] = addrs[i];
            set[i] = sim_geo_set(&sim->geo, addrs[i]);
        }
        return 0;
    }
    /* Copies without the per-access tests of the set's computation. */
    if (p.page_split) {
        const struct sim_path q = path_page_split(&p, true);
        return timed_locate(&q, addrs, n, paddr, set);
    }
    if (timed_fast(sim)) {
        const struct sim_path f =
            path_make(sim, agent, true, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
        const struct sim_path q = path_page_split(&f, false);
        return timed_locate(&q, addrs, n, paddr, set);
    }
    const struct sim_path q = path_page_split(&p, false);
    return timed_locate(&q, addrs, n, paddr, set);
}

SIM_INLINE void timed_l2_pass(const struct sim_path *p, struct llc_sim_timed_agent *ag,
                              struct llc_sim_timed_prep *q)
{
    uint64_t hits = 0;
    for (uint32_t i = ag->pos; i < ag->len; i++) {
        if (i + TIMED_AHEAD_L2 < ag->len)
            timed_prefetch_l2(p, ag, i + TIMED_AHEAD_L2);
        const uint64_t line = ag->paddr[i] >> p->line_bits;
        struct sim_l2_miss *m = &q->miss[i];
        bool hit;
        if (p->mode == SIM_MODE_NO_L2) {
            *m = (struct sim_l2_miss){line, ag->set[i], 0, SIM_NO_LINE};
            hit = false;
        } else if (p->fast) {
            hit = path_l2_part_lru(p, line, ag->set[i], m);
        } else {
            hit = path_l2_part(p, line, ag->set[i], m);
        }
        q->hit[i] = hit;
        q->misses[q->n_misses] = i;
        q->n_misses += !hit;
        hits += hit;
    }
    if (p->fast && p->mode != SIM_MODE_NO_L2) {
        /* path_l2_part_lru leaves the counting to its caller. */
        p->ac->l2_hits += hits;
        p->ac->l2_misses += (ag->len - ag->pos) - hits;
    }
    p->ac->accesses += ag->len - ag->pos;
}

int sim_timed_l2(struct llc_sim *sim, unsigned agent, struct llc_sim_timed_agent *ag)
{
    struct llc_sim_timed_prep *q = ag->prep;
    if (timed_fast(sim) && sim->has_l2 && sim->l2[0].ways == 16) {
        const struct sim_path f =
            path_make(sim, agent, true, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
        const struct sim_path f16 = path_l2_ways(&f, 16);
        timed_l2_pass(&f16, ag, q);
    } else if (timed_fast(sim) && sim->has_l2) {
        const struct sim_path f =
            path_make(sim, agent, true, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
        const struct sim_path f8 = path_l2_ways(&f, 8);
        timed_l2_pass(&f8, ag, q);
    } else {
        const struct sim_path p =
            path_make(sim, agent, false, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
        timed_l2_pass(&p, ag, q);
    }
    return 0;
}
