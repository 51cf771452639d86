#include "util/clock.h"

#include <time.h>

static double seconds_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double llc_now(void)
{
    return seconds_of(CLOCK_MONOTONIC);
}

double llc_thread_cpu_now(void)
{
    return seconds_of(CLOCK_THREAD_CPUTIME_ID);
}
