/* Timed co-runs (llcprobe/corun.h): the clock formula on a stream checked
 * by hand, earliest-clock order, solo == a one-program co-run, slowdown of a
 * cache-hungry pair, determinism, the kernel against the batch path and
 * against a one-access-at-a-time driver, the stop flag and bad input,
 * restarting programs that end first. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "model/sim/hierarchy.h"

#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* A tiny cache without an L2: sets x ways, 64-byte lines, LRU. */
static void tiny(struct llc_sim_config *c, uint32_t sets, uint32_t ways)
{
    llc_sim_config_default(c);
    c->llc = (struct llc_sim_geometry){.line_size = 64,
                                       .sets_per_slice = sets,
                                       .slices = 1,
                                       .ways = ways,
                                       .hash = LLC_SIM_HASH_MODULO};
}

static struct llc_corun_result *run(const struct llc_sim_config *c, const struct llc_corun_agent *a,
                                    unsigned n, const struct llc_corun_params *p)
{
    char err[LLC_ERRLEN] = "";
    struct llc_corun_result *r = NULL;
    if (llc_corun_run(c, a, n, p, &r, err, sizeof(err)) != 0)
        fail_msg("corun: %s", err);
    return r;
}

static struct llc_corun_agent array_agent(const uint64_t *addrs, const uint32_t *instr, size_t n)
{
    struct llc_corun_agent a = {
        .source = LLC_CORUN_ARRAY, .addrs = addrs, .instr = instr, .n = n, .phys = true};
    llc_corun_agent_default(&a);
    return a;
}

/* Clock += instr * cpi + latency / mlp, by hand: cpi 1.5, mlp 2, LLC hit 40,
 * memory 200 (no L2, so every access is served by the LLC or memory).
 *   access 0: line 0, 1 instr, miss: 1.5 + 100 = 101.5
 *   access 1: line 0, 2 instr, hit : 3   + 20  ->  124.5
 *   access 2: line 1, 3 instr, miss: 4.5 + 100 ->  229
 *   access 3: line 0, 4 instr, hit : 6   + 20  ->  255 */
static void test_clock_formula(void **state)
{
    (void)state;
    struct llc_sim_config c;
    tiny(&c, 4, 2);
    static const uint64_t addrs[] = {0, 8, 64 * 4, 0};
    static const uint32_t instr[] = {1, 2, 3, 4};
    struct llc_corun_agent a = array_agent(addrs, instr, 4);
    a.cpi = 1.5;
    a.mlp = 2;
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 3; /* windows close after accesses 1 (3 instr) and 2 (6), then 3 (10) */
    struct llc_corun_result *r = run(&c, &a, 1, &p);
    const struct llc_corun_series *s = &r->corun[0];
    assert_double_equal(s->cycles, 255.0, 1e-9);
    assert_int_equal(s->instructions, 10);
    assert_int_equal(s->accesses, 4);
    assert_int_equal(s->llc_accesses, 4);
    assert_int_equal(s->llc_misses, 2);
    assert_int_equal(s->levels[LLC_SIM_HIT_LLC], 2);
    assert_int_equal(s->levels[LLC_SIM_HIT_DRAM], 2);
    assert_int_equal(s->n, 3);
    assert_int_equal(s->w[0].instructions, 3);
    assert_double_equal(s->w[0].cycles, 124.5, 1e-9);
    assert_int_equal(s->w[1].instructions, 3);
    assert_double_equal(s->w[1].cycles, 104.5, 1e-9);
    assert_int_equal(s->w[2].instructions, 4);
    assert_double_equal(s->w[2].cycles, 26.0, 1e-9);
    assert_int_equal(s->w[2].occupancy, 2);
    llc_corun_free(r);
}

/* One line of cache, two programs: a hit needs the previous access (in the
 * global order) to be the same program's. A costs 10 + 1 cycles per access,
 * B 1 + 1 (every latency 1, mlp 1). Earliest clock first, ties to A:
 *   A@0, B@0,2,4,6,8,10, A@11, B@12..20, A@22, B@22..30
 * so A misses 3 of 3, B misses at the start of each of its 3 runs: 3 of 16.
 * Round robin would make B miss 3 more times. */
