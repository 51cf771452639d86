/* The LLC-sharing cores as hwloc sees them: a second opinion to sysfs, and
 * the form later stages use for pinning. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"

#include "llcprobe/common.h"

#include <hwloc.h>
#include <string.h>

static hwloc_obj_type_t cache_type_for_level(unsigned level)
{
    switch (level) {
    case 1:
        return HWLOC_OBJ_L1CACHE;
    case 2:
        return HWLOC_OBJ_L2CACHE;
    case 3:
        return HWLOC_OBJ_L3CACHE;
    case 4:
        return HWLOC_OBJ_L4CACHE;
    default:
        return HWLOC_OBJ_L5CACHE;
    }
}

void llc_hwloc_llc_query(const char *xml_path, struct llc_hwloc_llc *out)
{
    memset(out, 0, sizeof(*out));
    hwloc_topology_t topo = NULL;
    char list[4096];
    if (hwloc_topology_init(&topo) < 0) {
        llc_sysinfo_fmt(out->reason, sizeof(out->reason), "hwloc_topology_init failed");
        return;
    }
    if (xml_path && hwloc_topology_set_xml(topo, xml_path) < 0) {
        llc_sysinfo_fmt(out->reason, sizeof(out->reason), "hwloc cannot read XML topology %s",
                        xml_path);
        goto out;
    }
    if (hwloc_topology_load(topo) < 0) {
        llc_sysinfo_fmt(out->reason, sizeof(out->reason), "hwloc_topology_load failed");
        goto out;
    }
    for (unsigned level = 5; level >= 1 && !out->ok; level--) {
        const hwloc_obj_type_t type = cache_type_for_level(level);
        const int n = hwloc_get_nbobjs_by_type(topo, type);
        if (n <= 0)
            continue;
        const hwloc_obj_t llc = hwloc_get_obj_by_type(topo, type, 0);
        if (!llc || !llc->attr || llc->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
            continue;
        out->ok = true;
        out->level = level;
        out->size = llc->attr->cache.size;
        out->n_llc = (unsigned)n;
        out->cores =
            (unsigned)hwloc_get_nbobjs_inside_cpuset_by_type(topo, llc->cpuset, HWLOC_OBJ_CORE);
        hwloc_bitmap_list_snprintf(list, sizeof(list), llc->cpuset);
        char inner[LLC_ERRLEN];
        if (llc_cpuset_parse(list, &out->pus, inner, sizeof(inner)) < 0) {
            out->ok = false;
            llc_sysinfo_fmt(out->reason, sizeof(out->reason), "hwloc cpuset of the LLC: %s", inner);
        }
    }
    if (!out->ok && !out->reason[0])
        llc_sysinfo_fmt(out->reason, sizeof(out->reason),
                        "hwloc found no data or unified cache objects");
out:
    hwloc_topology_destroy(topo);
}
