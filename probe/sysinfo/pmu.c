/* The pmu backend's prerequisites: a core PMU known to libpfm4, an LLC-miss
 * event for it, and a kernel that lets this thread count it. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"

#include <perfmon/pfmlib_perf_event.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct miss_event {
    const char *pmus[12];
    const char *event;
    const char *note;
};

/* Names checked against libpfm4 4.13's tables (each encodes under
 * LIBPFM_FORCE_PMU=<pmu>; tests/sysinfo checks a few). */
static const struct miss_event miss_events[] = {
    {{"snb", "snb_ep"}, "MEM_LOAD_UOPS_MISC_RETIRED:LLC_MISS", "retired loads that missed the LLC"},
    {{"ivb", "ivb_ep", "hsw", "hsw_ep", "bdw", "bdw_ep"},
     "MEM_LOAD_UOPS_RETIRED:L3_MISS",
     "retired load uops that missed the L3"},
    {{"skl", "skx", "clx", "icl", "icx", "spr"},
     "MEM_LOAD_RETIRED:L3_MISS",
     "retired loads that missed the L3"},
    {{"nhm", "nhm_ex", "wsm", "wsm_dp"},
     "MEM_LOAD_RETIRED:L3_MISS",
     "retired loads that missed the L3"},
    {{"amd64_fam17h", "amd64_fam17h_zen1"},
     "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",
     "data requests that missed L2, i.e. L3 accesses: Zen1's core PMU has no L3-miss event"},
    {{"amd64_fam17h_zen2"},
     "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM",
     "L1D demand fills from DRAM, local or remote: loads that missed the L3"},
    {{"amd64_fam19h_zen3"},
     "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT",
     "L1D demand fills from memory, local or remote: loads that missed the L3"},
    {{"amd64_fam19h_zen4"},
     "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR",
     "L1D demand fills from DRAM, near or far: loads that missed the L3"},
    {{"ix86arch"}, "LLC_MISSES", "architectural LLC-miss event (CPU model unknown to libpfm4)"},
};

static const char generic_event[] = "perf::PERF_COUNT_HW_CACHE_MISSES";
static const char generic_note[] =
    "the kernel's generic cache-misses: LLC misses on Intel, vendor-defined elsewhere";

const char *llc_pmu_llc_miss_event(const char *pmu, const char **note)
{
    for (size_t i = 0; i < sizeof(miss_events) / sizeof(miss_events[0]); i++)
        for (size_t j = 0; j < sizeof(miss_events[i].pmus) / sizeof(miss_events[i].pmus[0]); j++)
            if (miss_events[i].pmus[j] && strcmp(miss_events[i].pmus[j], pmu) == 0) {
                if (note)
                    *note = miss_events[i].note;
                return miss_events[i].event;
            }
    return NULL;
}

/* pfm_terminate() leaves earlier PMUs flagged present, so after a re-init
 * with another LIBPFM_FORCE_PMU the forced name is matched first. */
static bool find_core_pmu(const char *forced, struct llc_pmu_check *out)
{
    const size_t forced_len = forced ? strcspn(forced, ",") : 0;
    /* "amd64,<family>,<model>,<stepping>" forces a model, not a PMU name:
     * then any present core PMU is the one. */
    const int last_pass = forced && forced[forced_len] != ',' ? 0 : 1;
    for (int pass = forced_len ? 0 : 1; pass <= last_pass; pass++) {
        pfm_pmu_t p;
        pfm_for_all_pmus(p)
        {
            pfm_pmu_info_t info;
            memset(&info, 0, sizeof(info));
            info.size = sizeof(info);
            if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present ||
                info.type != PFM_PMU_TYPE_CORE)
                continue;
            if (pass == 0 &&
                (strlen(info.name) != forced_len || strncmp(info.name, forced, forced_len) != 0))
                continue;
            llc_sysinfo_fmt(out->pmu, sizeof(out->pmu), "%s", info.name);
            llc_sysinfo_fmt(out->pmu_desc, sizeof(out->pmu_desc), "%s", info.desc ? info.desc : "");
            return true;
        }
    }
    return false;
}

