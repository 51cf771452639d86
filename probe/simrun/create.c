/* Driver lifecycle: building the simulator and the agents' streams,
 * accessors, and the time series of frames. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "simrun/simrun_internal.h"

const char *llc_simrun_role_name(enum llc_simrun_role role)
{
    switch (role) {
    case LLC_SIMRUN_TARGET:
        return "target";
    case LLC_SIMRUN_NOISE:
        return "noise";
    case LLC_SIMRUN_PROBE:
        return "probe";
    }
    return "?";
}

static uint64_t mix_seed(uint64_t seed, uint64_t salt)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (salt + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Physical-mode regions start above both page allocators' memory. */
static uint64_t phys_region_base(const struct llc_sim_config *c)
{
    const uint64_t top = 2 * c->phys_mem_bytes;
    return (top + SIMRUN_PHYS_STRIDE - 1) & ~(SIMRUN_PHYS_STRIDE - 1);
}

static int open_stream(struct llc_simrun *r, unsigned i, const struct llc_simrun_agent *in,
                       const struct llc_sim_config *c, char *err, size_t errlen)
{
    struct simrun_agent *a = &r->agent[i];
    char sub[LLC_ERRLEN];
    int rc = 0;
    switch (in->source) {
    case LLC_SIMRUN_WORKLOAD: {
        const struct llc_workload_target t = {.geometry = &c->llc, .phys_base = a->phys_base};
        rc =
            llc_workload_create(in->spec, &t, mix_seed(c->seed, i), &a->workload, sub, sizeof(sub));
        if (rc < 0)
            return llc_errf(err, errlen, rc, "%s: %s", a->name, sub);
        a->physical = llc_workload_is_physical(a->workload);
        if (a->physical && llc_workload_extent(a->workload) > SIMRUN_PHYS_STRIDE)
            return llc_errf(err, errlen, -EINVAL, "%s: workload region too large", a->name);
        break;
    }
    case LLC_SIMRUN_TRACE:
        if (!in->trace_path)
            return llc_errf(err, errlen, -EINVAL, "%s: no trace file given", a->name);
        snprintf(a->trace_path, sizeof(a->trace_path), "%s", in->trace_path);
        rc = llc_trace_reader_open(in->trace_path, &a->trace, err, errlen);
        if (rc < 0)
            return rc;
        {
            /* A damaged run length can decode to billions of records before
             * the checksum at the end is reached; the trailer's counts bound
             * them. */
            const struct llc_trace_info *ti = llc_trace_reader_info(a->trace);
            a->trace_records = ti->n_instr + ti->n_load + ti->n_store + ti->n_modify;
        }
        break;
    case LLC_SIMRUN_CALLBACK:
        if (!in->next)
            return llc_errf(err, errlen, -EINVAL, "%s: callback agent without a callback", a->name);
        a->next = in->next;
        a->ctx = in->ctx;
        a->physical = in->physical;
        return 0;
    default:
        return llc_errf(err, errlen, -EINVAL, "%s: unknown stream source", a->name);
    }
    a->addrs = malloc(SIMRUN_BATCH * sizeof(*a->addrs));
    a->is_write = malloc(SIMRUN_BATCH);
    if (!a->addrs || !a->is_write)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", a->name);
    const uint32_t page = in->page_size ? in->page_size : c->page_size;
    if (!a->physical && page != c->page_size) {
        if (!r->alt_pages) {
            rc = llc_sim_pages_create(c->phys_mem_bytes, page, c->agents,
                                      mix_seed(c->seed, 0xA110C), &r->alt_pages, sub, sizeof(sub));
            if (rc < 0)
                return llc_errf(err, errlen, rc, "%s: page allocator: %s", a->name, sub);
            r->alt_offset = c->phys_mem_bytes;
        }
        a->translate = true;
        a->physical = true;
    }
    return 0;
}

static int check_agent(const struct llc_simrun_agent *in, unsigned i, char *err, size_t errlen)
{
    if (!(in->rate > 0) || !isfinite(in->rate))
        return llc_errf(err, errlen, -EINVAL, "agent %u: rate must be a positive number", i);
    if (in->page_size != 0 && in->page_size != 4096 && in->page_size != (2u << 20))
        return llc_errf(err, errlen, -EINVAL, "agent %u: page size must be 4 KiB or 2 MiB", i);
    if (in->role > LLC_SIMRUN_PROBE)
        return llc_errf(err, errlen, -EINVAL, "agent %u: unknown role", i);
    return 0;
}

