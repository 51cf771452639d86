/* Eviction-test oracle on the real machine: lfence/rdtsc-timed loads and
 * clflush (x86-64 only; elsewhere every entry point says it cannot run). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"
#include "util/tsc.h"

void llc_evset_hw_config_default(struct llc_evset_hw_config *c)
{
    memset(c, 0, sizeof(*c));
    c->l2_bytes = 1u << 20;
    c->calib_samples = 400;
}

#if defined(__x86_64__)

static inline void hw_flush(const volatile void *p)
{
    __asm__ volatile("clflush (%0)\n\tmfence" : : "r"(p) : "memory");
}

static int hw_timed_walk(void *ctx, const uint64_t *addrs, size_t n, uint64_t victim,
                         uint32_t *ticks, char *err, size_t errlen)
{
    (void)ctx;
    (void)err;
    (void)errlen;
    for (size_t i = 0; i < n; i++)
        (void)*(const volatile uint8_t *)(uintptr_t)addrs[i];
    *ticks = llc_tsc_time_load((const volatile uint8_t *)(uintptr_t)victim);
    return 0;
}

static void hw_flush_addr(void *ctx, uint64_t addr)
{
    (void)ctx;
    hw_flush((const volatile void *)(uintptr_t)addr);
}

static void hw_destroy(void *ctx)
{
    (void)ctx;
}

static const struct llc_evset_oracle_ops hw_ops = {
    .timed_walk = hw_timed_walk,
    .flush = hw_flush_addr,
    .destroy = hw_destroy,
};

/* LLC hits: load a line, push it out of L1/L2 by walking 1.5x the L2 (the
 * line stays in an inclusive LLC, or moves into a victim LLC), time it.
 * Memory loads: clflush, time. Targets rotate over a page so that one
 * unlucky set does not decide. */
int llc_evset_hw_selfcheck(const struct llc_evset_hw_config *cfg, struct llc_evset_calibration *out,
                           char *err, size_t errlen)
{
    const size_t line = 64, page = 4096;
    const size_t walk_bytes = (cfg->l2_bytes ? cfg->l2_bytes : (1u << 20)) * 3 / 2;
    const unsigned samples = cfg->calib_samples ? cfg->calib_samples : 400;
    const size_t map_bytes = walk_bytes + page;
    uint32_t *hit = malloc(samples * sizeof(*hit));
    uint32_t *miss = malloc(samples * sizeof(*miss));
    uint8_t *mem =
        mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int rc = 0;
    if (!hit || !miss || mem == MAP_FAILED) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for the timing self-check");
        goto out;
    }
    memset(mem, 1, map_bytes); /* real frames, not the shared zero page */
    volatile uint8_t *target = mem + walk_bytes;
    const volatile uint8_t *walk = mem;
    for (unsigned s = 0; s < samples; s++) {
        const volatile uint8_t *x = target + (s * 7 % (page / line)) * line;
        (void)*x;
        for (size_t o = 0; o < walk_bytes; o += line)
            (void)walk[o];
        hit[s] = llc_tsc_time_load(x);
        hw_flush(x);
        miss[s] = llc_tsc_time_load(x);
    }
    rc = llc_evset_calibrate(hit, samples, miss, samples, out, err, errlen);
    if (rc == 0 && !out->separable)
        rc = llc_errf(err, errlen, -EIO,
                      "timed loads do not separate LLC hits from memory: LLC-hit median %u "
                      "(p90 %u) ticks, memory median %u (p10 %u) ticks, %.1f%% misclassified "
                      "at the best threshold %u",
                      out->hit_median, out->hit_p90, out->miss_median, out->miss_p10,
                      100.0 * out->error_rate, out->threshold);
out:
    if (mem != MAP_FAILED)
        munmap(mem, map_bytes);
    free(hit);
    free(miss);
    return rc;
}

int llc_evset_oracle_hw(const struct llc_evset_hw_config *cfg, struct llc_evset_oracle **out,
                        struct llc_evset_calibration *calib, char *err, size_t errlen)
{
    uint32_t threshold = cfg->threshold;
    if (!threshold) {
        struct llc_evset_calibration cal = {0};
        const int rc = llc_evset_hw_selfcheck(cfg, &cal, err, errlen);
        if (calib)
            *calib = cal;
        if (rc < 0)
            return rc;
        threshold = cal.threshold;
    }
    struct llc_evset_oracle *o = calloc(1, sizeof(*o));
    if (!o)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    o->ops = &hw_ops;
    o->ctx = NULL;
    o->threshold = threshold;
    *out = o;
    return 0;
}

#else /* no x86-64 timing primitives */

int llc_evset_hw_selfcheck(const struct llc_evset_hw_config *cfg, struct llc_evset_calibration *out,
                           char *err, size_t errlen)
{
    (void)cfg;
    memset(out, 0, sizeof(*out));
    return llc_errf(err, errlen, -ENOTSUP,
                    "hardware eviction tests need x86-64 "
                    "(rdtsc, lfence, clflush)");
}

int llc_evset_oracle_hw(const struct llc_evset_hw_config *cfg, struct llc_evset_oracle **out,
                        struct llc_evset_calibration *calib, char *err, size_t errlen)
{
    (void)out;
    struct llc_evset_calibration cal = {0};
    const int rc = llc_evset_hw_selfcheck(cfg, &cal, err, errlen);
    if (calib)
        *calib = cal;
    return rc;
}

#endif
