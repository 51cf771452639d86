/* Hierarchy behaviour: inclusive back-invalidation, exclusive victim fills,
 * NINE; a fully associative LRU LLC against an independent stack-distance
 * computation; ground-truth occupancy against a recount over the arrays;
 * bit-for-bit reproducibility; the latency model; the stop flag. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim_test_util.h"
#include "model/sim/hierarchy.h"
#include "model/sim/rng.h"

#define NONE UINT64_MAX

/* A 1-set LLC of llc_ways and a 1-set L2 of l2_ways per agent. */
static struct llc_sim_config two_level(uint32_t llc_ways, uint32_t l2_ways,
                                       enum llc_sim_inclusion inc, unsigned agents)
{
    struct llc_sim_config c = tiny_config(1, llc_ways, LLC_SIM_LRU);
    c.l2_sets = 1;
    c.l2_ways = l2_ways;
    c.inclusion = inc;
    c.agents = agents;
    return c;
}

static uint64_t X(uint64_t n)
{
    return n * 64;
}

static void test_inclusive_back_invalidation(void **state)
{
    (void)state;
    struct llc_sim_config c = two_level(2, 4, LLC_SIM_INCLUSIVE, 2);
    struct llc_sim *sim = make_sim(&c);
    uint64_t v;
    assert_int_equal(touch(sim, 0, X(1), NULL), LLC_SIM_HIT_DRAM);
    assert_int_equal(touch(sim, 0, X(2), NULL), LLC_SIM_HIT_DRAM);
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 3u);
    assert_int_equal(touch(sim, 0, X(1), NULL), LLC_SIM_HIT_L2);
    /* L2 hits do not refresh the LLC: line 1 is still its LRU line. */
    assert_int_equal(touch(sim, 0, X(3), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, X(1));
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 0u);
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, 0, &st);
    assert_int_equal(st.back_invals, 1);
    assert_int_equal(st.l2_occupancy, 2);
    /* ...so the L2, though it had room, misses on it. */
    assert_int_equal(touch(sim, 0, X(1), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, X(2));
    /* Agent 1 shares line 3 (LLC hit, copy in its L2); its eviction
     * removes both L2 copies. */
    unsigned owner = 99;
    assert_int_equal(touch(sim, 1, X(3), NULL), LLC_SIM_HIT_LLC);
    assert_int_equal(llc_sim_where(sim, 1, X(3), &owner), 3u);
    assert_int_equal(owner, 0);
    assert_int_equal(touch(sim, 1, X(4), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, X(1));
    assert_int_equal(touch(sim, 1, X(5), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, X(3));
    assert_int_equal(llc_sim_where(sim, 0, X(3), NULL), 0u);
    assert_int_equal(llc_sim_where(sim, 1, X(3), NULL), 0u);
    llc_sim_destroy(sim);
}

static void test_exclusive_victim_fill(void **state)
{
    (void)state;
    struct llc_sim_config c = two_level(2, 2, LLC_SIM_EXCLUSIVE, 1);
    struct llc_sim *sim = make_sim(&c);
    struct llc_sim_agent_stats st;
    uint64_t v;
    assert_int_equal(touch(sim, 0, X(1), NULL), LLC_SIM_HIT_DRAM);
    assert_int_equal(touch(sim, 0, X(2), NULL), LLC_SIM_HIT_DRAM);
    /* DRAM fills go to the L2 only. */
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 1u);
    llc_sim_agent_stats(sim, 0, &st);
    assert_int_equal(st.llc_occupancy, 0);
    /* The L2 victim (1) lands in the LLC. */
    assert_int_equal(touch(sim, 0, X(3), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, NONE);
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 2u);
    /* An LLC hit moves it up and out of the LLC; the L2 victim (2) goes down. */
    assert_int_equal(touch(sim, 0, X(1), NULL), LLC_SIM_HIT_LLC);
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 1u);
    assert_int_equal(llc_sim_where(sim, 0, X(2), NULL), 2u);
    llc_sim_agent_stats(sim, 0, &st);
    assert_int_equal(st.llc_occupancy, 1);
    assert_int_equal(st.llc_fills, 2);
    /* Victims fill the 2-way LLC, then evict its LRU line (2). */
    assert_int_equal(touch(sim, 0, X(4), &v), LLC_SIM_HIT_DRAM); /* L2 victim 3 */
    assert_int_equal(v, NONE);
    assert_int_equal(touch(sim, 0, X(5), &v), LLC_SIM_HIT_DRAM); /* L2 victim 1 */
    assert_int_equal(v, X(2));
    assert_int_equal(llc_sim_where(sim, 0, X(2), NULL), 0u);
    /* Capacity is L2 + LLC: 4 distinct lines all live somewhere. */
    for (uint64_t n = 1; n <= 5; n++)
        if (n != 2)
            assert_true(llc_sim_where(sim, 0, X(n), NULL) != 0);
    char err[LLC_ERRLEN];
    c.l2_sets = 0;
    assert_int_equal(llc_sim_config_check(&c, err, sizeof(err)), -EINVAL);
    llc_sim_destroy(sim);
}

