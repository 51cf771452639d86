/* The timed co-run driver: streams, windows, the solo runs. The clock
 * order itself is the simulator's kernel (llc_sim_run_timed). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "util/clock.h"

/* Accesses buffered per agent: refills are rare, and the stop flag is
 * looked at on every return of the kernel, at most this many accesses of
 * each agent apart. */
#define CORUN_BATCH 1024
#define CORUN_MAX_RECORD_BYTES 4096u
#define CORUN_PHYS_STRIDE ((uint64_t)1 << 42)
#define CORUN_PROGRESS_EVERY ((uint64_t)1 << 22)

struct cr_agent {
    const struct llc_corun_agent *in;
    char name[64];
    unsigned seed_index; /* the agent's index in the co-run */
    struct llc_workload *wl;
    struct llc_trace_reader *tr;
    uint64_t trace_records, records;
    size_t array_pos;
    bool physical, ended;
    bool restarted;      /* past its first pass (params.restart) */
    bool trace_no_instr; /* a trace without instruction records: ipa */
    uint64_t emitted;    /* accesses produced, for ipa */
    /* a trace record's remaining lines */
    uint64_t pend_addr, pend_lines;
    uint32_t pend_instr; /* instruction records since the last access */
    uint64_t vaddr[CORUN_BATCH], paddr[CORUN_BATCH];
    uint32_t set[CORUN_BATCH], instr[CORUN_BATCH];
    /* the open window: counters at its start */
    struct llc_corun_window start;
    uint64_t win_end;
    size_t cap;
};

void llc_corun_params_default(struct llc_corun_params *p)
{
    *p = (struct llc_corun_params){
        .lat_l2 = LLC_CORUN_DEFAULT_LAT_L2,
        .lat_llc = LLC_CORUN_DEFAULT_LAT_LLC,
        .lat_mem = LLC_CORUN_DEFAULT_LAT_MEM,
        .window = LLC_CORUN_DEFAULT_WINDOW,
        .solo = true,
    };
}

void llc_corun_agent_default(struct llc_corun_agent *a)
{
    a->cpi = LLC_CORUN_DEFAULT_CPI;
    a->mlp = LLC_CORUN_DEFAULT_MLP;
    a->ipa = LLC_CORUN_DEFAULT_IPA;
}

/* As the sim command seeds its agents (probe/simrun), so a workload gives
 * the same stream under `sim` and `sim --corun`. */
static uint64_t mix_seed(uint64_t seed, uint64_t salt)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (salt + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t llc_corun_stream_seed(uint64_t seed, unsigned i)
{
    return mix_seed(seed, i);
}

static uint64_t phys_base(const struct llc_sim_config *c, unsigned i)
{
    const uint64_t top = 2 * c->phys_mem_bytes;
    return ((top + CORUN_PHYS_STRIDE - 1) & ~(CORUN_PHYS_STRIDE - 1)) + i * CORUN_PHYS_STRIDE;
}

static int open_agent(struct cr_agent *a, const struct llc_sim_config *c, char *err, size_t errlen)
{
    const struct llc_corun_agent *in = a->in;
    char sub[LLC_ERRLEN];
    int rc;
    if (!(in->cpi > 0) || !(in->mlp > 0) || !(in->ipa > 0) || !isfinite(in->cpi) ||
        !isfinite(in->mlp) || !isfinite(in->ipa))
        return llc_errf(err, errlen, -EINVAL, "%s: cpi, mlp and ipa must be positive numbers",
                        a->name);
    switch (in->source) {
    case LLC_CORUN_WORKLOAD: {
        if (!in->spec)
            return llc_errf(err, errlen, -EINVAL, "%s: no workload spec", a->name);
        if (!in->instructions)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: a synthetic workload never ends: give an instruction budget",
                            a->name);
        const struct llc_workload_target t = {.geometry = &c->llc,
                                              .phys_base = phys_base(c, a->seed_index)};
        rc = llc_workload_create(in->spec, &t, mix_seed(c->seed, a->seed_index), &a->wl, sub,
                                 sizeof(sub));
        if (rc < 0)
            return llc_errf(err, errlen, rc, "%s: %s", a->name, sub);
        a->physical = llc_workload_is_physical(a->wl);
        if (a->physical && llc_workload_extent(a->wl) > CORUN_PHYS_STRIDE)
            return llc_errf(err, errlen, -EINVAL, "%s: workload region too large", a->name);
        return 0;
    }
    case LLC_CORUN_TRACE:
        if (!in->trace_path)
            return llc_errf(err, errlen, -EINVAL, "%s: no trace file", a->name);
        rc = llc_trace_reader_open(in->trace_path, &a->tr, err, errlen);
        if (rc < 0)
            return rc;
        {
            const struct llc_trace_info *ti = llc_trace_reader_info(a->tr);
            a->trace_records = ti->n_instr + ti->n_load + ti->n_store + ti->n_modify;
            a->trace_no_instr = ti->n_instr == 0;
        }
        return 0;
    case LLC_CORUN_ARRAY:
        if (!in->addrs && in->n)
            return llc_errf(err, errlen, -EINVAL, "%s: no addresses", a->name);
        a->physical = in->phys;
        return 0;
    }
    return llc_errf(err, errlen, -EINVAL, "%s: unknown source", a->name);
}

