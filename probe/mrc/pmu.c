/* PMU reuse sampler (spec §2.2), placeholder while being written. */
#include <errno.h>
#include "llcprobe/common.h"
#include "mrc/mrc.h"

int llc_mrc_sample_pmu(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                       struct llc_mrc_pmu_stats *stats, char *err, size_t errlen)
{
    (void)argv; (void)rate; (void)seed; (void)h; (void)stats;
    return llc_errf(err, errlen, -EOPNOTSUPP, "pmu sampler: not written yet");
}