static void test_nine(void **state)
{
    (void)state;
    struct llc_sim_config c = two_level(2, 4, LLC_SIM_NINE, 1);
    struct llc_sim *sim = make_sim(&c);
    uint64_t v;
    for (uint64_t n = 1; n <= 3; n++)
        assert_int_equal(touch(sim, 0, X(n), &v), LLC_SIM_HIT_DRAM);
    assert_int_equal(v, X(1));
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 1u); /* L2 keeps it */
    assert_int_equal(touch(sim, 0, X(1), NULL), LLC_SIM_HIT_L2);
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, 0, &st);
    assert_int_equal(st.back_invals, 0);
    llc_sim_destroy(sim);
}

/* Exact LRU hit/miss and victim of a fully associative LLC against a plain
 * recency list (stack distance < ways <=> hit). */
static void check_stack_distance(uint32_t ways, uint64_t distinct, uint64_t seed)
{
    struct llc_sim_config c = tiny_config(1, ways, LLC_SIM_LRU);
    struct llc_sim *sim = make_sim(&c);
    uint64_t stack[512];
    size_t depth = 0;
    struct sim_rng r = sim_rng_stream(seed, 9);
    for (unsigned i = 0; i < 20000; i++) {
        /* Skewed: small stack distances common, some long ones. */
        const uint64_t line = (sim_rng_below(&r, 4) == 0) ? sim_rng_below(&r, (uint32_t)distinct)
                                                          : sim_rng_below(&r, ways + 4);
        size_t dist = 0;
        while (dist < depth && stack[dist] != line)
            dist++;
        const bool hit = dist < depth && dist < ways;
        const uint64_t expect_victim = (!hit && depth >= ways) ? stack[ways - 1] * 64 : NONE;
        if (dist == depth)
            depth++;
        memmove(stack + 1, stack, dist * sizeof(stack[0]));
        stack[0] = line;
        uint64_t v;
        const int level = touch(sim, 0, line * 64, &v);
        assert_int_equal(level, hit ? LLC_SIM_HIT_LLC : LLC_SIM_HIT_DRAM);
        assert_int_equal(v, expect_victim);
    }
    llc_sim_destroy(sim);
}

static void test_lru_stack_distance(void **state)
{
    (void)state;
    check_stack_distance(16, 100, 1);
    check_stack_distance(64, 300, 2);
    check_stack_distance(5, 40, 3);
}

/* Recounts owners over the LLC blocks and valid lines over the L2s. */
static void check_occupancy(const struct llc_sim *sim)
{
    const unsigned agents = sim->cfg.agents;
    const uint32_t sets = llc_sim_sets(sim);
    struct llc_sim_set_stats *ss = test_malloc(sets * sizeof(*ss));
    for (unsigned a = 0; a < agents; a++) {
        assert_int_equal(llc_sim_set_stats(sim, (int)a, ss, sets), 0);
        uint64_t total = 0;
        for (uint32_t s = 0; s < sets; s++) {
            uint32_t count = 0;
            for (uint32_t w = 0; w < sim->llc.ways; w++)
                count += sim_way_valid(&sim->llc, s, w) &&
                         (sim_owner_of(&sim->llc, s, w) & SIM_OWNER_AGENT) == a;
            assert_int_equal(ss[s].occupancy, count);
            total += count;
        }
        struct llc_sim_agent_stats st;
        llc_sim_agent_stats(sim, (int)a, &st);
        assert_int_equal(st.llc_occupancy, total);
        assert_int_equal(st.l2_hits + st.l2_misses, sim->has_l2 ? st.accesses : 0);
        assert_int_equal(st.llc_hits + st.llc_misses, sim->has_l2 ? st.l2_misses : st.accesses);
        if (sim->has_l2) {
            uint64_t valid = 0;
            for (uint32_t s = 0; s < sim->l2[a].sets; s++)
                for (uint32_t w = 0; w < sim->l2[a].ways; w++)
                    valid += sim_tags(&sim->l2[a], s)[w] != SIM_INVALID_TAG;
            assert_int_equal(st.l2_occupancy, valid);
        }
    }
    test_free(ss);
}

