/* The sim counting backend: the target (workload or trace), optional
 * background noise and the probe co-run in one simulated hierarchy; the
 * probe is a callback agent walking congruent physical lines and sees the
 * level that served each access, so misses are attributed per access. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/simrun.h"
#include "llcprobe/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Group rounds that warm the caches with a new group's lines before its
 * misses count: the first walk over fresh lines misses by construction. */
#define WARM_ROUNDS 2
/* Occupancy samples per measure() call at most; one per units/8 target
 * accesses otherwise. A target line under a fast probe lives for one walk
 * of its set, so occupancy is mostly 0 or 1 line at any instant: only a
 * dense average tells sets apart (64 samples gave Spearman 0.64 where
 * 2048 gave 0.99 on the same map). */
#define TRUTH_SAMPLES 2048

struct sim_backend {
    struct llc_map_backend pub;
    struct llc_simrun *run;
    unsigned target_agent, probe_agent;
    /* The co-runners (calibrate's and --rate auto's planted one), one
     * generator: co_order[0..co_n) lists units, each entry one touch of
     * the next line of that unit's cyclic chain of co_chain[u] lines
     * (co_cursor[u]: where it is), stored after the probe's walk in
     * lines[] (calib_first = index of the first). On a victim LLC a chain
     * is longer by the unit's share of the co-runner's L2 ways, which its
     * own L2 keeps (llc_map_corunner_l2_share: every way of each L2 set
     * shared out, remainder included, so exactly the held lines reach the
     * LLC; the probe's walk rounds down instead, llc_map_walk_length).
     * Calibrate: calib_lines lines per probed unit, co_order the current
     * group (each unit in turn; calib_extra lines per unit for the L2's
     * share). Cursors are kept across groups and sweeps: a slow co-runner's
     * walk goes on where it was instead of re-touching its first lines.
     * Planted: co_order holds one entry per chain line, chain position by
     * chain position, so every line is touched equally often. */
    unsigned calib_lines, calib_first, calib_extra;
    const uint32_t *co_order;
    size_t co_n, co_pos;
    unsigned *co_chain;
    uint32_t *co_cursor;
    uint32_t *plant_order;
    /* --repeat: the trace target replayed here rather than by the driver,
     * and reopened at its end, as a restarted program would run again
     * (same virtual addresses, so the same simulated pages). */
    struct llc_trace_reader *loop;
    const char *loop_path;
    uint64_t loop_addr;
    uint32_t loop_lines, line_size;
    bool loop_write, loop_data; /* loop_data: this run made a data access */
    unsigned runs;
    /* Baseline backend (no target): measure() runs for the simulated
     * dwell counted over every agent, at counted_rate accesses per ns. */
    bool baseline;
    bool continue_group;         /* measure() on the same group goes on walking */
    volatile sig_atomic_t *stop; /* ends a dwell early */
    double counted_rate;
    double target_rate, probe_rate;
    double built_rate;              /* probe_rate as built (probe_set's pace 0) */
    uint32_t units, lines_per_unit; /* lines[] holds lines_per_unit per unit */
    uint64_t *lines;
    /* The group being walked. */
    const uint32_t *group;
    size_t n;
    uint32_t *cursor, *walk_of; /* per group position */
    uint32_t *l2_part;          /* per position: lines of the walk the L2 keeps */
    /* Per unit id: LLC lines of its walk (sim_probe_set), or NULL
     * for the full walk. */
    uint8_t *llc_walk;
    uint32_t *l2_share; /* [l2_sets] scratch: group units per L2 set */
    unsigned *co_l2;    /* calibrate, per group position: the co-runner's L2 share */
    /* The group's lines by position: glines[c * n + i] is line c of the
     * unit at position i, so a round walks memory in order (the host's
     * caches, not the simulated ones, set this backend's speed). */
    uint64_t *glines;
    uint64_t *gmiss, *gacc; /* per position, folded into unit counts */
    size_t pos;
    uint64_t issued, warm;
    /* Attribution of the access in flight. */
    bool pending;
    size_t pending_pos;
    bool ended;
    /* Ground truth. */
    struct llc_sim_set_stats *set_buf;
    double *occ_sum;
    uint64_t occ_samples;
};