/* The instructions before accesses k..k+n-1 of an ipa stream into
 * instr[0..n): floor((j + 1) * ipa) - floor(j * ipa) before access j, so
 * those before access j add up to floor(j * ipa); each floor computed
 * once. A whole ipa whose products stay below 2^53 (exact in a double)
 * gives ipa every time, without the floors. */
static void ipa_instr_fill(double ipa, uint64_t k, uint32_t *instr, uint32_t n)
{
    if (ipa == floor(ipa) && ipa <= UINT32_MAX && (double)(k + n) * ipa < 0x1p53) {
        for (uint32_t j = 0; j < n; j++)
            instr[j] = (uint32_t)ipa;
        return;
    }
    double below = floor((double)k * ipa);
    for (uint32_t j = 0; j < n; j++) {
        const double upto = floor((double)(k + j + 1) * ipa);
        instr[j] = (uint32_t)(upto - below);
        below = upto;
    }
}

uint32_t llc_corun_ipa_instr(double ipa, uint64_t k)
{
    uint32_t instr;
    ipa_instr_fill(ipa, k, &instr, 1);
    return instr;
}

static int fill_trace(struct cr_agent *a, uint32_t *len, uint32_t line_size, char *err,
                      size_t errlen)
{
    uint32_t n = 0;
    for (;;) {
        while (a->pend_lines && n < CORUN_BATCH) {
            a->vaddr[n] = a->pend_addr;
            a->instr[n] = a->pend_instr;
            a->pend_instr = 0;
            n++;
            a->pend_addr = (a->pend_addr | (line_size - 1)) + 1;
            a->pend_lines--;
        }
        if (n == CORUN_BATCH)
            break;
        struct llc_trace_rec rec;
        const int rc = llc_trace_reader_next(a->tr, &rec, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        if (++a->records > a->trace_records)
            return llc_errf(err, errlen, -EPROTO,
                            "%s: more records than its trailer counts (%llu): the file is corrupt",
                            a->in->trace_path, (unsigned long long)a->trace_records);
        if (rec.kind == LLC_TRACE_INSTR) {
            a->pend_instr += a->pend_instr < UINT32_MAX;
            continue;
        }
        const uint64_t size = rec.size ? rec.size : 1;
        if (rec.kind > LLC_TRACE_MODIFY || size > CORUN_MAX_RECORD_BYTES)
            return llc_errf(err, errlen, -EPROTO,
                            "%s: record %llu is not a plausible access (kind %u, %llu bytes): "
                            "the file is corrupt",
                            a->in->trace_path, (unsigned long long)a->records, rec.kind,
                            (unsigned long long)size);
        a->pend_addr = rec.addr;
        a->pend_lines = ((rec.addr & (line_size - 1)) + size - 1) / line_size + 1;
    }
    *len = n;
    return 0;
}

/* Refills agent i's buffer (translated, located) into t. */
static int refill(struct llc_sim *sim, unsigned i, struct cr_agent *a,
                  struct llc_sim_timed_agent *t, char *err, size_t errlen)
{
    const struct llc_sim_config *c = llc_sim_config_of(sim);
    const struct llc_corun_agent *in = a->in;
    uint32_t n = 0;
    if (a->wl) {
        n = (uint32_t)llc_workload_fill(a->wl, a->vaddr, NULL, CORUN_BATCH);
    } else if (a->tr) {
        const int rc = fill_trace(a, &n, c->llc.line_size, err, errlen);
        if (rc < 0)
            return rc;
    } else {
        const size_t left = in->n - a->array_pos;
        n = left < CORUN_BATCH ? (uint32_t)left : CORUN_BATCH;
        memcpy(a->vaddr, in->addrs + a->array_pos, n * sizeof(*a->vaddr));
        if (in->instr)
            memcpy(a->instr, in->instr + a->array_pos, n * sizeof(*a->instr));
        a->array_pos += n;
    }
    if ((!a->tr || a->trace_no_instr) && !(a->in->source == LLC_CORUN_ARRAY && in->instr)) {
        ipa_instr_fill(in->ipa, a->emitted, a->instr, n);
    }
    /* Nothing beyond the access that spends the budget: the L2 half of a
     * buffer is done ahead of the clock (llc_sim_timed_prepare). */
    const uint64_t budget = in->instructions;
    if (budget && !a->restarted) {
        uint64_t at = t->instructions;
        for (uint32_t k = 0; k < n; k++) {
            at += a->instr[k];
            if (at >= budget) {
                n = k + 1;
                break;
            }
        }
    }
    int rc = llc_sim_locate_batch(sim, i, a->vaddr, n, a->physical, a->paddr, a->set);
    if (rc == -ENOMEM)
        return llc_errf(err, errlen, rc, "%s: simulated physical memory exhausted", a->name);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: address beyond the simulator's physical memory",
                        a->name);
    a->emitted += n;
    t->paddr = a->paddr;
    t->set = a->set;
    t->instr = a->instr;
    t->pos = 0;
    t->len = n;
    rc = llc_sim_timed_prepare(sim, i, t);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s: simulator refused an access (code %d)", a->name, rc);
    return (int)n;
}

