/* The tick source: the user instruction pointer at the kernel's own timer
 * interrupt. A running task takes HZ timer interrupts a second whatever
 * perf does; a tracepoint event in that interrupt, with the user registers
 * in its sample, reads where the task was without a timer of its own. The
 * cpu-clock source arms an hrtimer per sample, and in a VM every timer
 * interrupt is a trip through the hypervisor (about 50 us of the target's
 * CPU time on our guests, README "Phases"), so the tick source is what
 * makes live phase detection cheap where there is no PMU. */
#include "ipsampling/sampling_internal.h"

#include "llcprobe/common.h"
#include "util/clock.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#define USER_IP_REG PERF_REG_X86_IP
#elif defined(__aarch64__)
#define USER_IP_REG PERF_REG_ARM64_PC
#endif

/* One interrupt per tick (x86), else every hrtimer expiry in the task,
 * which on a busy task is the tick's. */
static const char *const tracepoints[] = {"irq_vectors/local_timer_entry",
                                          "timer/hrtimer_expire_entry"};
static const char *const tracefs_dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/* 0 if path is a directory, else why not (an errno value). */
static int dir_error(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

static int read_id(const char *dir, const char *tp, uint64_t *id)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/events/%s/id", dir, tp);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    unsigned long long v;
    const int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    if (!ok)
        return -EPROTO;
    *id = v;
    return 0;
}

/* The tracefs root with an events directory; mounts tracefs at the first
 * location when none is mounted and this process may (perf does the same);
 * *mounted says so, and the caller unmounts it once the ids are read (a
 * perf event needs only the id), so no exit path leaves the mount. */
static const char *find_tracefs(bool *mounted, char *note, size_t notelen, char *why, size_t whylen)
{
    *mounted = false;
    for (size_t i = 0; i < LLC_ARRAY_LEN(tracefs_dirs); i++) {
        char ev[128];
        snprintf(ev, sizeof(ev), "%s/events", tracefs_dirs[i]);
        const int e = dir_error(ev);
        if (e == 0)
            return tracefs_dirs[i];
        /* Mounted, but only root may look inside (tracefs is mode 700). */
        if (e == EACCES) {
            snprintf(why, whylen,
                     "%s is not readable by this user (%s): tracepoints need root "
                     "or CAP_PERFMON",
                     tracefs_dirs[i], strerror(EACCES));
            return NULL;
        }
    }
    if (dir_error(tracefs_dirs[0]) != 0) {
        snprintf(why, whylen, "the kernel has no tracefs (%s missing)", tracefs_dirs[0]);
        return NULL;
    }
    if (mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) < 0) {
        snprintf(why, whylen, "tracefs is not mounted and mounting it at %s failed: %s",
                 tracefs_dirs[0], strerror(errno));
        return NULL;
    }
    *mounted = true;
    snprintf(note, notelen,
             "tracefs was not mounted: mounted it at %s to read the tracepoint "
             "id, and unmounted it",
             tracefs_dirs[0]);
    return tracefs_dirs[0];
}

#ifdef USER_IP_REG
static int tick_from_tracefs(const char *dir, struct perf_event_attr *attr, char *event,
                             size_t eventlen, char *why, size_t whylen);
#endif

int llc_sampling_tick_attr(struct perf_event_attr *attr, char *event, size_t eventlen, char *note,
                           size_t notelen, char *why, size_t whylen)
{
#ifndef USER_IP_REG
    (void)attr, (void)event, (void)eventlen, (void)note, (void)notelen;
    snprintf(why, whylen, "no user instruction-pointer register known for this architecture");
    return -EOPNOTSUPP;
#else
    bool mounted;
    const char *dir = find_tracefs(&mounted, note, notelen, why, whylen);
    if (!dir)
        return -ENOENT;
    const int rc = tick_from_tracefs(dir, attr, event, eventlen, why, whylen);
    if (mounted && umount2(dir, MNT_DETACH) != 0 && rc == 0) {
        const int e = errno;
        snprintf(why, whylen, "unmounting the tracefs mounted at %s failed: %s", dir, strerror(e));
        return -e;
    }
    return rc;
#endif
}