int llc_simrun_create(const struct llc_sim_config *cfg, const struct llc_simrun_agent *agents,
                      unsigned n, struct llc_simrun **out, char *err, size_t errlen)
{
    *out = NULL;
    if (n == 0 || n > LLC_SIM_MAX_AGENTS)
        return llc_errf(err, errlen, -EINVAL, "need 1..%d agents, got %u", LLC_SIM_MAX_AGENTS, n);
    struct llc_sim_config c = *cfg;
    c.agents = n;
    int rc = llc_sim_config_check(&c, err, errlen);
    if (rc < 0)
        return rc;
    if (c.phys_mem_bytes > ((uint64_t)1 << 46))
        return llc_errf(err, errlen, -EINVAL, "simulated physical memory above 64 TiB");
    for (unsigned i = 0; i < n; i++) {
        rc = check_agent(&agents[i], i, err, errlen);
        if (rc < 0)
            return rc;
    }

    struct llc_simrun *r = calloc(1, sizeof(*r));
    if (!r)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    r->agent = calloc(n, sizeof(*r->agent));
    if (!r->agent) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    r->nagents = n;
    rc = llc_sim_create(&c, &r->sim, err, errlen);
    if (rc < 0)
        goto out;
    r->nsets = llc_sim_sets(r->sim);
    r->line_size = c.llc.line_size;
    for (unsigned i = 0; i < n; i++)
        r->any_target |= agents[i].role == LLC_SIMRUN_TARGET;
    unsigned role_count[3] = {0, 0, 0};
    for (unsigned i = 0; i < n; i++) {
        const struct llc_simrun_agent *in = &agents[i];
        struct simrun_agent *a = &r->agent[i];
        if (in->name)
            snprintf(a->name, sizeof(a->name), "%s", in->name);
        else
            snprintf(a->name, sizeof(a->name), "%s%u", llc_simrun_role_name(in->role),
                     role_count[in->role]);
        role_count[in->role]++;
        a->role = in->role;
        a->source = in->source;
        a->counted = !r->any_target || in->role == LLC_SIMRUN_TARGET;
        a->rate = in->rate;
        a->period = 1.0 / in->rate;
        a->page_size = in->page_size;
        if (in->source == LLC_SIMRUN_WORKLOAD && in->spec)
            snprintf(a->spec, sizeof(a->spec), "%s", in->spec);
        a->phys_base = phys_region_base(&c) + i * SIMRUN_PHYS_STRIDE;
        rc = open_stream(r, i, in, &c, err, errlen);
        if (rc < 0)
            goto out;
    }
out:
    if (rc < 0)
        llc_simrun_destroy(r);
    else
        *out = r;
    return rc;
}

void llc_simrun_destroy(struct llc_simrun *r)
{
    if (!r)
        return;
    for (unsigned i = 0; r->agent && i < r->nagents; i++) {
        struct simrun_agent *a = &r->agent[i];
        llc_workload_destroy(a->workload);
        if (a->trace)
            llc_trace_reader_close(a->trace);
        free(a->addrs);
        free(a->is_write);
    }
    for (size_t i = 0; i < r->frames.n; i++)
        free((void *)r->frames.frames[i].sets);
    free(r->frames.frames);
    llc_sim_pages_destroy(r->alt_pages);
    llc_sim_destroy(r->sim);
    free(r->agent);
    free(r);
}

struct llc_sim *llc_simrun_sim(struct llc_simrun *r)
{
    return r->sim;
}
const struct llc_sim *llc_simrun_sim_const(const struct llc_simrun *r)
{
    return r->sim;
}
unsigned llc_simrun_agents(const struct llc_simrun *r)
{
    return r->nagents;
}
uint64_t llc_simrun_counted(const struct llc_simrun *r)
{
    return r->counted;
}
uint64_t llc_simrun_total(const struct llc_simrun *r)
{
    return r->total;
}
double llc_simrun_clock(const struct llc_simrun *r)
{
    return r->clock;
}

int llc_simrun_set_rate(struct llc_simrun *r, unsigned agent, double rate)
{
    if (!r || agent >= r->nagents || !(rate > 0) || !isfinite(rate))
        return -EINVAL;
    struct simrun_agent *a = &r->agent[agent];
    a->rate = rate;
    a->period = 1.0 / rate;
    a->t0 = r->clock + a->period;
    a->k0 = a->issued;
    return 0;
}

const char *llc_simrun_agent_name(const struct llc_simrun *r, unsigned agent)
{
    return agent < r->nagents ? r->agent[agent].name : NULL;
}

uint64_t llc_simrun_phys_base(const struct llc_simrun *r, unsigned agent)
{
    return agent < r->nagents ? r->agent[agent].phys_base : 0;
}

int llc_simrun_agent_state(const struct llc_simrun *r, unsigned agent,
                           struct llc_simrun_agent_state *out)
{
    if (agent >= r->nagents)
        return -EINVAL;
    const struct simrun_agent *a = &r->agent[agent];
    *out = (struct llc_simrun_agent_state){
        .role = a->role,
        .accesses = a->issued,
        .writes = a->writes,
        .instructions = a->instructions,
        .records = a->records,
        .physical = a->physical,
        .ended = a->ended,
    };
    return 0;
}

int llc_simrun_capture(struct llc_simrun *r, char *err, size_t errlen)
{
    struct simrun_frame_store *fs = &r->frames;
    if (fs->n == fs->cap) {
        const size_t cap = fs->cap ? 2 * fs->cap : 16;
        struct llc_simrun_frame *f = realloc(fs->frames, cap * sizeof(*f));
        if (!f)
            return llc_errf(err, errlen, -ENOMEM, "out of memory for the time series");
        fs->frames = f;
        fs->cap = cap;
    }
    struct llc_sim_set_stats *sets = malloc((size_t)r->nagents * r->nsets * sizeof(*sets));
    if (!sets)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for the time series");
    for (unsigned a = 0; a < r->nagents; a++)
        llc_sim_set_stats(r->sim, (int)a, sets + (size_t)a * r->nsets, r->nsets);
    fs->frames[fs->n++] = (struct llc_simrun_frame){
        .counted = r->counted,
        .total = r->total,
        .clock = r->clock,
        .sets = sets,
        .nsets = r->nsets,
    };
    return 0;
}

size_t llc_simrun_frame_count(const struct llc_simrun *r)
{
    return r->frames.n;
}

const struct llc_simrun_frame *llc_simrun_frame_at(const struct llc_simrun *r, size_t i)
{
    return i < r->frames.n ? &r->frames.frames[i] : NULL;
}
