/* PMU reuse sampler (spec §2.2): what this machine's PMU allows, measured.
 *
 * The sampler needs (a) a precise retired-loads/stores event that records
 * data addresses (PEBS MEM_INST_RETIRED / MEM_UOPS_RETIRED with
 * PERF_SAMPLE_ADDR) and (b) watchpoints on the sampled lines. This file
 * opens (a) for real, on this process, and reports exactly what failed.
 * The watchpoint loop that turns open events into reuse distances is not in
 * this version: where (a) opens, the sampler still refuses, saying so. */
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"

/* Precise memory-instruction events, newest naming first. */
static const char *const precise_events[] = {
    "MEM_INST_RETIRED:ALL_LOADS",
    "MEM_UOPS_RETIRED:ALL_LOADS",
};

static int try_open(struct perf_event_attr *attr)
{
    attr->size = sizeof *attr;
    attr->disabled = 1;
    attr->exclude_kernel = 1;
    attr->exclude_hv = 1;
    attr->sample_period = 10007;
    attr->sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_IP;
    attr->precise_ip = 2;
    const long fd = syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

int llc_mrc_sample_pmu(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                       struct llc_mrc_pmu_stats *stats, char *err, size_t errlen)
{
    (void)argv;
    (void)rate;
    (void)seed;
    (void)h;
    *stats = (struct llc_mrc_pmu_stats){0};
    char tried[256] = "";
    int pfm_rc = pfm_initialize();
    if (pfm_rc != PFM_SUCCESS)
        return llc_errf(err, errlen, -EOPNOTSUPP, "pmu sampler: libpfm4 failed to initialise: %s",
                        pfm_strerror(pfm_rc));
    const char *opened = NULL;
    int open_errno = 0;
    for (size_t i = 0; i < LLC_ARRAY_LEN(precise_events) && !opened; i++) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        pfm_perf_encode_arg_t arg = {.attr = &attr, .size = sizeof arg};
        pfm_rc = pfm_get_os_event_encoding(precise_events[i], PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        const size_t used = strlen(tried);
        if (pfm_rc != PFM_SUCCESS) {
            snprintf(tried + used, sizeof tried - used, "%s%s: %s", used ? "; " : "",
                     precise_events[i], pfm_strerror(pfm_rc));
            continue;
        }
        const int rc = try_open(&attr);
        if (rc == 0)
            opened = precise_events[i];
        else {
            open_errno = -rc;
            snprintf(tried + used, sizeof tried - used, "%s%s: perf_event_open: %s", used ? "; " : "",
                     precise_events[i], strerror(-rc));
        }
    }
    /* The generic instructions event tells "no PMU at all" from "no precise
     * memory event": the reason a user can act on. */
    struct perf_event_attr generic;
    memset(&generic, 0, sizeof generic);
    generic.type = PERF_TYPE_HARDWARE;
    generic.config = PERF_COUNT_HW_INSTRUCTIONS;
    const int generic_rc = try_open(&generic);
    pfm_terminate();
    if (!opened)
        return llc_errf(err, errlen, -EOPNOTSUPP,
                        "pmu sampler: no precise memory-sample event opens (%s); precise "
                        "instructions event: %s%s",
                        tried, generic_rc ? strerror(-generic_rc) : "opens",
                        generic_rc == -ENOENT || open_errno == ENOENT
                            ? " (no hardware PMU exposed, as in most VMs)"
                            : "");
    return llc_errf(err, errlen, -ENOTSUP,
                    "pmu sampler: %s opens with data addresses, but the watchpoint loop that "
                    "turns samples into reuse distances is not in this version: use --sampler "
                    "rt or trace",
                    opened);
}