#ifdef USER_IP_REG
static int tick_from_tracefs(const char *dir, struct perf_event_attr *attr, char *event,
                             size_t eventlen, char *why, size_t whylen)
{
    for (size_t i = 0; i < LLC_ARRAY_LEN(tracepoints); i++) {
        uint64_t id = 0;
        const int rc = read_id(dir, tracepoints[i], &id);
        if (rc == -ENOENT)
            continue;
        if (rc < 0) {
            snprintf(why, whylen, "reading %s/events/%s/id: %s", dir, tracepoints[i],
                     strerror(-rc));
            return rc;
        }
        attr->type = PERF_TYPE_TRACEPOINT;
        attr->config = id;
        /* The tracepoint fires in the kernel; the user registers say where
         * the task was. exclude_kernel would drop every sample. */
        attr->exclude_kernel = 0;
        attr->sample_type |= PERF_SAMPLE_REGS_USER;
        /* With PERF_SAMPLE_PERIOD a software event that is not a timer
         * samples every hit, whatever the period (perf_swevent_event: the
         * weighted-sample path): the dynamic rate would be lost. */
        attr->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
        attr->sample_regs_user = 1ULL << USER_IP_REG;
        snprintf(event, eventlen, "%s", tracepoints[i]);
        *strchr(event, '/') = ':';
        return 0;
    }
    snprintf(why, whylen,
             "%s has neither irq_vectors:local_timer_entry nor "
             "timer:hrtimer_expire_entry",
             dir);
    return -ENOENT;
}
#endif

/* Kernel tick rates (CONFIG_HZ choices). */
static const unsigned kernel_hz[] = {100, 250, 300, 1000};

unsigned llc_sampling_tick_snap(double measured)
{
    unsigned best = 0;
    double best_rel = 0.2;
    for (size_t i = 0; i < LLC_ARRAY_LEN(kernel_hz); i++) {
        const double rel = fabs(measured - kernel_hz[i]) / kernel_hz[i];
        if (rel < best_rel) {
            best_rel = rel;
            best = kernel_hz[i];
        }
    }
    return best ? best : (unsigned)(measured + 0.5);
}

int llc_sampling_tick_selftest(const struct perf_event_attr *proto, double *measured, unsigned *hz,
                               char *why, size_t whylen)
{
    /* Counts the tracepoint on this thread while it spins: the tick must
     * reach a busy task, at a rate the window length can be built on. */
    struct perf_event_attr a = *proto;
    a.sample_period = 0;
    a.sample_type = 0;
    a.sample_regs_user = 0;
    a.disabled = 0;
    a.inherit = 0;
    a.enable_on_exec = 0;
    a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = a.sample_id_all = 0;
    const int fd = llc_sampling_perf_open(&a, 0, -1);
    if (fd < 0) {
        llc_sampling_explain_errno(fd, why, whylen);
        return fd;
    }
    /* Until 8 interrupts have come (32 ms at HZ 250) or 200 ms of CPU. */
    const double c0 = llc_thread_cpu_now(), w0 = llc_now();
    double cpu = 0;
    uint64_t count = 0;
    volatile uint64_t sink = 0;
    bool ok = true;
    while (ok && count < 8 && (cpu = llc_thread_cpu_now() - c0) < 0.2 && llc_now() - w0 < 2.0) {
        for (int i = 0; i < 100000; i++)
            sink += (uint64_t)i;
        ok = read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count);
    }
    cpu = llc_thread_cpu_now() - c0;
    const int e = errno;
    close(fd);
    if (!ok) {
        snprintf(why, whylen, "self-test: reading the tick count: %s", strerror(e));
        return -e;
    }
    *measured = cpu > 0 ? (double)count / cpu : 0;
    if (count < 3 || *measured < 20) {
        snprintf(why, whylen,
                 "self-test: %llu timer interrupts in %.0f ms of busy CPU time "
                 "(%.0f Hz): the kernel does not tick on a busy CPU here (nohz_full?)",
                 (unsigned long long)count, cpu * 1e3, *measured);
        return -EOPNOTSUPP;
    }
    /* The coarse clocks advance once a tick: their resolution is the
     * kernel's tick length. Interrupts of other timers that expire while a
     * task runs come on top, so the measured rate is at least HZ. */
    struct timespec res;
    const unsigned kernel = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 &&
                                    res.tv_nsec >= 1000000 && res.tv_nsec <= 50000000
                                ? (unsigned)((1000000000L + res.tv_nsec / 2) / res.tv_nsec)
                                : 0;
    if (kernel && *measured < 0.5 * kernel) {
        snprintf(why, whylen,
                 "self-test: %.0f timer interrupts per busy CPU second against "
                 "the kernel's %u Hz tick: the tick does not reach a busy task here "
                 "(nohz_full?)",
                 *measured, kernel);
        return -EOPNOTSUPP;
    }
    *hz = kernel ? kernel : llc_sampling_tick_snap(*measured);
    return 0;
}