/* The per-set counters keep 16 bits in the LLC block and carry into the
 * high words: 200000 hits and 70000 misses of one set (wide blocks of four
 * agents, and the narrow block of one) read back exactly. */
static void test_set_counter_carry(void **state)
{
    (void)state;
    for (unsigned agents = 1; agents <= 4; agents += 3) {
        struct llc_sim_config c = tiny_config(4, 16, LLC_SIM_LRU);
        c.agents = agents;
        c.phys_mem_bytes = 1u << 24; /* 16-bit tags: narrow blocks for one agent */
        struct llc_sim *sim = make_sim(&c);
        assert_int_equal(sim->llc.narrow, agents == 1);
        const unsigned a = agents - 1;
        for (unsigned i = 0; i < 200000; i++)
            touch(sim, a, line_addr(4, 1, 0), NULL);
        /* 17 lines in turn in a 16-way set under LRU: every access misses */
        for (unsigned i = 0; i < 70000; i++)
            touch(sim, a, line_addr(4, 2, 1 + i % 17), NULL);
        struct llc_sim_set_stats ss[4];
        assert_int_equal(llc_sim_set_stats(sim, (int)a, ss, 4), 0);
        assert_int_equal(ss[1].hits, 199999);
        assert_int_equal(ss[1].misses, 1);
        assert_int_equal(ss[2].hits, 0);
        assert_int_equal(ss[2].misses, 70000);
        llc_sim_reset_counters(sim);
        assert_int_equal(llc_sim_set_stats(sim, (int)a, ss, 4), 0);
        assert_int_equal(ss[1].hits + ss[2].misses, 0);
        llc_sim_destroy(sim);
    }
}

static void run_random_stream(struct llc_sim *sim, uint64_t seed, unsigned n, uint8_t *levels,
                              uint32_t *latencies)
{
    struct sim_rng r = sim_rng_stream(seed, 11);
    for (unsigned i = 0; i < n; i++) {
        const unsigned agent = sim_rng_below(&r, sim->cfg.agents);
        const uint64_t vaddr = (uint64_t)sim_rng_below(&r, 1u << 22) * 8; /* 32 MiB */
        struct llc_sim_result res;
        const int level = llc_sim_access(sim, agent, vaddr, &res);
        assert_true(level >= 0);
        if (levels)
            levels[i] = (uint8_t)level;
        if (latencies)
            latencies[i] = res.latency;
    }
}

static struct llc_sim_config small_sliced(enum llc_sim_policy p, enum llc_sim_inclusion inc,
                                          bool l2)
{
    struct llc_sim_config c;
    llc_sim_config_default(&c);
    c.llc.sets_per_slice = 64;
    c.llc.slices = 4;
    c.llc.ways = 8;
    c.llc.hash = LLC_SIM_HASH_XOR;
    c.llc.slice_masks[0] = 0x1b5f575440ULL;
    c.llc.slice_masks[1] = 0x2eb5faa880ULL;
    c.llc_policy = p;
    c.l2_policy = p == LLC_SIM_DRRIP ? LLC_SIM_SRRIP : p;
    c.drrip_leaders = 8;
    c.inclusion = inc;
    c.l2_sets = l2 ? 16 : 0;
    c.l2_ways = 4;
    c.agents = 3;
    c.phys_mem_bytes = 1ULL << 30;
    return c;
}

