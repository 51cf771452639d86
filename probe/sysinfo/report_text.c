/* `llcprobe info` as text: one section per subsystem, aligned fields. */
#include "sysinfo/report.h"

#include "util/cli.h"

#include <inttypes.h>
#include <string.h>

#define FIELD "  %-14s "

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

static void print_cpu(FILE *out, const struct llc_sysinfo *si)
{
    const struct llc_cpu_info *c = &si->cpu;
    fprintf(out, "CPU (CPUID from %s)\n", si->cpuid_source);
    if (!si->cpu_ok) {
        fprintf(out, FIELD "%s\n\n", "unavailable", si->cpu_reason);
        return;
    }
    fprintf(out, FIELD "%s (%s), family %u model %u stepping %u\n", "vendor",
            llc_cpu_vendor_name(c->vendor), c->vendor_id, c->family, c->model, c->stepping);
    fprintf(out, FIELD "%s\n", "brand", c->brand[0] ? c->brand : "(not in CPUID)");
    fprintf(out, FIELD "%s%s%s\n", "hypervisor", c->hypervisor ? "yes: " : "no",
            c->hypervisor ? (c->hypervisor_id[0] ? c->hypervisor_id : "unnamed") : "", "");
    fprintf(out, "\n");
}

static const struct llc_cpuid_cache *cpuid_cache(const struct llc_sysinfo *si, unsigned level,
                                                 enum llc_cache_type t)
{
    for (unsigned i = 0; si->cpu_ok && i < si->cpu.n_caches; i++)
        if (si->cpu.caches[i].level == level && si->cpu.caches[i].type == t)
            return &si->cpu.caches[i];
    return NULL;
}

static void print_caches(FILE *out, const struct llc_sysinfo *si)
{
    if (si->topo.from_cpuid)
        fprintf(out, "Caches (CPUID)\n" FIELD "%s\n", "note", si->topo.source_note);
    else
        fprintf(out, "Caches (sysfs under %s; inclusive from CPUID)\n", si->sysfs_root);
    fprintf(out, "  %-5s %-11s %10s %5s %8s %5s %5s %-9s %-16s %s\n", "level", "type", "size",
            "ways", "sets", "line", "part", "inclusive", "shared by CPUs", "instances");
    for (unsigned i = 0; i < si->topo.n_caches; i++) {
        const struct llc_sysfs_cache *c = &si->topo.caches[i];
        const struct llc_cpuid_cache *cc = cpuid_cache(si, c->level, c->type);
        char size[32], cpus[256];
        fprintf(out, "  L%-4u %-11s %10s %5u %8u %5u %5u %-9s %-16s %u\n", c->level,
                llc_cache_type_name(c->type), llc_format_size(c->size, size, sizeof(size)), c->ways,
                c->sets, c->line_size, c->partitions, cc ? yes_no(cc->inclusive) : "?",
                llc_cpuset_format(&c->domains[0], cpus, sizeof(cpus)), c->n_domains);
    }
    char online[256];
    fprintf(out, FIELD "%s (%u CPUs)\n\n", "online CPUs",
            llc_cpuset_format(&si->topo.online, online, sizeof(online)),
            llc_cpuset_count(&si->topo.online));
}

static void print_llc(FILE *out, const struct llc_sysinfo *si)
{
    const struct llc_geometry *g = &si->geometry;
    fprintf(out, "Last-level cache\n");
    if (!si->geometry_ok) {
        fprintf(out, FIELD "%s\n\n", "unavailable", si->geometry_reason);
        return;
    }
    char size[32], cpus[256];
    fprintf(out, FIELD "L%u %s, %u ways x %u sets x %u B lines (%u partition%s)\n", "geometry",
            g->level, llc_format_size(g->size, size, sizeof(size)), g->ways, g->sets, g->line_size,
            g->partitions, g->partitions == 1 ? "" : "s");
    fprintf(out, FIELD "CPUs %s (%u cores); %u instance%s on this machine\n", "shared by",
            llc_cpuset_format(&g->shared, cpus, sizeof(cpus)), g->cores_per_domain, g->n_domains,
            g->n_domains == 1 ? "" : "s");
    if (g->upper_level)
        fprintf(out, FIELD "L%u %s, %u ways x %u sets\n", "level above", g->upper_level,
                llc_format_size(g->upper_size, size, sizeof(size)), g->upper_ways, g->upper_sets);
    else
        fprintf(out, FIELD "none (no unified cache above the LLC)\n", "level above");
    fprintf(out, FIELD "%s: %s\n", "hierarchy", llc_hierarchy_name(g->hierarchy),
            g->hierarchy_reason);
    if (g->slices)
        fprintf(out, FIELD "%u (%s)\n", "slices", g->slices, g->slices_reason);
    else
        fprintf(out, FIELD "%s\n", "slices", g->slices_reason);
    fprintf(out, FIELD "%s\n", "cross-check", g->cpuid_check);
    for (unsigned i = 0; i < g->n_mismatches; i++) {
        const struct llc_geometry_mismatch *m = &g->mismatches[i];
        fprintf(out, FIELD "MISMATCH L%u %s %s: sysfs %" PRIu64 ", %s %" PRIu64 "\n", "", m->level,
                llc_cache_type_name(m->type), m->field, m->sysfs_value,
                strcmp(m->field, "size-vs-product") == 0 ? "ways*part*line*sets" : "CPUID",
                m->cpuid_value);
    }
    const struct llc_hwloc_llc *h = &si->hwloc;
    if (h->ok)
        fprintf(out, FIELD "L%u %s over PUs %s (%u cores); %u LLC object%s\n", "hwloc", h->level,
                llc_format_size(h->size, size, sizeof(size)),
                llc_cpuset_format(&h->pus, cpus, sizeof(cpus)), h->cores, h->n_llc,
                h->n_llc == 1 ? "" : "s");
    else
        fprintf(out, FIELD "%s\n", "hwloc", h->reason);
    fprintf(out, "\n");
}

