/* Simulator throughput on the amd32 preset (exclusive L3 + 1 MiB L2), LRU and
 * DRRIP in the LLC (L2 LRU), one agent, virtual addresses (so page
 * translation is included).
 *
 * Stream, generated up front: 8 M line-aligned accesses, 70% "hot" and 30%
 * "cold". Hot: Zipf(1)-like ranks (log-uniform) over 64 Ki lines = 4 MiB,
 * scattered over the hot region by an odd multiplier so popular lines do not
 * sit in neighbouring sets. Cold: uniform over 256 MiB. With a 1 MiB L2 and
 * 32 MiB L3 this gives a mix of L2 hits, L3 hits and DRAM fills, and the
 * simulated L3's 4 MiB of metadata does not stay in the host's caches.
 *
 * One untimed pass warms the caches and the page tables, then passes are
 * timed until ~1.5 s have gone. The rates per second of wall time and of
 * this process's CPU time; the last lines are the headline (wall).
 *
 * corun4: the timed co-run (llcprobe/corun.h) of four programs of the same
 * kind (streams of the same length, seeds 42..45, each in its own
 * address space) on the same preset and policy, each access paying its
 * level's latency: whole runs from a fresh simulator (translation, window
 * bookkeeping and clock order included, solo runs not) until ~1.5 s have
 * gone. sim_corun4_ratio = corun4 / single-agent LRU rate, same run, by
 * wall time; sim_corun4_cpu_ratio and the last line, sim_corun4_vs_single_x,
 * the same by this process's CPU time. Both sides count accesses of one
 * pass of their streams (the co-run: every program's first pass, no solo
 * runs); the single agent runs on a warm simulator (one untimed pass
 * first), the co-run from a fresh one (page allocation included).
 * untimed4: the same four streams through a 4-agent simulator round robin
 * (64 accesses a turn, batch path, no clocks): corun4 / untimed4 is the
 * cost of the timing alone. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "model/sim/rng.h"

#define N_ACCESSES (8u << 20)
#define HOT_LINES (64u << 10)
#define COLD_BYTES (256ULL << 20)
#define HOT_BASE (1ULL << 40)

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static void make_stream(uint64_t *addrs, size_t n, uint64_t seed)
{
    struct sim_rng rng = sim_rng_stream(seed, 7);
    const double log_hot = log((double)HOT_LINES + 1.0);
    for (size_t i = 0; i < n; i++) {
        if (sim_rng_unit(&rng) < 0.7) {
            uint64_t rank = (uint64_t)exp(sim_rng_unit(&rng) * log_hot) - 1;
            if (rank >= HOT_LINES)
                rank = HOT_LINES - 1;
            const uint64_t line = (rank * 0x9e3779b1ULL) & (HOT_LINES - 1);
            addrs[i] = HOT_BASE + line * 64;
        } else {
            addrs[i] = (sim_rng_next(&rng) % COLD_BYTES) & ~63ULL;
        }
    }
}

static int bench(const char *label, enum llc_sim_policy policy, const uint64_t *addrs, size_t n,
                 double *rate, double *cpu_rate)
{
    char err[LLC_ERRLEN];
    struct llc_sim_config cfg;
    struct llc_sim *sim = NULL;
    int rc = llc_sim_preset("amd32", &cfg, err, sizeof(err));
    if (rc < 0)
        goto out;
    cfg.llc_policy = policy;
    rc = llc_sim_create(&cfg, &sim, err, sizeof(err));
    if (rc < 0)
        goto out;
    rc = llc_sim_run(sim, 0, addrs, n, false, NULL);
    if (rc < 0)
        goto out;
    llc_sim_reset_counters(sim);
    uint64_t done = 0;
    const double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double t1;
    do {
        rc = llc_sim_run(sim, 0, addrs, n, false, NULL);
        if (rc < 0)
            goto out;
        done += n;
        t1 = now_s();
    } while (t1 - t0 < 1.5);
    *rate = (double)done / (t1 - t0);
    /* Time this process ran: less sensitive to a loaded host than wall
     * time (not to its cache pollution). */
    *cpu_rate = (double)done / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(sim, 0, &st);
    printf("%s: %llu accesses in %.3f s; L2 hit %.3f, L3 hit %.3f of L3 lookups, "
           "DRAM %.3f of accesses, L3 occupancy %llu lines\n",
           label, (unsigned long long)done, t1 - t0, (double)st.l2_hits / st.accesses,
           (double)st.llc_hits / (st.llc_hits + st.llc_misses), (double)st.llc_misses / st.accesses,
           (unsigned long long)st.llc_occupancy);
out:
    if (rc < 0)
        fprintf(stderr, "bench_sim: %s: %s\n", label, rc == -ENOMEM ? "out of memory" : err);
    llc_sim_destroy(sim);
    return rc;
}