static void test_occupancy_recount(void **state)
{
    (void)state;
    for (int p = LLC_SIM_LRU; p <= LLC_SIM_DRRIP; p++)
        for (int inc = LLC_SIM_INCLUSIVE; inc <= LLC_SIM_NINE; inc++) {
            struct llc_sim_config c =
                small_sliced((enum llc_sim_policy)p, (enum llc_sim_inclusion)inc, true);
            struct llc_sim *sim = make_sim(&c);
            run_random_stream(sim, (uint64_t)(p * 10 + inc), 30000, NULL, NULL);
            check_occupancy(sim);
            /* Counters reset, state stays. */
            llc_sim_reset_counters(sim);
            check_occupancy(sim);
            struct llc_sim_agent_stats st;
            llc_sim_agent_stats(sim, LLC_SIM_ALL_AGENTS, &st);
            assert_int_equal(st.accesses, 0);
            assert_true(st.llc_occupancy > 0);
            llc_sim_flush_all(sim);
            check_occupancy(sim);
            llc_sim_destroy(sim);
        }
    struct llc_sim_config c = small_sliced(LLC_SIM_LRU, LLC_SIM_INCLUSIVE, false);
    struct llc_sim *sim = make_sim(&c);
    run_random_stream(sim, 5, 30000, NULL, NULL);
    check_occupancy(sim);
    llc_sim_destroy(sim);
}

static void test_reproducible(void **state)
{
    (void)state;
    enum { N = 20000 };
    static uint8_t lv[3][N];
    static uint32_t lat[3][N];
    for (int i = 0; i < 3; i++) {
        struct llc_sim_config c = small_sliced(LLC_SIM_RANDOM, LLC_SIM_INCLUSIVE, true);
        c.l2_policy = LLC_SIM_BRRIP;
        c.latency.enabled = true;
        c.seed = i == 2 ? 8 : 7;
        struct llc_sim *sim = make_sim(&c);
        run_random_stream(sim, 3, N, lv[i], lat[i]);
        llc_sim_destroy(sim);
    }
    assert_memory_equal(lv[0], lv[1], sizeof(lv[0]));
    assert_memory_equal(lat[0], lat[1], sizeof(lat[0]));
    assert_true(memcmp(lat[0], lat[2], sizeof(lat[0])) != 0);
    assert_true(memcmp(lv[0], lv[2], sizeof(lv[0])) != 0);
}

/* llc_sim_run gives the same levels as single accesses (prefetching and
 * chunked translation change nothing), on the amd32 preset. */
static void test_run_equals_single(void **state)
{
    (void)state;
    enum { N = 50000 };
    char err[LLC_ERRLEN];
    struct llc_sim_config c;
    assert_int_equal(llc_sim_preset("amd32", &c, err, sizeof(err)), 0);
    c.llc_policy = LLC_SIM_DRRIP;
    c.llc.sets_per_slice = 256; /* small, so the stream exercises evictions */
    uint64_t *addrs = test_malloc(N * sizeof(*addrs));
    uint8_t *a = test_malloc(N), *b = test_malloc(N);
    struct sim_rng r = sim_rng_stream(4, 4);
    for (unsigned i = 0; i < N; i++)
        addrs[i] = sim_rng_next(&r) % (64ULL << 20);
    struct llc_sim *s1 = make_sim(&c), *s2 = make_sim(&c);
    assert_int_equal(llc_sim_run(s1, 0, addrs, N, false, a), 0);
    for (unsigned i = 0; i < N; i++)
        b[i] = (uint8_t)llc_sim_access(s2, 0, addrs[i], NULL);
    assert_memory_equal(a, b, N);
    assert_int_equal(llc_sim_psel(s1), llc_sim_psel(s2));
    llc_sim_destroy(s1);
    llc_sim_destroy(s2);
    test_free(addrs);
    test_free(a);
    test_free(b);
}

/* The stop flag of the configuration is looked at on the first access and
 * then every few million (1 << 22): once set, the next look ends the batch
 * with -EINTR; without a flag (NULL) nothing ends a simulation early. */
