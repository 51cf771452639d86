/* Opening the sampler on a target (source and window unit in order of
 * preference), the window loop, and the sample period. */
#include "ipsampling/sampling_internal.h"

#include "llcprobe/common.h"
#include "llcprobe/target.h"
#include "util/cli.h"
#include "util/stopsig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_CPUS 1024
#define HW_FLOOR_EVENTS 1000ULL
#define MAX_LEVELS 7 /* multipliers 1, 2, ..., 64 */

/* One CPU's events: fds[l] samples at multiplier 2^l; only fds[0] has a
 * ring and side-band records, the others write into it (SET_OUTPUT). */
struct ring {
    int fds[MAX_LEVELS];
    void *map;
    size_t maplen;
};

struct llc_sampling {
    struct llc_sampling_config cfg;
    struct llc_sampling_choice choice;
    struct ring *rings;
    unsigned nrings;
    int fd_instr; /* instructions counter, -1 if refused */
    int fd_clock; /* task-clock counter */
    long page;
    uint64_t base_period, period, floor;
    unsigned mult;
    bool adapt; /* the source counts something other than the window unit */
    /* The dynamic rate switches between inherited events, one per
     * multiplier, by enabling one and disabling the others: ENABLE and
     * DISABLE reach every inherited copy in every thread and child, while
     * PERF_EVENT_IOC_PERIOD reaches only the task the event was opened on,
     * so one event whose period changes would leave existing children at
     * their old rate (and its full overhead). */
    unsigned levels, level;
    uint64_t kernel_period[MAX_LEVELS];
    struct llc_sampling_sink sink;
    struct llc_sampling_maps maps;
    double t0, t_last;
    uint64_t last_unit, last_ns, last_instr, index;
    double unit_per_ms; /* how fast the window unit advances, for the sleep */
    bool ended;
};

const char *llc_sampling_source_name(enum llc_sampling_source src)
{
    switch (src) {
    case LLC_SAMPLING_PEBS_BRANCHES:
        return "pebs-branches";
    case LLC_SAMPLING_HW_IP:
        return "hw-ip";
    case LLC_SAMPLING_TICK:
        return "tick";
    case LLC_SAMPLING_CPU_CLOCK:
        return "cpu-clock";
    default:
        return "?";
    }
}

const char *llc_sampling_unit_name(enum llc_sampling_unit unit)
{
    return unit == LLC_SAMPLING_INSTRUCTIONS ? "instructions" : "cpu-ns";
}

void llc_sampling_config_default(struct llc_sampling_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->best_source = LLC_SAMPLING_PEBS_BRANCHES;
    cfg->window_instr = LLC_SAMPLING_DEFAULT_WINDOW_INSTR;
    cfg->window_ns = 0; /* by source: see llc_sampling_config */
    cfg->max_rate_hz = LLC_SAMPLING_DEFAULT_MAX_RATE_HZ;
    cfg->ring_pages = 64;
    cfg->max_multiplier = 8;
    cfg->enable_on_exec = true;
}

uint64_t llc_sampling_adapt_period(uint64_t prev, uint64_t events, unsigned samples, uint64_t floor)
{
    if (samples == 0)
        samples = 1;
    uint64_t p = events / samples;
    /* At most 2x per window, so one odd window cannot swing the rate. */
    if (prev && p > 2 * prev)
        p = 2 * prev;
    if (prev && p < prev / 2)
        p = prev / 2;
    return p < floor ? floor : p;
}

/* CPUs listed in /sys/devices/system/cpu/online ("0-3,6"). */
static unsigned online_cpus(int *cpus, unsigned max)
{
    unsigned n = 0;
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    if (f) {
        int a, b;
        char sep;
        while (n < max && fscanf(f, "%d", &a) == 1) {
            b = a;
            if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
                if (fscanf(f, "%d", &b) != 1)
                    break;
                if (fscanf(f, "%c", &sep) != 1)
                    sep = '\n';
            }
            for (int c = a; c <= b && n < max; c++)
                cpus[n++] = c;
            if (sep != ',')
                break;
        }
        fclose(f);
    }
    if (n == 0) {
        const long conf = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < conf && n < max; c++)
            cpus[n++] = (int)c;
    }
    return n;
}

static void counter_attr(struct perf_event_attr *a, uint32_t type, uint64_t config, bool on_exec)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = type;
    a->config = config;
    a->inherit = 1;
    a->disabled = 1;
    a->enable_on_exec = on_exec;
    a->exclude_hv = 1;
}

