/* Where the target runs: another core under the probe's LLC (hwloc), and
 * pinning the calling thread. */
#include "target/target_internal.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int llc_target_pin_thread(int cpu, char *err, size_t errlen)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return llc_errf(err, errlen, -EINVAL, "CPU %d is out of range", cpu);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    /* pid 0 is the calling thread, not the whole process. */
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        return llc_errf(err, errlen, -errno, "cannot pin this thread to CPU %d: %s", cpu,
                        strerror(errno));
    return 0;
}

static const char *cache_name(hwloc_obj_type_t t)
{
    switch (t) {
    case HWLOC_OBJ_L1CACHE:
        return "L1";
    case HWLOC_OBJ_L2CACHE:
        return "L2";
    case HWLOC_OBJ_L3CACHE:
        return "L3";
    case HWLOC_OBJ_L4CACHE:
        return "L4";
    case HWLOC_OBJ_L5CACHE:
        return "L5";
    default:
        return "cache";
    }
}

static int pick(hwloc_topology_t topo, int probe_cpu, int *cpu, char *note, size_t notelen,
                char *err, size_t errlen)
{
    const hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)probe_cpu);
    if (!pu)
        return llc_errf(err, errlen, -ENODEV, "hwloc does not list CPU %d among the usable ones",
                        probe_cpu);
    hwloc_obj_t llc = NULL;
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        if (hwloc_obj_type_is_dcache(o->type))
            llc = o;
    if (!llc)
        return llc_errf(err, errlen, -ENODEV,
                        "hwloc shows no data cache above CPU %d: cannot tell which CPUs share its "
                        "last-level cache",
                        probe_cpu);
    const hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    const int n_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int found = -1;
    unsigned i;
    hwloc_bitmap_foreach_begin(i, llc->cpuset)
    {
        if (found < 0 && !(core && hwloc_bitmap_isset(core->cpuset, i)) && (int)i != probe_cpu &&
            hwloc_get_pu_obj_by_os_index(topo, i))
            found = (int)i;
    }
    hwloc_bitmap_foreach_end();
    const char *level = cache_name(llc->type);
    if (found < 0) {
        if (n_cores <= 1)
            return llc_errf(err, errlen, -ENODEV,
                            "this machine has only one core usable here (CPU %d): the target "
                            "cannot run on another core sharing the %s; give a CPU explicitly or "
                            "do not pin",
                            probe_cpu, level);
        return llc_errf(err, errlen, -ENODEV,
                        "no other core shares the %s with CPU %d (%d cores, but each %s serves "
                        "one); give a CPU explicitly",
                        level, probe_cpu, n_cores, level);
    }
    *cpu = found;
    snprintf(note, notelen, "CPU %d: another core under the same %s (%llu KiB) as CPU %d", found,
             level, (unsigned long long)(llc->attr ? llc->attr->cache.size / 1024 : 0), probe_cpu);
    return 0;
}

int llc_target_pick_cpu(int probe_cpu, int *cpu, char *note, size_t notelen, char *err,
                        size_t errlen)
{
    if (probe_cpu < 0) {
        probe_cpu = sched_getcpu();
        if (probe_cpu < 0)
            return llc_errf(err, errlen, -errno, "sched_getcpu: %s", strerror(errno));
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return llc_errf(err, errlen, -ENOMEM, "hwloc_topology_init failed");
    int rc;
    if (hwloc_topology_load(topo) != 0) {
        rc = llc_errf(err, errlen, -EIO, "hwloc could not load the machine topology");
        goto out;
    }
    rc = pick(topo, probe_cpu, cpu, note, notelen, err, errlen);
out:
    hwloc_topology_destroy(topo);
    return rc;
}
