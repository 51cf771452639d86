/* One-line specs given as option values: set lists (map/sample --sets
 * LIST), CPU lists (kernel cpulist files, --cpus), workload specs
 * (--workload), simulator policy and inclusion names. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/map.h"
#include "llcprobe/sim.h"
#include "llcprobe/sysinfo.h"
#include "llcprobe/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[LLC_ERRLEN];
    char *s = fuzz_cstr(data, size);
    uint32_t *ids;
    size_t n;
    if (llc_map_parse_sets(s, &ids, &n, err, sizeof(err)) == 0)
        free(ids);
    struct llc_cpuset cpus;
    if (llc_cpuset_parse(s, &cpus, err, sizeof(err)) == 0) {
        char buf[8192];
        (void)llc_cpuset_format(&cpus, buf, sizeof(buf));
    }
    (void)llc_workload_check(s, err, sizeof(err));
    (void)llc_sim_policy_parse(s, err, sizeof(err));
    (void)llc_sim_inclusion_parse(s, err, sizeof(err));
    free(s);
    return 0;
}
