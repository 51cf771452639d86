/* Bit-for-bit regression: seeded mixed workloads (single and batched
 * accesses, virtual and physical, failing ones, flushes, counter resets,
 * presence queries) over many configurations, everything observable folded
 * into one digest per configuration and compared with the digests the
 * original, unoptimised simulator gave (commit d9a93db). Any change of
 * behaviour, however small, changes a digest.
 *
 * Built with -DGOLDEN_PRINT (and without cmocka) it prints the table
 * instead, to regenerate it from a trusted build. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GOLDEN_PRINT
#include "sim_test_util.h"
#include "model/sim/hierarchy.h"
#else
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#endif
#include "model/sim/rng.h"

#define MAX_RUN 700 /* longer than the batch paths' chunks and rings */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static uint64_t stats_digest(struct llc_sim *sim, uint64_t h)
{
    const struct llc_sim_config *c = llc_sim_config_of(sim);
    const uint32_t n = llc_sim_sets(sim);
    struct llc_sim_set_stats *ss = malloc(n * sizeof(*ss));
    for (int a = LLC_SIM_ALL_AGENTS; a < (int)c->agents; a++) {
        struct llc_sim_agent_stats st;
        llc_sim_agent_stats(sim, a, &st);
        const uint64_t v[] = {st.accesses,      st.l2_hits,     st.l2_misses,   st.llc_hits,
                              st.llc_misses,    st.llc_fills,   st.llc_evicted, st.back_invals,
                              st.llc_occupancy, st.l2_occupancy};
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
            h = mix(h, v[i]);
        llc_sim_set_stats(sim, a, ss, n);
        for (uint32_t s = 0; s < n; s++)
            h = mix(mix(mix(h, ss[s].hits), ss[s].misses), ss[s].occupancy);
    }
    free(ss);
    return mix(h, llc_sim_psel(sim));
}

/* Addresses: a hot region per agent, cold ones over span, some unaligned. */
static void fill(struct sim_rng *r, unsigned agent, uint64_t span, uint64_t *a, unsigned k)
{
    for (unsigned i = 0; i < k; i++) {
        uint64_t x = sim_rng_below(r, 10) < 6
                         ? (sim_rng_below(r, 1u << 14) * 64ULL) ^ ((uint64_t)agent << 24)
                         : sim_rng_next(r) % span;
        if (sim_rng_below(r, 4) == 0)
            x |= sim_rng_below(r, 64);
        a[i] = x;
    }
}

static uint64_t single(struct llc_sim *sim, unsigned agent, const uint64_t *a, unsigned k,
                       bool phys, uint64_t h)
{
    for (unsigned i = 0; i < k; i++) {
        struct llc_sim_result res;
        memset(&res, 0, sizeof(res));
        const int l = phys ? llc_sim_access_phys(sim, agent, a[i], &res)
                           : llc_sim_access(sim, agent, a[i], &res);
        h = mix(h, (uint64_t)(int64_t)l);
        if (l >= 0) {
            const uint64_t v[] = {res.level, res.latency, res.set, res.paddr, res.llc_victim};
            for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
                h = mix(h, v[j]);
        }
    }
    return h;
}

static uint64_t workload(const struct llc_sim_config *c, uint64_t seed, unsigned n, uint64_t span)
{
    char err[LLC_ERRLEN];
    struct llc_sim *sim = NULL;
    if (llc_sim_create(c, &sim, err, sizeof(err)) < 0)
        return 0;
    uint64_t h = 1469598103934665603ULL;
    struct sim_rng r = sim_rng_stream(seed, 3);
    static uint64_t a[MAX_RUN];
    static uint8_t lv[MAX_RUN];
    const uint64_t low = (1ULL << 30) - 1;
    for (unsigned done = 0; done < n;) {
        const unsigned agent = sim_rng_below(&r, c->agents);
        const unsigned op = sim_rng_below(&r, 100);
        const unsigned k = 1 + sim_rng_below(&r, (op & 4) ? MAX_RUN : 40);
        const bool phys = sim_rng_below(&r, 3) == 0;
        fill(&r, agent, span, a, k);
        if (op < 2) {
            llc_sim_flush_line(sim, a[0] & low);
        } else if (op < 3) {
            llc_sim_reset_counters(sim);
        } else if (op < 4) {
            if (sim_rng_below(&r, 10) == 0)
                llc_sim_flush_all(sim);
        } else if (op < 8) {
            unsigned owner = 77;
            h = mix(mix(h, llc_sim_where(sim, agent, a[0] & low, &owner)), owner);
        } else {
            if (op < 10 && phys)
                a[k / 2] = 1ULL << 60; /* fails mid-run */
            if (op < 50) {
                h = single(sim, agent, a, k, phys, h);
            } else {
                memset(lv, 0xee, k);
                const int l = llc_sim_run(sim, agent, a, k, phys, (op & 1) ? lv : NULL);
                h = mix(h, (uint64_t)(int64_t)l);
                for (unsigned i = 0; (op & 1) && i < k; i++)
                    h = mix(h, lv[i]);
            }
            done += k;
        }
        if (sim_rng_below(&r, 16) == 0)
            h = stats_digest(sim, h);
    }
    h = stats_digest(sim, h);
    llc_sim_destroy(sim);
    return h;
}

/* Configuration i of N_CONFIGS: presets scaled down (every policy and
 * inclusion, 1 and 3 agents), then odd shapes (no L2, odd ways, modulo hash
 * over 3 slices, 2 MiB pages, memory running out, non-LRU L2s), then XOR
 * hashes with mask bits inside a line (an address's slice then depends on
 * its byte offset). */
