/* PMU reuse sampler (docs/METHODS.md §6.3, an extension): the program runs
 * under ptrace, and
 *  - precise retired-load and retired-store events (PEBS, encoded by
 *    libpfm4) sample references with PERF_SAMPLE_ADDR, in one group read
 *    with every sample, so a sample carries its data address and the
 *    loads + stores count c_s. Each event gets its own i.i.d. geometric
 *    periods at the rate: two Bernoulli streams of the same rate sample
 *    every reference with the same chance;
 *  - every overflow raises a synchronous SIGTRAP in the program (perf
 *    sigtrap), which stops it under ptrace, so the watchpoint is armed
 *    before the program runs on;
 *  - watchpoints are perf breakpoint events (PERF_TYPE_BREAKPOINT, read or
 *    write, 8 bytes at the sampled address: what x86 debug registers
 *    cover) that also stop the program with SIGTRAP; the group's count at
 *    that stop includes the reusing access (data breakpoints trap after
 *    it), so c_r = count - 1.
 * The bookkeeping is pmu_engine.c. Before running anything the sampler
 * checks each of these on this process and refuses with what it measured.
 *
 * Known limits (documented in the README): a watchpoint covers the 8
 * sampled bytes, not the whole line (a reuse through another word of the
 * line is seen later or never), x86 has 4 debug registers so samples that
 * arrive while all are busy are dropped, and only the first thread is
 * followed. Page-protection watchpoints (the method's general mechanism)
 * would need code injected into the program. */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"
#include "util/identity.h"
#include "mrc/pmu.h"

/* glibc 2.36 has neither; values from the kernel's uapi siginfo. */
#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

#define MAX_SLOTS 8
#define RING_PAGES 64 /* data pages of the sample buffer (power of two) */
/* sig_data of the two samplers; watchpoints use their slot number. */
#define SIG_SAMPLER(k) (UINT64_C(0xFFFF0000) + (k))

/* Precise loads / stores, newest naming first (Intel PEBS). */
static const char *const load_events[] = {"MEM_INST_RETIRED:ALL_LOADS",
                                          "MEM_UOPS_RETIRED:ALL_LOADS"};
static const char *const store_events[] = {"MEM_INST_RETIRED:ALL_STORES",
                                           "MEM_UOPS_RETIRED:ALL_STORES"};

