/* libllcprobe-rt: reuse-distance sampling (or full tracing) inside a program
 * compiled with clang -fsanitize-coverage=func,trace-loads,trace-stores.
 *
 * Environment:
 *   LLCPROBE_RT_OUTPUT  file to write (unset: the runtime stays idle)
 *   LLCPROBE_RT_MODE    hist (default): reuse histogram, the profile of
 *                       llcprobe/reusefile.h, written at exit and on SIGUSR1;
 *                       trace: every access in llcprobe's trace format
 *   LLCPROBE_RT_RATE    sampling rate in (0, 1], default 1e-4 (with
 *                       LLCPROBE_RT_SAMPLES: the starting rate, default 1)
 *   LLCPROBE_RT_SAMPLES adaptive rate (hist mode, LLCPROBE_RT_WINDOW=0):
 *                       aim at this many samples; whenever the samples
 *                       taken exceed twice it, the rate halves and every
 *                       sample so far is kept with probability 1/2 (counts
 *                       halved, pending watches dropped by coin flips), so
 *                       each reference stays sampled with the same chance:
 *                       the final rate. 0 or unset: fixed rate
 *   LLCPROBE_RT_SEED    random seed, default 1
 *   LLCPROBE_RT_WINDOW  hist mode: references per window for mrc --phases,
 *                       default 100000 (mrc --phases' default); 0 = no windows
 *   LLCPROBE_RT_WINDOW_PCS  code addresses sampled per window for its
 *                       phase signature, default 400
 *   LLCPROBE_RT_LIBC    0: libc's memory and string functions (libc.c)
 *                       are not fed to the sampler; default 1
 *
 * Every access costs a counter decrement, one filter-bit test and (hist
 * mode) one test of its line's bit in the map of touched lines; the rest
 * (taking a sample every ~1/rate accesses, resolving a watched line) is the
 * out-of-line slow path, and so is all the window work: the countdown runs
 * to the nearest of the next sample, the next signature sample and the
 * window's end (window.c). The sampler is core.c, shared with the QEMU
 * plugin. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "rt/rt.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))
#define HOT __attribute__((hot))
#define COLD __attribute__((noinline, cold))
#define EXPORT __attribute__((visibility("default")))

/* Found by `llcprobe mrc --sampler auto` in the program's file. */
__attribute__((used)) static const char rt_marker[] = LLC_REUSEFILE_RT_MARKER;

/* Named by llcprobe-cc (-Wl,--undefined): takes this object out of the
 * archive even when a shared library earlier on the line exports the
 * callbacks (hidden, so no library can define it for the program). */
const char llc_rt_linked = 1;

static __thread struct rt_hot rt_hot TLS_IE = {
    .countdown = 1, .armed = 1, .filter = rt_no_filter, .shift = 63};

static struct {
    pthread_once_t once;
    struct rt_core core; /* core.lock: registry, trace writer, profile writes */
    enum rt_mode mode;
    char output[4096];
    pthread_key_t key; /* thread-exit destructor */
    bool finished;     /* final output written: stay idle */
    bool configured;   /* configure() ran (mode is final) */
    bool no_libc;      /* LLCPROBE_RT_LIBC=0 */
    struct llc_trace_writer *writer;
} rt = {.once = PTHREAD_ONCE_INIT,
        .core = {.name = "llcprobe-rt", .lock = PTHREAD_MUTEX_INITIALIZER}};

static volatile sig_atomic_t rt_dump_requested;

#define rt_warn(...) rt_core_warn(&rt.core, __VA_ARGS__)

static void read_command(char *buf, size_t len)
{
    buf[0] = '\0';
    const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    const ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n > 0 && buf[n - 1] == ' ' ? n - 1 : n] = '\0';
}

static void on_sigusr1(int sig)
{
    (void)sig;
    rt_dump_requested = 1;
}

static void thread_ended(void *arg);

static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return *end || errno || *s == '-' ? -EINVAL : 0;
}

/* Every shared library built with llcprobe-cc carries a copy of the
 * runtime. The program's callbacks and libc wrappers all resolve to one
 * copy, the first in the dynamic linker's search order, whose
 * llc_rt_instance every copy reads (an exported, so interposable, symbol);
 * the other copies stay idle rather than write empty profiles over it. */
EXPORT void *llc_rt_instance = &rt;

static bool elected(void)
{
    return __atomic_load_n(&llc_rt_instance, __ATOMIC_RELAXED) == (void *)&rt;
}