static void test_stop_flag(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    volatile sig_atomic_t stop = 0;
    struct llc_sim_config c = tiny_config(64, 8, LLC_SIM_LRU);
    c.stop = &stop;
    uint64_t *addrs = test_malloc(N * sizeof(*addrs));
    for (unsigned i = 0; i < N; i++)
        addrs[i] = X(i % 4096);
    struct llc_sim *sim = make_sim(&c);
    assert_true(llc_sim_access(sim, 0, X(1), NULL) >= 0);
    stop = 1;
    int rc = 0;
    unsigned batches = 0;
    while (rc == 0 && batches < 200) {
        rc = llc_sim_run(sim, 0, addrs, N, false, NULL);
        batches++;
    }
    assert_int_equal(rc, -EINTR);
    assert_true(batches <= (1u << 22) / N + 1);
    llc_sim_destroy(sim);
    c.stop = NULL;
    sim = make_sim(&c);
    for (unsigned k = 0; k < 200; k++)
        assert_int_equal(llc_sim_run(sim, 0, addrs, N, false, NULL), 0);
    llc_sim_destroy(sim);
    test_free(addrs);
}

static void test_latency_model(void **state)
{
    (void)state;
    struct llc_sim_config c = two_level(64, 8, LLC_SIM_INCLUSIVE, 1);
    c.latency.enabled = true;
    c.latency.outlier_prob = 0;
    struct llc_sim *sim = make_sim(&c);
    double sum[3] = {0}, sq[3] = {0};
    unsigned n[3] = {0}, lo[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX}, hi[3] = {0};
    struct sim_rng r = sim_rng_stream(6, 6);
    for (unsigned i = 0; i < 30000; i++) {
        struct llc_sim_result res;
        const int level = llc_sim_access_phys(sim, 0, sim_rng_below(&r, 100) * 64ULL, &res);
        sum[level] += res.latency;
        sq[level] += (double)res.latency * res.latency;
        n[level]++;
        lo[level] = res.latency < lo[level] ? res.latency : lo[level];
        hi[level] = res.latency > hi[level] ? res.latency : hi[level];
    }
    const double mean[3] = {40, 100, 420}, sd[3] = {3, 8, 40};
    for (int l = 0; l < 3; l++) {
        assert_true(n[l] > 50);
        const double m = sum[l] / n[l];
        const double s = sqrt(sq[l] / n[l] - m * m);
        assert_true(fabs(m - mean[l]) < 4 * sd[l] / sqrt(n[l]) + 0.5);
        assert_true(fabs(s - sd[l]) < 0.15 * sd[l]);
        assert_true(lo[l] >= mean[l] - 3.47 * sd[l] - 1 && hi[l] <= mean[l] + 3.47 * sd[l] + 1);
    }
    /* Defaults keep the levels apart: a single threshold at 250 separates
     * LLC hits from DRAM, as on the machines DESIGN.md describes. */
    assert_true(hi[LLC_SIM_HIT_LLC] < 250 && lo[LLC_SIM_HIT_DRAM] > 250);
    llc_sim_destroy(sim);
}

static void test_flush_and_errors(void **state)
{
    (void)state;
    struct llc_sim_config c = two_level(4, 4, LLC_SIM_INCLUSIVE, 2);
    struct llc_sim *sim = make_sim(&c);
    touch(sim, 0, X(1), NULL);
    touch(sim, 1, X(1), NULL);
    llc_sim_flush_line(sim, X(1));
    assert_int_equal(llc_sim_where(sim, 0, X(1), NULL), 0u);
    assert_int_equal(llc_sim_where(sim, 1, X(1), NULL), 0u);
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, LLC_SIM_ALL_AGENTS, &st);
    assert_int_equal(st.llc_occupancy, 0);
    assert_int_equal(st.l2_occupancy, 0);
    assert_int_equal(llc_sim_access_phys(sim, 2, X(1), NULL), -EINVAL);
    assert_int_equal(llc_sim_access_phys(sim, 0, 1ULL << llc_sim_paddr_bits(sim), NULL), -ERANGE);
    assert_int_equal(llc_sim_agent_stats(sim, 5, &st), -EINVAL);
    llc_sim_destroy(sim);
}