static long perf_open(struct perf_event_attr *attr, pid_t pid, int group)
{
    return syscall(SYS_perf_event_open, attr, pid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* The kernel's si_perf_data: the word after si_addr in the fault layout. */
static uint64_t si_perf_data(const siginfo_t *si)
{
    unsigned long v;
    memcpy(&v, (const char *)&si->si_addr + sizeof(void *), sizeof v);
    return v;
}

/* ---- What this machine allows, measured on this process ----------------- */

struct pmu_caps {
    struct perf_event_attr load, store; /* encodings that opened */
    const char *load_name, *store_name;
    unsigned slots; /* breakpoints open at once */
};

static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    const size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* One of names that encodes and opens as a precise sampling event with
 * data addresses; what each attempt gave goes to why. */
static const char *find_precise(const char *const *names, size_t n, struct perf_event_attr *out,
                                char *why, size_t whylen)
{
    for (size_t i = 0; i < n; i++) {
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        pfm_perf_encode_arg_t arg = {.attr = &attr, .size = sizeof arg};
        const int prc = pfm_get_os_event_encoding(names[i], PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (prc != PFM_SUCCESS) {
            append(why, whylen, "%s%s: %s", *why ? "; " : "", names[i], pfm_strerror(prc));
            continue;
        }
        attr.size = sizeof attr;
        attr.disabled = 1;
        attr.exclude_kernel = 1;
        attr.exclude_hv = 1;
        attr.sample_period = 10007;
        attr.sample_type = PERF_SAMPLE_ADDR;
        attr.precise_ip = 2;
        const long fd = perf_open(&attr, 0, -1);
        if (fd < 0) {
            append(why, whylen, "%s%s: perf_event_open: %s", *why ? "; " : "", names[i],
                   strerror(errno));
            continue;
        }
        close((int)fd);
        *out = attr;
        return names[i];
    }
    return NULL;
}

static struct perf_event_attr breakpoint_attr(uint64_t addr, uint64_t sig)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_BREAKPOINT;
    a.size = sizeof a;
    a.bp_type = HW_BREAKPOINT_RW;
    a.bp_addr = addr & ~UINT64_C(7);
    a.bp_len = HW_BREAKPOINT_LEN_8;
    a.sample_period = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.sig_data = sig;
    return a;
}

/* Breakpoints must open and count: some hypervisors accept them and never
 * fire them. Returns how many open at once, or 0 with why filled. */
static unsigned check_breakpoints(char *why, size_t whylen)
{
    static volatile uint64_t probe_word[MAX_SLOTS];
    int fds[MAX_SLOTS];
    unsigned n = 0;
    for (; n < MAX_SLOTS; n++) {
        struct perf_event_attr a = breakpoint_attr((uintptr_t)&probe_word[n], 0);
        const long fd = perf_open(&a, 0, -1);
        if (fd < 0) {
            if (n == 0)
                append(why, whylen, "%sperf breakpoint events do not open: %s", *why ? "; " : "",
                       strerror(errno));
            break;
        }
        fds[n] = (int)fd;
    }
    const unsigned touches = 8;
    for (unsigned k = 0; n && k < touches; k++)
        probe_word[0] += k;
    uint64_t count = 0;
    if (n && read(fds[0], &count, sizeof count) != (ssize_t)sizeof count)
        count = 0;
    for (unsigned k = 0; k < n; k++)
        close(fds[k]);
    /* Each += is a read and a write of the watched word. */
    if (n && count < touches) {
        append(why, whylen,
               "%sperf breakpoints open (%u at once) but do not fire: %llu of %u accesses to "
               "a watched word counted (debug registers not passed through to this VM?)",
               *why ? "; " : "", n, (unsigned long long)count, touches);
        return 0;
    }
    return n;
}

static int check_sigtrap(char *why, size_t whylen)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.sigtrap = 1;
    a.remove_on_exec = 1;
    const long fd = perf_open(&a, 0, -1);
    if (fd < 0) {
        append(why, whylen, "%sperf sigtrap events do not open (%s; Linux 5.13 or later needed)",
               *why ? "; " : "", strerror(errno));
        return -1;
    }
    close((int)fd);
    return 0;
}

static int probe_caps(struct pmu_caps *caps, char *err, size_t errlen)
{
    char why[1024] = "";
    memset(caps, 0, sizeof *caps);
    const int prc = pfm_initialize();
    if (prc != PFM_SUCCESS)
        append(why, sizeof why, "libpfm4 failed to initialise: %s", pfm_strerror(prc));
    else {
        char tried[512] = "";
        caps->load_name =
            find_precise(load_events, LLC_ARRAY_LEN(load_events), &caps->load, tried, sizeof tried);
        if (caps->load_name)
            caps->store_name = find_precise(store_events, LLC_ARRAY_LEN(store_events), &caps->store,
                                            tried, sizeof tried);
        pfm_terminate();
        if (!caps->load_name || !caps->store_name) {
            /* Tell "no PMU at all" from "no precise memory event". */
            struct perf_event_attr g;
            memset(&g, 0, sizeof g);
            g.type = PERF_TYPE_HARDWARE;
            g.size = sizeof g;
            g.config = PERF_COUNT_HW_INSTRUCTIONS;
            g.disabled = 1;
            const long fd = perf_open(&g, 0, -1);
            const int gerr = fd < 0 ? errno : 0;
            if (fd >= 0)
                close((int)fd);
            append(why, sizeof why,
                   "no precise load and store sampling events (%s); the generic instructions "
                   "event %s%s",
                   tried, gerr ? "does not open: " : "opens", gerr ? strerror(gerr) : "");
            if (gerr == ENOENT)
                append(why, sizeof why, " (no hardware PMU exposed, as in most VMs)");
        }
    }
    caps->slots = check_breakpoints(why, sizeof why);
    check_sigtrap(why, sizeof why);
    if (*why)
        return llc_errf(err, errlen, -EOPNOTSUPP, "pmu sampler: %s", why);
    return 0;
}

/* ---- The real event source ----------------------------------------------- */

struct real {
    pid_t pid;
    bool stopped;   /* the program waits in a ptrace stop */
    int sampler[2]; /* group leader (loads), stores */
    unsigned last_sampler;
    unsigned gaps_set; /* set_gap calls before the first sample: one per sampler */
    int slot_fd[MAX_SLOTS];
    unsigned n_slots;
    void *ring;
    size_t ring_len;
    struct llc_pmu_ev queue[64];
    size_t q_head, q_len;
    uint64_t lost;
    int exit_status;
};

static uint64_t group_sum(const uint64_t *vals, uint64_t nr)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < nr; i++)
        s += vals[2 * i]; /* {value, id} pairs */
    return s;
}