void llc_map_sim_options_default(struct llc_map_sim_options *o)
{
    memset(o, 0, sizeof(*o));
    o->target_rate = 0.01;
    o->probe_rate = 0.1;
}

static uint32_t l2_set_of(const struct sim_backend *s, uint32_t unit)
{
    return llc_map_l2_set_of(&s->pub.geo, unit);
}

/* Each unit's walk in this group: on a victim LLC the L2's ways are shared
 * by the group's units that map to one L2 set (llc_map_walk_length). */
static void plan_group(struct sim_backend *s, const uint32_t *units, size_t n)
{
    const struct llc_map_geometry *g = &s->pub.geo;
    if (g->victim_llc && g->l2_sets) {
        memset(s->l2_share, 0, g->l2_sets * sizeof(*s->l2_share));
        for (size_t i = 0; i < n; i++)
            s->l2_share[l2_set_of(s, units[i])]++;
    }
    uint64_t round = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned u = g->victim_llc && g->l2_sets ? s->l2_share[l2_set_of(s, units[i])] : 1;
        const unsigned full = llc_map_walk_length(g, u);
        s->l2_part[i] = full - g->llc_ways;
        s->walk_of[i] = s->llc_walk ? s->l2_part[i] + s->llc_walk[units[i]] : full;
        s->cursor[i] = 0;
        round += s->walk_of[i];
        const uint64_t *from = s->lines + (size_t)units[i] * s->lines_per_unit;
        for (uint32_t c = 0; c < s->walk_of[i]; c++)
            s->glines[(size_t)c * n + i] = from[c];
        s->gmiss[i] = s->gacc[i] = 0;
    }
    s->group = units;
    s->n = n;
    s->pos = 0;
    if (s->calib_lines) {
        if (g->victim_llc && g->l2_sets)
            memset(s->l2_share, 0, g->l2_sets * sizeof(*s->l2_share));
        llc_map_corunner_l2_share(g, units, n, s->l2_share, s->co_l2);
        for (size_t i = 0; i < n; i++)
            s->co_chain[units[i]] = s->co_l2[i] + s->calib_lines;
        s->co_order = units;
        s->co_n = n;
        s->co_pos = 0;
    }
    s->issued = 0;
    s->warm = WARM_ROUNDS * round;
    /* The previous group's last access is still in flight; its outcome
     * (one access) is dropped rather than credited to this group. */
    s->pending = false;
}

static void fold_group(struct sim_backend *s, uint64_t *misses, uint64_t *accesses)
{
    for (size_t i = 0; i < s->n; i++) {
        misses[s->group[i]] += s->gmiss[i];
        accesses[s->group[i]] += s->gacc[i];
    }
}

static int probe_next(void *ctx, const struct llc_sim_result *prev, uint64_t *addr, bool *is_write,
                      char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct sim_backend *s = ctx;
    if (prev && s->pending) {
        s->gacc[s->pending_pos]++;
        s->gmiss[s->pending_pos] += prev->level == LLC_SIM_HIT_DRAM;
    }
    if (s->n == 0) {
        s->pending = false;
        return 0;
    }
    const size_t i = s->pos;
    *addr = s->glines[(size_t)s->cursor[i] * s->n + i];
    *is_write = false;
    s->cursor[i] = s->cursor[i] + 1 == s->walk_of[i] ? 0 : s->cursor[i] + 1;
    s->pos = i + 1 == s->n ? 0 : i + 1;
    s->pending = s->issued++ >= s->warm;
    s->pending_pos = i;
    return 1;
}

/* A co-runner's next line: the next entry's unit, the next line of its
 * chain. Bounds are checked on use: a new group may have shorter chains. */
static int corunner_next(void *ctx, const struct llc_sim_result *prev, uint64_t *addr,
                         bool *is_write, char *err, size_t errlen)
{
    (void)prev;
    (void)err;
    (void)errlen;
    struct sim_backend *s = ctx;
    *is_write = false;
    if (s->co_n == 0) {
        /* Between calibrate's groups: a line of unit 0 that the probe never walks. */
        *addr = s->lines[s->calib_first];
        return 1;
    }
    if (s->co_pos >= s->co_n)
        s->co_pos = 0;
    const uint32_t unit = s->co_order[s->co_pos++];
    uint32_t *c = &s->co_cursor[unit];
    if (*c >= s->co_chain[unit])
        *c = 0;
    *addr = s->lines[(size_t)unit * s->lines_per_unit + s->calib_first + *c];
    ++*c;
    return 1;
}

