/* How many congruent lines a unit's walk needs (the probe's and a
 * co-runner's), and backend release. */
#include "llcprobe/map.h"

#include <string.h>

unsigned llc_map_walk_length(const struct llc_map_geometry *g, unsigned units_per_l2_set)
{
    if (!g->victim_llc || g->l2_ways == 0)
        return g->llc_ways;
    const unsigned u = units_per_l2_set ? units_per_l2_set : 1;
    return g->llc_ways + g->l2_ways / u;
}

void llc_map_corunner_l2_share(const struct llc_map_geometry *g, const uint32_t *units, size_t n,
                               uint32_t *counts, unsigned *share)
{
    if (!g->victim_llc || !g->l2_ways || !g->l2_sets) {
        memset(share, 0, n * sizeof(*share));
        return;
    }
    /* share[] holds each unit's sharer count until the last pass */
    for (size_t i = 0; i < n; i++)
        counts[llc_map_l2_set_of(g, units[i])]++;
    for (size_t i = 0; i < n; i++)
        share[i] = counts[llc_map_l2_set_of(g, units[i])];
    for (size_t i = 0; i < n; i++)
        counts[llc_map_l2_set_of(g, units[i])] = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned sharers = share[i];
        const uint32_t place = counts[llc_map_l2_set_of(g, units[i])]++;
        share[i] = g->l2_ways / sharers + (place < g->l2_ways % sharers);
    }
    for (size_t i = 0; i < n; i++)
        counts[llc_map_l2_set_of(g, units[i])] = 0;
}

void llc_map_backend_release(struct llc_map_backend *b)
{
    if (b && b->ops && b->ops->release)
        b->ops->release(b->ctx);
    /* The backend struct is allocated with its context by every
     * constructor and freed by release(). */
}

const char *llc_map_mode_name(enum llc_map_mode m)
{
    switch (m) {
    case LLC_MAP_GLOBAL:
        return "global";
    case LLC_MAP_SETS:
        return "sets";
    default:
        return "sweep";
    }
}
