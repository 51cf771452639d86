/* libllcprobe-rt: reuse-distance sampling (or full tracing) inside a program
 * compiled with clang -fsanitize-coverage=func,trace-loads,trace-stores.
 *
 * Environment:
 *   LLCPROBE_RT_OUTPUT  file to write (unset: the runtime stays idle)
 *   LLCPROBE_RT_MODE    hist (default): reuse histogram, the profile of
 *                       probe/mrc/mrc.h, written at exit and on SIGUSR1;
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
 * window's end (window.c). Each thread samples its own reference stream (docs/METHODS.md
 * §6.1); the profile sums the threads' histograms. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"
#include "rt/rt.h"
#include "util/atomic_file.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))
#define HOT __attribute__((hot))
#define COLD __attribute__((noinline, cold))
#define EXPORT __attribute__((visibility("default")))

/* Found by `llcprobe mrc --sampler auto` in the program's file. */
__attribute__((used)) static const char rt_marker[] = LLC_MRC_RT_MARKER;

/* A filter with no bits set, for threads not sampling (yet). */
static const uint64_t no_filter[1];

static __thread struct rt_hot rt_hot TLS_IE = {.countdown = 1, .filter = no_filter, .shift = 63};

static struct {
    pthread_once_t once;
    enum rt_mode mode;
    char output[4096];
    double rate;                 /* adaptive: the starting rate */
    double log1m_rate;
    uint64_t samples_target;     /* adaptive rate: 0 = fixed */
    unsigned level;              /* adaptive: halvings so far (atomic) */
    uint64_t taken_all;          /* adaptive: samples at this level, all threads (atomic) */
    uint64_t seed;
    uint64_t window;             /* 0: no windows */
    uint32_t window_pcs;
    uint64_t pc_gap_span;        /* signature gaps are uniform in [1, span] */
    char command[1024];
    pthread_mutex_t lock;        /* registry, trace writer, profile writes */
    struct rt_thread *threads;
    uint64_t n_threads;
    pthread_key_t key;           /* thread-exit destructor */
    bool finished;               /* final output written: stay idle */
    bool configured;             /* configure() ran (mode is final) */
    bool no_libc;                /* LLCPROBE_RT_LIBC=0 */
    struct llc_trace_writer *writer;
} rt = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static volatile sig_atomic_t rt_dump_requested;

/* Distinct lines (hist mode), the exact cold misses of the profile: a bit
 * per line of the user address space below 2^47 (LINES_MAX lines), in one
 * reservation of 256 GiB (MAP_NORESERVE) that the kernel backs only where
 * lines were touched (1/512 of the data touched). Counting starts when the
 * runtime is configured (its constructor): the references of earlier
 * constructors are in refs, their lines not. lines_limit stays 0 (nothing
 * counted, the profile says no "lines") until it is mapped, or if it
 * cannot be; an access above 2^47 makes the count inexact: lines_lost. */
#define LINES_MAX (UINT64_C(1) << 41)
static uint64_t *lines_map;
static uint64_t lines_limit;
static bool lines_lost;

