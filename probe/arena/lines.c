/* Physical addresses of arena bytes, and arena lines selected by low
 * physical address bits (the eviction-set builder's candidate pools). */
#include "arena/arena_internal.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <inttypes.h>

int llc_arena_paddr(const struct llc_arena *a, size_t offset, uint64_t *paddr, char *err,
                    size_t errlen)
{
    if (offset >= a->size)
        return llc_errf(err, errlen, -ERANGE, "offset %zu is outside the %zu-byte arena", offset,
                        a->size);
    if (a->info.frames != LLC_ARENA_FRAMES_KNOWN)
        return llc_errf(err, errlen, -ENODATA, "%s", a->info.frames_reason);
    *paddr = a->pfn[offset / a->base_page] * a->base_page + offset % a->base_page;
    return 0;
}

uint64_t llc_arena_known_bits(const struct llc_arena *a)
{
    return a->info.frames == LLC_ARENA_FRAMES_KNOWN ? UINT64_MAX : (uint64_t)a->page_size - 1;
}

long llc_arena_lines_matching(const struct llc_arena *a, size_t line_size, uint64_t mask,
                              uint64_t value, size_t *offsets, size_t max, char *err, size_t errlen)
{
    if (line_size == 0 || (line_size & (line_size - 1)) || line_size > a->base_page)
        return llc_errf(err, errlen, -EINVAL,
                        "line size %zu is not a power of two up to the %zu-byte page", line_size,
                        a->base_page);
    if (value & ~mask)
        return llc_errf(err, errlen, -EINVAL,
                        "value 0x%" PRIx64 " has bits outside mask 0x%" PRIx64, value, mask);
    const uint64_t known = llc_arena_known_bits(a);
    if (mask & ~known)
        return llc_errf(err, errlen, -ENODATA,
                        "mask 0x%" PRIx64 " needs physical address bits above the %zu-byte page, "
                        "which are unknown: %s",
                        mask, a->page_size, a->info.frames_reason);
    const bool by_frame = a->info.frames == LLC_ARENA_FRAMES_KNOWN;
    size_t count = 0;
    for (size_t page = 0; page < a->size; page += a->base_page) {
        /* Without frames, the offset stands for the physical address: both
         * are aligned to page_size and mask stays below it. */
        const uint64_t start = by_frame ? a->pfn[page / a->base_page] * a->base_page : page;
        for (size_t in = 0; in < a->base_page; in += line_size) {
            if (((start + in) & mask) != value)
                continue;
            if (offsets && count < max)
                offsets[count] = page + in;
            count++;
        }
    }
    return (long)count;
}