/* Records larger than this are damage, as the driver says for traces. */
#define LOOP_MAX_RECORD_BYTES 4096

/* The repeating trace target: the next line of the current record, the
 * trace reopened when it ends. */
static int loop_next(void *ctx, const struct llc_sim_result *prev, uint64_t *addr, bool *is_write,
                     char *err, size_t errlen)
{
    (void)prev;
    struct sim_backend *s = ctx;
    while (s->loop_lines == 0) {
        struct llc_trace_rec rec;
        const int rc = llc_trace_reader_next(s->loop, &rec, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            if (!s->loop_data)
                return llc_errf(err, errlen, -EINVAL, "%s: no data access to repeat", s->loop_path);
            llc_trace_reader_close(s->loop);
            s->loop = NULL;
            const int orc = llc_trace_reader_open(s->loop_path, &s->loop, err, errlen);
            if (orc < 0)
                return orc;
            s->loop_data = false;
            s->runs++;
            continue;
        }
        if (rec.kind == LLC_TRACE_INSTR)
            continue;
        if (rec.kind > LLC_TRACE_MODIFY)
            return llc_errf(err, errlen, -EINVAL, "%s: a record of unknown kind %u", s->loop_path,
                            rec.kind);
        const uint64_t size = rec.size ? rec.size : 1;
        if (size > LOOP_MAX_RECORD_BYTES)
            return llc_errf(err, errlen, -EPROTO,
                            "%s: a record accesses %llu bytes at once (over 4 KiB)", s->loop_path,
                            (unsigned long long)size);
        s->loop_addr = rec.addr;
        s->loop_lines = (uint32_t)(((rec.addr & (s->line_size - 1)) + size - 1) / s->line_size + 1);
        s->loop_write = rec.kind != LLC_TRACE_LOAD;
        s->loop_data = true;
    }
    *addr = s->loop_addr;
    *is_write = s->loop_write;
    s->loop_addr = (s->loop_addr | (s->line_size - 1)) + 1;
    s->loop_lines--;
    return 1;
}

unsigned llc_map_sim_target_runs(const struct llc_map_backend *b)
{
    return b ? ((const struct sim_backend *)b->ctx)->runs : 0;
}

/* Chains and visiting order of the planted co-runner. Entries go round
 * the units chain position by chain position, so one unit's touches are
 * spread over the cycle rather than bunched. Returns the longest chain,
 * or 0 when nothing is planted. */
