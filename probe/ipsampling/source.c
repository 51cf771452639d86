/* The four sample sources as perf_event attributes, and why one fails. */
#include "ipsampling/sampling_internal.h"

#include <perfmon/pfmlib_perf_event.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int llc_sampling_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
    const long fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

static int paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = 99;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = 99;
        fclose(f);
    }
    return v;
}

void llc_sampling_explain_errno(int code, char *why, size_t whylen)
{
    switch (code) {
    case -ENOENT:
    case -EOPNOTSUPP:
        snprintf(why, whylen,
                 "the kernel does not support this event here (%s): no hardware "
                 "PMU, or the PMU lacks it",
                 strerror(-code));
        break;
    case -EACCES:
    case -EPERM:
        snprintf(why, whylen,
                 "not permitted (%s) with perf_event_paranoid=%d: run as root or "
                 "lower /proc/sys/kernel/perf_event_paranoid",
                 strerror(-code), paranoid_level());
        break;
    case -ENODEV:
        snprintf(why, whylen, "no such PMU on this machine (%s)", strerror(-code));
        break;
    case -EINVAL:
        snprintf(why, whylen, "the kernel rejected the event's attributes (%s)", strerror(-code));
        break;
    default:
        snprintf(why, whylen, "perf_event_open: %s", strerror(-code));
        break;
    }
}

/* libpfm4 names of retired conditional branches, by generation: Nehalem to
 * Skylake call it CONDITIONAL, Ice Lake and later COND. */
static const char *const branch_events[] = {"BR_INST_RETIRED:CONDITIONAL", "BR_INST_RETIRED:COND"};

static int pebs_attr(struct perf_event_attr *attr, char *event, size_t eventlen, char *why,
                     size_t whylen)
{
    const int prc = pfm_initialize();
    if (prc != PFM_SUCCESS) {
        snprintf(why, whylen, "libpfm4 did not initialise: %s", pfm_strerror(prc));
        return -ENODEV;
    }
    int rc = -ENODEV;
    bool core = false;
    pfm_pmu_t p;
    pfm_for_all_pmus(p)
    {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm_get_pmu_info(p, &info) == PFM_SUCCESS && info.is_present &&
            info.type == PFM_PMU_TYPE_CORE)
            core = true;
    }
    if (!core) {
        snprintf(why, whylen,
                 "no core PMU known to libpfm4 on this CPU (a VM without a "
                 "virtual PMU has none)");
        goto out;
    }
    for (size_t i = 0; i < sizeof(branch_events) / sizeof(branch_events[0]); i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        char *fstr = NULL;
        pfm_perf_encode_arg_t arg;
        memset(&arg, 0, sizeof(arg));
        arg.size = sizeof(arg);
        arg.attr = &a;
        arg.fstr = &fstr;
        if (pfm_get_os_event_encoding(branch_events[i], PFM_PLM3, PFM_OS_PERF_EVENT, &arg) !=
            PFM_SUCCESS)
            continue;
        attr->type = a.type;
        attr->config = a.config;
        attr->config1 = a.config1;
        snprintf(event, eventlen, "%s", fstr ? fstr : branch_events[i]);
        free(fstr);
        rc = 0;
        goto out;
    }
    snprintf(why, whylen,
             "the core PMU has no retired-conditional-branch event libpfm4 "
             "knows (PEBS branch sampling is Intel-only)");
out:
    pfm_terminate();
    return rc;
}

int llc_sampling_source_attr(enum llc_sampling_source src, struct perf_event_attr *attr,
                             char *event, size_t eventlen, char *note, size_t notelen, char *why,
                             size_t whylen)
{
    memset(attr, 0, sizeof(*attr));
    attr->size = sizeof(*attr);
    attr->sample_type = LLC_SAMPLING_SAMPLE_TYPE;
    attr->disabled = 1;
    /* Executable mappings, execs, forks and exits, time-stamped like the
     * samples: IPs become (file, offset) keys that are the same in every
     * process and run (ipsampling/maps.c). */
    attr->sample_id_all = 1;
    attr->mmap = 1;
    attr->mmap2 = 1;
    attr->comm = 1;
    attr->comm_exec = 1;
    attr->task = 1;
    attr->inherit = 1;
    /* User code only: the phase is the program's, and kernel IPs would need
     * privileges the sampler should not depend on. */
    attr->exclude_kernel = 1;
    attr->exclude_hv = 1;
    /* No wake-ups: the ring is drained at window end by polling. */
    attr->wakeup_events = 0;
    switch (src) {
    case LLC_SAMPLING_PEBS_BRANCHES:
        return pebs_attr(attr, event, eventlen, why, whylen);
    case LLC_SAMPLING_HW_IP:
        attr->type = PERF_TYPE_HARDWARE;
        attr->config = PERF_COUNT_HW_INSTRUCTIONS;
        snprintf(event, eventlen, "instructions");
        return 0;
    case LLC_SAMPLING_TICK:
        return llc_sampling_tick_attr(attr, event, eventlen, note, notelen, why, whylen);
    case LLC_SAMPLING_CPU_CLOCK:
        attr->type = PERF_TYPE_SOFTWARE;
        attr->config = PERF_COUNT_SW_CPU_CLOCK;
        snprintf(event, eventlen, "cpu-clock");
        return 0;
    default:
        snprintf(why, whylen, "unknown source %d", (int)src);
        return -EINVAL;
    }
}
