/* Hardware prefetchers during probing (docs/METHODS.md §1.2): on Intel, MSR 0x1A4
 * bits 0-3 switch off the L2 streamer, the L2 adjacent-line prefetcher
 * (which would fill the buddy set k xor 1), the DCU and the DCU IP
 * prefetchers. Written through /dev/cpu/N/msr, and put back as found. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int llc_map_prefetch_decide(const struct llc_map_prefetch_facts *f, char *why, size_t len)
{
    if (!f->intel) {
        snprintf(why, len,
                 "left on: not an Intel CPU (%s); MSR 0x1A4 is Intel's prefetcher control",
                 f->vendor && *f->vendor ? f->vendor : "unknown vendor");
        return 0;
    }
    if (f->hypervisor) {
        /* A guest's MSR writes are filtered or emulated by the host: a
         * write that "succeeds" need not reach the hardware. */
        snprintf(why, len,
                 "left on: running under a hypervisor, which does not pass MSR 0x1A4 through");
        return 0;
    }
    if (!f->msr_device) {
        snprintf(why, len, "left on: no /dev/cpu/N/msr (load the msr module: modprobe msr)");
        return 0;
    }
    if (!f->msr_writable) {
        snprintf(why, len,
                 "left on: /dev/cpu/N/msr is not writable (needs root and CAP_SYS_RAWIO)");
        return 0;
    }
    snprintf(why, len, "off during probing (MSR 0x1A4 bits 0-3), restored at exit");
    return 1;
}

void llc_map_prefetch_facts_probe(bool intel, const char *vendor, bool hypervisor, int cpu,
                                  const char *dev_fmt, struct llc_map_prefetch_facts *f)
{
    char path[64];
    snprintf(path, sizeof(path), dev_fmt ? dev_fmt : LLC_MAP_MSR_DEV, cpu < 0 ? 0 : cpu);
    f->intel = intel;
    f->vendor = vendor;
    f->hypervisor = hypervisor;
    f->msr_device = access(path, F_OK) == 0;
    f->msr_writable = f->msr_device && access(path, R_OK | W_OK) == 0;
}

static int msr_rw(const char *fmt, int cpu, bool write, uint64_t *v, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), fmt, cpu);
    const int fd = open(path, write ? O_RDWR : O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    const ssize_t n = write ? pwrite(fd, v, sizeof(*v), LLC_MAP_MSR_PREFETCH)
                            : pread(fd, v, sizeof(*v), LLC_MAP_MSR_PREFETCH);
    const int e = errno;
    close(fd);
    if (n != (ssize_t)sizeof(*v))
        return llc_errf(err, errlen, n < 0 ? -e : -EIO, "%s: %s MSR 0x1a4: %s", path,
                        write ? "writing" : "reading", n < 0 ? strerror(e) : "short transfer");
    return 0;
}

int llc_map_prefetch_disable(const char *dev_fmt, const int *cpus, unsigned n,
                             struct llc_map_prefetch_saved *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->dev_fmt, sizeof(s->dev_fmt), "%s", dev_fmt ? dev_fmt : LLC_MAP_MSR_DEV);
    for (unsigned i = 0; i < n && i < LLC_MAP_PREFETCH_MAX_CPUS; i++) {
        uint64_t v;
        int rc = msr_rw(s->dev_fmt, cpus[i], false, &v, err, errlen);
        if (rc < 0)
            goto undo;
        /* Saved before the write: a failed write still gets restored. */
        s->cpu[s->n] = cpus[i];
        s->value[s->n++] = v;
        uint64_t off = v | LLC_MAP_PREFETCH_BITS;
        rc = msr_rw(s->dev_fmt, cpus[i], true, &off, err, errlen);
        if (rc < 0)
            goto undo;
        continue;
    undo:
        llc_map_prefetch_restore(s);
        return rc;
    }
    return 0;
}

void llc_map_prefetch_restore(struct llc_map_prefetch_saved *s)
{
    char err[LLC_ERRLEN];
    for (unsigned i = 0; i < s->n; i++)
        msr_rw(s->dev_fmt, s->cpu[i], true, &s->value[i], err, sizeof(err));
    s->n = 0;
}