static int read_group(struct real *r, uint64_t *sum, char *err, size_t errlen)
{
    uint64_t buf[1 + 2 * 2];
    if (read(r->sampler[0], buf, sizeof buf) < (ssize_t)(sizeof(uint64_t) * 3))
        return llc_errf(err, errlen, -EIO, "pmu sampler: reading the loads+stores count: %s",
                        strerror(errno));
    *sum = group_sum(buf + 1, buf[0] < 2 ? buf[0] : 2);
    return 0;
}

/* Copies len bytes at offset off of the ring's data area (it wraps). */
static void ring_copy(const struct real *r, uint64_t off, void *dst, size_t len)
{
    const char *data = (const char *)r->ring + sysconf(_SC_PAGESIZE);
    const size_t size = r->ring_len - (size_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < len; i++)
        ((char *)dst)[i] = data[(off + i) & (size - 1)];
}

/* Moves the ring's sample records into the queue. */
static void drain(struct real *r)
{
    struct perf_event_mmap_page *meta = r->ring;
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    while (tail < head) {
        struct perf_event_header h;
        ring_copy(r, tail, &h, sizeof h);
        if (h.type == PERF_RECORD_SAMPLE && r->q_len < LLC_ARRAY_LEN(r->queue)) {
            /* IDENTIFIER, ADDR, READ {nr, {value, id}[nr]} */
            uint64_t rec[3 + 2 * 2] = {0};
            ring_copy(r, tail + sizeof h, rec,
                      h.size - sizeof h < sizeof rec ? h.size - sizeof h : sizeof rec);
            const uint64_t nr = rec[2] < 2 ? rec[2] : 2;
            struct llc_pmu_ev *ev = &r->queue[(r->q_head + r->q_len++) % LLC_ARRAY_LEN(r->queue)];
            *ev = (struct llc_pmu_ev){
                .kind = LLC_PMU_EV_SAMPLE, .addr = rec[1], .count = group_sum(rec + 3, nr)};
        } else if (h.type == PERF_RECORD_LOST || h.type == PERF_RECORD_SAMPLE) {
            r->lost++;
        }
        tail += h.size ? h.size : sizeof h;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int real_next(void *ctx, struct llc_pmu_ev *ev, char *err, size_t errlen)
{
    struct real *r = ctx;
    for (;;) {
        if (r->q_len) {
            *ev = r->queue[r->q_head];
            r->q_head = (r->q_head + 1) % LLC_ARRAY_LEN(r->queue);
            r->q_len--;
            return 1;
        }
        if (r->stopped) {
            /* Resumed without the stop's SIGTRAP: it was ours. */
            if (ptrace(PTRACE_CONT, r->pid, NULL, NULL) < 0)
                return llc_errf(err, errlen, -errno, "pmu sampler: ptrace continue: %s",
                                strerror(errno));
            r->stopped = false;
        }
        int status;
        if (waitpid(r->pid, &status, 0) < 0)
            return llc_errf(err, errlen, -errno, "pmu sampler: waitpid: %s", strerror(errno));
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            r->pid = 0;
            drain(r);
            if (r->q_len)
                continue;
            return 0;
        }
        if (!WIFSTOPPED(status))
            continue;
        r->stopped = true;
        const int sig = WSTOPSIG(status);
        siginfo_t si;
        if (sig == SIGTRAP && ptrace(PTRACE_GETSIGINFO, r->pid, NULL, &si) == 0 &&
            si.si_code == TRAP_PERF) {
            const uint64_t data = si_perf_data(&si);
            if (data < r->n_slots) {
                uint64_t count = 0;
                const int rc = read_group(r, &count, err, errlen);
                if (rc < 0)
                    return rc;
                /* Data breakpoints trap after the access: take it back out. */
                *ev = (struct llc_pmu_ev){.kind = LLC_PMU_EV_WATCH,
                                          .addr = (uintptr_t)si.si_addr,
                                          .slot = (unsigned)data,
                                          .count = count ? count - 1 : 0};
                return 1;
            }
            if (data == SIG_SAMPLER(0) || data == SIG_SAMPLER(1))
                r->last_sampler = (unsigned)(data - SIG_SAMPLER(0));
            drain(r);
            continue; /* the trap is consumed: resumed with no signal */
        }
        /* The program's own signals go through; the stop is resumed with it. */
        if (ptrace(PTRACE_CONT, r->pid, NULL, (void *)(intptr_t)sig) < 0)
            return llc_errf(err, errlen, -errno, "pmu sampler: ptrace continue: %s",
                            strerror(errno));
        r->stopped = false;
    }
}

static int real_arm(void *ctx, unsigned slot, uint64_t addr, char *err, size_t errlen)
{
    struct real *r = ctx;
    struct perf_event_attr a = breakpoint_attr(addr, slot);
    a.sigtrap = 1;
    a.remove_on_exec = 1;
    const long fd = perf_open(&a, r->pid, -1);
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "pmu sampler: watchpoint at %#llx: %s",
                        (unsigned long long)addr, strerror(errno));
    r->slot_fd[slot] = (int)fd;
    return 0;
}

