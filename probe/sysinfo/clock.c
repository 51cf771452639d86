/* The timing backend's clock: a TSC that can be fenced around one load,
 * whether it ticks at a constant rate, and at what rate. */
#include "llcprobe/sysinfo.h"
#include "util/tsc.h"
#include "util/clock.h"

#include <string.h>
#include <time.h>

#if LLC_HAVE_TSC
/* 20 ms is enough for a few-ppm estimate: both clocks are read within
 * ~100 ns of each other at each end. */
static uint64_t measure_tsc_hz(void)
{
    const double t0 = llc_now();
    const uint64_t c0 = llc_tsc_end();
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    const uint64_t c1 = llc_tsc_end();
    const double t1 = llc_now();
    return t1 > t0 ? (uint64_t)((double)(c1 - c0) / (t1 - t0)) : 0;
}
#else
static uint64_t measure_tsc_hz(void)
{
    return 0;
}
#endif

void llc_clock_check(const struct llc_cpu_info *cpu, bool measure, struct llc_clock_check *out)
{
    memset(out, 0, sizeof(*out));
    const size_t n = sizeof(out->reason);
    if (!cpu) {
        snprintf(out->reason, n, "no CPUID data: cannot tell whether a TSC exists");
        return;
    }
    out->tsc = cpu->has_tsc;
    out->rdtscp = cpu->has_rdtscp;
    out->lfence_serializing = cpu->lfence_serializing;
    out->invariant_tsc = cpu->invariant_tsc;
    out->usable = LLC_HAVE_TSC && out->tsc && (out->rdtscp || out->lfence_serializing);
    if (cpu->tsc_hz) {
        out->tsc_hz = cpu->tsc_hz;
        snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source), "%s", cpu->tsc_hz_source);
    } else if (measure && out->usable) {
        out->tsc_hz = measure_tsc_hz();
        snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source),
                 "measured against CLOCK_MONOTONIC over 20 ms (CPUID 0x15/0x16 give none)");
    } else {
        snprintf(out->tsc_hz_source, sizeof(out->tsc_hz_source),
                 "unknown (CPUID 0x15/0x16 give none%s)", measure ? "" : "; not measured");
    }
    const char *fence = out->lfence_serializing ? "serialising lfence" : "rdtscp";
    if (!LLC_HAVE_TSC)
        snprintf(out->reason, n, "not x86-64: no time-stamp counter to time loads with");
    else if (!out->tsc)
        snprintf(out->reason, n, "no TSC (CPUID 1 EDX bit 4 clear): the timing backend cannot run");
    else if (!out->usable)
        snprintf(
            out->reason, n,
            "TSC present but neither rdtscp (CPUID 0x80000001 EDX bit 27) nor a serialising lfence "
            "(CPUID 0x80000021 EAX bit 2) to order it around a load: the timing backend cannot run");
    else if (!out->invariant_tsc)
        snprintf(
            out->reason, n,
            "TSC fenced by %s, but not invariant (CPUID 0x80000007 EDX bit 8 clear): tick counts drift "
            "with frequency changes; calibrate often",
            fence);
    else
        snprintf(out->reason, n, "invariant TSC, fenced by %s", fence);
}
