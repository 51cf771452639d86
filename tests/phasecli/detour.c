/* Where a sampler's time goes, measured from inside the target: spins
 * reading the clock and records every gap between two consecutive reads
 * longer than a threshold (a "detour": an interrupt, a VM exit, a context
 * switch). Run plain and under `llcprobe phase`, the difference in the time
 * lost to detours is what the sampling costs the target directly, at
 * sub-microsecond resolution, without the run-to-run noise of whole-program
 * CPU times. What it cannot see is a program's slowdown after a detour
 * (caches and TLB refilled): real programs measure that (eval-phase.sh).
 *
 * usage: phasecli_detour SECONDS [THRESHOLD_NS]   (defaults 2, 300)
 * Prints one JSON object: CPU seconds spun, detours and the time they took,
 * split at 1 ms (longer ones are the host descheduling the vCPU or another
 * task running, not an interrupt), their median, and the loop's median
 * step. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LONG_NS 1000000ULL
#define MAX_GAPS (1u << 20)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    const uint64_t threshold = argc > 2 ? strtoull(argv[2], NULL, 10) : 300;
    if (!(seconds > 0) || seconds > 3600 || threshold == 0) {
        fprintf(stderr, "usage: phasecli_detour SECONDS [THRESHOLD_NS]\n");
        return 2;
    }
    uint64_t *gaps = malloc(MAX_GAPS * sizeof(*gaps));
    if (!gaps) {
        fprintf(stderr, "phasecli_detour: out of memory\n");
        return 1;
    }
    /* The loop's own step, from a short run without detours worth the name. */
    uint64_t steps[1001], prev = now_ns();
    for (int i = 0; i < 1001; i++) {
        const uint64_t t = now_ns();
        steps[i] = t - prev;
        prev = t;
    }
    qsort(steps, 1001, sizeof(steps[0]), cmp_u64);
    const uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t ngaps = 0, nlong = 0, short_ns = 0, long_ns = 0, reads = 0;
    prev = start;
    for (;;) {
        const uint64_t t = now_ns();
        const uint64_t d = t - prev;
        prev = t;
        reads++;
        if (d > threshold) {
            if (d >= LONG_NS) {
                nlong++;
                long_ns += d;
            } else {
                if (ngaps < MAX_GAPS)
                    gaps[ngaps] = d;
                ngaps++;
                short_ns += d;
            }
        }
        if (t >= end)
            break;
    }
    const uint64_t kept = ngaps < MAX_GAPS ? ngaps : MAX_GAPS;
    qsort(gaps, kept, sizeof(gaps[0]), cmp_u64);
    struct timespec cpu;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    printf("{\"wall_s\": %.6f, \"cpu_s\": %.6f, \"threshold_ns\": %llu, \"step_ns\": %llu, "
           "\"reads\": %llu, \"detours\": %llu, \"detour_ns\": %llu, \"detour_median_ns\": %llu, "
           "\"long\": %llu, \"long_ns\": %llu}\n",
           (double)(prev - start) * 1e-9, (double)cpu.tv_sec + 1e-9 * (double)cpu.tv_nsec,
           (unsigned long long)threshold, (unsigned long long)steps[500], (unsigned long long)reads,
           (unsigned long long)ngaps, (unsigned long long)short_ns,
           (unsigned long long)(kept ? gaps[kept / 2] : 0), (unsigned long long)nlong,
           (unsigned long long)long_ns);
    free(gaps);
    return 0;
}
