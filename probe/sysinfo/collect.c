/* Everything `llcprobe info` reports, and the auto backend decision. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *llc_backend_name(enum llc_backend b)
{
    switch (b) {
    case LLC_BACKEND_PMU:
        return "pmu";
    case LLC_BACKEND_TIMING:
        return "timing";
    case LLC_BACKEND_SIM:
        return "sim";
    default:
        return "none";
    }
}

void llc_backend_choose(const struct llc_pmu_check *pmu, const struct llc_clock_check *clock,
                        struct llc_backend_choice *out)
{
    memset(out, 0, sizeof(*out));
    const size_t n = sizeof(out->reason);
    if (pmu->opened) {
        out->backend = LLC_BACKEND_PMU;
        llc_sysinfo_fmt(out->reason, n, "pmu: %s", pmu->reason);
        return;
    }
    out->backend = clock->usable ? LLC_BACKEND_TIMING : LLC_BACKEND_NONE;
    llc_sysinfo_fmt(out->reason, n, "pmu: %s; timing: %s", pmu->reason, clock->reason);
}

static void read_cpu(const struct llc_sysinfo_options *opt, struct llc_sysinfo *out)
{
    struct llc_cpuid_dump *dump = calloc(1, sizeof(*dump));
    char inner[LLC_ERRLEN];
    if (!dump) {
        llc_sysinfo_fmt(out->cpu_reason, sizeof(out->cpu_reason), "out of memory");
        return;
    }
    const int rc = opt->cpuid_dump
                       ? llc_cpuid_dump_read(opt->cpuid_dump, dump, inner, sizeof(inner))
                       : llc_cpuid_dump_live(dump, inner, sizeof(inner));
    if (rc == 0 && llc_cpuid_decode(dump, &out->cpu, inner, sizeof(inner)) == 0)
        out->cpu_ok = true;
    else
        llc_sysinfo_fmt(out->cpu_reason, sizeof(out->cpu_reason), "%s", inner);
    free(dump);
}

int llc_sysinfo_collect(const struct llc_sysinfo_options *opt, struct llc_sysinfo *out, char *err,
                        size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *root = opt->sysfs_root ? opt->sysfs_root : "/sys";
    const bool live = opt->live;
    out->live = live;
    llc_sysinfo_fmt(out->sysfs_root, sizeof(out->sysfs_root), "%s", root);
    llc_sysinfo_fmt(out->cpuid_source, sizeof(out->cpuid_source), "%s",
                    opt->cpuid_dump ? opt->cpuid_dump : "cpuid instruction");

    read_cpu(opt, out);
    const struct llc_cpu_info *cpu = out->cpu_ok ? &out->cpu : NULL;
    /* A dump the user named must be right; live CPUID may just be absent. */
    if (opt->cpuid_dump && !out->cpu_ok)
        return llc_errf(err, errlen, -EINVAL, "%s", out->cpu_reason);

    char inner[LLC_ERRLEN];
    int rc = llc_sysfs_read_caches(root, &out->topo, inner, sizeof(inner));
    if (rc == LLC_SYSFS_NO_CACHE_DIR) {
        char why[LLC_ERRLEN];
        if (llc_cache_topo_from_cpuid(cpu, &out->topo, why, sizeof(why)) < 0)
            return llc_errf(err, errlen, rc, "%s; %s", inner, why);
        rc = 0;
    }
    if (rc < 0)
        return llc_errf(err, errlen, rc, "%s", inner);
    rc = llc_geometry_derive(&out->topo, cpu, &out->geometry, inner, sizeof(inner));
    out->geometry_ok = rc == 0;
    if (rc < 0)
        llc_sysinfo_fmt(out->geometry_reason, sizeof(out->geometry_reason), "%s", inner);

    if (live || opt->hwloc_xml)
        llc_hwloc_llc_query(opt->hwloc_xml, &out->hwloc);
    else
        llc_sysinfo_fmt(out->hwloc.reason, sizeof(out->hwloc.reason),
                        "not queried: hwloc reads the live machine, not the fixture tree");

    llc_hugepages_query(root, live, opt->allow_hugepage_reserve, &out->huge, inner, sizeof(inner));

    if (live)
        llc_pagemap_check(cpu && cpu->hypervisor, &out->pagemap);
    else
        llc_sysinfo_fmt(out->pagemap.reason, sizeof(out->pagemap.reason),
                        "not checked: describes this process, not the fixture machine");

    llc_pmu_check(cpu, live, &out->pmu);
    llc_clock_check(cpu, live, &out->clock);
    llc_backend_choose(&out->pmu, &out->clock, &out->backend);
    return 0;
}
