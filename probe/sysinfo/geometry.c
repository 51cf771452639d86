/* The LLC the probe targets, the hierarchy above it, slices, and the
 * sysfs-vs-CPUID cross-check. */
#include "llcprobe/sysinfo.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

const char *llc_hierarchy_name(enum llc_hierarchy h)
{
    switch (h) {
    case LLC_HIER_INCLUSIVE:
        return "inclusive";
    case LLC_HIER_EXCLUSIVE_VICTIM:
        return "exclusive-victim";
    case LLC_HIER_NON_INCLUSIVE:
        return "non-inclusive";
    default:
        return "unknown";
    }
}

static const char *cache_leaf_name(uint32_t leaf)
{
    return leaf == 4            ? "leaf 4"
           : leaf == 0x8000001D ? "leaf 0x8000001D"
                                : "legacy leaves 0x80000005/6";
}

static const struct llc_cpuid_cache *cpuid_find(const struct llc_cpu_info *cpu, unsigned level,
                                                enum llc_cache_type type)
{
    for (unsigned i = 0; cpu && i < cpu->n_caches; i++)
        if (cpu->caches[i].level == level && cpu->caches[i].type == type)
            return &cpu->caches[i];
    return NULL;
}

static const struct llc_sysfs_cache *sysfs_find(const struct llc_cache_topo *t, unsigned level,
                                                enum llc_cache_type type)
{
    for (unsigned i = 0; i < t->n_caches; i++)
        if (t->caches[i].level == level && t->caches[i].type == type)
            return &t->caches[i];
    return NULL;
}

static void add_mismatch(struct llc_geometry *g, unsigned level, enum llc_cache_type type,
                         const char *field, uint64_t sysfs_value, uint64_t cpuid_value)
{
    if (g->n_mismatches == LLC_SYSINFO_MAX_MISMATCHES)
        return;
    struct llc_geometry_mismatch *m = &g->mismatches[g->n_mismatches++];
    m->level = level;
    m->type = type;
    snprintf(m->field, sizeof(m->field), "%s", field);
    m->sysfs_value = sysfs_value;
    m->cpuid_value = cpuid_value;
}

static void cross_check(const struct llc_cache_topo *t, const struct llc_cpu_info *cpu,
                        struct llc_geometry *g)
{
    /* sysfs must agree with itself before it can agree with CPUID. */
    for (unsigned i = 0; i < t->n_caches; i++) {
        const struct llc_sysfs_cache *c = &t->caches[i];
        const uint64_t product = (uint64_t)c->ways * c->partitions * c->line_size * c->sets;
        if (product != c->size)
            add_mismatch(g, c->level, c->type, "size-vs-product", c->size, product);
    }
    if (t->from_cpuid) {
        snprintf(g->cpuid_check, sizeof(g->cpuid_check),
                 "not checked: the caches came from CPUID itself");
        return;
    }
    if (!cpu || cpu->n_caches == 0) {
        snprintf(g->cpuid_check, sizeof(g->cpuid_check), "not checked: CPUID lists no caches (%s)",
                 !cpu                                ? "no CPUID data"
                 : cpu->vendor == LLC_VENDOR_UNKNOWN ? "unknown vendor"
                                                     : "cache leaf absent or empty");
        return;
    }
    g->cpuid_checked = true;
    for (unsigned i = 0; i < t->n_caches; i++) {
        const struct llc_sysfs_cache *s = &t->caches[i];
        const struct llc_cpuid_cache *c = cpuid_find(cpu, s->level, s->type);
        if (!c) {
            add_mismatch(g, s->level, s->type, "present", 1, 0);
            continue;
        }
        if (s->ways != c->ways)
            add_mismatch(g, s->level, s->type, "ways", s->ways, c->ways);
        if (s->sets != c->sets)
            add_mismatch(g, s->level, s->type, "sets", s->sets, c->sets);
        if (s->line_size != c->line_size)
            add_mismatch(g, s->level, s->type, "line_size", s->line_size, c->line_size);
        if (s->partitions != c->partitions)
            add_mismatch(g, s->level, s->type, "partitions", s->partitions, c->partitions);
        if (s->size != c->size)
            add_mismatch(g, s->level, s->type, "size", s->size, c->size);
    }
    for (unsigned i = 0; i < cpu->n_caches; i++) {
        const struct llc_cpuid_cache *c = &cpu->caches[i];
        if (!sysfs_find(t, c->level, c->type))
            add_mismatch(g, c->level, c->type, "present", 0, 1);
    }
    snprintf(g->cpuid_check, sizeof(g->cpuid_check), "%u sysfs caches compared with CPUID %s: %s",
             t->n_caches, cache_leaf_name(cpu->cache_leaf),
             g->n_mismatches ? "disagreements listed"
                             : "size, ways, sets, line size and partitions agree");
}

