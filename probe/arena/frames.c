/* Physical addresses of the arena from /proc/self/pagemap, and the lines
 * whose physical address has given low bits. */
#include "arena/arena_internal.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define PM_PRESENT (UINT64_C(1) << 63)
#define PM_PFN_MASK ((UINT64_C(1) << 55) - 1)

static bool under_hypervisor(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx >> 31 & 1);
#else
    return false;
#endif
}

static int classify(struct llc_arena *a, const uint64_t *entries, size_t n)
{
    size_t zero = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(entries[i] & PM_PRESENT)) {
            a->info.frames = LLC_ARENA_FRAMES_NOT_PRESENT;
            snprintf(
                a->info.frames_reason, sizeof(a->info.frames_reason),
                "physical addresses unknown: the page at arena offset %zu reads as not present "
                "in /proc/self/pagemap although it was touched (entry 0x%016" PRIx64 ")",
                i * a->base_page, entries[i]);
            return -ENODATA;
        }
        zero += (entries[i] & PM_PFN_MASK) == 0;
    }
    if (zero == n) {
        a->info.frames = LLC_ARENA_FRAMES_HIDDEN;
        snprintf(a->info.frames_reason, sizeof(a->info.frames_reason),
                 "physical addresses unknown: /proc/self/pagemap gives frame number 0 for every "
                 "page because this process lacks CAP_SYS_ADMIN (run as root)");
        return -ENODATA;
    }
    if (zero) {
        a->info.frames = LLC_ARENA_FRAMES_HIDDEN;
        snprintf(a->info.frames_reason, sizeof(a->info.frames_reason),
                 "physical addresses unknown: %zu of %zu pages read frame number 0 in "
                 "/proc/self/pagemap",
                 zero, n);
        return -ENODATA;
    }
    a->info.frames = LLC_ARENA_FRAMES_KNOWN;
    snprintf(a->info.frames_reason, sizeof(a->info.frames_reason),
             "physical frame numbers of all %zu pages read from /proc/self/pagemap%s", n,
             a->info.guest_physical ? " (guest-physical: running under a hypervisor)" : "");
    return 0;
}

long llc_arena_read_frames(struct llc_arena *a, char *err, size_t errlen)
{
    a->info.guest_physical = under_hypervisor();
    long rc;
    uint64_t *entries = NULL;
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        a->info.frames = LLC_ARENA_FRAMES_UNREADABLE;
        snprintf(a->info.frames_reason, sizeof(a->info.frames_reason),
                 "physical addresses unknown: /proc/self/pagemap cannot be opened (%s)",
                 strerror(errno));
        rc = -ENODATA;
        goto out;
    }
    entries = malloc(a->n_frames * sizeof(*entries));
    if (!entries) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu pagemap entries", a->n_frames);
        goto out;
    }
    const off_t off = (off_t)((uintptr_t)a->base / a->base_page * sizeof(*entries));
    const size_t bytes = a->n_frames * sizeof(*entries);
    size_t done = 0;
    while (done < bytes) {
        const ssize_t got = pread(fd, (char *)entries + done, bytes - done, off + (off_t)done);
        if (got <= 0) {
            a->info.frames = LLC_ARENA_FRAMES_UNREADABLE;
            snprintf(a->info.frames_reason, sizeof(a->info.frames_reason),
                     "physical addresses unknown: reading /proc/self/pagemap failed (%s)",
                     got < 0 ? strerror(errno) : "end of file");
            rc = -ENODATA;
            goto out;
        }
        done += (size_t)got;
    }
    rc = classify(a, entries, a->n_frames);
    if (rc < 0)
        goto out;
    long changed = 0;
    for (size_t i = 0; i < a->n_frames; i++) {
        const uint64_t pfn = entries[i] & PM_PFN_MASK;
        changed += a->pfn[i] != 0 && a->pfn[i] != pfn;
        a->pfn[i] = pfn;
    }
    rc = changed;
out:
    if (fd >= 0)
        close(fd);
    free(entries);
    if (rc == -ENODATA)
        return llc_errf(err, errlen, -ENODATA, "%s", a->info.frames_reason);
    return rc;
}

void llc_arena_check_contiguity(struct llc_arena *a)
{
    const size_t n = sizeof(a->info.contiguity_note);
    a->info.contiguity_checked = false;
    a->info.contiguous = false;
    if (a->page_size == a->base_page) {
        snprintf(a->info.contiguity_note, n, "small pages: no contiguity beyond one page");
        return;
    }
    if (a->info.frames != LLC_ARENA_FRAMES_KNOWN) {
        snprintf(a->info.contiguity_note, n,
                 "hugepage contiguity not checked: frame numbers are unknown");
        return;
    }
    const size_t per_page = a->page_size / a->base_page;
    size_t bad = 0;
    for (size_t first = 0; first < a->n_frames; first += per_page) {
        bool ok = a->pfn[first] % per_page == 0;
        for (size_t k = 1; k < per_page && ok; k++)
            ok = a->pfn[first + k] == a->pfn[first] + k;
        bad += !ok;
    }
    a->info.contiguity_checked = true;
    a->info.contiguous = bad == 0;
    const size_t pages = a->n_frames / per_page;
    if (bad)
        snprintf(a->info.contiguity_note, n,
                 "%zu of %zu hugepages are not physically contiguous and aligned in pagemap", bad,
                 pages);
    else if (a->info.guest_physical)
        snprintf(a->info.contiguity_note, n,
                 "all %zu hugepages are contiguous in guest-physical memory; under a hypervisor "
                 "the host may still back them with small pages, which cannot be detected here, "
                 "so high set-index bits must be confirmed by timing",
                 pages);
    else
        snprintf(a->info.contiguity_note, n,
                 "all %zu hugepages are physically contiguous and aligned", pages);
}

long llc_arena_refresh_frames(struct llc_arena *a, char *err, size_t errlen)
{
    const long changed = llc_arena_read_frames(a, err, errlen);
    llc_arena_check_contiguity(a);
    return changed;
}
