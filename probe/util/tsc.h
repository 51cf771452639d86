/* Fenced time-stamp counter reads for timing single loads (x86-64).
 *
 * lfence;rdtsc rather than rdtscp: some hypervisors hide rdtscp, and a
 * serialising lfence (always on Intel, on AMD when CPUID 0x80000021 EAX
 * bit 2 is set) orders rdtsc just as well. llc_clock_check says whether
 * this machine allows it; callers check clock.usable before using these. */
#ifndef LLCPROBE_UTIL_TSC_H
#define LLCPROBE_UTIL_TSC_H

#include <stdint.h>

#if defined(__x86_64__)
#define LLC_HAVE_TSC 1

/* Every earlier load and store has completed when the counter is read. */
static inline uint64_t llc_tsc_begin(void)
{
    uint32_t lo, hi;
    __asm__ volatile("mfence\n\tlfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* The counter is read after every earlier load has completed, and later
 * instructions wait for it. */
static inline uint64_t llc_tsc_end(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Ticks for one load of *p (saturated to 32 bits). */
static inline uint32_t llc_tsc_time_load(const volatile uint8_t *p)
{
    const uint64_t t0 = llc_tsc_begin();
    (void)*p;
    const uint64_t d = llc_tsc_end() - t0;
    return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}
#else
#define LLC_HAVE_TSC 0
#endif

#endif