static void print_huge(FILE *out, const struct llc_sysinfo *si)
{
    fprintf(out, "Hugepages\n");
    if (si->huge.n == 0)
        fprintf(out, FIELD "%s\n", "unavailable", si->huge.reason);
    for (unsigned i = 0; i < si->huge.n; i++) {
        const struct llc_hugepage_size *h = &si->huge.sizes[i];
        char size[32];
        fprintf(out,
                FIELD "total %" PRIu64 ", free %" PRIu64 ", surplus %" PRIu64 ", reserved %" PRIu64
                      "\n",
                llc_format_size(h->size, size, sizeof(size)), h->total, h->free, h->surplus,
                h->reserved);
        if (si->huge.live)
            fprintf(out, FIELD "libhugetlbfs %s; hugetlbfs mount %s\n", "",
                    h->libhugetlbfs_lists ? "lists it" : "does not list it",
                    h->mount[0] ? h->mount : "none");
        fprintf(out, FIELD "%s\n", "", h->detail);
    }
    fprintf(out, "\n");
}

static void print_pmu(FILE *out, const struct llc_pmu_check *p)
{
    fprintf(out, "PMU (libpfm4%s)\n", p->forced ? ", LIBPFM_FORCE_PMU set" : "");
    if (!p->pfm_ok) {
        fprintf(out, FIELD "%s\n\n", "unavailable", p->pfm_error);
        return;
    }
    fprintf(out, FIELD "%s%s%s%s\n", "core PMU", p->pmu[0] ? p->pmu : "none found by libpfm4",
            p->pmu_desc[0] ? " (" : "", p->pmu_desc, p->pmu_desc[0] ? ")" : "");
    fprintf(out, FIELD "%s: %s\n", "LLC-miss event", p->event[0] ? p->event : "none",
            p->event_note);
    if (p->encoded)
        fprintf(out, FIELD "perf type %u config 0x%llx%s%s\n", "encoding", p->type,
                (unsigned long long)p->config, p->fstr[0] ? " = " : "", p->fstr);
    else
        fprintf(out, FIELD "failed: %s\n", "encoding", p->encode_error);
    fprintf(out, FIELD "%s\n\n", "status", p->reason);
}

void llc_sysinfo_print_text(FILE *out, const struct llc_sysinfo *si)
{
    fprintf(out, "llcprobe info: %s\n\n",
            si->live ? "this machine" : "fixtures (live probes skipped)");
    print_cpu(out, si);
    print_caches(out, si);
    print_llc(out, si);
    print_huge(out, si);
    fprintf(out, "Pagemap\n" FIELD "%s\n\n", si->pagemap.frames ? "frames" : "no frames",
            si->pagemap.reason);
    print_pmu(out, &si->pmu);
    const struct llc_clock_check *c = &si->clock;
    fprintf(out, "Timing clock\n");
    fprintf(out, FIELD "TSC %s, rdtscp %s, serialising lfence %s, invariant TSC %s\n", "features",
            yes_no(c->tsc), yes_no(c->rdtscp), yes_no(c->lfence_serializing),
            yes_no(c->invariant_tsc));
    if (c->tsc_hz)
        fprintf(out, FIELD "%.3f MHz (%s)\n", "TSC rate", (double)c->tsc_hz / 1e6,
                c->tsc_hz_source);
    else
        fprintf(out, FIELD "%s\n", "TSC rate", c->tsc_hz_source);
    fprintf(out, FIELD "%s\n\n", "status", c->reason);
    fprintf(out, "Backend\n" FIELD "%s\n" FIELD "%s\n", "auto picks",
            llc_backend_name(si->backend.backend), "why", si->backend.reason);
}
