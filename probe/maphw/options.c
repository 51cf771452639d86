/* Checks of the hardware backends' options, and the sizes derived from the
 * geometry. Pure: no machine access. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "llcprobe/common.h"

static bool is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

int llc_maphw_check_options(const char *backend, const struct llc_map_hw_options *o, char *err,
                            size_t errlen)
{
    if (!o)
        return llc_errf(err, errlen, -EINVAL, "%s: no options", backend);
    const struct llc_map_geometry *g = &o->geo;
    if (!g->llc_ways || !g->sets_per_slice)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: LLC geometry unknown (%u ways, %u sets per slice): eviction sets "
                        "and the walk length need both",
                        backend, g->llc_ways, g->sets_per_slice);
    if (!is_pow2(g->line_size) || g->line_size < sizeof(void *) || g->line_size > 4096)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: line size %u is not a power of two between %zu and 4096", backend,
                        g->line_size, sizeof(void *));
    if (!is_pow2(g->sets_per_slice))
        return llc_errf(err, errlen, -EINVAL,
                        "%s: %u sets per slice is not a power of two: set indexes come from "
                        "address bits",
                        backend, g->sets_per_slice);
    if (g->slices < 1 || g->slices > (1u << LLC_EVSET_MAX_HASH_BITS))
        return llc_errf(err, errlen, -EINVAL, "%s: %u slices not in [1, %d]", backend, g->slices,
                        1 << LLC_EVSET_MAX_HASH_BITS);
    if (g->llc_ways > 64 || g->l2_ways > 64)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: %u LLC ways or %u L2 ways is implausible (at most 64 each)", backend,
                        g->llc_ways, g->l2_ways);
    if (g->victim_llc) {
        if (!g->l2_ways || !is_pow2(g->l2_sets))
            return llc_errf(err, errlen, -EINVAL,
                            "%s: a victim LLC needs the L2's ways and (power-of-two) sets "
                            "(have %u ways, %u sets): the walk is W_L2 + W_LLC lines",
                            backend, g->l2_ways, g->l2_sets);
        if (g->l2_sets >= g->sets_per_slice)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: victim LLC with %u L2 sets >= %u LLC sets per slice: congruent "
                            "LLC lines would not share an L2 set, so no walk length is right",
                            backend, g->l2_sets, g->sets_per_slice);
    } else if (g->l2_sets && !is_pow2(g->l2_sets)) {
        return llc_errf(err, errlen, -EINVAL, "%s: %u L2 sets is not a power of two", backend,
                        g->l2_sets);
    }
    if (!isfinite(o->rate) || o->rate < 0)
        return llc_errf(err, errlen, -EINVAL, "%s: rate %g is not a non-negative number", backend,
                        o->rate);
    if (o->probe_cpu < -1 || o->probe_cpu >= CPU_SETSIZE)
        return llc_errf(err, errlen, -EINVAL, "%s: probe CPU %d out of range", backend,
                        o->probe_cpu);
    return 0;
}

unsigned llc_maphw_group(const struct llc_map_geometry *g)
{
    return llc_evset_group_size(g->victim_llc && g->l2_ways, g->l2_ways, g->llc_ways);
}

size_t llc_maphw_arena_bytes(const struct llc_map_geometry *g)
{
    const size_t gsz = llc_maphw_group(g);
    /* finder pool + victim tail + the aggressor's search, which tests about
     * slices lines per congruent one it keeps */
    const size_t per_index =
        3 * (size_t)g->slices * (gsz + 1) + 2 * (size_t)g->l2_ways + 2 * (size_t)g->slices * gsz;
    return per_index * g->sets_per_slice * g->line_size;
}

unsigned llc_maphw_units_per_l2_set(const struct llc_map_geometry *g, const uint32_t *units,
                                    size_t n, uint32_t *counts)
{
    if (!g->l2_sets || !n)
        return 1;
    unsigned most = 1;
    for (size_t i = 0; i < n; i++) {
        const uint32_t s = llc_map_l2_set_of(g, units[i]);
        if (++counts[s] > most)
            most = counts[s];
    }
    for (size_t i = 0; i < n; i++)
        counts[llc_map_l2_set_of(g, units[i])] = 0;
    return most;
}

int llc_maphw_pick_cpus(const cpu_set_t *allowed, int want, int *probe, int *other, char *err,
                        size_t errlen)
{
    *probe = *other = -1;
    if (want >= 0) {
        if (want >= CPU_SETSIZE || !CPU_ISSET((unsigned)want, allowed))
            return llc_errf(err, errlen, -EINVAL,
                            "probe CPU %d is not among the CPUs this process may run on", want);
        *probe = want;
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET((unsigned)c, allowed))
            continue;
        if (*probe < 0)
            *probe = c;
        else if (c != *probe && *other < 0)
            *other = c;
    }
    if (*probe < 0)
        return llc_errf(err, errlen, -EINVAL, "no CPU to run the probe on");
    return 0;
}