static int series_push(struct llc_corun_series *s, size_t *cap, const struct llc_corun_window *w)
{
    if (s->n == *cap) {
        const size_t nc = *cap ? 2 * *cap : 64;
        struct llc_corun_window *nw = realloc(s->w, nc * sizeof(*nw));
        if (!nw)
            return -ENOMEM;
        s->w = nw;
        *cap = nc;
    }
    s->w[s->n++] = *w;
    return 0;
}

/* The agent's cumulative counters now, in window form. Accesses are those
 * its clock has run through (served by some level), as its instructions
 * and LLC counts are: the simulator's own count takes a buffer's accesses
 * when it runs their private level ahead, up to a buffer before the clock
 * (a window's LLC accesses then exceeded its accesses, by 0.06% over a
 * phase of a profile without the L2). */
static void counters_now(const struct llc_sim *sim, unsigned i, const struct llc_sim_timed_agent *t,
                         struct llc_corun_window *w)
{
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, (int)i, &st);
    *w = (struct llc_corun_window){
        .instructions = t->instructions,
        .accesses =
            t->levels[LLC_SIM_HIT_L2] + t->levels[LLC_SIM_HIT_LLC] + t->levels[LLC_SIM_HIT_DRAM],
        .llc_accesses = st.llc_hits + st.llc_misses,
        .llc_misses = st.llc_misses,
        .occupancy = st.llc_occupancy,
        .cycles = t->clock,
    };
}

/* Closes the open window of agent i (if it has instructions). */
static int close_window(const struct llc_sim *sim, unsigned i, struct cr_agent *a,
                        const struct llc_sim_timed_agent *t, struct llc_corun_series *s)
{
    struct llc_corun_window now;
    counters_now(sim, i, t, &now);
    if (now.instructions == a->start.instructions)
        return 0;
    const struct llc_corun_window w = {
        .instructions = now.instructions - a->start.instructions,
        .accesses = now.accesses - a->start.accesses,
        .llc_accesses = now.llc_accesses - a->start.llc_accesses,
        .llc_misses = now.llc_misses - a->start.llc_misses,
        .occupancy = now.occupancy,
        .cycles = now.cycles - a->start.cycles,
    };
    a->start = now;
    return series_push(s, &a->cap, &w);
}