static int real_disarm(void *ctx, unsigned slot, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct real *r = ctx;
    if (r->slot_fd[slot] >= 0)
        close(r->slot_fd[slot]);
    r->slot_fd[slot] = -1;
    return 0;
}

static int real_set_gap(void *ctx, uint64_t gap, char *err, size_t errlen)
{
    struct real *r = ctx;
    /* Before the first sample: one call per sampler; then the one that fired. */
    const unsigned k = r->gaps_set < 2 ? r->gaps_set++ : r->last_sampler;
    if (ioctl(r->sampler[k], PERF_EVENT_IOC_PERIOD, &gap) < 0)
        return llc_errf(err, errlen, -errno, "pmu sampler: setting the sampling period: %s",
                        strerror(errno));
    return 0;
}

static int open_samplers(struct real *r, const struct pmu_caps *caps, char *err, size_t errlen)
{
    const struct perf_event_attr *enc[2] = {&caps->load, &caps->store};
    for (int k = 0; k < 2; k++) {
        struct perf_event_attr a = *enc[k];
        a.size = sizeof a;
        a.disabled = k == 0; /* the group starts with its leader */
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.precise_ip = 2;
        a.sample_period = UINT64_C(1) << 40; /* set by set_gap before the start */
        a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ADDR | PERF_SAMPLE_READ;
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
        a.sigtrap = 1;
        a.remove_on_exec = 1;
        a.sig_data = SIG_SAMPLER(k);
        a.wakeup_events = 1;
        const long fd = perf_open(&a, r->pid, k ? r->sampler[0] : -1);
        if (fd < 0)
            return llc_errf(err, errlen, -errno, "pmu sampler: opening %s on the program: %s",
                            k ? caps->store_name : caps->load_name, strerror(errno));
        r->sampler[k] = (int)fd;
    }
    r->ring_len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
    r->ring = mmap(NULL, r->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->sampler[0], 0);
    if (r->ring == MAP_FAILED) {
        r->ring = NULL;
        return llc_errf(err, errlen, -errno, "pmu sampler: sample buffer: %s", strerror(errno));
    }
    if (ioctl(r->sampler[1], PERF_EVENT_IOC_SET_OUTPUT, r->sampler[0]) < 0)
        return llc_errf(err, errlen, -errno, "pmu sampler: sharing the sample buffer: %s",
                        strerror(errno));
    return 0;
}

