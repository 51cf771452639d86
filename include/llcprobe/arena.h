/* The stress probe's memory arena: a block of locked memory on the largest
 * pages available, with the physical address of every line.
 *
 * Cache set indexes are taken from physical address bits. On a 2 MiB page
 * the low 21 bits of the physical address equal those of the virtual one, so
 * the probe controls every set-index bit below 21; on 4 KiB pages only bits
 * 0-11. Hence hugepages (through libhugetlbfs when a hugetlbfs mount exists,
 * else mmap(MAP_HUGETLB)), an optional temporary enlargement of the kernel's
 * hugepage pool when root, and a fallback to small pages that is flagged,
 * because congruence above bit 11 must then be found by timing.
 *
 * Lifecycle (as Mastik's prepare/release): llc_arena_create() maps, touches,
 * locks and reads /proc/self/pagemap; llc_arena_release() unmaps and puts the
 * hugepage pool back exactly as it was. A SIGINT/SIGTERM handler calls
 * llc_arena_emergency_release(), which only restores the pools (the process
 * is expected to exit; exit unmaps).
 */
#ifndef LLCPROBE_ARENA_H
#define LLCPROBE_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum llc_arena_page {
    LLC_ARENA_PAGE_2M = 0, /* default */
    LLC_ARENA_PAGE_1G,
    LLC_ARENA_PAGE_SMALL, /* the base page size (4 KiB) */
};

/* reserve: as many pages as the arena needs. */
#define LLC_ARENA_RESERVE_NEEDED UINT32_MAX

struct llc_arena_options {
    /* Page size wanted. With allow_fallback, a size that cannot be had is
     * followed by the next smaller one (1G -> 2M -> small). */
    enum llc_arena_page page;
    bool allow_fallback;
    /* Hugepages of the size being tried to make free in the kernel's pool
     * before mapping (0 = use the pool as it is). The pool is enlarged only
     * by what is missing, needs write access to
     * <sysfs>/kernel/mm/hugepages/hugepages-NkB/nr_hugepages (root), and is
     * restored to its previous value on every path. Without permission the
     * create fails (it does not fall back): the user asked for a reservation. */
    uint32_t reserve;
    /* Do not mlock (mlock is tried by default; failure is reported, not
     * fatal). */
    bool no_mlock;
    /* NULL = "/sys". A different root is for tests only: the pool files are
     * read and written there, while the pages still come from this kernel. */
    const char *sysfs_root;
};

enum llc_arena_frames {
    LLC_ARENA_FRAMES_KNOWN = 0,   /* every page has a non-zero frame number */
    LLC_ARENA_FRAMES_HIDDEN,      /* present but frame 0: no CAP_SYS_ADMIN */
    LLC_ARENA_FRAMES_NOT_PRESENT, /* a touched page reads as not present */
    LLC_ARENA_FRAMES_UNREADABLE,  /* /proc/self/pagemap could not be read */
};

#define LLC_ARENA_TEXT_LEN 320

/* What the arena is and how it came to be. Every text is one sentence. */
struct llc_arena_info {
    size_t size;      /* bytes mapped (request rounded up to pages) */
    size_t page_size; /* bytes per page actually used */
    enum llc_arena_page page;
    char method[LLC_ARENA_TEXT_LEN];          /* how it was mapped, and why so */
    bool fallback;                            /* smaller pages than asked for */
    char fallback_reason[LLC_ARENA_TEXT_LEN]; /* why, with the consequence */
    /* Pool reservation for the page size used (0s when none). */
    uint64_t pool_before;    /* nr_hugepages before we raised it */
    uint64_t pool_raised_to; /* nr_hugepages while the arena lives */
    bool locked;             /* mlock succeeded */
    char lock_note[LLC_ARENA_TEXT_LEN];
    enum llc_arena_frames frames;
    char frames_reason[LLC_ARENA_TEXT_LEN];
    /* Hugepages only, with frames known: each page's frames consecutive and
     * aligned to the page size. */
    bool contiguity_checked, contiguous;
    /* Under a hypervisor pagemap gives guest-physical frames: contiguity is
     * the guest's, and whether the host backs the page with a hugepage
     * cannot be seen from inside. */
    bool guest_physical;
    char contiguity_note[LLC_ARENA_TEXT_LEN];
};

struct llc_arena;

/* Maps at least `bytes` (> 0), touches and locks every page, reads the
 * frames. -ENOMEM / -EPERM / -EINVAL / -EIO with err filled. */
int llc_arena_create(size_t bytes, const struct llc_arena_options *opt, struct llc_arena **out,
                     char *err, size_t errlen);
/* Unmaps and restores the pool. 0, or negative when nr_hugepages could not
 * be put back (err says to what value it must be set). Safe with NULL. */
int llc_arena_release(struct llc_arena *a, char *err, size_t errlen);

/* Async-signal-safe: writes every live arena's previous nr_hugepages value
 * back through a descriptor opened at create time. Touches nothing else,
 * so the arenas stay mapped; call it from a handler that then _exit()s. */
void llc_arena_emergency_release(void);

void *llc_arena_base(const struct llc_arena *a);
size_t llc_arena_size(const struct llc_arena *a);
size_t llc_arena_page_size(const struct llc_arena *a);
const struct llc_arena_info *llc_arena_info(const struct llc_arena *a);
bool llc_arena_frames_known(const struct llc_arena *a);

/* Physical address of the byte at `offset`. -ENODATA when frames are not
 * known (err holds frames_reason), -ERANGE outside the arena. */
int llc_arena_paddr(const struct llc_arena *a, size_t offset, uint64_t *paddr, char *err,
                    size_t errlen);

/* Re-reads pagemap: returns how many base pages changed frame since the last
 * read (small pages may be migrated by compaction even when locked), or a
 * negative code. */
long llc_arena_refresh_frames(struct llc_arena *a, char *err, size_t errlen);

/* Physical address bits the arena knows: all of them when frames are known,
 * else only those below the page size (pages are aligned physically to their
 * size, so the in-page offset bits equal the virtual ones). */
uint64_t llc_arena_known_bits(const struct llc_arena *a);

/* Offsets of the arena's lines (line_size a power of two) whose physical
 * address p satisfies (p & mask) == value, in increasing order. Stores at
 * most `max` of them and returns how many match in total (like snprintf),
 * so a NULL/0 call counts. -ENODATA when mask uses bits the arena does not
 * know (llc_arena_known_bits), -EINVAL on bad arguments. */
long llc_arena_lines_matching(const struct llc_arena *a, size_t line_size, uint64_t mask,
                              uint64_t value, size_t *offsets, size_t max, char *err,
                              size_t errlen);

const char *llc_arena_page_name(enum llc_arena_page p);

#endif