static void derive_hierarchy(const struct llc_cpu_info *cpu, struct llc_geometry *g)
{
    const size_t n = sizeof(g->hierarchy_reason);
    const struct llc_cpuid_cache *c = cpuid_find(cpu, g->level, LLC_CACHE_UNIFIED);
    g->hierarchy = LLC_HIER_UNKNOWN;
    if (!cpu) {
        snprintf(g->hierarchy_reason, n,
                 "no CPUID data, and sysfs does not describe inclusiveness");
        return;
    }
    if (!c) {
        snprintf(
            g->hierarchy_reason, n,
            "CPUID (%s) does not describe the L%u cache, and sysfs does not describe inclusiveness",
            cpu->vendor == LLC_VENDOR_UNKNOWN ? "unknown vendor"
            : cpu->cache_leaf                 ? cache_leaf_name(cpu->cache_leaf)
                                              : "no cache leaf",
            g->level);
        return;
    }
    const char *leaf = cache_leaf_name(cpu->cache_leaf);
    if (c->inclusive) {
        g->hierarchy = LLC_HIER_INCLUSIVE;
        snprintf(
            g->hierarchy_reason, n,
            "CPUID %s subleaf %u EDX bit 1 = 1: the L%u holds every line of the levels above it",
            leaf, c->subleaf, g->level);
    } else if (cpu->vendor == LLC_VENDOR_AMD && cpu->family >= 0x17) {
        /* Zen's L3 is filled only by L2 castouts: a line lives in L2 or L3. */
        g->hierarchy = LLC_HIER_EXCLUSIVE_VICTIM;
        snprintf(
            g->hierarchy_reason, n,
            "CPUID %s subleaf %u EDX bit 1 = 0 (not inclusive) on AMD family 0x%x (Zen): the L%u is a "
            "victim cache filled by L2 evictions, mostly exclusive of L2",
            leaf, c->subleaf, cpu->family, g->level);
    } else {
        g->hierarchy = LLC_HIER_NON_INCLUSIVE;
        snprintf(
            g->hierarchy_reason, n,
            "CPUID %s subleaf %u EDX bit 1 = 0: the L%u does not guarantee to hold the lines of the "
            "levels above it (non-inclusive)",
            leaf, c->subleaf, g->level);
    }
}

/* Distinct instances of `c` among the CPUs of `within`. */
static unsigned instances_within(const struct llc_sysfs_cache *c, const struct llc_cpuset *within)
{
    unsigned n = 0;
    for (unsigned d = 0; d < c->n_domains; d++) {
        const int first = llc_cpuset_first(&c->domains[d]);
        if (first >= 0 && llc_cpuset_has(within, (unsigned)first))
            n++;
    }
    return n;
}

static void derive_slices(const struct llc_cache_topo *t, const struct llc_cpu_info *cpu,
                          struct llc_geometry *g)
{
    const size_t n = sizeof(g->slices_reason);
    const enum llc_cpu_vendor v = cpu ? cpu->vendor : LLC_VENDOR_UNKNOWN;
    if (v == LLC_VENDOR_INTEL && t->uncore_slice_pmus) {
        g->slices = t->uncore_slice_pmus;
        snprintf(g->slices_reason, n,
                 "%u %s_* PMUs in sysfs bus/event_source: Intel has one C-box/CHA per LLC slice",
                 t->uncore_slice_pmus, t->uncore_slice_kind);
    } else if (v == LLC_VENDOR_AMD && cpu->family >= 0x17 && g->cores_per_domain) {
        g->slices = g->cores_per_domain;
        snprintf(g->slices_reason, n,
                 "inferred: a Zen L3 has one slice per core of its CCX, and %u cores share this L3",
                 g->cores_per_domain);
    } else if (v == LLC_VENDOR_INTEL) {
        snprintf(
            g->slices_reason, n,
            "unknown: neither sysfs cache entries nor CPUID expose slices; Intel's one-per-C-box/CHA "
            "slices show only as uncore_cbox/uncore_cha PMUs, and sysfs has none (VM or no uncore driver)");
    } else {
        snprintf(
            g->slices_reason, n,
            "unknown: neither sysfs cache entries nor CPUID expose the LLC's slices for this CPU");
    }
}

int llc_geometry_derive(const struct llc_cache_topo *topo, const struct llc_cpu_info *cpu,
                        struct llc_geometry *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const struct llc_sysfs_cache *llc = NULL, *upper = NULL, *l1d = NULL;
    for (unsigned i = 0; i < topo->n_caches; i++) {
        const struct llc_sysfs_cache *c = &topo->caches[i];
        if (c->type == LLC_CACHE_UNIFIED && (!llc || c->level > llc->level))
            llc = c;
        if (c->type == LLC_CACHE_DATA && c->level == 1)
            l1d = c;
    }
    if (!llc)
        return llc_errf(err, errlen, -ENOENT, "sysfs lists no unified cache");
    for (unsigned i = 0; i < topo->n_caches; i++) {
        const struct llc_sysfs_cache *c = &topo->caches[i];
        if (c->type == LLC_CACHE_UNIFIED && c->level < llc->level &&
            (!upper || c->level > upper->level))
            upper = c;
    }
    if (llc->ways == 0 || llc->sets == 0)
        return llc_errf(
            err, errlen, -ENODATA,
            "the L%u (%" PRIu64 " KiB) has no associativity in %s, so its sets are unknown",
            llc->level, llc->size / 1024,
            topo->from_cpuid ? "CPUID (the legacy leaf defers to 0x8000001D, which is empty here)"
                             : "sysfs");
    out->level = llc->level;
    out->size = llc->size;
    out->ways = llc->ways;
    out->sets = llc->sets;
    out->line_size = llc->line_size;
    out->partitions = llc->partitions;
    out->shared = llc->domains[0];
    out->n_domains = llc->n_domains;
    /* L1d is private to a core (shared only by SMT siblings), so its
     * instances count cores; L2 may be shared by a module. */
    const struct llc_sysfs_cache *per_core = l1d ? l1d : upper;
    out->cores_per_domain = per_core ? instances_within(per_core, &out->shared) : 0;
    if (upper) {
        out->upper_level = upper->level;
        out->upper_ways = upper->ways;
        out->upper_sets = upper->sets;
        out->upper_size = upper->size;
    }
    derive_hierarchy(cpu, out);
    derive_slices(topo, cpu, out);
    cross_check(topo, cpu, out);
    return 0;
}
