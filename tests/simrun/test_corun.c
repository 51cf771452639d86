/* Timed co-runs (llcprobe/corun.h): the clock formula on a stream checked
 * by hand, earliest-clock order, solo == a one-program co-run, slowdown of a
 * cache-hungry pair, determinism, the stop flag and bad input. */
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

#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* A tiny cache without an L2: sets x ways, 64-byte lines, LRU. */
static void tiny(struct llc_sim_config *c, uint32_t sets, uint32_t ways)
{
    llc_sim_config_default(c);
    c->llc = (struct llc_sim_geometry){
        .line_size = 64, .sets_per_slice = sets, .slices = 1, .ways = ways,
        .hash = LLC_SIM_HASH_MODULO};
}

static struct llc_corun_result *run(const struct llc_sim_config *c,
                                    const struct llc_corun_agent *a, unsigned n,
                                    const struct llc_corun_params *p)
{
    char err[LLC_ERRLEN] = "";
    struct llc_corun_result *r = NULL;
    if (llc_corun_run(c, a, n, p, &r, err, sizeof(err)) != 0)
        fail_msg("corun: %s", err);
    return r;
}

static struct llc_corun_agent array_agent(const uint64_t *addrs, const uint32_t *instr, size_t n)
{
    struct llc_corun_agent a = {.source = LLC_CORUN_ARRAY, .addrs = addrs, .instr = instr,
                                .n = n, .phys = true};
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

static struct llc_corun_agent workload(const char *spec, uint64_t instructions)
{
    struct llc_corun_agent a = {.source = LLC_CORUN_WORKLOAD, .spec = spec,
                                .instructions = instructions};
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
        printf("program %u: slowdown %.4f, miss ratio %.4f alone, %.4f together\n", i,
               slowdown, (double)so->llc_misses / so->llc_accesses,
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
        cmocka_unit_test(test_stop_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
