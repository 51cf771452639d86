/* The sampler that libllcprobe-rt and the QEMU plugin share: each thread
 * samples its own reference stream (docs/METHODS.md §6.1) with geometric
 * gaps, watches the sampled lines (watch.c) and records windows (window.c);
 * the profile sums the threads. Everything here is the slow path: the
 * callers' per-access work is the filter test and the countdown of rt.h. */
#include <errno.h>
#include <sys/mman.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "llcprobe/statmodel.h"
#include "rt/rt.h"
#include "util/atomic_file.h"

const uint64_t rt_no_filter[1];

void rt_core_init(struct rt_core *c, const char *name)
{
    *c = (struct rt_core){.name = name,
                          .rate = 1e-4,
                          .seed = 1,
                          .window = LLC_REUSEFILE_WINDOW_DEFAULT,
                          .window_pcs = 400};
    pthread_mutex_init(&c->lock, NULL);
}

void rt_core_ready(struct rt_core *c)
{
    const uint64_t pc_mean = c->window > c->window_pcs ? c->window / c->window_pcs : 1;
    c->pc_gap_span = 2 * pc_mean - 1;
}

void rt_core_warn(const struct rt_core *c, const char *fmt, ...)
{
    char buf[LLC_ERRLEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", c->name, buf);
}

void rt_hot_idle(struct rt_hot *h)
{
    rt_set_countdown(h, UINT64_MAX);
    h->filter = rt_no_filter;
    h->shift = 63;
}

/* Geometric gap with mean 1/rate (docs/METHODS.md §6.2): every access
 * equally likely. log1m is log(1 - rate), 0 for rate 1. */
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
static uint64_t next_pc_gap(const struct rt_core *c, uint64_t *state)
{
    return 1 + (uint64_t)(((unsigned __int128)llc_splitmix_next(state) * c->pc_gap_span) >> 64);
}

/* log(1 - rate) after `level` halvings of the starting rate. */
static double log1m_at(const struct rt_core *c, unsigned level)
{
    const double r = ldexp(c->rate, -(int)level);
    return r < 1 ? log1p(-r) : 0;
}

/* Adaptive rate: the thread catches up with the global level (t->lock
 * held): its counts scaled, its watches thinned, its gap drawn anew at the
 * new rate from this access on (the gaps are memoryless). */
static int catch_up(struct rt_core *c, struct rt_thread *t, uint64_t now)
{
    const unsigned level = __atomic_load_n(&c->level, __ATOMIC_RELAXED);
    if (level <= t->level)
        return 0;
    const unsigned d = level - t->level < 63 ? level - t->level : 63;
    int rc = llc_statmodel_hist_scale(t->hist, ldexp(1, -(int)d), NULL, 0);
    if (rc == 0)
        rc = rt_watch_thin(t, d);
    t->level = level;
    t->log1m_rate = log1m_at(c, level);
    t->next_sample = now - 1 + next_gap(&t->rng, t->log1m_rate);
    return rc;
}

/* Adaptive rate: one more sample taken; past twice the target, the next
 * level (every thread halves at its next sample, the profile for those
 * that do not get there). Lock-free: called with t->lock held. */
static void count_sample(struct rt_core *c)
{
    uint64_t n = __atomic_add_fetch(&c->taken_all, 1, __ATOMIC_RELAXED);
    if (n > 2 * c->samples_target &&
        __atomic_compare_exchange_n(&c->taken_all, &n, n / 2, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        __atomic_add_fetch(&c->level, 1, __ATOMIC_RELAXED);
}

/* Seeds by the order of the threads' first accesses, so that one stream
 * sampled by the runtime and the plugin gives the same samples. */
static struct rt_thread *thread_start(struct rt_core *c, struct rt_hot *h, uint64_t now)
{
    struct rt_thread *t = calloc(1, sizeof *t);
    if (!t || llc_statmodel_hist_create(&t->hist, NULL, 0) < 0) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->hot = h;
    pthread_mutex_lock(&c->lock);
    const uint64_t index = c->n_threads++;
    t->next = c->threads;
    c->threads = t;
    pthread_mutex_unlock(&c->lock);
    t->rng = c->seed ^ (index * 0xD1B54A32D192ED03ull);
    t->level = __atomic_load_n(&c->level, __ATOMIC_RELAXED);
    t->log1m_rate = log1m_at(c, t->level);
    /* Signature samples from their own stream: the reuse samples are the
     * same with windows or without. */
    t->pc_rng = t->rng ^ 0x5CA4F00D5CA4F00Dull;
    t->index = (uint32_t)index;
    t->window = c->window;
    if (rt_watch_init(t) < 0) {
        t->hot = NULL; /* stays in the registry, empty */
        return NULL;
    }
    /* The first gap counts from the thread's first access, which is this
     * one (now = 1): sample it if the gap is 1. */
    t->next_sample = now - 1 + next_gap(&t->rng, t->log1m_rate);
    t->next_pc = t->window_end = UINT64_MAX;
    if (t->window) {
        t->next_pc = now - 1 + next_pc_gap(c, &t->pc_rng);
        t->window_end = t->window;
    }
    h->thread = t;
    return t;
}

struct rt_thread *rt_core_due(struct rt_core *c, struct rt_hot *h, uint64_t line, uint64_t pc)
{
    struct rt_thread *t = h->thread, *started = NULL;
    /* The access being made is number `now` (1-based) of this thread. */
    const uint64_t now = rt_refs(h);
    if (!t) {
        t = started = thread_start(c, h, now);
        if (!t) {
            rt_core_warn(c, "out of memory: a thread is not sampled");
            rt_hot_idle(h);
            return NULL;
        }
    }
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (c->samples_target)
        rc = catch_up(c, t, now);
    if (rc == 0 && now == t->next_sample) {
        rc = rt_watch_add(t, line, now - 1);
        t->taken++;
        t->next_sample += next_gap(&t->rng, t->log1m_rate);
        if (c->samples_target)
            count_sample(c);
    }
    /* A signature sample or a window's end belongs to the window of this
     * access, so both come after the sample. */
    if (now == t->next_pc) {
        rt_window_pc(t, pc);
        t->next_pc += next_pc_gap(c, &t->pc_rng);
    }
    if (now == t->window_end) {
        rt_window_close(t);
        t->window_end += t->window;
    }
    pthread_mutex_unlock(&t->lock);
    if (rc < 0) {
        rt_core_warn(c, "out of memory for a watch: sampling stops in thread %u", t->index);
        rt_hot_idle(h);
        return started;
    }
    uint64_t next = t->next_sample < t->next_pc ? t->next_sample : t->next_pc;
    next = next < t->window_end ? next : t->window_end;
    rt_set_countdown(h, next - now);
    return started;
}

void rt_core_hit(struct rt_core *c, struct rt_hot *h, uint64_t line)
{
    struct rt_thread *t = h->thread;
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    const int rc = rt_watch_hit(t, line, rt_refs(h) - 1);
    pthread_mutex_unlock(&t->lock);
    if (rc < 0) {
        rt_core_warn(c, "out of memory for the histogram: sampling stops in thread %u", t->index);
        rt_hot_idle(h);
    }
}

void rt_core_thread_end(struct rt_hot *h)
{
    struct rt_thread *t = h->thread;
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (t->hot) {
        t->refs_final = rt_refs(h);
        t->lines_final = h->lines;
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

/* Every thread's histogram, its pending watches counted as dangling (at
 * exit they are; for a snapshot it is the best it can say). */
void rt_core_write_profile(struct rt_core *c, const char *path, bool lines)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *sum = NULL;
    struct llc_afile *f = NULL;
    struct rt_collect collect = {0};
    struct llc_reusefile_windows windows = {0};
    if (llc_statmodel_hist_create(&sum, err, sizeof err) < 0)
        goto fail;
    const unsigned level = __atomic_load_n(&c->level, __ATOMIC_RELAXED);
    struct llc_reusefile_info info = {
        .rate = ldexp(c->rate, -(int)level), .seed = c->seed, .threads = c->n_threads};
    snprintf(info.command, sizeof info.command, "%s", c->command);
    for (struct rt_thread *t = c->threads; t; t = t->next) {
        pthread_mutex_lock(&t->lock);
        /* A thread behind the adaptive rate's level (it took no sample since
         * the level rose) counts at the final rate: its expected share. */
        const double w = ldexp(1, -(int)(level - t->level < 63 ? level - t->level : 63));
        int rc = w < 1 ? merge_scaled(sum, t->hist, w, err, sizeof err)
                       : llc_statmodel_hist_merge(sum, t->hist, err, sizeof err);
        if (rc == 0 && t->n_watch)
            rc = llc_statmodel_hist_add_dangling(sum, w * (double)t->n_watch, err, sizeof err);
        /* Another thread's counters, read while it runs: a snapshot. */
        const uint64_t refs = t->hot ? rt_refs(t->hot) : t->refs_final;
        info.refs += refs;
        info.lines += t->hot ? __atomic_load_n(&t->hot->lines, __ATOMIC_RELAXED) : t->lines_final;
        if (rc == 0 && c->window && rt_windows_collect(&collect, t, refs) < 0)
            rc = llc_errf(err, sizeof err, -ENOMEM, "out of memory for the windows");
        pthread_mutex_unlock(&t->lock);
        if (rc < 0)
            goto fail;
    }
    if (c->window && rt_windows_finish(&collect, c->window, c->window_pcs, &windows) < 0) {
        snprintf(err, sizeof err, "out of memory for the windows");
        goto fail;
    }
    info.samples = (uint64_t)llround(llc_statmodel_hist_total(sum));
    if (!lines || info.lines == 0 || info.lines > info.refs)
        info.lines = 0;
    if (llc_afile_open(path, &f, err, sizeof err) < 0 ||
        llc_reusefile_write(llc_afile_stream(f), &info, sum, c->window ? &windows : NULL, err,
                            sizeof err) < 0)
        goto fail;
    const int rc = llc_afile_commit(f, err, sizeof err);
    f = NULL;
    if (rc < 0)
        goto fail;
    llc_statmodel_hist_destroy(sum);
    llc_reusefile_windows_free(&windows);
    return;
fail:
    llc_afile_abort(f);
    llc_statmodel_hist_destroy(sum);
    rt_windows_finish(&collect, 0, 0, &windows); /* frees what was collected */
    llc_reusefile_windows_free(&windows);
    rt_core_warn(c, "profile not written: %s", err);
}

uint64_t *rt_lines_bits;
uint64_t rt_lines_limit;
bool rt_lines_lost;

void rt_lines_map(void)
{
    void *const p = mmap(NULL, RT_LINES_MAX / 8, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    rt_lines_bits = p;
    rt_lines_limit = RT_LINES_MAX;
}

void rt_lines_new(struct rt_hot *h, uint64_t line)
{
    if (line >= RT_LINES_MAX) {
        rt_lines_lost = true;
        return;
    }
    const uint64_t bit = UINT64_C(1) << (line & 63);
    if (!(__atomic_fetch_or(&rt_lines_bits[line >> 6], bit, __ATOMIC_RELAXED) & bit))
        __atomic_fetch_add(&h->lines, 1, __ATOMIC_RELAXED);
}