static void finish_series(const struct llc_sim *sim, unsigned i,
                          const struct llc_sim_timed_agent *t, struct llc_corun_series *s)
{
    struct llc_corun_window now;
    counters_now(sim, i, t, &now);
    s->instructions = now.instructions;
    s->accesses = now.accesses;
    s->llc_accesses = now.llc_accesses;
    s->llc_misses = now.llc_misses;
    s->cycles = now.cycles;
    s->occupancy_end = now.occupancy;
    memcpy(s->levels, t->levels, sizeof(s->levels));
}

static uint64_t next_stop(const struct cr_agent *a)
{
    if (a->restarted) /* no windows, no budget: it only loads the cache */
        return UINT64_MAX;
    const uint64_t budget = a->in->instructions;
    return budget && budget < a->win_end ? budget : a->win_end;
}

static uint64_t expected_accesses(const struct cr_agent *ag, unsigned n)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        const struct llc_corun_agent *in = ag[i].in;
        if (in->source == LLC_CORUN_ARRAY)
            sum += in->n;
        else if (in->instructions)
            sum += (uint64_t)((double)in->instructions / in->ipa);
        else
            return 0;
    }
    return sum;
}

/* Agent a starts its stream again from the beginning (params.restart). */
static int restart_agent(struct cr_agent *a, const struct llc_sim_config *c, char *err,
                         size_t errlen)
{
    llc_workload_destroy(a->wl);
    a->wl = NULL;
    if (a->tr)
        llc_trace_reader_close(a->tr);
    a->tr = NULL;
    a->records = 0;
    a->array_pos = 0;
    a->pend_addr = a->pend_lines = 0;
    a->pend_instr = 0;
    a->restarted = true;
    return open_agent(a, c, err, errlen);
}

/* Runs agents[idx[0..n)] together: series[k] gets agent idx[k]'s windows. */
static int run_group(const struct llc_sim_config *cfg, const struct llc_corun_agent *agents,
                     const unsigned *idx, unsigned n, const struct llc_corun_params *p,
                     struct llc_corun_series *series, uint64_t *total, char *err, size_t errlen)
{
    struct llc_sim_config c = *cfg;
    c.agents = n;
    struct llc_sim *sim = NULL;
    struct cr_agent *ag = calloc(n, sizeof(*ag));
    struct llc_sim_timed_agent t[LLC_CORUN_MAX_AGENTS];
    int rc = ag ? llc_sim_create(&c, &sim, err, errlen)
                : llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc < 0)
        goto out;
    memset(t, 0, sizeof(t));
    for (unsigned k = 0; k < n; k++) {
        struct cr_agent *a = &ag[k];
        const struct llc_corun_agent *in = &agents[idx[k]];
        a->in = in;
        a->seed_index = idx[k];
        if (in->name)
            snprintf(a->name, sizeof(a->name), "%s", in->name);
        else
            snprintf(a->name, sizeof(a->name), "agent%u", idx[k]);
        rc = open_agent(a, &c, err, errlen);
        if (rc < 0)
            goto out;
        a->win_end = p->window;
        t[k].cpi = in->cpi;
        t[k].cost[LLC_SIM_HIT_L2] = p->lat_l2 / in->mlp;
        t[k].cost[LLC_SIM_HIT_LLC] = p->lat_llc / in->mlp;
        t[k].cost[LLC_SIM_HIT_DRAM] = p->lat_mem / in->mlp;
        t[k].stop_at = next_stop(a);
        t[k].paddr = a->paddr;
        t[k].set = a->set;
        t[k].instr = a->instr;
        if (llc_sim_timed_prep_create(CORUN_BATCH, &t[k].prep) < 0) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
    }
    const uint64_t expected = expected_accesses(ag, n);
    uint64_t done = 0, next_progress = CORUN_PROGRESS_EVERY;
    unsigned first_passes = 0;
    while (first_passes < n) {
        const int k = llc_sim_run_timed(sim, t, n);
        if (k < 0) {
            rc = llc_errf(err, errlen, k, "simulator refused an access (code %d)", k);
            goto out;
        }
        if ((unsigned)k == n)
            break;
        if (p->stop && *p->stop) {
            rc = llc_errf(err, errlen, -EINTR, "interrupted");
            goto out;
        }
        struct cr_agent *a = &ag[k];
        struct llc_sim_timed_agent *tk = &t[k];
        const uint64_t budget = a->restarted ? 0 : a->in->instructions;
        if (!a->restarted && tk->instructions >= a->win_end) {
            rc = close_window(sim, (unsigned)k, a, tk, &series[k]);
            if (rc < 0)
                goto nomem;
            /* One access may carry instructions past several window ends. */
            a->win_end = (tk->instructions / p->window + 1) * p->window;
        }
        if (budget && tk->instructions >= budget) {
            tk->done = true;
        } else if (tk->pos == tk->len) {
            done += tk->len;
            rc = refill(sim, (unsigned)k, a, tk, err, errlen);
            if (rc < 0)
                goto out;
            tk->done = rc == 0;
        }
        if (tk->done && !a->restarted) {
            rc = close_window(sim, (unsigned)k, a, tk, &series[k]);
            if (rc < 0)
                goto nomem;
            finish_series(sim, (unsigned)k, tk, &series[k]);
            first_passes++;
        }
        if (tk->done && p->restart && first_passes < n) {
            if ((rc = restart_agent(a, &c, err, errlen)) < 0)
                goto out;
            tk->pos = tk->len;
            if ((rc = refill(sim, (unsigned)k, a, tk, err, errlen)) < 0)
                goto out;
            if (rc == 0) {
                rc = llc_errf(err, errlen, -EINVAL, "%s: nothing to run again", a->name);
                goto out;
            }
            tk->done = false;
        }
        tk->stop_at = next_stop(a);
        if (p->progress && done >= next_progress) {
            p->progress(p->progress_ctx, done, expected);
            next_progress = done + CORUN_PROGRESS_EVERY;
        }
    }
    for (unsigned k = 0; k < n; k++)
        *total += series[k].accesses;
    rc = 0;
    goto out;