static void test_earliest_clock_order(void **state)
{
    (void)state;
    struct llc_sim_config c;
    tiny(&c, 1, 1);
    uint64_t a_addr[3], b_addr[16];
    uint32_t a_instr[3], b_instr[16];
    for (unsigned i = 0; i < 3; i++) {
        a_addr[i] = 0;
        a_instr[i] = 10;
    }
    for (unsigned i = 0; i < 16; i++) {
        b_addr[i] = 64;
        b_instr[i] = 1;
    }
    struct llc_corun_agent ag[2] = {array_agent(a_addr, a_instr, 3),
                                    array_agent(b_addr, b_instr, 16)};
    for (unsigned i = 0; i < 2; i++) {
        ag[i].cpi = 1;
        ag[i].mlp = 1;
    }
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.lat_l2 = p.lat_llc = p.lat_mem = 1;
    struct llc_corun_result *r = run(&c, ag, 2, &p);
    assert_int_equal(r->corun[0].llc_misses, 3);
    assert_int_equal(r->corun[1].llc_misses, 3);
    assert_int_equal(r->corun[1].llc_accesses, 16);
    assert_double_equal(r->corun[0].cycles, 33.0, 1e-9);
    assert_double_equal(r->corun[1].cycles, 32.0, 1e-9);
    /* Alone, each misses once. */
    assert_int_equal(r->solo[0].llc_misses, 1);
    assert_int_equal(r->solo[1].llc_misses, 1);
    llc_corun_free(r);
}

/* --restart on one line of cache, every access 1 instruction + 1 cycle
 * (cpi 1, every latency 1, mlp 1), ties to A. A touches line 0 twice, B
 * line 1 eight times: A@0 B@0 A@2 B@2, all misses; A has ended at clock 4.
 * Without restart B then runs alone and hits its other 6 accesses (2
 * misses); with restart A starts again at 4 and evicts B's line before
 * each of B's accesses (8 misses). A's own figures are its first pass in
 * both runs. */
static void test_restart_keeps_pressure(void **state)
{
    (void)state;
    struct llc_sim_config c;
    tiny(&c, 1, 1);
    static const uint64_t a_addr[] = {0, 0};
    static const uint64_t b_addr[] = {64, 64, 64, 64, 64, 64, 64, 64};
    static const uint32_t ones[] = {1, 1, 1, 1, 1, 1, 1, 1};
    struct llc_corun_agent ag[2] = {array_agent(a_addr, ones, 2), array_agent(b_addr, ones, 8)};
    for (unsigned i = 0; i < 2; i++) {
        ag[i].cpi = 1;
        ag[i].mlp = 1;
    }
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.lat_l2 = p.lat_llc = p.lat_mem = 1;
    struct llc_corun_result *once = run(&c, ag, 2, &p);
    p.restart = true;
    struct llc_corun_result *again = run(&c, ag, 2, &p);
    assert_int_equal(once->corun[1].llc_misses, 2);
    assert_int_equal(again->corun[1].llc_misses, 8);
    assert_int_equal(again->corun[1].accesses, 8);
    assert_double_equal(again->corun[1].cycles, 16.0, 1e-9);
    assert_int_equal(once->corun[0].llc_misses, 2);
    assert_int_equal(again->corun[0].llc_misses, 2);
    assert_int_equal(again->corun[0].accesses, 2);
    assert_double_equal(again->corun[0].cycles, once->corun[0].cycles, 0);
    assert_int_equal(again->solo[1].llc_misses, 1);
    llc_corun_free(once);
    llc_corun_free(again);
}

static struct llc_corun_agent workload(const char *spec, uint64_t instructions)
{
    struct llc_corun_agent a = {
        .source = LLC_CORUN_WORKLOAD, .spec = spec, .instructions = instructions};
    llc_corun_agent_default(&a);
    return a;
}

static void assert_series_equal(const struct llc_corun_series *x, const struct llc_corun_series *y)
{
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->instructions, y->instructions);
    assert_double_equal(x->cycles, y->cycles, 0);
    assert_int_equal(x->llc_misses, y->llc_misses);
    assert_memory_equal(x->w, y->w, x->n * sizeof(*x->w));
}

