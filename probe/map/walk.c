/* How many congruent lines a unit's walk needs, and backend release. */
#include "llcprobe/map.h"

unsigned llc_map_walk_length(const struct llc_map_geometry *g, unsigned units_per_l2_set)
{
    if (!g->victim_llc || g->l2_ways == 0)
        return g->llc_ways;
    const unsigned u = units_per_l2_set ? units_per_l2_set : 1;
    return g->llc_ways + g->l2_ways / u;
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
    case LLC_MAP_GLOBAL: return "global";
    case LLC_MAP_SETS: return "sets";
    default: return "sweep";
    }
}