static int read_counter(int fd, uint64_t *v)
{
    return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -errno;
}

/* Window unit: instructions if the hardware counts them, else CPU time. */
static int open_counters(struct llc_sampling *s, pid_t pid, char *err, size_t errlen)
{
    struct llc_sampling_choice *c = &s->choice;
    struct perf_event_attr a;
    c->unit = LLC_SAMPLING_CPU_NS;
    if (s->cfg.force_cpu_time) {
        snprintf(c->unit_refused, sizeof(c->unit_refused),
                 "not requested (CPU-time windows forced)");
    } else {
        counter_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, s->cfg.enable_on_exec);
        a.exclude_kernel = 1;
        const int fd = llc_sampling_perf_open(&a, pid, -1);
        if (fd >= 0) {
            s->fd_instr = fd;
            c->unit = LLC_SAMPLING_INSTRUCTIONS;
        } else {
            llc_sampling_explain_errno(fd, c->unit_refused, sizeof(c->unit_refused));
        }
    }
    /* CPU time of all threads, kernel time included: the target's own
     * clock, which only advances while it runs. */
    counter_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, s->cfg.enable_on_exec);
    int fd = llc_sampling_perf_open(&a, pid, -1);
    if (fd == -EACCES || fd == -EPERM) {
        /* perf_event_paranoid 2 lets an unprivileged user count user mode
         * only: windows then advance with the target's user time. */
        a.exclude_kernel = 1;
        fd = llc_sampling_perf_open(&a, pid, -1);
        if (fd >= 0)
            snprintf(c->unit_note, sizeof(c->unit_note),
                     "user-mode CPU time only: counting "
                     "the target's kernel time is not permitted here");
    }
    if (fd < 0) {
        char why[LLC_SAMPLING_NOTE_LEN];
        llc_sampling_explain_errno(fd, why, sizeof(why));
        return llc_errf(err, errlen, fd, "task-clock counter on pid %d: %s", (int)pid, why);
    }
    s->fd_clock = fd;
    return 0;
}

/* Window length of a source in the chosen unit. A CPU-time window with
 * the cpu-clock source is as long as its samples take at the highest rate
 * allowed: every cpu-clock sample is a timer interrupt (tens of
 * microseconds in a VM, where it costs a VM exit), so the sample budget per
 * second, not the window, sets the overhead; the method's counts are per
 * window, so the window stretches instead of the count shrinking. */
static uint64_t window_length(const struct llc_sampling *s)
{
    const struct llc_sampling_choice *c = &s->choice;
    if (c->unit == LLC_SAMPLING_INSTRUCTIONS)
        return s->cfg.window_instr;
    if (s->cfg.window_ns)
        return s->cfg.window_ns;
    if (c->source == LLC_SAMPLING_CPU_CLOCK)
        return (uint64_t)c->samples_per_window * (1000000000ULL / s->cfg.max_rate_hz);
    /* The tick's samples are nearly free, but the method's count per window
     * still decides the classification: as long as they take at HZ. */
    if (c->source == LLC_SAMPLING_TICK)
        return (uint64_t)c->samples_per_window * (1000000000ULL / c->tick_hz);
    return LLC_SAMPLING_DEFAULT_WINDOW_NS;
}

/* First period of a source, in its own events, and whether it must adapt. */
static void initial_period(struct llc_sampling *s)
{
    struct llc_sampling_choice *c = &s->choice;
    const unsigned n = c->samples_per_window;
    const bool by_instr = c->unit == LLC_SAMPLING_INSTRUCTIONS;
    c->window = window_length(s);
    switch (c->source) {
    case LLC_SAMPLING_CPU_CLOCK:
        /* Never faster than the rate budget, whatever window was asked for:
         * a short window then gets fewer samples, not more overhead. */
        s->floor = 1000000000ULL / s->cfg.max_rate_hz;
        s->adapt = by_instr;
        /* Assumes one instruction per ns until a window says otherwise. */
        s->base_period = c->window / n;
        break;
    case LLC_SAMPLING_HW_IP:
        s->floor = HW_FLOOR_EVENTS;
        s->adapt = !by_instr;
        s->base_period = c->window / n;
        break;
    case LLC_SAMPLING_TICK: {
        /* Periods count timer interrupts, every one at most. The samples
         * carry no period (tick.c), so the period cannot adapt per task:
         * with instruction windows (only if asked for: a counter means a
         * PMU, and hw-ip ranks first) every tick is sampled. */
        const uint64_t tick_ns = 1000000000ULL / c->tick_hz;
        s->floor = 1;
        s->adapt = false;
        s->base_period = by_instr ? 1 : c->window / n / tick_ns;
        break;
    }
    default:
        /* Branches: about one in six instructions until measured. */
        s->floor = HW_FLOOR_EVENTS;
        s->adapt = true;
        s->base_period = c->window / 6 / n;
        break;
    }
    if (s->base_period < s->floor)
        s->base_period = s->floor;
    s->period = s->base_period;
    s->mult = 1;
}