#define N_PRESET 72
#define N_ODD 12
#define N_CONFIGS (N_PRESET + N_ODD + 4)

static void config_of(unsigned i, struct llc_sim_config *c, uint64_t *span)
{
    char err[LLC_ERRLEN];
    if (i < N_PRESET) {
        const unsigned lp = i % 6, inc = (i / 6) % 3, agents = (i / 18) % 2 ? 3 : 1;
        llc_sim_preset(i / 36 ? "intel8" : "amd32", c, err, sizeof(err));
        c->llc_policy = (enum llc_sim_policy)lp;
        c->inclusion = (enum llc_sim_inclusion)inc;
        c->agents = agents;
        c->llc.sets_per_slice = agents == 3 ? 32 : 256;
        c->l2_sets = 64;
        c->seed = 11 + i;
        c->latency.enabled = (lp + inc) % 2;
        c->phys_mem_bytes = 1ULL << 30;
        *span = 1ULL << 28;
        return;
    }
    if (i >= N_PRESET + N_ODD) {
        const unsigned v = i - N_PRESET - N_ODD;
        llc_sim_preset("amd32", c, err, sizeof(err));
        c->llc.sets_per_slice = 64;
        c->llc.slice_masks[0] |= 1ULL << 3;
        c->llc.slice_masks[2] |= 1ULL << 5;
        c->llc_policy = v % 2 ? LLC_SIM_DRRIP : LLC_SIM_LRU;
        c->inclusion = v < 2 ? LLC_SIM_EXCLUSIVE : LLC_SIM_INCLUSIVE;
        c->agents = 1 + v % 2;
        c->l2_sets = 64;
        c->seed = 200 + v;
        c->phys_mem_bytes = 1ULL << 30;
        *span = 1ULL << 28;
        return;
    }
    const unsigned v = i - N_PRESET;
    llc_sim_config_default(c);
    c->llc.sets_per_slice = v % 2 ? 16 : 128;
    c->llc.slices = v % 2 ? 3 : 4;
    c->llc.ways = v < 4 ? 5 : 16;
    c->llc.hash = LLC_SIM_HASH_MODULO;
    c->llc_policy = (enum llc_sim_policy)(v % 6 == 2 ? LLC_SIM_SRRIP : v % 6);
    c->agents = 1 + v % 3;
    c->drrip_leaders = 8;
    c->l2_sets = v >= 2 ? 16 : 0;
    c->l2_ways = v == 3 ? 6 : 4;
    c->l2_policy = (enum llc_sim_policy)(v % 5 == 2 ? LLC_SIM_BRRIP : v % 5);
    if (v == 7)
        c->l2_policy = LLC_SIM_DRRIP;
    c->inclusion = c->l2_sets ? (enum llc_sim_inclusion)(v % 3) : LLC_SIM_INCLUSIVE;
    c->page_size = v == 5 || v == 11 ? 2u << 20 : 4096;
    c->phys_mem_bytes = v == 4 || v == 10 ? 1ULL << 22 : 1ULL << 32;
    c->seed = 100 + v;
    c->latency.enabled = v & 1;
    *span = 1ULL << 30;
}

#define ACCESSES 40000

#ifdef GOLDEN_PRINT
int main(void)
{
    for (unsigned i = 0; i < N_CONFIGS; i++) {
        struct llc_sim_config c;
        uint64_t span;
        config_of(i, &c, &span);
        const uint64_t h = workload(&c, 5 + i, ACCESSES, span);
        if (!h)
            fprintf(stderr, "configuration %u: not created\n", i);
        printf("    0x%016llxULL,%s", (unsigned long long)h, i % 2 ? "\n" : "");
    }
    return 0;
}
#else
static const uint64_t golden[N_CONFIGS] = {
#include "golden_digests.inc"
};

/* Every instruction-set copy of the batch path this host runs. */
static void test_golden_digests(void **state)
{
    (void)state;
    const enum sim_isa best = sim_isa_best();
    for (int isa = SIM_ISA_BASE; isa <= (int)best; isa++) {
        sim_isa_limit((enum sim_isa)isa);
        for (unsigned i = 0; i < N_CONFIGS; i++) {
            struct llc_sim_config c;
            uint64_t span;
            config_of(i, &c, &span);
            const uint64_t h = workload(&c, 5 + i, ACCESSES, span);
            if (h != golden[i])
                fail_msg("configuration %u, instruction set level %d: digest %016llx, "
                         "expected %016llx",
                         i, isa, (unsigned long long)h, (unsigned long long)golden[i]);
        }
    }
    sim_isa_limit(best);
    /* The configurations that got the narrow LLC layout (one agent, 16
     * ways), again with the wide one, at the best level only. */
    sim_narrow_allow(false);
    for (unsigned i = 0; i < N_CONFIGS; i++) {
        struct llc_sim_config c;
        uint64_t span;
        config_of(i, &c, &span);
        if (c.agents != 1 || c.llc.ways != 16)
            continue;
        const uint64_t h = workload(&c, 5 + i, ACCESSES, span);
        if (h != golden[i])
            fail_msg("configuration %u, wide LLC blocks: digest %016llx, expected %016llx", i,
                     (unsigned long long)h, (unsigned long long)golden[i]);
    }
    sim_narrow_allow(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_digests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
