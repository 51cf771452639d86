/* Rate control arithmetic: TSC pacing deadlines and the null-op rate. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>

#include "llcprobe/common.h"
#include "util/tsc.h"

uint64_t llc_maphw_ticks(uint64_t tsc_hz, double seconds)
{
    if (!(seconds > 0))
        return 0;
    const double t = seconds * (double)tsc_hz + 0.5;
    return t >= 0x1p63 ? (uint64_t)1 << 63 : (uint64_t)t;
}

int llc_maphw_pace_init(struct llc_maphw_pace *p, uint64_t tsc_hz, double rate, size_t units,
                        uint64_t start, char *err, size_t errlen)
{
    p->start = start;
    p->period = 0;
    if (!isfinite(rate) || rate < 0)
        return llc_errf(err, errlen, -EINVAL, "rate %g is not a non-negative number", rate);
    if (rate == 0)
        return 0;
    if (!tsc_hz || !units)
        return llc_errf(err, errlen, -EINVAL, "pacing needs the TSC rate and at least one unit");
    p->period = (double)tsc_hz / (rate * (double)units);
    return 0;
}

double llc_maphw_nop_rate(double access_ticks, unsigned k, double nop_ticks, uint64_t tsc_hz)
{
    const double per = access_ticks + (double)k * nop_ticks;
    return per > 0 ? (double)tsc_hz / per : INFINITY;
}

double llc_maphw_nop_ticks(unsigned n)
{
#if LLC_HAVE_TSC
    if (!n)
        return 0;
    const uint64_t t0 = llc_tsc_begin();
    llc_maphw_nops(n);
    const uint64_t t1 = llc_tsc_end();
    return (double)(t1 - t0) / n;
#else
    (void)n;
    return 0;
#endif
}
