/* This machine's cache sizes for the mrc report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"
#include "mrc/mrc.h"

int llc_mrc_machine_caches(struct llc_mrc_cache *out, size_t cap, char *err, size_t errlen)
{
    /* Not live: the mrc report needs only sizes, not hugepage or counter
     * probes that act on this process. */
    const struct llc_sysinfo_options opt = {.live = false};
    struct llc_sysinfo *si = calloc(1, sizeof *si);
    if (!si)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = llc_sysinfo_collect(&opt, si, err, errlen);
    if (rc < 0)
        goto out;
    uint64_t l1 = 0, l2 = 0, llc = 0;
    unsigned llc_level = 0;
    for (unsigned i = 0; i < si->topo.n_caches; i++) {
        const struct llc_sysfs_cache *c = &si->topo.caches[i];
        if (c->level == 1 && c->type == LLC_CACHE_DATA)
            l1 = c->size;
        if (c->level == 2 && c->type != LLC_CACHE_INSTRUCTION)
            l2 = c->size;
        if (c->type == LLC_CACHE_UNIFIED && c->level >= llc_level && c->level > 2) {
            llc_level = c->level;
            llc = c->size;
        }
    }
    if (si->geometry_ok && si->geometry.level > 2)
        llc = si->geometry.size;
    size_t n = 0;
    const struct llc_mrc_cache found[] = {{"L1d", l1}, {"L2", l2}, {"LLC", llc}};
    for (size_t i = 0; i < LLC_ARRAY_LEN(found) && n < cap; i++)
        if (found[i].bytes)
            out[n++] = found[i];
    rc = (int)n;
out:
    free(si);
    return rc;
}