static int bench_corun4(uint64_t *const streams[4], size_t n, double *rate, double *cpu_rate)
{
    char err[LLC_ERRLEN];
    struct llc_sim_config cfg;
    int rc = llc_sim_preset("amd32", &cfg, err, sizeof(err));
    if (rc < 0)
        goto out;
    struct llc_corun_agent ag[4];
    for (unsigned i = 0; i < 4; i++) {
        ag[i] = (struct llc_corun_agent){.source = LLC_CORUN_ARRAY, .addrs = streams[i], .n = n};
        llc_corun_agent_default(&ag[i]);
    }
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.solo = false;
    uint64_t done = 0;
    const double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double t1;
    struct llc_corun_result *r = NULL;
    do {
        llc_corun_free(r);
        rc = llc_corun_run(&cfg, ag, 4, &p, &r, err, sizeof(err));
        if (rc < 0)
            goto out;
        done += r->total_accesses;
        t1 = now_s();
    } while (t1 - t0 < 1.5);
    *rate = (double)done / (t1 - t0);
    *cpu_rate = (double)done / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
    printf("amd32 corun4 lru: %llu accesses in %.3f s; slowest program %.3f cycles/instr, "
           "LLC miss ratio %.3f\n",
           (unsigned long long)done, t1 - t0, r->corun[0].cycles / (double)r->corun[0].instructions,
           (double)r->corun[0].llc_misses / (double)r->corun[0].llc_accesses);
    llc_corun_free(r);
out:
    if (rc < 0)
        fprintf(stderr, "bench_sim: corun4: %s\n", rc == -ENOMEM ? "out of memory" : err);
    return rc;
}

/* The same four streams untimed: a 4-agent simulator fed round robin in
 * slices of 64 accesses through the batch path, to tell the cost of the
 * clocks from the cost of a cache shared by four programs. */
static int bench_untimed4(uint64_t *const streams[4], size_t n, double *cpu_rate)
{
    char err[LLC_ERRLEN];
    struct llc_sim_config cfg;
    struct llc_sim *sim = NULL;
    int rc = llc_sim_preset("amd32", &cfg, err, sizeof(err));
    cfg.agents = 4;
    if (rc == 0)
        rc = llc_sim_create(&cfg, &sim, err, sizeof(err));
    const double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t i = 0; rc == 0 && i < n; i += 64)
        for (unsigned a = 0; rc == 0 && a < 4; a++)
            rc = llc_sim_run(sim, a, streams[a] + i, n - i < 64 ? n - i : 64, false, NULL);
    if (rc == 0)
        *cpu_rate = 4.0 * (double)n / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
    else
        fprintf(stderr, "bench_sim: untimed4: %s\n", err);
    llc_sim_destroy(sim);
    return rc;
}

int main(void)
{
    uint64_t *addrs = malloc(N_ACCESSES * sizeof(*addrs));
    if (!addrs) {
        fprintf(stderr, "bench_sim: out of memory\n");
        return 1;
    }
    make_stream(addrs, N_ACCESSES, 42);
    double lru = 0, drrip = 0, lru_cpu = 0, drrip_cpu = 0;
    int rc = bench("amd32 lru", LLC_SIM_LRU, addrs, N_ACCESSES, &lru, &lru_cpu);
    if (rc == 0)
        rc = bench("amd32 drrip", LLC_SIM_DRRIP, addrs, N_ACCESSES, &drrip, &drrip_cpu);
    free(addrs);
    uint64_t *streams[4] = {NULL, NULL, NULL, NULL};
    const size_t per_program = N_ACCESSES;
    double corun4 = 0, corun4_cpu = 0;
    for (unsigned i = 0; rc == 0 && i < 4; i++) {
        streams[i] = malloc(per_program * sizeof(*streams[i]));
        if (!streams[i])
            rc = -ENOMEM;
        else
            make_stream(streams[i], per_program, 42 + i);
    }
    double untimed4_cpu = 0;
    if (rc == 0)
        rc = bench_corun4(streams, per_program, &corun4, &corun4_cpu);
    if (rc == 0)
        rc = bench_untimed4(streams, per_program, &untimed4_cpu);
    for (unsigned i = 0; i < 4; i++)
        free(streams[i]);
    if (rc < 0)
        return 1;
    printf("sim_corun4_cpu_accesses_per_s: %.0f 1/s\n", corun4_cpu);
    printf("sim_corun4_cpu_ratio: %.3f x\n", lru_cpu > 0 ? corun4_cpu / lru_cpu : 0.0);
    printf("sim_untimed4_cpu_accesses_per_s: %.0f 1/s\n", untimed4_cpu);
    printf("sim_corun4_vs_untimed4_cpu_ratio: %.3f x\n",
           untimed4_cpu > 0 ? corun4_cpu / untimed4_cpu : 0.0);
    printf("sim_corun4_ratio: %.3f x\n", lru > 0 ? corun4 / lru : 0.0);
    printf("sim_lru_cpu_accesses_per_s: %.0f 1/s\n", lru_cpu);
    printf("sim_drrip_cpu_accesses_per_s: %.0f 1/s\n", drrip_cpu);
    printf("sim_lru_accesses_per_s: %.0f 1/s\n", lru);
    printf("sim_drrip_accesses_per_s: %.0f 1/s\n", drrip);
    printf("sim_corun4_accesses_per_s: %.0f 1/s\n", corun4);
    /* The headline ratio: sim_corun4_cpu_ratio under the name the issue
     * gives it (CPU time: on a loaded host the wall-time ratio,
     * sim_corun4_ratio, mostly measures the other tenants). */
    printf("sim_corun4_vs_single_x: %.3f x\n", lru_cpu > 0 ? corun4_cpu / lru_cpu : 0.0);
    return 0;
}
