/* The arena's lines: physical addresses from pagemap, and a paddr -> line id
 * lookup used to find the same frames at other page offsets. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"

#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_PFN_MASK ((1ULL << 55) - 1)

int llc_evset_arena_lines(const void *base, size_t bytes, unsigned line_size,
                          struct llc_evset_line **out, size_t *n, char *err, size_t errlen)
{
    const long page_l = sysconf(_SC_PAGESIZE);
    const uint64_t page = page_l > 0 ? (uint64_t)page_l : 4096;
    if (!line_size || (line_size & (line_size - 1)) || line_size > page)
        return llc_errf(err, errlen, -EINVAL, "line size %u is not a power of two <= page size",
                        line_size);
    const uintptr_t start = (uintptr_t)base;
    if (start % line_size || bytes % line_size)
        return llc_errf(err, errlen, -EINVAL, "arena must be line aligned");
    const size_t count = bytes / line_size;
    struct llc_evset_line *lines = malloc((count ? count : 1) * sizeof(*lines));
    int fd = -1, rc = 0;
    size_t known = 0;
    if (!lines) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu lines", count);
        goto out;
    }
    fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    uint64_t cached_vpn = UINT64_MAX, cached_frame = LLC_EVSET_NO_PADDR;
    for (size_t i = 0; i < count; i++) {
        const uint64_t va = (uint64_t)start + (uint64_t)i * line_size;
        const uint64_t vpn = va / page;
        if (vpn != cached_vpn) {
            uint64_t entry = 0;
            cached_vpn = vpn;
            cached_frame = LLC_EVSET_NO_PADDR;
            /* PFN 0 means the kernel hides frames (no CAP_SYS_ADMIN) */
            if (fd >= 0 &&
                pread(fd, &entry, sizeof(entry), (off_t)(vpn * sizeof(entry))) ==
                    (ssize_t)sizeof(entry) &&
                (entry & PAGEMAP_PRESENT) && (entry & PAGEMAP_PFN_MASK))
                cached_frame = (entry & PAGEMAP_PFN_MASK) * page;
        }
        lines[i].addr = va;
        lines[i].paddr =
            cached_frame == LLC_EVSET_NO_PADDR ? LLC_EVSET_NO_PADDR : cached_frame + va % page;
        known += cached_frame != LLC_EVSET_NO_PADDR;
    }
    *out = lines;
    *n = count;
    lines = NULL;
    rc = (int)(known > (size_t)INT32_MAX ? INT32_MAX : known);
out:
    if (fd >= 0)
        close(fd);
    free(lines);
    return rc;
}

static inline size_t paddr_hash(uint64_t paddr)
{
    uint64_t z = paddr * 0x9e3779b97f4a7c15ULL;
    return (size_t)(z ^ (z >> 29));
}

int evset_paddr_map_init(struct evset_paddr_map *m, const struct llc_evset_line *lines, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    m->keys = malloc(cap * sizeof(*m->keys));
    m->ids = malloc(cap * sizeof(*m->ids));
    m->mask = cap - 1;
    if (!m->keys || !m->ids) {
        evset_paddr_map_free(m);
        return -ENOMEM;
    }
    memset(m->keys, 0xff, cap * sizeof(*m->keys)); /* LLC_EVSET_NO_PADDR = empty */
    for (size_t i = 0; i < n; i++) {
        if (lines[i].paddr == LLC_EVSET_NO_PADDR)
            continue;
        size_t h = paddr_hash(lines[i].paddr) & m->mask;
        while (m->keys[h] != LLC_EVSET_NO_PADDR && m->keys[h] != lines[i].paddr)
            h = (h + 1) & m->mask;
        if (m->keys[h] == LLC_EVSET_NO_PADDR) { /* the first of duplicates wins */
            m->keys[h] = lines[i].paddr;
            m->ids[h] = (uint32_t)i;
        }
    }
    return 0;
}

void evset_paddr_map_free(struct evset_paddr_map *m)
{
    free(m->keys);
    free(m->ids);
    m->keys = NULL;
    m->ids = NULL;
}

uint32_t evset_paddr_map_find(const struct evset_paddr_map *m, uint64_t paddr)
{
    size_t h = paddr_hash(paddr) & m->mask;
    while (m->keys[h] != LLC_EVSET_NO_PADDR) {
        if (m->keys[h] == paddr)
            return m->ids[h];
        h = (h + 1) & m->mask;
    }
    return UINT32_MAX;
}