static unsigned plant_plan(struct sim_backend *s, const uint8_t *k, char *err, size_t errlen,
                           int *rc)
{
    const struct llc_map_geometry *g = &s->pub.geo;
    *rc = 0;
    uint32_t *counts = calloc(g->l2_sets ? g->l2_sets : 1, sizeof(*counts));
    uint32_t *planted = malloc(s->units * sizeof(*planted));
    unsigned *share = malloc(s->units * sizeof(*share));
    s->co_chain = calloc(s->units, sizeof(*s->co_chain));
    s->co_cursor = calloc(s->units, sizeof(*s->co_cursor));
    unsigned longest = 0;
    if (!counts || !planted || !share || !s->co_chain || !s->co_cursor) {
        *rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    size_t np = 0;
    for (uint32_t u = 0; u < s->units; u++) {
        if (k[u] > g->llc_ways) {
            *rc = llc_errf(err, errlen, -EINVAL,
                           "the planted co-runner holds 0..%u lines per set, not %u", g->llc_ways,
                           k[u]);
            goto out;
        }
        if (k[u])
            planted[np++] = u;
    }
    llc_map_corunner_l2_share(g, planted, np, counts, share);
    for (size_t i = 0; i < np; i++) {
        const uint32_t u = planted[i];
        s->co_chain[u] = k[u] + share[i];
        s->co_n += s->co_chain[u];
        longest = s->co_chain[u] > longest ? s->co_chain[u] : longest;
    }
    s->plant_order = malloc((s->co_n ? s->co_n : 1) * sizeof(*s->plant_order));
    if (!s->plant_order) {
        *rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    size_t at = 0;
    for (unsigned c = 0; c < longest; c++)
        for (uint32_t u = 0; u < s->units; u++)
            if (s->co_chain[u] > c)
                s->plant_order[at++] = u;
    s->co_order = s->plant_order;
out:
    free(counts);
    free(planted);
    free(share);
    return *rc < 0 ? 0 : longest;
}

/* lines_per_unit congruent lines for every unit, from the probe's private
 * physical region: candidates at one index are line_size * sets_per_slice
 * apart; the slice hash sorts them. */
static int place_lines(struct sim_backend *s, const struct llc_sim_geometry *geo, uint64_t base,
                       char *err, size_t errlen)
{
    const uint32_t sps = geo->sets_per_slice, per = s->lines_per_unit;
    uint32_t *have = calloc(geo->slices, sizeof(*have));
    if (!have)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    const uint64_t limit = (uint64_t)per * geo->slices * 64;
    for (uint32_t index = 0; index < sps && rc == 0; index++) {
        memset(have, 0, geo->slices * sizeof(*have));
        uint32_t full = 0;
        for (uint64_t j = 0; full < geo->slices; j++) {
            if (j == limit) {
                rc = llc_errf(err, errlen, -EDOM,
                              "the slice hash leaves some slice of index %u without %u lines",
                              index, per);
                break;
            }
            const uint64_t paddr = base + (j * sps + index) * geo->line_size;
            struct llc_sim_loc loc;
            llc_sim_geometry_locate(geo, paddr, &loc);
            if (have[loc.slice] == per)
                continue;
            s->lines[(size_t)loc.set * per + have[loc.slice]] = paddr;
            if (++have[loc.slice] == per)
                full++;
        }
    }
    free(have);
    return rc;
}

/* An idle walk (no target yet) over a sample of units, one unit at a time
 * and then the sample interleaved as a group: after warm-up, accesses must
 * be LLC hits. The caches are emptied and the counters zeroed afterwards. */
static int check_walk(struct sim_backend *s, char *err, size_t errlen)
{
    struct llc_sim *sim = llc_simrun_sim(s->run);
    const uint32_t sample = s->units < 64 ? s->units : 64;
    uint32_t *units = malloc(sample * sizeof(*units));
    if (!units)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    uint64_t served[3] = {0}, total = 0;
    int rc = 0;
    for (uint32_t k = 0; k < sample; k++)
        units[k] = (uint32_t)((uint64_t)k * s->units / sample);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        const size_t n = pass == 0 ? 1 : sample;
        for (uint32_t first = 0; first < (pass == 0 ? sample : 1) && rc == 0; first++) {
            plan_group(s, pass == 0 ? &units[first] : units, n);
            const uint64_t rounds = 8, warm = s->warm;
            uint64_t per_round = warm / WARM_ROUNDS;
            for (uint64_t a = 0; a < (rounds + WARM_ROUNDS) * per_round; a++) {
                const size_t i = s->pos;
                const uint64_t line = s->glines[(size_t)s->cursor[i] * s->n + i];
                s->cursor[i] = s->cursor[i] + 1 == s->walk_of[i] ? 0 : s->cursor[i] + 1;
                s->pos = i + 1 == s->n ? 0 : i + 1;
                const int level = llc_sim_access_phys(sim, s->probe_agent, line, NULL);
                if (level < 0) {
                    rc = llc_errf(err, errlen, level, "idle walk: simulator access failed");
                    break;
                }
                if (a >= warm) {
                    served[level]++;
                    total++;
                }
            }
            llc_sim_flush_all(sim);
        }
    }
    free(units);
    llc_sim_reset_counters(sim);
    s->n = 0;
    if (s->calib_lines)
        s->co_n = 0;
    if (rc < 0)
        return rc;
    const double llc = (double)served[LLC_SIM_HIT_LLC] / (double)total;
    snprintf(
        s->pub.walk_check, sizeof(s->pub.walk_check),
        "idle walk of %u lines per set (%s LLC): %.1f%% LLC hits, %.1f%% L2, %.1f%% memory over %llu accesses",
        s->pub.walk, s->pub.geo.victim_llc ? "victim" : "inclusive", 100 * llc,
        100.0 * (double)served[LLC_SIM_HIT_L2] / (double)total,
        100.0 * (double)served[LLC_SIM_HIT_DRAM] / (double)total, (unsigned long long)total);
    if (llc < 0.9)
        return llc_errf(err, errlen, -EIO, "walk check failed: %s (need 90%% LLC hits)",
                        s->pub.walk_check);
    return 0;
}

static void sample_truth(struct sim_backend *s)
{
    if (s->baseline)
        return;
    if (llc_sim_set_stats(llc_simrun_sim_const(s->run), (int)s->target_agent, s->set_buf,
                          s->units) < 0)
        return;
    for (uint32_t u = 0; u < s->units; u++)
        s->occ_sum[u] += s->set_buf[u].occupancy;
    s->occ_samples++;
}

static int sim_measure(void *ctx, const uint32_t *units, size_t n, double dwell_s, uint64_t *misses,
                       uint64_t *accesses, char *err, size_t errlen)
{
    struct sim_backend *s = ctx;
    if (s->ended)
        return 1;
    /* The same group again (continue_group): its walk goes on where it
     * was, at whatever pace probe_set gave, with no warm-up rounds lost;
     * the counts of the new call start from zero. */
    if (s->continue_group && s->n == n && s->group == units && n > 0) {
        for (size_t i = 0; i < n; i++)
            s->gmiss[i] = s->gacc[i] = 0;
    } else {
        plan_group(s, units, n);
    }
    /* The dwell runs in slices with the target's occupancy sampled after
     * each: occupancy is a few lines that come and go, so the truth is an
     * average over many instants, not the state at the end. */
    const double target_accesses = dwell_s * 1e9 * s->counted_rate;
    const uint64_t total = target_accesses < 1 ? 1 : (uint64_t)target_accesses;
    uint64_t slices = total / (s->units / 8 + 1);
    slices = slices < 1 ? 1 : slices > TRUTH_SAMPLES ? TRUTH_SAMPLES : slices;
    int rc = 0;
    for (uint64_t k = 0; k < slices && rc == 0 && !(s->stop && *s->stop); k++) {
        const struct llc_simrun_limits lim = {.duration =
                                                  total * (k + 1) / slices - total * k / slices};
        rc = llc_simrun_run(s->run, &lim, err, errlen);
        if (rc < 0)
            return rc;
        sample_truth(s);
    }
    fold_group(s, misses, accesses);
    if (rc == 1)
        s->ended = true;
    return rc;
}

static bool sim_alive(void *ctx)
{
    const struct sim_backend *s = ctx;
    return !s->ended;
}

static void sim_release(void *ctx)
{
    struct sim_backend *s = ctx;
    if (!s)
        return;
    llc_simrun_destroy(s->run);
    llc_trace_reader_close(s->loop);
    free(s->lines);
    free(s->cursor);
    free(s->walk_of);
    free(s->l2_part);
    free(s->llc_walk);
    free(s->glines);
    free(s->gmiss);
    free(s->gacc);
    free(s->l2_share);
    free(s->set_buf);
    free(s->occ_sum);
    free(s->co_chain);
    free(s->co_cursor);
    free(s->co_l2);
    free(s->plant_order);
    free(s);
}

static int sim_probe_set(void *ctx, double per_set_rate, size_t together, const uint8_t *llc_walk,
                         char *err, size_t errlen);

static const struct llc_map_backend_ops sim_ops = {
    .measure = sim_measure,
    .target_alive = sim_alive,
    .release = sim_release,
    .probe_set = sim_probe_set,
};

int llc_map_sim_leaders(const struct llc_map_backend *b, bool *leaders)
{
    if (!b || b->ops != &sim_ops)
        return -EINVAL;
    const struct sim_backend *s = b->ctx;
    memset(leaders, 0, s->units * sizeof(*leaders));
    const struct llc_sim_config *c = llc_sim_config_of(llc_simrun_sim_const(s->run));
    if (c->llc_policy != LLC_SIM_DRRIP || c->drrip_leaders == 0 || s->units < c->drrip_leaders)
        return 0;
    /* Complement-select as llcprobe/sim.h documents it. */
    const uint32_t size = s->units / c->drrip_leaders;
    int n = 0;
    for (uint32_t r = 0; r < c->drrip_leaders; r++) {
        const uint32_t s_off = r % size;
        uint32_t b_off = (size - 1 - r % size) % size;
        if (b_off == s_off)
            b_off = (b_off + 1) % size;
        n += !leaders[r * size + s_off] + !leaders[r * size + b_off];
        leaders[r * size + s_off] = leaders[r * size + b_off] = true;
    }
    return n;
}

int llc_map_sim_truth(const struct llc_map_backend *b, double *occupancy, uint64_t *accesses,
                      uint64_t *misses)
{
    if (!b || b->ops != &sim_ops)
        return -EINVAL;
    const struct sim_backend *s = b->ctx;
    if (s->baseline)
        return -EINVAL;
    if (occupancy)
        for (uint32_t u = 0; u < s->units; u++)
            occupancy[u] = s->occ_samples ? s->occ_sum[u] / (double)s->occ_samples : 0;
    if (accesses || misses) {
        if (llc_sim_set_stats(llc_simrun_sim_const(s->run), (int)s->target_agent, s->set_buf,
                              s->units) < 0)
            return -EINVAL;
        for (uint32_t u = 0; u < s->units; u++) {
            if (accesses)
                accesses[u] = s->set_buf[u].hits + s->set_buf[u].misses;
            if (misses)
                misses[u] = s->set_buf[u].misses;
        }
    }
    return 0;
}

/* The simulated probe is one agent with one rate over all the units it
 * walks: a per-set pace is that times the units walked together. */
static int sim_probe_set(void *ctx, double per_set_rate, size_t together, const uint8_t *llc_walk,
                         char *err, size_t errlen)
{
    struct sim_backend *s = ctx;
    const struct llc_map_backend *b = &s->pub;
    if (per_set_rate < 0 || !isfinite(per_set_rate) || (per_set_rate > 0 && !together))
        return llc_errf(err, errlen, -EINVAL,
                        "sim: pace %g accesses per set per second over %zu sets", per_set_rate,
                        together);
    for (uint32_t u = 0; llc_walk && u < s->units; u++)
        if (llc_walk[u] < 1 || llc_walk[u] > b->geo.llc_ways)
            return llc_errf(err, errlen, -EINVAL,
                            "sim: set %u: a walk of %u LLC lines is not in 1..%u", u, llc_walk[u],
                            b->geo.llc_ways);
    const double rate = per_set_rate > 0 ? per_set_rate * (double)together / 1e9 : s->built_rate;
    if (rate != s->probe_rate) {
        const int rc = llc_simrun_set_rate(s->run, s->probe_agent, rate);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "sim: cannot pace the probe at %.3g accesses per ns",
                            rate);
        s->probe_rate = rate;
    }
    if (!llc_walk) {
        free(s->llc_walk);
        s->llc_walk = NULL;
        return 0;
    }
    if (!s->llc_walk) {
        if (!(s->llc_walk = malloc(s->units)))
            return llc_errf(err, errlen, -ENOMEM, "sim: out of memory");
        memset(s->llc_walk, (int)b->geo.llc_ways, s->units);
    }
    /* Lines the probe stops walking are flushed (clflush on hardware): left
     * in place they would hold ways, and an RRIP policy keeps such recently
     * hit lines over the newcomers a shorter walk needs. The L2's share is
     * taken at its largest (one unit per L2 set). */
    struct llc_sim *sim = llc_simrun_sim(s->run);
    const unsigned l2 = b->walk - b->geo.llc_ways;
    for (uint32_t u = 0; u < s->units; u++) {
        for (unsigned c = l2 + llc_walk[u]; c < l2 + s->llc_walk[u]; c++)
            llc_sim_flush_line(sim, s->lines[(size_t)u * s->lines_per_unit + c]);
        s->llc_walk[u] = llc_walk[u];
    }
    return 0;
}

