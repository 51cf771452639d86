/* Whether /proc/self/pagemap gives real frame numbers: the probe needs them
 * to know which cache-index bits it controls. */
#include "llcprobe/sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void llc_pagemap_check(bool hypervisor, struct llc_pagemap_check *out)
{
    memset(out, 0, sizeof(*out));
    out->tried = true;
    const size_t n = sizeof(out->reason);
    const long page = sysconf(_SC_PAGESIZE);
    int fd = -1;
    char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(out->reason, n, "cannot map a test page: %s", strerror(errno));
        return;
    }
    *(volatile char *)p = 1; /* an untouched page has no frame */
    fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(out->reason, n, "/proc/self/pagemap: %s", strerror(errno));
        goto out;
    }
    uint64_t entry = 0;
    const off_t off = (off_t)((uintptr_t)p / (uintptr_t)page * sizeof(entry));
    const ssize_t got = pread(fd, &entry, sizeof(entry), off);
    if (got != (ssize_t)sizeof(entry)) {
        snprintf(out->reason, n, "/proc/self/pagemap: %s",
                 got < 0 ? strerror(errno) : "short read");
        goto out;
    }
    out->readable = true;
    const bool present = entry >> 63 & 1;
    out->sample_pfn = entry & ((UINT64_C(1) << 55) - 1);
    if (!present) {
        snprintf(out->reason, n, "the touched test page is not reported present (entry 0x%016llx)",
                 (unsigned long long)entry);
    } else if (out->sample_pfn == 0) {
        snprintf(
            out->reason, n,
            "frame numbers read as 0: the kernel hides them from processes without CAP_SYS_ADMIN");
    } else {
        out->frames = true;
        out->guest_physical = hypervisor;
        if (hypervisor)
            snprintf(
                out->reason, n,
                "frame numbers present but guest-physical (running under a hypervisor): the host may "
                "back them with 4 KiB pages, so set-index bits above bit 11 must be verified by timing");
        else
            snprintf(out->reason, n, "real physical frame numbers (no hypervisor)");
    }
out:
    if (fd >= 0)
        close(fd);
    munmap(p, (size_t)page);
}