/* Starts argv stopped at its first instruction under ptrace. */
static int start_traced(char *const *argv, pid_t *pid, char *err, size_t errlen)
{
    /* Under sudo the program runs as the invoking user, like every target. */
    struct llc_invoker inv;
    const int irc = llc_invoker_get(&inv, err, errlen);
    if (irc < 0)
        return irc;
    const pid_t child = fork();
    if (child < 0)
        return llc_errf(err, errlen, -errno, "pmu sampler: fork: %s", strerror(errno));
    if (child == 0) {
        if (llc_invoker_drop(&inv) < 0)
            _exit(127);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0)
        return llc_errf(err, errlen, -errno, "pmu sampler: waitpid: %s", strerror(errno));
    if (!WIFSTOPPED(status))
        return llc_errf(err, errlen, -ECHILD,
                        "pmu sampler: %s did not start under ptrace "
                        "(exit status %d)",
                        argv[0], WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(intptr_t)PTRACE_O_EXITKILL);
    *pid = child;
    return 0;
}

int llc_mrc_sample_pmu(char *const *argv, double rate, uint64_t seed, struct llc_statmodel_hist *h,
                       struct llc_mrc_pmu_stats *stats, char *err, size_t errlen)
{
    *stats = (struct llc_mrc_pmu_stats){0};
    struct pmu_caps caps;
    int rc = probe_caps(&caps, err, errlen);
    if (rc < 0)
        return rc;
    struct real r = {.sampler = {-1, -1},
                     .n_slots = caps.slots < MAX_SLOTS ? caps.slots : MAX_SLOTS};
    for (unsigned k = 0; k < MAX_SLOTS; k++)
        r.slot_fd[k] = -1;
    rc = start_traced(argv, &r.pid, err, errlen);
    if (rc < 0)
        return rc;
    r.stopped = true;
    rc = open_samplers(&r, &caps, err, errlen);
    if (rc < 0)
        goto out;
    const struct llc_pmu_source src = {.ctx = &r,
                                       .n_slots = r.n_slots,
                                       .n_streams = 2,
                                       .next = real_next,
                                       .arm = real_arm,
                                       .disarm = real_disarm,
                                       .set_gap = real_set_gap};
    /* The engine sets both samplers' first periods before the first next()
     * resumes the program; the group is enabled here, while it is stopped. */
    if (ioctl(r.sampler[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0) {
        rc = llc_errf(err, errlen, -errno, "pmu sampler: enabling the samplers: %s",
                      strerror(errno));
        goto out;
    }
    rc = llc_pmu_engine_run(&src, rate, seed, h, stats, err, errlen);
    stats->lost = r.lost;
    stats->exit_status = r.exit_status;
out:
    for (unsigned k = 0; k < MAX_SLOTS; k++)
        if (r.slot_fd[k] >= 0)
            close(r.slot_fd[k]);
    if (r.ring)
        munmap(r.ring, r.ring_len);
    for (int k = 0; k < 2; k++)
        if (r.sampler[k] >= 0)
            close(r.sampler[k]);
    if (r.pid > 0) {
        kill(r.pid, SIGKILL);
        waitpid(r.pid, NULL, 0);
    }
    return rc;
}
