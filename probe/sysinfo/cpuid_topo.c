/* The cache list from CPUID, for kernels that expose no sysfs cacheinfo. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"

#include "llcprobe/common.h"

#include <string.h>

int llc_cache_topo_from_cpuid(const struct llc_cpu_info *cpu, struct llc_cache_topo *topo,
                              char *err, size_t errlen)
{
    if (!cpu || cpu->n_caches == 0)
        return llc_errf(err, errlen, -ENOENT, "CPUID lists no caches either (%s)",
                        !cpu ? "no CPUID data" : "no cache leaf for this vendor");
    unsigned top = 0;
    for (unsigned i = 0; i < cpu->n_caches; i++)
        if (cpu->caches[i].level > top)
            top = cpu->caches[i].level;
    topo->n_caches = 0;
    for (unsigned i = 0; i < cpu->n_caches && topo->n_caches < LLC_SYSINFO_MAX_CACHES; i++) {
        const struct llc_cpuid_cache *c = &cpu->caches[i];
        struct llc_sysfs_cache *s = &topo->caches[topo->n_caches++];
        memset(s, 0, sizeof(*s));
        s->index = i;
        s->level = c->level;
        s->type = c->type;
        s->size = c->size;
        s->ways = c->ways;
        s->sets = c->sets;
        s->line_size = c->line_size;
        s->partitions = c->partitions;
        if (c->level == top) {
            s->n_domains = 1;
            s->domains[0] = topo->online;
            continue;
        }
        for (unsigned cpu_id = 0; cpu_id < LLC_CPUSET_MAX && s->n_domains < LLC_SYSINFO_MAX_DOMAINS;
             cpu_id++) {
            if (!llc_cpuset_has(&topo->online, cpu_id))
                continue;
            memset(&s->domains[s->n_domains], 0, sizeof(s->domains[0]));
            llc_cpuset_add(&s->domains[s->n_domains++], cpu_id);
        }
    }
    topo->from_cpuid = true;
    llc_sysinfo_fmt(
        topo->source_note, sizeof(topo->source_note),
        "sysfs has no cpuN/cache (the kernel exposes no cacheinfo): caches from CPUID %s; sharing "
        "assumed (L1/L2 per CPU, L%u shared by all online CPUs)",
        cpu->cache_leaf == 4            ? "leaf 4"
        : cpu->cache_leaf == 0x8000001D ? "leaf 0x8000001D"
                                        : "legacy leaves 0x80000005/6",
        top);
    return 0;
}