nomem:
    rc = llc_errf(err, errlen, -ENOMEM, "out of memory for the windows");
out:
    for (unsigned k = 0; ag && k < n; k++) {
        llc_sim_timed_prep_destroy(t[k].prep);
        llc_workload_destroy(ag[k].wl);
        if (ag[k].tr)
            llc_trace_reader_close(ag[k].tr);
    }
    free(ag);
    llc_sim_destroy(sim);
    return rc;
}

int llc_corun_run(const struct llc_sim_config *cfg, const struct llc_corun_agent *agents,
                  unsigned n, const struct llc_corun_params *p, struct llc_corun_result **out,
                  char *err, size_t errlen)
{
    *out = NULL;
    if (n == 0 || n > LLC_CORUN_MAX_AGENTS)
        return llc_errf(err, errlen, -EINVAL, "need 1..%d programs, got %u", LLC_CORUN_MAX_AGENTS,
                        n);
    if (p->window == 0 || !(p->lat_l2 > 0) || !(p->lat_llc > 0) || !(p->lat_mem > 0))
        return llc_errf(err, errlen, -EINVAL, "window and latencies must be positive");
    struct llc_corun_result *r = calloc(1, sizeof(*r));
    if (!r)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    r->n = n;
    unsigned idx[LLC_CORUN_MAX_AGENTS];
    for (unsigned i = 0; i < n; i++) {
        idx[i] = i;
        if (agents[i].name)
            snprintf(r->name[i], sizeof(r->name[i]), "%s", agents[i].name);
        else
            snprintf(r->name[i], sizeof(r->name[i]), "agent%u", i);
    }
    double t0 = llc_now();
    const double c0 = llc_thread_cpu_now();
    int rc = run_group(cfg, agents, idx, n, p, r->corun, &r->total_accesses, err, errlen);
    r->wall_corun_s = llc_now() - t0;
    r->cpu_corun_s = llc_thread_cpu_now() - c0;
    if (rc < 0 || !p->solo)
        goto out;
    t0 = llc_now();
    for (unsigned i = 0; i < n; i++) {
        uint64_t ignored = 0;
        rc = run_group(cfg, agents, &idx[i], 1, p, &r->solo[i], &ignored, err, errlen);
        if (rc < 0)
            goto out;
    }
    r->wall_solo_s = llc_now() - t0;
    r->has_solo = true;
out:
    if (rc < 0)
        llc_corun_free(r);
    else
        *out = r;
    return rc;
}

void llc_corun_free(struct llc_corun_result *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->n; i++) {
        free(r->corun[i].w);
        free(r->solo[i].w);
    }
    free(r);
}
