/* The "llcprobe-info" JSON document (version 1). */
#include "sysinfo/report.h"

#include "util/atomic_file.h"
#include "util/json.h"

static json_t *cpuset_json(const struct llc_cpuset *s)
{
    char buf[4096];
    return json_string(llc_cpuset_format(s, buf, sizeof(buf)));
}

static json_t *cpu_json(const struct llc_sysinfo *si)
{
    const struct llc_cpu_info *c = &si->cpu;
    if (!si->cpu_ok)
        return json_pack("{s:b, s:s}", "ok", 0, "reason", si->cpu_reason);
    return json_pack("{s:b, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:s, s:i, s:s}", "ok", 1, "vendor",
                     llc_cpu_vendor_name(c->vendor), "vendor_id", c->vendor_id, "brand", c->brand,
                     "family", (int)c->family, "model", (int)c->model, "stepping", (int)c->stepping,
                     "hypervisor", c->hypervisor, "hypervisor_id", c->hypervisor_id,
                     "perfmon_version", (int)c->perfmon_version, "cache_leaf",
                     c->cache_leaf == 4 ? "0x4"
                     : c->cache_leaf    ? "0x8000001D"
                                        : "");
}

static json_t *cpuid_cache_json(const struct llc_sysinfo *si, unsigned level,
                                enum llc_cache_type type)
{
    for (unsigned i = 0; si->cpu_ok && i < si->cpu.n_caches; i++) {
        const struct llc_cpuid_cache *c = &si->cpu.caches[i];
        if (c->level == level && c->type == type)
            return json_pack("{s:I, s:i, s:i, s:i, s:i, s:b, s:i, s:i}", "size",
                             (json_int_t)c->size, "ways", (int)c->ways, "sets", (int)c->sets,
                             "line_size", (int)c->line_size, "partitions", (int)c->partitions,
                             "inclusive", c->inclusive, "max_sharing", (int)c->max_sharing,
                             "subleaf", (int)c->subleaf);
    }
    return json_null();
}

static json_t *caches_json(const struct llc_sysinfo *si)
{
    json_t *arr = json_array();
    for (unsigned i = 0; arr && i < si->topo.n_caches; i++) {
        const struct llc_sysfs_cache *c = &si->topo.caches[i];
        json_t *inst = json_array();
        for (unsigned d = 0; inst && d < c->n_domains; d++)
            json_array_append_new(inst, cpuset_json(&c->domains[d]));
        json_array_append_new(
            arr,
            json_pack("{s:i, s:s, s:I, s:i, s:i, s:i, s:i, s:o, s:i, s:o, s:o}", "level",
                      (int)c->level, "type", llc_cache_type_name(c->type), "size",
                      (json_int_t)c->size, "ways", (int)c->ways, "sets", (int)c->sets, "line_size",
                      (int)c->line_size, "partitions", (int)c->partitions, "shared_cpus",
                      cpuset_json(&c->domains[0]), "instances", (int)c->n_domains, "instance_cpus",
                      inst ? inst : json_null(), "cpuid", cpuid_cache_json(si, c->level, c->type)));
    }
    return arr;
}

static json_t *llc_json(const struct llc_sysinfo *si)
{
    const struct llc_geometry *g = &si->geometry;
    if (!si->geometry_ok)
        return json_pack("{s:b, s:s}", "ok", 0, "reason", si->geometry_reason);
    json_t *mm = json_array();
    for (unsigned i = 0; mm && i < g->n_mismatches; i++) {
        const struct llc_geometry_mismatch *m = &g->mismatches[i];
        json_array_append_new(mm, json_pack("{s:i, s:s, s:s, s:I, s:I}", "level", (int)m->level,
                                            "type", llc_cache_type_name(m->type), "field", m->field,
                                            "sysfs", (json_int_t)m->sysfs_value, "cpuid",
                                            (json_int_t)m->cpuid_value));
    }
    json_t *upper = g->upper_level ? json_pack("{s:i, s:I, s:i, s:i}", "level", (int)g->upper_level,
                                               "size", (json_int_t)g->upper_size, "ways",
                                               (int)g->upper_ways, "sets", (int)g->upper_sets)
                                   : json_null();
    return json_pack(
        "{s:b, s:i, s:I, s:i, s:i, s:i, s:i, s:o, s:i, s:i, s:o, s:s, s:s, s:o, s:s, s:{s:b, "
        "s:s, s:o}}",
        "ok", 1, "level", (int)g->level, "size", (json_int_t)g->size, "ways", (int)g->ways, "sets",
        (int)g->sets, "line_size", (int)g->line_size, "partitions", (int)g->partitions,
        "shared_cpus", cpuset_json(&g->shared), "instances", (int)g->n_domains,
        "cores_per_instance", (int)g->cores_per_domain, "upper", upper ? upper : json_null(),
        "hierarchy", llc_hierarchy_name(g->hierarchy), "hierarchy_reason", g->hierarchy_reason,
        "slices", g->slices ? json_integer(g->slices) : json_null(), "slices_reason",
        g->slices_reason, "cpuid_check", "checked", g->cpuid_checked, "summary", g->cpuid_check,
        "mismatches", mm ? mm : json_null());
}