/* Everything observable of two simulators, compared. */
static void assert_same_truth(const struct llc_sim *a, const struct llc_sim *b)
{
    const uint32_t sets = llc_sim_sets(a);
    struct llc_sim_set_stats *sa = test_malloc(sets * sizeof(*sa));
    struct llc_sim_set_stats *sb = test_malloc(sets * sizeof(*sb));
    assert_int_equal(llc_sim_set_stats(a, 0, sa, sets), 0);
    assert_int_equal(llc_sim_set_stats(b, 0, sb, sets), 0);
    assert_memory_equal(sa, sb, sets * sizeof(*sa));
    struct llc_sim_agent_stats ta, tb;
    llc_sim_agent_stats(a, 0, &ta);
    llc_sim_agent_stats(b, 0, &tb);
    assert_memory_equal(&ta, &tb, sizeof(ta));
    assert_int_equal(llc_sim_psel(a), llc_sim_psel(b));
    test_free(sa);
    test_free(sb);
}

/* The narrow LLC layout (16-bit tags) against the wide one on the same
 * accesses, before and after a physical access beyond what 16-bit tags
 * name turns it wide (every mode, a few policies). */
static void test_narrow_widens(void **state)
{
    (void)state;
    enum { N = 3000 };
    static const enum llc_sim_policy policies[] = {LLC_SIM_LRU, LLC_SIM_DRRIP, LLC_SIM_RANDOM};
    for (int inc = 0; inc < 3; inc++) {
        for (size_t pi = 0; pi < sizeof(policies) / sizeof(policies[0]); pi++) {
            char err[LLC_ERRLEN];
            struct llc_sim_config c;
            assert_int_equal(llc_sim_preset("amd32", &c, err, sizeof(err)), 0);
            c.llc.sets_per_slice = 64; /* tags: paddr >> 12, 16 bits below 2^28 */
            c.l2_sets = 64;
            c.inclusion = (enum llc_sim_inclusion)inc;
            c.llc_policy = policies[pi];
            c.phys_mem_bytes = 1ULL << 28;
            struct llc_sim *a = make_sim(&c);
            sim_narrow_allow(false);
            struct llc_sim *b = make_sim(&c);
            sim_narrow_allow(true);
            assert_true(a->llc.narrow);
            assert_false(b->llc.narrow);
            static uint64_t addrs[N];
            static uint8_t la[N], lb[N];
            struct sim_rng r = sim_rng_stream(inc * 10 + pi, 5);
            for (int round = 0; round < 4; round++) {
                /* Rounds 0-1 virtual, 2 physical below 2^28, 3 up to 2^34. */
                const uint64_t span = round == 3 ? 1ULL << 34 : 1ULL << 28;
                for (unsigned i = 0; i < N; i++)
                    addrs[i] = sim_rng_below(&r, 2) ? sim_rng_below(&r, 4096) * 64ULL
                                                    : sim_rng_next(&r) % span;
                const bool phys = round >= 2;
                if (round == 3) {
                    /* A lookup beyond the narrow tags: absent, still narrow. */
                    assert_int_equal(llc_sim_where(a, 0, 1ULL << 33, NULL) & 2u, 0);
                    assert_true(a->llc.narrow);
                }
                assert_int_equal(llc_sim_run(a, 0, addrs, N, phys, la), 0);
                assert_int_equal(llc_sim_run(b, 0, addrs, N, phys, lb), 0);
                assert_memory_equal(la, lb, N);
                assert_int_equal(a->llc.narrow, round < 3);
                for (unsigned i = 0; i < 64; i++) {
                    const uint64_t x = sim_rng_next(&r) % span;
                    unsigned oa = 99, ob = 99;
                    assert_int_equal(llc_sim_where(a, 0, x, &oa), llc_sim_where(b, 0, x, &ob));
                    assert_int_equal(oa, ob);
                    if (i % 8 == 0) {
                        llc_sim_flush_line(a, x);
                        llc_sim_flush_line(b, x);
                    }
                }
                assert_same_truth(a, b);
                check_occupancy(a);
            }
            llc_sim_destroy(a);
            llc_sim_destroy(b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inclusive_back_invalidation),
        cmocka_unit_test(test_exclusive_victim_fill),
        cmocka_unit_test(test_nine),
        cmocka_unit_test(test_lru_stack_distance),
        cmocka_unit_test(test_occupancy_recount),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_run_equals_single),
        cmocka_unit_test(test_latency_model),
        cmocka_unit_test(test_stop_flag),
        cmocka_unit_test(test_flush_and_errors),
        cmocka_unit_test(test_narrow_widens),
        cmocka_unit_test(test_set_counter_carry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
