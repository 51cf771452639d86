/* Private to probe/arena: the arena handle and the hugepage pool. */
#ifndef LLCPROBE_ARENA_INTERNAL_H
#define LLCPROBE_ARENA_INTERNAL_H

#include "llcprobe/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One temporary enlargement of a hugepage pool. slot < 0: none made. */
struct llc_pool_reservation {
    int slot;               /* in the emergency registry */
    uint64_t before, after; /* nr_hugepages */
    char path[448];         /* .../nr_hugepages */
};

/* Free pages of `page_size` in the pool under sysfs_root: free minus those
 * reserved by other mappings. -ENOENT when the kernel has no such size. */
int llc_pool_available(const char *sysfs_root, size_t page_size, uint64_t *available, char *err,
                       size_t errlen);
/* Makes `want` pages free, raising nr_hugepages by what is missing. res->slot
 * is -1 when nothing had to be raised. -EPERM without write access, -ENOMEM
 * when the kernel could not allocate them (the pool is then restored). */
int llc_pool_reserve(const char *sysfs_root, size_t page_size, uint64_t want,
                     struct llc_pool_reservation *res, char *err, size_t errlen);
/* Puts nr_hugepages back to res->before and checks it reads so. No-op when
 * nothing was reserved. */
int llc_pool_restore(struct llc_pool_reservation *res, char *err, size_t errlen);

struct llc_arena {
    void *base;
    size_t size, page_size, base_page;
    bool from_libhugetlbfs; /* free with free_huge_pages(), not munmap() */
    struct llc_pool_reservation pool;
    size_t n_frames; /* one per base page */
    uint64_t *pfn;
    struct llc_arena_info info;
};

/* Reads pagemap into a->pfn and classifies a->info.frames; returns how many
 * frames changed from the previous contents. */
long llc_arena_read_frames(struct llc_arena *a, char *err, size_t errlen);
/* Checks hugepage contiguity and fills the contiguity fields of a->info. */
void llc_arena_check_contiguity(struct llc_arena *a);

#endif