static json_t *hwloc_json(const struct llc_hwloc_llc *h)
{
    if (!h->ok)
        return json_pack("{s:b, s:s}", "ok", 0, "reason", h->reason);
    return json_pack("{s:b, s:i, s:I, s:i, s:o, s:i}", "ok", 1, "level", (int)h->level, "size",
                     (json_int_t)h->size, "llc_objects", (int)h->n_llc, "pus", cpuset_json(&h->pus),
                     "cores", (int)h->cores);
}

static const char *attempt_name(enum llc_huge_attempt a)
{
    return a == LLC_HUGE_MAPPED ? "mapped" : a == LLC_HUGE_FAILED ? "failed" : "not-tried";
}

static json_t *huge_json(const struct llc_hugepages *hp)
{
    json_t *sizes = json_array();
    for (unsigned i = 0; sizes && i < hp->n; i++) {
        const struct llc_hugepage_size *h = &hp->sizes[i];
        json_array_append_new(
            sizes,
            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:s, s:s, s:b, s:b, s:s}", "size",
                      (json_int_t)h->size, "total", (json_int_t)h->total, "free",
                      (json_int_t)h->free, "surplus", (json_int_t)h->surplus, "reserved",
                      (json_int_t)h->reserved, "overcommit", (json_int_t)h->overcommit,
                      "libhugetlbfs", h->libhugetlbfs_lists, "mount", h->mount, "map_attempt",
                      attempt_name(h->attempt), "reserved_temporarily", h->reserved_temporarily,
                      "restored", h->restored, "detail", h->detail));
    }
    return json_pack("{s:b, s:o, s:s}", "live", hp->live, "sizes", sizes ? sizes : json_null(),
                     "reason", hp->reason);
}

static json_t *pmu_json(const struct llc_pmu_check *p)
{
    char config[32];
    snprintf(config, sizeof(config), "0x%llx", (unsigned long long)p->config);
    return json_pack("{s:b, s:s, s:b, s:s, s:s, s:s, s:b, s:s, s:i, s:s, s:s, s:b, s:b, s:i, s:s}",
                     "libpfm_ok", p->pfm_ok, "libpfm_error", p->pfm_error, "forced", p->forced,
                     "pmu", p->pmu, "event", p->event, "event_note", p->event_note, "encoded",
                     p->encoded, "encode_error", p->encode_error, "type", (int)p->type, "config",
                     config, "fstr", p->fstr, "open_tried", p->open_tried, "opened", p->opened,
                     "open_errno", p->open_errno, "reason", p->reason);
}

json_t *llc_sysinfo_to_json(const struct llc_sysinfo *si)
{
    json_t *doc = llc_json_doc_new("llcprobe-info", 1);
    if (!doc)
        return NULL;
    const struct llc_pagemap_check *pm = &si->pagemap;
    const struct llc_clock_check *ck = &si->clock;
    const int bad =
        json_object_set_new(doc, "source",
                            json_pack("{s:b, s:s, s:s, s:s, s:s}", "live", si->live, "sysfs_root",
                                      si->sysfs_root, "cpuid", si->cpuid_source, "caches",
                                      si->topo.from_cpuid ? "cpuid" : "sysfs", "caches_note",
                                      si->topo.source_note)) |
        json_object_set_new(doc, "cpu", cpu_json(si)) |
        json_object_set_new(doc, "caches", caches_json(si)) |
        json_object_set_new(doc, "llc", llc_json(si)) |
        json_object_set_new(doc, "hwloc", hwloc_json(&si->hwloc)) |
        json_object_set_new(doc, "hugepages", huge_json(&si->huge)) |
        json_object_set_new(doc, "pagemap",
                            json_pack("{s:b, s:b, s:b, s:b, s:s}", "tried", pm->tried, "readable",
                                      pm->readable, "frames", pm->frames, "guest_physical",
                                      pm->guest_physical, "reason", pm->reason)) |
        json_object_set_new(doc, "pmu", pmu_json(&si->pmu)) |
        json_object_set_new(doc, "clock",
                            json_pack("{s:b, s:b, s:b, s:b, s:b, s:I, s:s, s:s}", "tsc", ck->tsc,
                                      "lfence_serializing", ck->lfence_serializing, "rdtscp",
                                      ck->rdtscp, "invariant_tsc", ck->invariant_tsc, "usable",
                                      ck->usable, "tsc_hz", (json_int_t)ck->tsc_hz, "tsc_hz_source",
                                      ck->tsc_hz_source, "reason", ck->reason)) |
        json_object_set_new(doc, "backend",
                            json_pack("{s:s, s:s}", "auto", llc_backend_name(si->backend.backend),
                                      "reason", si->backend.reason));
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}