static int open_rings(struct llc_sampling *s, pid_t pid, const struct perf_event_attr *proto,
                      const int *cpus, unsigned ncpus, char *err, size_t errlen)
{
    s->rings = calloc(ncpus, sizeof(*s->rings));
    if (!s->rings)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const size_t maplen = (size_t)(s->cfg.ring_pages + 1) * (size_t)s->page;
    for (unsigned i = 0; i < ncpus; i++) {
        struct ring *r = &s->rings[s->nrings++];
        *r = (struct ring){.map = MAP_FAILED};
        for (unsigned l = 0; l < MAX_LEVELS; l++)
            r->fds[l] = -1;
        for (unsigned l = 0; l < s->levels; l++) {
            struct perf_event_attr a = *proto;
            if (l > 0) {
                /* Lower rates: samples only; the mappings, forks and exits
                 * come once, from level 0, which is never closed. */
                a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 0;
                a.enable_on_exec = 0;
                a.sample_period = s->base_period << l;
            }
            const int fd = llc_sampling_perf_open(&a, pid, cpus[i]);
            if (fd < 0) {
                char why[LLC_SAMPLING_NOTE_LEN];
                llc_sampling_explain_errno(fd, why, sizeof(why));
                return llc_errf(err, errlen, fd, "%s (rate 1/%u) on CPU %d: %s", s->choice.event,
                                1u << l, cpus[i], why);
            }
            r->fds[l] = fd;
            if (l > 0 && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fds[0]) < 0) {
                const int e = errno;
                return llc_errf(err, errlen, -e,
                                "%s (rate 1/%u) on CPU %d: sharing the ring "
                                "buffer: %s",
                                s->choice.event, 1u << l, cpus[i], strerror(e));
            }
            if (l > 0)
                continue;
            void *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) {
                const int e = errno;
                return llc_errf(err, errlen, -e, "ring buffer of %s on CPU %d (%zu KiB): %s%s",
                                s->choice.event, cpus[i], maplen / 1024, strerror(e),
                                e == EPERM ? " (locked-memory limit: perf_event_mlock_kb)" : "");
            }
            r->map = m;
            r->maplen = maplen;
        }
    }
    for (unsigned l = 0; l < s->levels; l++)
        s->kernel_period[l] = s->base_period << l;
    s->level = 0;
    s->choice.ncpus = ncpus;
    return 0;
}

/* Tries each source from the best allowed down; the first whose event opens
 * on the first CPU is used on all of them. */