static bool encode(const char *event, const char *note, struct llc_pmu_check *out)
{
    struct perf_event_attr attr;
    char *fstr = NULL;
    pfm_perf_encode_arg_t arg;
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.fstr = &fstr;
    arg.size = sizeof(arg);
    const int rc = pfm_get_os_event_encoding(event, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    llc_sysinfo_fmt(out->event, sizeof(out->event), "%s", event);
    llc_sysinfo_fmt(out->event_note, sizeof(out->event_note), "%s", note);
    if (rc != PFM_SUCCESS) {
        llc_sysinfo_fmt(out->encode_error, sizeof(out->encode_error), "%s: %s", event,
                        pfm_strerror(rc));
        free(fstr);
        return false;
    }
    out->encoded = true;
    out->encode_error[0] = '\0';
    out->type = attr.type;
    out->config = attr.config;
    out->config1 = attr.config1;
    out->config2 = attr.config2;
    llc_sysinfo_fmt(out->fstr, sizeof(out->fstr), "%s", fstr ? fstr : "");
    free(fstr);
    return true;
}

static void choose_event(struct llc_pmu_check *out)
{
    char qualified[224];
    if (out->pmu[0]) {
        const char *note = NULL;
        const char *ev = llc_pmu_llc_miss_event(out->pmu, &note);
        /* Qualified names: deprecated PMUs (amd64_fam17h) resolve only so. */
        if (ev) {
            llc_sysinfo_fmt(qualified, sizeof(qualified), "%s::%s", out->pmu, ev);
            if (encode(qualified, note, out))
                return;
        }
        llc_sysinfo_fmt(qualified, sizeof(qualified), "%s::LONGEST_LAT_CACHE:MISS", out->pmu);
        if (encode(qualified, "core-originated cacheable demand requests that missed the LLC", out))
            return;
    }
    char first_error[128];
    llc_sysinfo_fmt(first_error, sizeof(first_error), "%s", out->encode_error);
    if (!encode(generic_event, generic_note, out) && first_error[0])
        llc_sysinfo_fmt(out->encode_error, sizeof(out->encode_error), "%s", first_error);
}

static const char *open_hint(int e, const struct llc_cpu_info *cpu, const struct llc_pmu_check *pc,
                             char *hint, size_t len)
{
    switch (e) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        if (cpu && cpu->hypervisor && cpu->vendor == LLC_VENDOR_INTEL && cpu->perfmon_version == 0)
            return "no hardware PMU in this VM: CPUID leaf 0xA reports no architectural perfmon";
        if (cpu && cpu->hypervisor)
            return "no hardware PMU exposed to this VM";
        return pc->pmu[0] ? "the kernel's PMU driver does not support this event"
                          : "no hardware PMU driver";
    case EACCES:
    case EPERM: {
        FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
        int level = 99;
        if (f) {
            if (fscanf(f, "%d", &level) != 1)
                level = 99;
            fclose(f);
        }
        llc_sysinfo_fmt(hint, len,
                        "perf_event_paranoid is %d; needs CAP_PERFMON or a lower setting", level);
        return hint;
    }
    case EINVAL:
        return "the kernel rejected the encoding";
    case ENOSYS:
        return "kernel built without perf events";
    case EBUSY:
        return "counters held by another user";
    default:
        return "unexpected error";
    }
}

static void try_open(const struct llc_cpu_info *cpu, struct llc_pmu_check *out)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = out->type;
    attr.config = out->config;
    attr.config1 = out->config1;
    attr.config2 = out->config2;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    out->open_tried = true;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd >= 0) {
        close((int)fd);
        out->opened = true;
        llc_sysinfo_fmt(out->reason, sizeof(out->reason),
                        "perf_event_open(%s) succeeded on this thread (user mode)", out->event);
        return;
    }
    out->open_errno = errno;
    char hint[160];
    llc_sysinfo_fmt(out->reason, sizeof(out->reason), "perf_event_open(%s) failed: %s (%s)",
                    out->event, strerror(out->open_errno),
                    open_hint(out->open_errno, cpu, out, hint, sizeof(hint)));
}

void llc_pmu_check(const struct llc_cpu_info *cpu, bool try_open_event, struct llc_pmu_check *out)
{
    memset(out, 0, sizeof(*out));
    const char *forced = getenv("LIBPFM_FORCE_PMU");
    out->forced = forced && *forced;
    const int rc = pfm_initialize();
    if (rc != PFM_SUCCESS) {
        llc_sysinfo_fmt(out->pfm_error, sizeof(out->pfm_error), "pfm_initialize: %s",
                        pfm_strerror(rc));
        llc_sysinfo_fmt(out->reason, sizeof(out->reason), "libpfm4 failed to initialise: %s",
                        pfm_strerror(rc));
        return;
    }
    out->pfm_ok = true;
    /* A forced name libpfm does not know must not fall back to PMUs that an
     * earlier initialisation in this process left flagged present. */
    if (find_core_pmu(out->forced ? forced : NULL, out) || !out->forced)
        choose_event(out);
    /* libpfm reads LIBPFM_FORCE_PMU only at initialisation; ending here
     * lets the next call see a changed environment. */
    pfm_terminate();
    if (!out->encoded) {
        if (out->forced && !out->pmu[0])
            llc_sysinfo_fmt(
                out->reason, sizeof(out->reason),
                "LIBPFM_FORCE_PMU=%s names no core PMU this libpfm4 knows, so no event encodes",
                forced);
        else
            llc_sysinfo_fmt(out->reason, sizeof(out->reason), "no LLC-miss event encodes: %s",
                            out->encode_error);
        return;
    }
    if (try_open_event) {
        try_open(cpu, out);
        return;
    }
    llc_sysinfo_fmt(out->reason, sizeof(out->reason), "encoded %s; perf_event_open not attempted%s",
                    out->event, out->forced ? " (LIBPFM_FORCE_PMU set: encoding only)" : "");
}