static void configure(void)
{
    const char *out = getenv("LLCPROBE_RT_OUTPUT");
    if (!out || !*out || !elected())
        return;
    struct rt_core *const c = &rt.core;
    rt_core_init(c, "llcprobe-rt");
    const char *mode = getenv("LLCPROBE_RT_MODE");
    const char *rate = getenv("LLCPROBE_RT_RATE");
    const char *seed = getenv("LLCPROBE_RT_SEED");
    enum rt_mode m = RT_HIST;
    if (mode && strcmp(mode, "trace") == 0)
        m = RT_TRACE;
    else if (mode && *mode && strcmp(mode, "hist") != 0) {
        rt_warn("LLCPROBE_RT_MODE is hist or trace, not '%s': not profiling", mode);
        return;
    }
    const char *samples = getenv("LLCPROBE_RT_SAMPLES");
    if (samples && *samples &&
        (parse_count(samples, &c->samples_target) < 0 || c->samples_target > UINT64_C(1) << 40)) {
        rt_warn("LLCPROBE_RT_SAMPLES is a whole number up to 2^40, not '%s': not profiling",
                samples);
        return;
    }
    if (c->samples_target)
        c->rate = 1;
    if (rate && *rate) {
        char *end;
        c->rate = strtod(rate, &end);
        if (*end || !(c->rate > 0 && c->rate <= 1)) {
            rt_warn("LLCPROBE_RT_RATE is a number in (0, 1], not '%s': not profiling", rate);
            return;
        }
    }
    if (seed && *seed) {
        if (parse_count(seed, &c->seed) < 0) {
            rt_warn("LLCPROBE_RT_SEED is a whole number, not '%s': not profiling", seed);
            return;
        }
    }
    const char *window = getenv("LLCPROBE_RT_WINDOW");
    const char *pcs = getenv("LLCPROBE_RT_WINDOW_PCS");
    if (window && *window &&
        (parse_count(window, &c->window) < 0 || c->window > UINT64_C(1) << 50)) {
        rt_warn(
            "LLCPROBE_RT_WINDOW is a whole number up to 2^50 (0: no windows), not '%s': not profiling",
            window);
        return;
    }
    uint64_t n_pcs = 400; /* as phase --trace's per window (EIPV, docs/METHODS.md §10.3) */
    if (pcs && *pcs && (parse_count(pcs, &n_pcs) < 0 || n_pcs == 0 || n_pcs > UINT32_MAX)) {
        rt_warn("LLCPROBE_RT_WINDOW_PCS is a whole number from 1, not '%s': not profiling", pcs);
        return;
    }
    c->window_pcs = (uint32_t)n_pcs;
    if (c->samples_target && (c->window || m == RT_TRACE)) {
        /* Window samples are records of one rate; a trace has no samples. */
        rt_warn("LLCPROBE_RT_SAMPLES needs hist mode and LLCPROBE_RT_WINDOW=0: fixed rate %g",
                c->rate);
        c->samples_target = 0;
    }
    const char *libc = getenv("LLCPROBE_RT_LIBC");
    if (libc && *libc && strcmp(libc, "0") != 0 && strcmp(libc, "1") != 0) {
        rt_warn("LLCPROBE_RT_LIBC is 0 or 1, not '%s': not profiling", libc);
        return;
    }
    rt.no_libc = libc && strcmp(libc, "0") == 0;
    rt_core_ready(c);
    snprintf(rt.output, sizeof rt.output, "%s", out);
    read_command(c->command, sizeof c->command);
    if (pthread_key_create(&rt.key, thread_ended) != 0) {
        rt_warn("no thread key: not profiling");
        return;
    }
    if (m == RT_TRACE) {
        struct llc_trace_info info = {.page_size = (uint32_t)sysconf(_SC_PAGESIZE),
                                      .exit_status = -1};
        snprintf(info.recorder, sizeof info.recorder, "llcprobe-rt");
        snprintf(info.command, sizeof info.command, "%s", c->command);
        char err[LLC_ERRLEN];
        if (llc_trace_writer_open(rt.output, &info, &rt.writer, err, sizeof err) < 0) {
            rt_warn("%s", err);
            return;
        }
    } else {
        rt_lines_map();
        struct sigaction sa = {.sa_handler = on_sigusr1, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
    }
    rt.mode = m;
}

static void configure_once(void)
{
    configure();
    __atomic_store_n(&rt.configured, true, __ATOMIC_RELEASE);
}

static void thread_ended(void *arg)
{
    struct rt_thread *t = arg;
    rt_hot.busy++; /* the thread ends: nothing after this is recorded */
    if (t->hot) {
        struct rt_hot *const h = t->hot;
        rt_core_thread_end(h);
        rt_hot_idle(h);
    }
}

/* Profile now (rt.core.lock held). */
static void write_profile(void)
{
    rt_core_write_profile(&rt.core, rt.output, rt_lines_exact());
}

static COLD void trace_access(uint64_t addr, uint32_t size, uint8_t kind, uint64_t pc)
{
    const struct llc_trace_rec rec = {.addr = addr, .pc = pc, .size = size, .kind = kind};
    pthread_mutex_lock(&rt.core.lock);
    if (!rt.finished && rt.writer && llc_trace_writer_put(rt.writer, &rec) < 0) {
        rt_warn("trace write failed: the trace is abandoned");
        llc_trace_writer_abort(rt.writer);
        rt.writer = NULL;
    }
    pthread_mutex_unlock(&rt.core.lock);
}

/* Countdown reached zero: the thread's first access, a sample to take, or
 * (trace mode) every access. */
static COLD void slow_path(struct rt_hot *h, uint64_t addr, uint32_t size, uint8_t kind,
                           uint64_t pc)
{
    pthread_once(&rt.once, configure_once);
    if (rt.mode == RT_OFF || rt.finished) {
        rt_hot_idle(h);
        return;
    }
    if (rt.mode == RT_TRACE) {
        rt_set_countdown(h, 1);
        trace_access(addr, size, kind, pc);
        return;
    }
    if (rt_dump_requested) {
        rt_dump_requested = 0;
        pthread_mutex_lock(&rt.core.lock);
        if (!rt.finished)
            write_profile();
        pthread_mutex_unlock(&rt.core.lock);
    }
    struct rt_thread *const started = rt_core_due(&rt.core, h, addr >> 6, pc);
    if (started)
        pthread_setspecific(rt.key, started);
}

/* Both rare cases in one out-of-line call that the fast path reaches by a
 * tail jump, so the fast path needs no saved registers or stack frame. */
static COLD void rare(struct rt_hot *h, uint64_t addr, uint32_t size, uint8_t kind, uint64_t pc,
                      bool hit, bool due)
{
    /* The runtime's own calls to memcpy and the like are not the
     * program's references, and would take the locks held here again. */
    h->busy++;
    /* A watched line's reuse is checked before a sample is taken, so a new
     * sample on a watched line first resolves the old one (docs/METHODS.md §6.3). */
    if (hit)
        rt_core_hit(&rt.core, h, addr >> 6);
    if (due && h->countdown == 0) /* not if the hit idled the thread */
        slow_path(h, addr, size, kind, pc);
    h->busy--;
}

static inline HOT void on_access(const void *p, uint32_t size, uint8_t kind, uint64_t pc)
{
    struct rt_hot *const h = &rt_hot;
    const uint64_t addr = (uint64_t)(uintptr_t)p;
    const uint64_t line = addr >> 6;
    rt_lines_touch(h, line);
    const bool hit = rt_filter_hit(h, line);
    const bool due = --h->countdown == 0;
    if (__builtin_expect(hit | due, 0))
        rare(h, addr, size, kind, pc, hit, due);
}

#define PC() ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define CALLBACKS(n)                              \
    EXPORT void __sanitizer_cov_load##n(void *p)  \
    {                                             \
        on_access(p, n, LLC_TRACE_LOAD, PC());    \
    }                                             \
    EXPORT void __sanitizer_cov_store##n(void *p) \
    {                                             \
        on_access(p, n, LLC_TRACE_STORE, PC());   \
    }
CALLBACKS(1)
CALLBACKS(2)
CALLBACKS(4)
CALLBACKS(8)
CALLBACKS(16)

/* The part of [lo, hi) in line, if any, as one access. */
static inline void range_line(uintptr_t lo, uintptr_t hi, uintptr_t line, uint8_t kind, uint64_t pc)
{
    const uintptr_t start = line << 6, end = start + 64;
    if (start >= hi)
        return;
    const uintptr_t a = lo > start ? lo : start;
    on_access((const void *)a, (uint32_t)((hi < end ? hi : end) - a), kind, pc);
}

void rt_range(const void *a, uint8_t kind_a, const void *b, uint8_t kind_b, size_t n, uint64_t pc)
{
    struct rt_hot *const h = &rt_hot;
    /* Once configured idle, a long memset costs no per-line work. */
    if (n == 0 || h->busy ||
        (__atomic_load_n(&rt.configured, __ATOMIC_ACQUIRE) &&
         (rt.mode == RT_OFF || rt.finished || rt.no_libc)))
        return;
    const uintptr_t la = (uintptr_t)a, lb = (uintptr_t)b;
    const uintptr_t lines = ((la + n - 1) >> 6) - (la >> 6) + 1;
    const uintptr_t lines_b = b ? ((lb + n - 1) >> 6) - (lb >> 6) + 1 : 0;
    const uintptr_t steps = lines > lines_b ? lines : lines_b;
    for (uintptr_t i = 0; i < steps; i++) {
        range_line(la, la + n, (la >> 6) + i, kind_a, pc);
        if (b)
            range_line(lb, lb + n, (lb >> 6) + i, kind_b, pc);
    }
}

__attribute__((constructor)) static void rt_init(void)
{
    rt_hot.busy++;
    pthread_once(&rt.once, configure_once);
    rt_hot.busy--;
}

/* At exit: the final profile, or the trace closed. Accesses made after this
 * (later destructors) are not recorded. */
__attribute__((destructor)) static void rt_fini(void)
{
    rt_hot.busy++; /* for good: nothing after this is recorded */
    pthread_mutex_lock(&rt.core.lock);
    if (rt.mode == RT_HIST && !rt.finished)
        write_profile();
    if (rt.mode == RT_TRACE && rt.writer) {
        char err[LLC_ERRLEN];
        if (llc_trace_writer_close(rt.writer, -1, err, sizeof err) < 0)
            rt_warn("%s", err);
        rt.writer = NULL;
    }
    rt.finished = true;
    pthread_mutex_unlock(&rt.core.lock);
}