static int choose_source(struct llc_sampling *s, pid_t pid, const int *cpus, unsigned ncpus,
                         char *err, size_t errlen)
{
    struct llc_sampling_choice *c = &s->choice;
    for (int src = 0; src < LLC_SAMPLING_SOURCES; src++) {
        char *why = c->refused[src];
        if (src < (int)s->cfg.best_source) {
            snprintf(why, LLC_SAMPLING_NOTE_LEN, "not requested");
            continue;
        }
        struct perf_event_attr a;
        int rc = llc_sampling_source_attr((enum llc_sampling_source)src, &a, c->event,
                                          sizeof(c->event), c->tick_note, sizeof(c->tick_note), why,
                                          LLC_SAMPLING_NOTE_LEN);
        if (rc < 0)
            continue;
        if (src == LLC_SAMPLING_TICK &&
            llc_sampling_tick_selftest(&a, &c->tick_hz_measured, &c->tick_hz, why,
                                       LLC_SAMPLING_NOTE_LEN) < 0)
            continue;
        c->source = (enum llc_sampling_source)src;
        c->samples_per_window = s->cfg.samples_per_window
                                    ? s->cfg.samples_per_window
                                    : (src == LLC_SAMPLING_PEBS_BRANCHES ? 200 : 400);
        initial_period(s);
        a.sample_period = s->period;
        a.enable_on_exec = s->cfg.enable_on_exec;
        /* PEBS: the least skid the CPU offers. */
        const unsigned precise_from = src == LLC_SAMPLING_PEBS_BRANCHES ? 2 : 0;
        for (unsigned pr = precise_from;; pr--) {
            a.precise_ip = pr;
            rc = llc_sampling_perf_open(&a, pid, cpus[0]);
            if (rc >= 0 || pr <= (src == LLC_SAMPLING_PEBS_BRANCHES ? 1u : 0u))
                break;
        }
        if (rc < 0) {
            llc_sampling_explain_errno(rc, why, LLC_SAMPLING_NOTE_LEN);
            continue;
        }
        close(rc);
        c->precise_ip = a.precise_ip;
        why[0] = '\0';
        s->sink.ip_from_user_regs = (a.sample_type & PERF_SAMPLE_REGS_USER) != 0;
        s->sink.no_period = (a.sample_type & PERF_SAMPLE_PERIOD) == 0;
        return open_rings(s, pid, &a, cpus, ncpus, err, errlen);
    }
    char all[LLC_SAMPLING_SOURCES * (LLC_SAMPLING_NOTE_LEN + 24)];
    size_t at = 0;
    for (int src = 0; src < LLC_SAMPLING_SOURCES; src++)
        at += (size_t)snprintf(all + at, sizeof(all) - at, "%s%s: %s", src ? "; " : "",
                               llc_sampling_source_name((enum llc_sampling_source)src),
                               c->refused[src]);
    return llc_errf(err, errlen, -ENODEV, "no sample source opens on pid %d: %s", (int)pid, all);
}