static void test_solo_is_one_program_corun(void **state)
{
    (void)state;
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    const struct llc_corun_agent ag[2] = {workload("zipf:size=6M,alpha=0.8", 600000),
                                          workload("uniform:size=4M", 600000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 100000;
    struct llc_corun_result *pair = run(&c, ag, 2, &p);
    struct llc_corun_result *one = run(&c, ag, 1, &p);
    assert_int_equal(one->corun[0].n, 6);
    assert_series_equal(&one->corun[0], &one->solo[0]);
    assert_series_equal(&one->corun[0], &pair->solo[0]);
    llc_corun_free(pair);
    llc_corun_free(one);
}

/* A window's accesses are those its clock ran through: without an L2 every
 * one goes to the LLC, so in every window (2 agents, buffers of accesses
 * run ahead through the private level) the two counts are equal. The
 * simulator's own count took a buffer at once, up to a buffer early. */
static void test_window_accesses_retired(void **state)
{
    (void)state;
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    c.l2_sets = 0;
    c.l2_ways = 0;
    const struct llc_corun_agent ag[2] = {workload("zipf:size=6M,alpha=0.8", 700000),
                                          workload("stream:size=12M", 700000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 99991; /* not a multiple of any buffer */
    struct llc_corun_result *r = run(&c, ag, 2, &p);
    for (unsigned i = 0; i < 2; i++) {
        const struct llc_corun_series *ss[2] = {&r->corun[i], &r->solo[i]};
        for (unsigned k = 0; k < 2; k++) {
            uint64_t acc = 0;
            assert_true(ss[k]->n >= 7);
            for (size_t w = 0; w < ss[k]->n; w++) {
                assert_int_equal(ss[k]->w[w].accesses, ss[k]->w[w].llc_accesses);
                acc += ss[k]->w[w].accesses;
            }
            assert_int_equal(acc, ss[k]->accesses);
        }
    }
    llc_corun_free(r);
}

/* Two programs of 6 MiB each on an 8 MiB LLC: alone each nearly fits, together
 * they do not. */
static void test_hungry_pair_slows_down(void **state)
{
    (void)state;
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    const struct llc_corun_agent ag[2] = {workload("uniform:size=6M", 3000000),
                                          workload("zipf:size=6M,alpha=0.5", 3000000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 500000;
    struct llc_corun_result *r = run(&c, ag, 2, &p);
    for (unsigned i = 0; i < 2; i++) {
        const struct llc_corun_series *co = &r->corun[i], *so = &r->solo[i];
        assert_int_equal(co->instructions, so->instructions);
        assert_int_equal(co->n, so->n);
        const double slowdown = co->cycles / so->cycles;
        printf("program %u: slowdown %.4f, miss ratio %.4f alone, %.4f together\n", i, slowdown,
               (double)so->llc_misses / so->llc_accesses,
               (double)co->llc_misses / co->llc_accesses);
        assert_true(slowdown >= 1.05);
        assert_true(co->llc_misses > so->llc_misses);
        for (size_t k = 0; k < co->n; k++) {
            assert_int_equal(co->w[k].instructions, so->w[k].instructions);
            assert_true(co->w[k].cycles >= so->w[k].cycles);
        }
    }
    llc_corun_free(r);
}

static void test_deterministic(void **state)
{
    (void)state;
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_preset("amd32", &c, err, sizeof(err)), 0);
    c.llc_policy = LLC_SIM_RANDOM;
    const struct llc_corun_agent ag[3] = {workload("zipf:size=24M,alpha=0.7", 400000),
                                          workload("stream:size=16M", 300000),
                                          workload("uniform:size=8M", 500000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 50000;
    struct llc_corun_result *x = run(&c, ag, 3, &p), *y = run(&c, ag, 3, &p);
    for (unsigned i = 0; i < 3; i++) {
        assert_series_equal(&x->corun[i], &y->corun[i]);
        assert_series_equal(&x->solo[i], &y->solo[i]);
    }
    c.seed = 2;
    struct llc_corun_result *z = run(&c, ag, 3, &p);
    assert_true(z->corun[0].cycles != x->corun[0].cycles);
    llc_corun_free(x);
    llc_corun_free(y);
    llc_corun_free(z);
}

/* Every instruction-set copy of the batch path this host runs
 * (sim/variants.c: the solo runs and the timed kernel's LLC lookups) gives
 * the same co-run, on both hierarchies and the policies the kernel has
 * copies for. */
static void test_isa_copies_agree(void **state)
{
    (void)state;
    static const struct {
        const char *preset;
        enum llc_sim_policy policy;
    } cfgs[] = {{"amd32", LLC_SIM_LRU},
                {"amd32", LLC_SIM_RANDOM},
                {"amd32", LLC_SIM_DRRIP},
                {"intel8", LLC_SIM_LRU},
                {"intel8", LLC_SIM_DRRIP}};
    const struct llc_corun_agent ag[4] = {
        workload("zipf:size=24M,alpha=0.7", 300000), workload("stream:size=16M", 200000),
        workload("uniform:size=8M", 250000), workload("uniform:size=40M", 150000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = 40000;
    p.restart = true;
    const enum sim_isa best = sim_isa_best();
    for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
        struct llc_sim_config c;
        char err[LLC_ERRLEN];
        assert_int_equal(llc_sim_preset(cfgs[k].preset, &c, err, sizeof(err)), 0);
        c.llc_policy = cfgs[k].policy;
        struct llc_corun_result *ref = run(&c, ag, 4, &p);
        for (int isa = SIM_ISA_BASE; isa < (int)best; isa++) {
            sim_isa_limit((enum sim_isa)isa);
            struct llc_corun_result *r = run(&c, ag, 4, &p);
            sim_isa_limit(best);
            for (unsigned i = 0; i < 4; i++) {
                assert_series_equal(&ref->corun[i], &r->corun[i]);
                assert_series_equal(&ref->solo[i], &r->solo[i]);
            }
            llc_corun_free(r);
        }
        llc_corun_free(ref);
    }
}

/* One program alone through the timed kernel (access by access on the
 * inclusive intel8, L2 half ahead on the exclusive amd32) ends in the same
 * state as llc_sim_run on the same stream. */
static void test_kernel_matches_batch_path(void **state)
{
    (void)state;
    static const char *const presets[] = {"intel8", "amd32"};
    const size_t n = 300000;
    uint64_t *addrs = malloc(n * sizeof(*addrs));
    assert_non_null(addrs);
    uint64_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        /* 70% within 2 MiB, the rest within 64 MiB */
        const uint64_t span = (x >> 60) < 11 ? (2u << 20) : (64u << 20);
        addrs[i] = ((x >> 16) % span) & ~63ULL;
    }
    for (unsigned k = 0; k < 2; k++) {
        struct llc_sim_config c;
        char err[LLC_ERRLEN];
        assert_int_equal(llc_sim_preset(presets[k], &c, err, sizeof(err)), 0);
        struct llc_sim *sim = NULL;
        assert_int_equal(llc_sim_create(&c, &sim, err, sizeof(err)), 0);
        assert_int_equal(llc_sim_run(sim, 0, addrs, n, false, NULL), 0);
        struct llc_sim_agent_stats st;
        llc_sim_agent_stats(sim, 0, &st);
        llc_sim_destroy(sim);
        struct llc_corun_agent a = array_agent(addrs, NULL, n);
        a.phys = false;
        struct llc_corun_params p;
        llc_corun_params_default(&p);
        p.solo = false;
        struct llc_corun_result *r = run(&c, &a, 1, &p);
        const struct llc_corun_series *s = &r->corun[0];
        assert_int_equal(s->accesses, n);
        assert_int_equal(s->levels[LLC_SIM_HIT_L2], st.l2_hits);
        assert_int_equal(s->levels[LLC_SIM_HIT_LLC], st.llc_hits);
        assert_int_equal(s->levels[LLC_SIM_HIT_DRAM], st.llc_misses);
        assert_int_equal(s->llc_misses, st.llc_misses);
        assert_int_equal(s->occupancy_end, st.llc_occupancy);
        assert_true(st.llc_hits > 1000 && st.llc_misses > 1000 && st.l2_hits > 1000);
        llc_corun_free(r);
    }
    free(addrs);
}

/* The simplest driver of the definition, beside the kernel: one access at
 * a time through llc_sim_access_phys, always the agent with the earliest
 * clock (ties to the lower index), windows closed after the access that
 * reaches their end. The kernel issues a prepared agent's L2 hits at once
 * and prefetches ahead; none of that may show in any figure. */
#define REF_AGENTS 3
#define REF_WINDOW 5000
struct ref_agent {
    const uint64_t *addr;
    const uint32_t *instr;
    size_t n, pos;
    double clock, cost[3], cpi;
    uint64_t ins, win_end, levels[3];
    struct llc_corun_window start, w[64];
    size_t nw;
    uint64_t occ_end;
};

static void ref_now(struct llc_sim *sim, unsigned i, const struct ref_agent *a,
                    struct llc_corun_window *w)
{
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, (int)i, &st);
    *w = (struct llc_corun_window){.instructions = a->ins,
                                   .llc_accesses = st.llc_hits + st.llc_misses,
                                   .llc_misses = st.llc_misses,
                                   .occupancy = st.llc_occupancy,
                                   .cycles = a->clock};
}

static void ref_close(struct llc_sim *sim, unsigned i, struct ref_agent *a)
{
    struct llc_corun_window now;
    ref_now(sim, i, a, &now);
    if (now.instructions == a->start.instructions)
        return;
    assert_true(a->nw < 64);
    a->w[a->nw++] =
        (struct llc_corun_window){.instructions = now.instructions - a->start.instructions,
                                  .llc_accesses = now.llc_accesses - a->start.llc_accesses,
                                  .llc_misses = now.llc_misses - a->start.llc_misses,
                                  .occupancy = now.occupancy,
                                  .cycles = now.cycles - a->start.cycles};
    a->start = now;
}

static void ref_run(const struct llc_sim_config *c, const struct llc_corun_params *p,
                    struct ref_agent *ag, unsigned n)
{
    struct llc_sim *sim = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_create(c, &sim, err, sizeof(err)), 0);
    for (;;) {
        int k = -1;
        for (unsigned i = 0; i < n; i++)
            if (ag[i].pos < ag[i].n && (k < 0 || ag[i].clock < ag[k].clock))
                k = (int)i;
        if (k < 0)
            break;
        struct ref_agent *a = &ag[k];
        struct llc_sim_result res;
        const int level = llc_sim_access_phys(sim, (unsigned)k, a->addr[a->pos], &res);
        assert_true(level >= 0 && level < 3);
        a->ins += a->instr[a->pos];
        a->clock += (double)a->instr[a->pos] * a->cpi + a->cost[level];
        a->levels[level]++;
        a->pos++;
        if (a->ins >= a->win_end) {
            ref_close(sim, (unsigned)k, a);
            a->win_end = (a->ins / p->window + 1) * p->window;
        }
        if (a->pos == a->n) {
            ref_close(sim, (unsigned)k, a);
            struct llc_corun_window now;
            ref_now(sim, (unsigned)k, a, &now);
            a->occ_end = now.occupancy;
        }
    }
    llc_sim_destroy(sim);
}

static void test_matches_simple_driver(void **state)
{
    (void)state;
    static const char *const presets[] = {"amd32", "intel8"};
    static const enum llc_sim_policy pols[] = {LLC_SIM_LRU, LLC_SIM_RANDOM, LLC_SIM_DRRIP};
    static const size_t len[REF_AGENTS] = {40000, 25000, 33000};
    static const double cpi[REF_AGENTS] = {0.8, 1.3, 2.0}, mlp[REF_AGENTS] = {1, 2.5, 4};
    uint64_t *addr[REF_AGENTS];
    uint32_t *instr[REF_AGENTS];
    uint64_t x = 99;
    for (unsigned i = 0; i < REF_AGENTS; i++) {
        addr[i] = malloc(len[i] * sizeof(*addr[i]));
        instr[i] = malloc(len[i] * sizeof(*instr[i]));
        assert_true(addr[i] && instr[i]);
        /* Mostly a few hundred KiB (L2 hits in runs), the rest over 48 MiB:
         * an agent of its own 128 MiB of physical memory. */
        for (size_t k = 0; k < len[i]; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            const uint64_t span = (x >> 60) < 10 ? ((192u + 128u * i) << 10) : (48u << 20);
            addr[i][k] = ((uint64_t)i << 27) + (((x >> 16) % span) & ~63ULL);
            instr[i][k] = 1 + (uint32_t)((x >> 8) % 7);
        }
    }
    for (unsigned pr = 0; pr < 2; pr++)
        for (unsigned po = 0; po < 3; po++) {
            struct llc_sim_config c;
            char err[LLC_ERRLEN];
            assert_int_equal(llc_sim_preset(presets[pr], &c, err, sizeof(err)), 0);
            c.llc_policy = pols[po];
            c.agents = REF_AGENTS;
            struct llc_corun_params p;
            llc_corun_params_default(&p);
            p.window = REF_WINDOW;
            p.solo = false;
            struct llc_corun_agent in[REF_AGENTS];
            struct ref_agent ref[REF_AGENTS];
            memset(ref, 0, sizeof(ref));
            for (unsigned i = 0; i < REF_AGENTS; i++) {
                in[i] = array_agent(addr[i], instr[i], len[i]);
                in[i].cpi = cpi[i];
                in[i].mlp = mlp[i];
                ref[i] = (struct ref_agent){
                    .addr = addr[i],
                    .instr = instr[i],
                    .n = len[i],
                    .cpi = cpi[i],
                    .win_end = REF_WINDOW,
                    .cost = {p.lat_l2 / mlp[i], p.lat_llc / mlp[i], p.lat_mem / mlp[i]}};
            }
            struct llc_corun_result *r = run(&c, in, REF_AGENTS, &p);
            ref_run(&c, &p, ref, REF_AGENTS);
            for (unsigned i = 0; i < REF_AGENTS; i++) {
                const struct llc_corun_series *s = &r->corun[i];
                assert_double_equal(s->cycles, ref[i].clock, 0);
                assert_int_equal(s->instructions, ref[i].ins);
                assert_memory_equal(s->levels, ref[i].levels, sizeof(s->levels));
                assert_int_equal(s->llc_misses, ref[i].levels[LLC_SIM_HIT_DRAM]);
                assert_int_equal(s->occupancy_end, ref[i].occ_end);
                assert_int_equal(s->n, ref[i].nw);
                for (size_t w = 0; w < s->n; w++) {
                    assert_int_equal(s->w[w].instructions, ref[i].w[w].instructions);
                    assert_double_equal(s->w[w].cycles, ref[i].w[w].cycles, 0);
                    assert_int_equal(s->w[w].llc_accesses, ref[i].w[w].llc_accesses);
                    assert_int_equal(s->w[w].llc_misses, ref[i].w[w].llc_misses);
                    assert_int_equal(s->w[w].occupancy, ref[i].w[w].occupancy);
                }
                /* the streams reach the LLC and share it */
                assert_true(ref[i].levels[LLC_SIM_HIT_L2] > 1000 &&
                            ref[i].levels[LLC_SIM_HIT_DRAM] > 1000);
            }
            llc_corun_free(r);
        }
    for (unsigned i = 0; i < REF_AGENTS; i++) {
        free(addr[i]);
        free(instr[i]);
    }
}

static void test_stop_and_errors(void **state)
{
    (void)state;
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    struct llc_corun_agent ag[2] = {workload("uniform:size=1M", 100000000),
                                    workload("uniform:size=1M", 100000000)};
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    volatile sig_atomic_t stop = 1;
    p.stop = &stop;
    struct llc_corun_result *r = NULL;
    assert_int_equal(llc_corun_run(&c, ag, 2, &p, &r, err, sizeof(err)), -EINTR);
    assert_null(r);
    p.stop = NULL;
    ag[1].instructions = 0;
    assert_int_equal(llc_corun_run(&c, ag, 2, &p, &r, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "never ends"));
    ag[1].instructions = 1000;
    ag[1].mlp = 0;
    assert_int_equal(llc_corun_run(&c, ag, 2, &p, &r, err, sizeof(err)), -EINVAL);
    ag[1].mlp = 1;
    ag[1].spec = "nonsense:size=1";
    assert_int_equal(llc_corun_run(&c, ag, 2, &p, &r, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_corun_run(&c, ag, 0, &p, &r, err, sizeof(err)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_formula),
        cmocka_unit_test(test_earliest_clock_order),
        cmocka_unit_test(test_solo_is_one_program_corun),
        cmocka_unit_test(test_hungry_pair_slows_down),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_kernel_matches_batch_path),
        cmocka_unit_test(test_matches_simple_driver),
        cmocka_unit_test(test_stop_and_errors),
        cmocka_unit_test(test_window_accesses_retired),
        cmocka_unit_test(test_restart_keeps_pressure),
        cmocka_unit_test(test_isa_copies_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