static void map_lines(void)
{
    void *const p = mmap(NULL, LINES_MAX / 8, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    lines_map = p;
    lines_limit = LINES_MAX;
}

static void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rt_warn(const char *fmt, ...)
{
    char buf[LLC_ERRLEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "llcprobe-rt: %s\n", buf);
}

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
        (parse_count(samples, &rt.samples_target) < 0 || rt.samples_target > UINT64_C(1) << 40)) {
        rt_warn("LLCPROBE_RT_SAMPLES is a whole number up to 2^40, not '%s': not profiling", samples);
        return;
    }
    rt.rate = rt.samples_target ? 1 : 1e-4;
    if (rate && *rate) {
        char *end;
        rt.rate = strtod(rate, &end);
        if (*end || !(rt.rate > 0 && rt.rate <= 1)) {
            rt_warn("LLCPROBE_RT_RATE is a number in (0, 1], not '%s': not profiling", rate);
            return;
        }
    }
    rt.seed = 1;
    if (seed && *seed) {
        if (parse_count(seed, &rt.seed) < 0) {
            rt_warn("LLCPROBE_RT_SEED is a whole number, not '%s': not profiling", seed);
            return;
        }
    }
    const char *window = getenv("LLCPROBE_RT_WINDOW");
    const char *pcs = getenv("LLCPROBE_RT_WINDOW_PCS");
    rt.window = LLC_MRC_PHASE_WINDOW_DEFAULT;
    if (window && *window && (parse_count(window, &rt.window) < 0 || rt.window > UINT64_C(1) << 50)) {
        rt_warn("LLCPROBE_RT_WINDOW is a whole number up to 2^50 (0: no windows), not '%s': not profiling",
                window);
        return;
    }
    uint64_t n_pcs = 400; /* as phase --trace's per window (EIPV, docs/METHODS.md §10.3) */
    if (pcs && *pcs && (parse_count(pcs, &n_pcs) < 0 || n_pcs == 0 || n_pcs > UINT32_MAX)) {
        rt_warn("LLCPROBE_RT_WINDOW_PCS is a whole number from 1, not '%s': not profiling", pcs);
        return;
    }
    rt.window_pcs = (uint32_t)n_pcs;
    if (rt.samples_target && (rt.window || m == RT_TRACE)) {
        /* Window samples are records of one rate; a trace has no samples. */
        rt_warn("LLCPROBE_RT_SAMPLES needs hist mode and LLCPROBE_RT_WINDOW=0: fixed rate %g",
                rt.rate);
        rt.samples_target = 0;
    }
    const char *libc = getenv("LLCPROBE_RT_LIBC");
    if (libc && *libc && strcmp(libc, "0") != 0 && strcmp(libc, "1") != 0) {
        rt_warn("LLCPROBE_RT_LIBC is 0 or 1, not '%s': not profiling", libc);
        return;
    }
    rt.no_libc = libc && strcmp(libc, "0") == 0;
    const uint64_t pc_mean = rt.window > n_pcs ? rt.window / n_pcs : 1;
    rt.pc_gap_span = 2 * pc_mean - 1;
    rt.log1m_rate = rt.rate < 1 ? log1p(-rt.rate) : 0;
    snprintf(rt.output, sizeof rt.output, "%s", out);
    read_command(rt.command, sizeof rt.command);
    if (pthread_key_create(&rt.key, thread_ended) != 0) {
        rt_warn("no thread key: not profiling");
        return;
    }
    if (m == RT_TRACE) {
        struct llc_trace_info info = {.page_size = (uint32_t)sysconf(_SC_PAGESIZE),
                                      .exit_status = -1};
        snprintf(info.recorder, sizeof info.recorder, "llcprobe-rt");
        snprintf(info.command, sizeof info.command, "%s", rt.command);
        char err[LLC_ERRLEN];
        if (llc_trace_writer_open(rt.output, &info, &rt.writer, err, sizeof err) < 0) {
            rt_warn("%s", err);
            return;
        }
    } else {
        map_lines();
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

/* Geometric gap with mean 1/rate (docs/METHODS.md §6.2): every access equally likely.
 * log1m is log(1 - rate), 0 for rate 1. */
static uint64_t next_gap(uint64_t *state, double log1m)
{
    if (log1m == 0)
        return 1;
    const double u = llc_rng_unit_open0(llc_splitmix_next(state));
    const double g = floor(log(u) / log1m);
    return g >= 0x1p62 ? (UINT64_C(1) << 62) : 1 + (uint64_t)g;
}

/* Gap to the next signature sample: uniform in [1, span], mean (span + 1)
 * / 2. The signature only needs positions that do not alias with loops,
 * not StatCache's memoryless gaps, and this costs a multiply, not a log:
 * with short windows signature samples are the slow path's most frequent
 * call. */
static uint64_t next_pc_gap(uint64_t *state)
{
    return 1 + (uint64_t)(((unsigned __int128)llc_splitmix_next(state) * rt.pc_gap_span) >> 64);
}

/* log(1 - rate) after `level` halvings of the starting rate. */
static double log1m_at(unsigned level)
{
    const double r = ldexp(rt.rate, -(int)level);
    return r < 1 ? log1p(-r) : 0;
}

/* Adaptive rate: the thread catches up with the global level (t->lock
 * held): its counts scaled, its watches thinned, its gap drawn anew at the
 * new rate from this access on (the gaps are memoryless). */
static int catch_up(struct rt_thread *t, uint64_t now)
{
    const unsigned level = __atomic_load_n(&rt.level, __ATOMIC_RELAXED);
    if (level <= t->level)
        return 0;
    const unsigned d = level - t->level < 63 ? level - t->level : 63;
    int rc = llc_statmodel_hist_scale(t->hist, ldexp(1, -(int)d), NULL, 0);
    if (rc == 0)
        rc = rt_watch_thin(t, d);
    t->level = level;
    t->log1m_rate = log1m_at(level);
    t->next_sample = now - 1 + next_gap(&t->rng, t->log1m_rate);
    return rc;
}

/* Adaptive rate: one more sample taken; past twice the target, the next
 * level (every thread halves at its next sample, write_profile for those
 * that do not get there). Lock-free: called with t->lock held. */
static void count_sample(void)
{
    uint64_t n = __atomic_add_fetch(&rt.taken_all, 1, __ATOMIC_RELAXED);
    if (n > 2 * rt.samples_target &&
        __atomic_compare_exchange_n(&rt.taken_all, &n, n / 2, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        __atomic_add_fetch(&rt.level, 1, __ATOMIC_RELAXED);
}

static void stay_idle(struct rt_hot *h)
{
    h->countdown = UINT64_MAX;
    h->filter = no_filter;
    h->shift = 63;
}

static struct rt_thread *thread_start(struct rt_hot *h)
{
    struct rt_thread *t = calloc(1, sizeof *t);
    if (!t || llc_statmodel_hist_create(&t->hist, NULL, 0) < 0) {
        free(t);
        rt_warn("out of memory: this thread is not sampled");
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->hot = h;
    pthread_mutex_lock(&rt.lock);
    const uint64_t index = rt.n_threads++;
    t->next = rt.threads;
    rt.threads = t;
    pthread_mutex_unlock(&rt.lock);
    t->rng = rt.seed ^ (index * 0xD1B54A32D192ED03ull);
    t->level = __atomic_load_n(&rt.level, __ATOMIC_RELAXED);
    t->log1m_rate = log1m_at(t->level);
    /* Signature samples from their own stream: the reuse samples are the
     * same with windows or without. */
    t->pc_rng = t->rng ^ 0x5CA4F00D5CA4F00Dull;
    t->index = (uint32_t)index;
    t->window = rt.window;
    if (rt_watch_init(t) < 0) {
        rt_warn("out of memory: this thread is not sampled");
        t->hot = NULL;
        return NULL;
    }
    h->thread = t;
    pthread_setspecific(rt.key, t);
    return t;
}

static void thread_ended(void *arg)
{
    struct rt_thread *t = arg;
    rt_hot.busy++; /* the thread ends: nothing after this is recorded */
    pthread_mutex_lock(&t->lock);
    if (t->hot) {
        t->refs_final = t->hot->refs;
        t->lines_final = t->hot->lines;
        stay_idle(t->hot);
        t->hot = NULL;
    }
    pthread_mutex_unlock(&t->lock);
}

static int merge_scaled(struct llc_statmodel_hist *dst, const struct llc_statmodel_hist *src,
                        double w, char *err, size_t errlen)
{
    struct llc_statmodel_hist *tmp = NULL;
    int rc = llc_statmodel_hist_create(&tmp, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_hist_merge(tmp, src, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_hist_scale(tmp, w, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_hist_merge(dst, tmp, err, errlen);
    llc_statmodel_hist_destroy(tmp);
    return rc;
}

/* Profile now: every thread's histogram, its pending watches counted as
 * dangling (at exit they are; on SIGUSR1 it is the best the snapshot can
 * say). Caller holds rt.lock. */
static void write_profile(void)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *sum = NULL;
    struct llc_afile *f = NULL;
    struct rt_collect collect = {0};
    struct llc_mrc_profile_windows windows = {0};
    if (llc_statmodel_hist_create(&sum, err, sizeof err) < 0)
        goto fail;
    const unsigned level = __atomic_load_n(&rt.level, __ATOMIC_RELAXED);
    struct llc_mrc_profile_info info = {.rate = ldexp(rt.rate, -(int)level), .seed = rt.seed,
                                        .threads = rt.n_threads};
    snprintf(info.command, sizeof info.command, "%s", rt.command);
    for (struct rt_thread *t = rt.threads; t; t = t->next) {
        pthread_mutex_lock(&t->lock);
        /* A thread behind the adaptive rate's level (it took no sample since
         * the level rose) counts at the final rate: its expected share. */
        const double w = ldexp(1, -(int)(level - t->level < 63 ? level - t->level : 63));
        int rc = w < 1 ? merge_scaled(sum, t->hist, w, err, sizeof err)
                       : llc_statmodel_hist_merge(sum, t->hist, err, sizeof err);
        if (rc == 0 && t->n_watch)
            rc = llc_statmodel_hist_add_dangling(sum, w * (double)t->n_watch, err, sizeof err);
        /* Another thread's counter, read while it runs: a snapshot. */
        const uint64_t refs =
            t->hot ? __atomic_load_n(&t->hot->refs, __ATOMIC_RELAXED) : t->refs_final;
        info.refs += refs;
        info.lines += t->hot ? __atomic_load_n(&t->hot->lines, __ATOMIC_RELAXED) : t->lines_final;
        if (rc == 0 && rt.window && rt_windows_collect(&collect, t, refs) < 0)
            rc = llc_errf(err, sizeof err, -ENOMEM, "out of memory for the windows");
        pthread_mutex_unlock(&t->lock);
        if (rc < 0)
            goto fail;
    }
    if (rt.window && rt_windows_finish(&collect, rt.window, rt.window_pcs, &windows) < 0) {
        snprintf(err, sizeof err, "out of memory for the windows");
        goto fail;
    }
    info.samples = (uint64_t)llround(llc_statmodel_hist_total(sum));
    if (!lines_limit || lines_lost || info.lines == 0 || info.lines > info.refs)
        info.lines = 0;
    if (llc_afile_open(rt.output, &f, err, sizeof err) < 0 ||
        llc_mrc_profile_write(llc_afile_stream(f), &info, sum, rt.window ? &windows : NULL, err,
                              sizeof err) < 0)
        goto fail;
    const int rc = llc_afile_commit(f, err, sizeof err);
    f = NULL;
    if (rc < 0)
        goto fail;
    llc_statmodel_hist_destroy(sum);
    llc_mrc_profile_windows_free(&windows);
    return;
fail:
    llc_afile_abort(f);
    llc_statmodel_hist_destroy(sum);
    rt_windows_finish(&collect, 0, 0, &windows); /* frees what was collected */
    llc_mrc_profile_windows_free(&windows);
    rt_warn("profile not written: %s", err);
}

static COLD void trace_access(uint64_t addr, uint32_t size, uint8_t kind, uint64_t pc)
{
    const struct llc_trace_rec rec = {.addr = addr, .pc = pc, .size = size, .kind = kind};
    pthread_mutex_lock(&rt.lock);
    if (!rt.finished && rt.writer && llc_trace_writer_put(rt.writer, &rec) < 0) {
        rt_warn("trace write failed: the trace is abandoned");
        llc_trace_writer_abort(rt.writer);
        rt.writer = NULL;
    }
    pthread_mutex_unlock(&rt.lock);
}

/* Countdown reached zero: the thread's first access, a sample to take, or
 * (trace mode) every access. */
static COLD void slow_path(struct rt_hot *h, uint64_t addr, uint32_t size, uint8_t kind,
                           uint64_t pc)
{
    pthread_once(&rt.once, configure_once);
    if (rt.mode == RT_OFF || rt.finished) {
        stay_idle(h);
        return;
    }
    if (rt.mode == RT_TRACE) {
        h->countdown = 1;
        trace_access(addr, size, kind, pc);
        return;
    }
    struct rt_thread *t = h->thread;
    /* The access being made is number h->refs (1-based) of this thread. */
    const uint64_t now = h->refs;
    if (!t) {
        t = thread_start(h);
        if (!t) {
            stay_idle(h);
            return;
        }
        /* The first gap counts from the thread's first access, which is
         * this one (now = 1): sample it if the gap is 1. */
        t->next_sample = now - 1 + next_gap(&t->rng, t->log1m_rate);
        t->next_pc = t->window_end = UINT64_MAX;
        if (t->window) {
            t->next_pc = now - 1 + next_pc_gap(&t->pc_rng);
            t->window_end = t->window;
        }
    }
    if (rt_dump_requested) {
        rt_dump_requested = 0;
        pthread_mutex_lock(&rt.lock);
        if (!rt.finished)
            write_profile();
        pthread_mutex_unlock(&rt.lock);
    }
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (rt.samples_target)
        rc = catch_up(t, now);
    if (rc == 0 && now == t->next_sample) {
        rc = rt_watch_add(t, addr >> 6, now - 1);
        t->taken++;
        t->next_sample += next_gap(&t->rng, t->log1m_rate);
        if (rt.samples_target)
            count_sample();
    }
    /* A signature sample or a window's end belongs to the window of this
     * access, so both come after the sample. */
    if (now == t->next_pc) {
        rt_window_pc(t, pc);
        t->next_pc += next_pc_gap(&t->pc_rng);
    }
    if (now == t->window_end) {
        rt_window_close(t);
        t->window_end += t->window;
    }
    pthread_mutex_unlock(&t->lock);
    if (rc < 0) {
        rt_warn("out of memory for a watch: sampling stops in this thread");
        stay_idle(h);
        return;
    }
    uint64_t next = t->next_sample < t->next_pc ? t->next_sample : t->next_pc;
    next = next < t->window_end ? next : t->window_end;
    h->countdown = next - now;
}

static COLD void watched(struct rt_hot *h, uint64_t line)
{
    struct rt_thread *t = h->thread;
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    const int rc = rt_watch_hit(t, line, h->refs - 1);
    pthread_mutex_unlock(&t->lock);
    if (rc < 0) {
        rt_warn("out of memory for the histogram: sampling stops in this thread");
        stay_idle(h);
    }
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
        watched(h, addr >> 6);
    if (due)
        slow_path(h, addr, size, kind, pc);
    h->busy--;
}

/* First touch of a line: one thread sets its bit. */
static COLD void new_line(struct rt_hot *h, uint64_t line)
{
    if (line >= LINES_MAX) {
        lines_lost = true;
        return;
    }
    const uint64_t bit = UINT64_C(1) << (line & 63);
    if (!(__atomic_fetch_or(&lines_map[line >> 6], bit, __ATOMIC_RELAXED) & bit))
        h->lines++;
}

static inline HOT void on_access(const void *p, uint32_t size, uint8_t kind, uint64_t pc)
{
    struct rt_hot *const h = &rt_hot;
    const uint64_t addr = (uint64_t)(uintptr_t)p;
    h->refs++;
    const uint64_t line = addr >> 6;
    if (lines_limit &&
        __builtin_expect(line >= lines_limit || !((lines_map[line >> 6] >> (line & 63)) & 1), 0))
        new_line(h, line);
    const uint64_t b = rt_hash(addr >> 6) >> h->shift;
    const bool hit = (h->filter[b >> 6] >> (b & 63)) & 1;
    const bool due = --h->countdown == 0;
    if (__builtin_expect(hit | due, 0))
        rare(h, addr, size, kind, pc, hit, due);
}

#define PC() ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define CALLBACKS(n)                                                                              \
    EXPORT void __sanitizer_cov_load##n(void *p) { on_access(p, n, LLC_TRACE_LOAD, PC()); }      \
    EXPORT void __sanitizer_cov_store##n(void *p) { on_access(p, n, LLC_TRACE_STORE, PC()); }
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
        (__atomic_load_n(&rt.configured, __ATOMIC_ACQUIRE) && (rt.mode == RT_OFF || rt.finished || rt.no_libc)))
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
    pthread_mutex_lock(&rt.lock);
    if (rt.mode == RT_HIST && !rt.finished)
        write_profile();
    if (rt.mode == RT_TRACE && rt.writer) {
        char err[LLC_ERRLEN];
        if (llc_trace_writer_close(rt.writer, -1, err, sizeof err) < 0)
            rt_warn("%s", err);
        rt.writer = NULL;
    }
    rt.finished = true;
    pthread_mutex_unlock(&rt.lock);
}