int llc_sampling_open(pid_t pid, const struct llc_sampling_config *cfg, struct llc_sampling **out,
                      char *err, size_t errlen)
{
    *out = NULL;
    const unsigned mm = cfg->max_multiplier;
    if (cfg->best_source >= LLC_SAMPLING_SOURCES || cfg->window_instr == 0 ||
        cfg->max_rate_hz == 0 || cfg->max_rate_hz > 100000 || cfg->ring_pages == 0 ||
        (cfg->ring_pages & (cfg->ring_pages - 1)) != 0 || mm == 0 || (mm & (mm - 1)) != 0 ||
        mm > (1u << (MAX_LEVELS - 1)))
        return llc_errf(err, errlen, -EINVAL,
                        "sampling: bad configuration (source %d, window "
                        "%llu instructions, rate cap %u Hz in 1..100000, %u ring pages: a "
                        "power of two, largest multiplier %u: a power of two in 1..%u)",
                        (int)cfg->best_source, (unsigned long long)cfg->window_instr,
                        cfg->max_rate_hz, cfg->ring_pages, mm, 1u << (MAX_LEVELS - 1));
    struct llc_sampling *s = calloc(1, sizeof(*s));
    if (!s)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    s->cfg = *cfg;
    s->levels = (unsigned)__builtin_ctz(cfg->max_multiplier) + 1;
    s->fd_instr = s->fd_clock = -1;
    s->page = sysconf(_SC_PAGESIZE);
    s->unit_per_ms = 1e6; /* 1 ns/ms of CPU time per ms, or 1 instruction per ns */
    int cpus[MAX_CPUS];
    const unsigned ncpus = online_cpus(cpus, MAX_CPUS);
    int rc = open_counters(s, pid, err, errlen);
    if (rc == 0)
        rc = choose_source(s, pid, cpus, ncpus, err, errlen);
    if (rc == 0 && !cfg->enable_on_exec) {
        for (unsigned i = 0; i < s->nrings; i++)
            ioctl(s->rings[i].fds[0], PERF_EVENT_IOC_ENABLE, 0);
        if (s->fd_instr >= 0)
            ioctl(s->fd_instr, PERF_EVENT_IOC_ENABLE, 0);
        ioctl(s->fd_clock, PERF_EVENT_IOC_ENABLE, 0);
    }
    if (rc < 0) {
        llc_sampling_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void llc_sampling_close(struct llc_sampling *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->nrings; i++) {
        if (s->rings[i].map != MAP_FAILED)
            munmap(s->rings[i].map, s->rings[i].maplen);
        /* The redirected events first: they write into level 0's ring. */
        for (unsigned l = MAX_LEVELS; l-- > 0;)
            if (s->rings[i].fds[l] >= 0)
                close(s->rings[i].fds[l]);
    }
    free(s->rings);
    if (s->fd_instr >= 0)
        close(s->fd_instr);
    if (s->fd_clock >= 0)
        close(s->fd_clock);
    llc_sampling_sink_free(&s->sink);
    llc_sampling_maps_free(&s->maps);
    free(s);
}

const struct llc_sampling_choice *llc_sampling_choice(const struct llc_sampling *s)
{
    return &s->choice;
}

void llc_sampling_start(struct llc_sampling *s)
{
    s->t0 = llc_now();
    s->t_last = 0;
}

/* An adapting source's period moves with the window; the change reaches the
 * main task (and tasks forked later); older tasks keep their period, which
 * thin() evens out when it is shorter. */
static int set_kernel_period(struct llc_sampling *s, unsigned level, uint64_t period, char *err,
                             size_t errlen)
{
    if (period == s->kernel_period[level])
        return 0;
    for (unsigned i = 0; i < s->nrings; i++) {
        uint64_t p = period;
        if (ioctl(s->rings[i].fds[level], PERF_EVENT_IOC_PERIOD, &p) < 0) {
            const int e = errno;
            return llc_errf(err, errlen, -e, "setting the sample period to %llu: %s",
                            (unsigned long long)period, strerror(e));
        }
    }
    s->kernel_period[level] = period;
    return 0;
}

static int switch_level(struct llc_sampling *s, unsigned level, char *err, size_t errlen)
{
    if (level == s->level)
        return 0;
    /* Off first: a short gap loses a sample or two, an overlap would add
     * samples at two rates. */
    for (unsigned i = 0; i < s->nrings; i++)
        if (ioctl(s->rings[i].fds[s->level], PERF_EVENT_IOC_DISABLE, 0) < 0)
            return llc_errf(err, errlen, -errno, "disabling the rate-1/%u event: %s",
                            1u << s->level, strerror(errno));
    for (unsigned i = 0; i < s->nrings; i++)
        if (ioctl(s->rings[i].fds[level], PERF_EVENT_IOC_ENABLE, 0) < 0)
            return llc_errf(err, errlen, -errno, "enabling the rate-1/%u event: %s", 1u << level,
                            strerror(errno));
    s->level = level;
    return 0;
}

int llc_sampling_set_multiplier(struct llc_sampling *s, unsigned multiplier, char *err,
                                size_t errlen)
{
    const unsigned max = 1u << (s->levels - 1);
    if (multiplier == 0 || multiplier > max || (multiplier & (multiplier - 1)))
        return llc_errf(err, errlen, -EINVAL,
                        "sample-rate multiplier %u is not a power of two "
                        "in 1..%u",
                        multiplier, max);
    const unsigned level = (unsigned)__builtin_ctz(multiplier);
    s->mult = multiplier;
    s->period = s->base_period * multiplier;
    int rc = set_kernel_period(s, level, s->period, err, errlen);
    if (rc == 0)
        rc = switch_level(s, level, err, errlen);
    return rc;
}

static int read_unit(const struct llc_sampling *s, uint64_t *unit, uint64_t *ns, uint64_t *instr)
{
    int rc = read_counter(s->fd_clock, ns);
    *instr = 0;
    if (rc == 0 && s->fd_instr >= 0)
        rc = read_counter(s->fd_instr, instr);
    *unit = s->choice.unit == LLC_SAMPLING_INSTRUCTIONS ? *instr : *ns;
    return rc;
}

/* Milliseconds until `remaining` units may have passed: every online CPU
 * could be running a thread of the target, so the first guess is short and
 * the loop converges in a few wake-ups. */
static int sleep_ms(const struct llc_sampling *s, uint64_t remaining)
{
    double ms = (double)remaining / s->unit_per_ms / (s->choice.ncpus ? s->choice.ncpus : 1);
    if (ms < 1)
        ms = 1;
    if (ms > 1000)
        ms = 1000;
    return (int)ms;
}

static int drain(struct llc_sampling *s, char *err, size_t errlen)
{
    llc_sampling_sink_reset(&s->sink);
    for (unsigned i = 0; i < s->nrings; i++) {
        struct perf_event_mmap_page *meta = s->rings[i].map;
        const unsigned char *data = (const unsigned char *)s->rings[i].map +
                                    (meta->data_offset ? meta->data_offset : (uint64_t)s->page);
        const uint64_t size =
            meta->data_size ? meta->data_size : (uint64_t)s->cfg.ring_pages * (uint64_t)s->page;
        const int rc = llc_sampling_ring_drain(meta, data, size, &s->sink);
        if (rc == -ENOMEM)
            return llc_errf(err, errlen, rc, "out of memory for samples");
        if (rc < 0)
            return llc_errf(err, errlen, rc, "ring buffer of CPU %u holds a malformed record", i);
    }
    /* Without periods in the records, every sample was taken at the
     * window's period (the rate switches between windows). */
    if (s->sink.no_period)
        for (size_t i = 0; i < s->sink.nsamples; i++)
            s->sink.samples[i].period = s->period;
    if (llc_sampling_resolve(&s->sink, &s->maps) < 0)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for mappings");
    return 0;
}

/* Brings samples taken at a shorter period than this window's (the kernel
 * period held at the base for a multi-task target, or a task forked before
 * the rate was lowered) down to the window's rate: each sample stands for
 * its `period` events, and one is kept whenever the events add up to the
 * window's period, so every task is sampled at the same effective rate. */
static void thin(struct llc_sampling *s)
{
    struct llc_sampling_sink *k = &s->sink;
    uint64_t acc = 0;
    size_t kept = 0;
    for (size_t i = 0; i < k->n; i++) {
        const uint64_t p = k->samples[i].period;
        if (p >= s->period) {
            k->ips[kept++] = k->ips[i];
            continue;
        }
        acc += p;
        if (acc >= s->period) {
            acc -= s->period;
            k->ips[kept++] = k->ips[i];
        }
    }
    k->n = kept;
}

int llc_sampling_next_window(struct llc_sampling *s, struct llc_target *t,
                             struct llc_sampling_window *w, char *err, size_t errlen)
{
    if (s->ended)
        return llc_errf(err, errlen, -EINVAL, "sampling: the target already ended");
    const uint64_t boundary = s->last_unit + s->choice.window;
    uint64_t unit, ns, instr;
    int rc;
    for (;;) {
        rc = read_unit(s, &unit, &ns, &instr);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "reading the window counter: %s", strerror(-rc));
        if (unit >= boundary)
            break;
        /* A window can last many seconds of wall time: a stop request is
         * looked at between naps (at most 1 s each). */
        if (llc_stop_requested())
            return llc_errf(err, errlen, -EINTR, "stopped by signal %d", (int)llc_stop_signal);
        struct llc_target_status st;
        rc = llc_target_wait(t, sleep_ms(s, boundary - unit), &st, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            s->ended = true;
            rc = read_unit(s, &unit, &ns, &instr);
            if (rc < 0)
                return llc_errf(err, errlen, rc, "reading the window counter: %s", strerror(-rc));
            break;
        }
    }
    const double now = llc_now() - s->t0;
    rc = drain(s, err, errlen);
    if (rc < 0)
        return rc;
    thin(s);
    *w = (struct llc_sampling_window){
        .index = s->index++,
        .t_start = s->t_last,
        .t_end = now,
        .cpu_ns = ns - s->last_ns,
        .instructions = instr - s->last_instr,
        .instructions_known = s->fd_instr >= 0,
        .progress = unit - s->last_unit,
        .multiplier = s->mult,
        .period = s->period,
        .n_ips = s->sink.n,
        .kernel_samples = s->sink.nsamples,
        .lost = s->sink.lost,
        .tasks = s->sink.ntids,
        .processes = s->sink.npids,
        .last = s->ended,
    };
    const double wall_ms = (now - s->t_last) * 1000.0;
    if (wall_ms > 0 && w->progress > 0 && !s->ended)
        s->unit_per_ms = (double)w->progress / wall_ms;
    s->t_last = now;
    s->last_unit = unit;
    s->last_ns = ns;
    s->last_instr = instr;
    if (s->adapt && !s->ended && (w->n_ips || w->lost))
        s->base_period = llc_sampling_adapt_period(s->base_period, (w->n_ips + w->lost) * w->period,
                                                   s->choice.samples_per_window, s->floor);
    if (!s->ended) {
        rc = llc_sampling_set_multiplier(s, s->mult, err, errlen);
        if (rc < 0)
            return rc;
    }
    return s->ended ? 0 : 1;
}

const uint64_t *llc_sampling_ips(const struct llc_sampling *s, size_t *n)
{
    *n = s->sink.n;
    return s->sink.ips;
}
