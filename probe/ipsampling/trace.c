/* Offline windows: a recorded trace's instruction addresses, sampled at the
 * live sampler's rate, so `phase --trace` classifies what `phase -- app`
 * would have seen (with exact instruction-count windows). A trace without
 * instruction records (the clang runtime's) is cut by data records instead,
 * its samples being the code addresses of the accesses, as the runtime's
 * own windows sample them (probe/rt/window.c). */
#include "ipsampling/sampling_internal.h"
#include "llcprobe/rng.h"

#include "llcprobe/common.h"
#include "llcprobe/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct llc_sampling_trace {
    struct llc_sampling_trace_config cfg;
    struct llc_trace_reader *r;
    struct llc_sampling_sink sink;
    uint64_t rng, index;
    uint64_t last_ip; /* address of the last instruction record: data records' pc if theirs is 0 */
    bool has_instr;   /* the trace has instruction records (header, or seen) */
    bool ended;
};

/* Uniform in [1, hi]. */
static uint64_t draw(uint64_t *state, uint64_t hi)
{
    return hi <= 1 ? 1 : 1 + llc_splitmix_next(state) % hi;
}

int llc_sampling_trace_open(const char *path, const struct llc_sampling_trace_config *cfg,
                            struct llc_sampling_trace **out, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg->window_instr == 0 || cfg->samples_per_window == 0)
        return llc_errf(err, errlen, -EINVAL,
                        "trace windows need a window length and a "
                        "sample count above 0");
    struct llc_sampling_trace *t = calloc(1, sizeof(*t));
    if (!t)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    t->cfg = *cfg;
    t->rng = cfg->seed;
    const int rc = llc_trace_reader_open(path, &t->r, err, errlen);
    if (rc < 0) {
        free(t);
        return rc;
    }
    const struct llc_trace_info *info = llc_trace_reader_info(t->r);
    const uint64_t data = info->n_load + info->n_store + info->n_modify;
    t->has_instr = info->n_instr > 0;
    if (t->cfg.unit == LLC_SAMPLING_TRACE_AUTO) {
        /* A stream's counts are unknown (0) until its end: its recorder decides. */
        const bool refs =
            info->n_instr == 0 && (data > 0 || strcmp(info->recorder, "llcprobe-rt") == 0);
        t->cfg.unit = refs ? LLC_SAMPLING_TRACE_REFERENCES : LLC_SAMPLING_TRACE_INSTRUCTIONS;
    }
    *out = t;
    return 0;
}

enum llc_sampling_trace_unit llc_sampling_trace_unit(const struct llc_sampling_trace *t)
{
    return t->cfg.unit;
}

const char *llc_sampling_trace_recorder(const struct llc_sampling_trace *t)
{
    return llc_trace_reader_info(t->r)->recorder;
}

void llc_sampling_trace_close(struct llc_sampling_trace *t)
{
    if (!t)
        return;
    llc_trace_reader_close(t->r);
    llc_sampling_sink_free(&t->sink);
    free(t);
}

const char *llc_sampling_trace_command(const struct llc_sampling_trace *t)
{
    return llc_trace_reader_info(t->r)->command;
}

const uint64_t *llc_sampling_trace_ips(const struct llc_sampling_trace *t, size_t *n)
{
    *n = t->sink.n;
    return t->sink.ips;
}

static int push(struct llc_sampling_sink *k, uint64_t ip)
{
    if (k->n == k->cap) {
        const size_t cap = k->cap ? 2 * k->cap : 1024;
        uint64_t *p = realloc(k->ips, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        k->ips = p;
        k->cap = cap;
    }
    k->ips[k->n++] = ip;
    return 0;
}

int llc_sampling_trace_next(struct llc_sampling_trace *t, unsigned multiplier,
                            struct llc_sampling_window *w, char *err, size_t errlen)
{
    if (t->ended)
        return llc_errf(err, errlen, -EINVAL, "trace windows: the trace already ended");
    if (multiplier == 0 || multiplier > 64 || (multiplier & (multiplier - 1)))
        return llc_errf(err, errlen, -EINVAL,
                        "sample-rate multiplier %u is not a power of two "
                        "in 1..64",
                        multiplier);
    llc_sampling_sink_reset(&t->sink);
    const unsigned wanted =
        t->cfg.samples_per_window / multiplier ? t->cfg.samples_per_window / multiplier : 1;
    const uint64_t mean = t->cfg.window_instr / wanted ? t->cfg.window_instr / wanted : 1;
    /* A random phase per window, then gaps uniform in [1, 2 mean - 1]. */
    uint64_t countdown = draw(&t->rng, mean);
    const bool by_refs = t->cfg.unit == LLC_SAMPLING_TRACE_REFERENCES;
    uint64_t instr = 0, instr_bbv = 0, units = 0;
    int rc = 1;
    struct llc_trace_rec rec;
    while (units < t->cfg.window_instr) {
        rc = llc_trace_reader_next(t->r, &rec, err, errlen);
        if (rc <= 0)
            break;
        uint64_t ip;
        if (rec.kind == LLC_TRACE_INSTR) {
            instr++;
            instr_bbv += rec.addr != t->last_ip;
            t->has_instr = true;
            t->last_ip = rec.addr;
            if (by_refs)
                continue;
            ip = rec.addr;
        } else {
            if (!by_refs)
                continue;
            ip = rec.pc ? rec.pc : t->last_ip;
        }
        units++;
        if (--countdown == 0) {
            if (ip && push(&t->sink, ip) < 0)
                return llc_errf(err, errlen, -ENOMEM, "out of memory for samples");
            countdown = draw(&t->rng, 2 * mean - 1);
        }
    }
    if (rc < 0)
        return rc;
    t->ended = rc == 0;
    *w = (struct llc_sampling_window){
        .index = t->index++,
        .instructions = instr,
        .instructions_known = t->has_instr,
        .instructions_bbv = instr_bbv,
        .progress = units,
        .multiplier = multiplier,
        .period = mean,
        .n_ips = t->sink.n,
        .tasks = 1,
        .processes = 1,
        .last = t->ended,
    };
    return t->ended ? 0 : 1;
}