int llc_map_sim_pace_target(struct llc_map_backend *b, double rate)
{
    if (!b || b->ops != &sim_ops || !(rate > 0) || !isfinite(rate))
        return -EINVAL;
    struct sim_backend *s = b->ctx;
    if (s->baseline)
        return -EINVAL;
    const int rc = llc_simrun_set_rate(s->run, s->target_agent, rate);
    if (rc < 0)
        return rc;
    s->target_rate = s->counted_rate = rate;
    return 0;
}

int llc_map_sim_truth_reset(struct llc_map_backend *b)
{
    if (!b || b->ops != &sim_ops)
        return -EINVAL;
    struct sim_backend *s = b->ctx;
    memset(s->occ_sum, 0, s->units * sizeof(*s->occ_sum));
    s->occ_samples = 0;
    return 0;
}

int llc_map_backend_sim(const struct llc_sim_config *cfg, const struct llc_map_sim_options *opt,
                        struct llc_map_backend **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!opt->baseline && !opt->workload == !opt->trace)
        return llc_errf(err, errlen, -EINVAL,
                        "the simulated target needs a workload or a trace (one of them)");
    if (!(opt->target_rate > 0) || !(opt->probe_rate > 0) || (opt->noise && !(opt->noise_rate > 0)))
        return llc_errf(err, errlen, -EINVAL, "rates must be positive");
    if (cfg->l2_sets && cfg->l2_sets > cfg->llc.sets_per_slice)
        return llc_errf(err, errlen, -EINVAL,
                        "the L2 has more sets than an LLC slice: probe lines of one "
                        "LLC set would not share an L2 set");
    if (opt->calib_lines > cfg->llc.ways)
        return llc_errf(err, errlen, -EINVAL,
                        "the calibration co-runner holds 0..%u lines per set, not %u",
                        cfg->llc.ways, opt->calib_lines);
    if (opt->calib_lines && !(opt->calib_rate > 0))
        return llc_errf(err, errlen, -EINVAL, "the calibration co-runner needs a positive rate");
    if (opt->plant_lines && (opt->calib_lines || !(opt->plant_rate > 0)))
        return llc_errf(err, errlen, -EINVAL,
                        "the planted co-runner needs a positive rate and no calibration "
                        "co-runner beside it");
    struct sim_backend *s = calloc(1, sizeof(*s));
    if (!s)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    struct llc_map_geometry *g = &s->pub.geo;
    g->line_size = cfg->llc.line_size;
    g->sets_per_slice = cfg->llc.sets_per_slice;
    g->slices = cfg->llc.slices;
    g->llc_ways = cfg->llc.ways;
    g->l2_ways = cfg->l2_sets ? cfg->l2_ways : 0;
    g->l2_sets = cfg->l2_sets;
    g->victim_llc = cfg->inclusion == LLC_SIM_EXCLUSIVE;
    g->llc_bytes = llc_sim_geometry_bytes(&cfg->llc);
    s->pub.ops = &sim_ops;
    s->pub.ctx = s;
    s->pub.name = "sim";
    s->pub.all_at_once = true;
    snprintf(s->pub.target_pages, sizeof(s->pub.target_pages), "%s",
             cfg->page_size == (2u << 20) ? "2M" : "4K");
    s->units = llc_map_units(g);
    s->pub.walk = llc_map_walk_length(g, 1);
    /* The co-runner's lines follow the probe's in the same congruence
     * class, so placing them leaves the probe's own lines where they were. */
    s->calib_lines = opt->calib_lines;
    s->calib_first = s->pub.walk;
    s->calib_extra = opt->calib_lines ? s->pub.walk - g->llc_ways : 0;
    s->lines_per_unit = s->pub.walk + opt->calib_lines + s->calib_extra;
    int rc = 0;
    if (opt->plant_lines) {
        const unsigned longest = plant_plan(s, opt->plant_lines, err, errlen, &rc);
        if (rc < 0)
            goto fail;
        if (s->pub.walk + longest > s->lines_per_unit)
            s->lines_per_unit = s->pub.walk + longest;
    }
    s->target_rate = opt->target_rate;
    s->baseline = opt->baseline;
    s->continue_group = opt->continue_group;
    s->stop = opt->stop;
    s->counted_rate = opt->target_rate;
    s->line_size = g->line_size;
    s->runs = 1;
    if (opt->repeat && opt->trace && !opt->baseline) {
        s->loop_path = opt->trace;
        rc = llc_trace_reader_open(opt->trace, &s->loop, err, errlen);
        if (rc < 0)
            goto fail;
    }
    s->probe_rate = s->built_rate = opt->probe_rate;
    snprintf(
        s->pub.calibration, sizeof(s->pub.calibration),
        "simulator: a probe access is a miss when memory served it (exact); target %.4g and probe %.4g "
        "accesses per simulated ns",
        opt->target_rate, opt->probe_rate);

    struct llc_simrun_agent agents[5];
    unsigned n = 0;
    memset(agents, 0, sizeof(agents));
    s->target_agent = n;
    if (!opt->baseline)
        agents[n++] = (struct llc_simrun_agent){
            .name = "target",
            .role = LLC_SIMRUN_TARGET,
            .source = s->loop         ? LLC_SIMRUN_CALLBACK
                      : opt->workload ? LLC_SIMRUN_WORKLOAD
                                      : LLC_SIMRUN_TRACE,
            .spec = opt->workload,
            .trace_path = s->loop ? NULL : opt->trace,
            .next = s->loop ? loop_next : NULL,
            .ctx = s,
            .rate = opt->target_rate,
        };
    if (opt->noise)
        agents[n++] = (struct llc_simrun_agent){.name = "noise",
                                                .role = LLC_SIMRUN_NOISE,
                                                .source = LLC_SIMRUN_WORKLOAD,
                                                .spec = opt->noise,
                                                .rate = opt->noise_rate};
    if (opt->calib_lines)
        agents[n++] = (struct llc_simrun_agent){.name = "calibration",
                                                .role = LLC_SIMRUN_NOISE,
                                                .source = LLC_SIMRUN_CALLBACK,
                                                .next = corunner_next,
                                                .ctx = s,
                                                .physical = true,
                                                .rate = opt->calib_rate};
    if (s->plant_order && s->co_n)
        agents[n++] = (struct llc_simrun_agent){.name = "planted",
                                                .role = LLC_SIMRUN_NOISE,
                                                .source = LLC_SIMRUN_CALLBACK,
                                                .next = corunner_next,
                                                .ctx = s,
                                                .physical = true,
                                                .rate = opt->plant_rate * (double)s->co_n};
    s->probe_agent = n;
    if (opt->baseline) {
        /* No target: the driver counts every agent's accesses. */
        s->counted_rate = opt->probe_rate;
        for (unsigned i = 0; i < n; i++)
            s->counted_rate += agents[i].rate;
    }
    agents[n++] = (struct llc_simrun_agent){.name = "probe",
                                            .role = LLC_SIMRUN_PROBE,
                                            .source = LLC_SIMRUN_CALLBACK,
                                            .next = probe_next,
                                            .ctx = s,
                                            .physical = true,
                                            .rate = opt->probe_rate};
    rc = llc_simrun_create(cfg, agents, n, &s->run, err, errlen);
    if (rc < 0)
        goto fail;
    s->lines = malloc((size_t)s->units * s->lines_per_unit * sizeof(*s->lines));
    s->cursor = malloc(s->units * sizeof(*s->cursor));
    s->walk_of = malloc(s->units * sizeof(*s->walk_of));
    s->l2_part = malloc(s->units * sizeof(*s->l2_part));
    s->glines = malloc((size_t)s->units * s->lines_per_unit * sizeof(*s->glines));
    s->gmiss = malloc(s->units * sizeof(*s->gmiss));
    s->gacc = malloc(s->units * sizeof(*s->gacc));
    s->l2_share = calloc(g->l2_sets ? g->l2_sets : 1, sizeof(*s->l2_share));
    s->set_buf = malloc(s->units * sizeof(*s->set_buf));
    s->occ_sum = calloc(s->units, sizeof(*s->occ_sum));
    if (opt->calib_lines) {
        s->co_chain = calloc(s->units, sizeof(*s->co_chain));
        s->co_cursor = calloc(s->units, sizeof(*s->co_cursor));
        s->co_l2 = calloc(s->units, sizeof(*s->co_l2));
    }
    if ((opt->calib_lines && (!s->co_chain || !s->co_cursor || !s->co_l2)) || !s->lines ||
        !s->cursor || !s->walk_of || !s->l2_part || !s->glines || !s->gmiss || !s->gacc ||
        !s->l2_share || !s->set_buf || !s->occ_sum) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %u sets x %u probe lines", s->units,
                      s->lines_per_unit);
        goto fail;
    }
    const struct llc_sim *sim = llc_simrun_sim_const(s->run);
    rc = place_lines(s, &llc_sim_config_of(sim)->llc, llc_simrun_phys_base(s->run, s->probe_agent),
                     err, errlen);
    if (rc < 0)
        goto fail;
    rc = check_walk(s, err, errlen);
    if (rc < 0)
        goto fail;
    *out = &s->pub;
    return 0;
fail:
    sim_release(s);
    return rc;
}
