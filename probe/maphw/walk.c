/* The probe's access loops: every access timed (timing backend), or a
 * counter read around batches of untimed accesses (pmu backend). Both pace
 * by null operations or by TSC deadlines, and drop batches disturbed by
 * preemption or interrupts. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "llcprobe/common.h"
#include "util/tsc.h"

/* Voluntary + involuntary context switches of this thread so far. */
static long switches(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return -1;
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

#if LLC_HAVE_TSC

static inline uint64_t tsc_now(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* Waits for access j's release time; counts it late when the deadline had
 * passed by a period or more (the probe cannot keep the asked rate). */
static inline void pace_wait(const struct llc_maphw_pace *p, uint64_t j,
                             struct llc_maphw_walk_stats *st)
{
    const uint64_t due = llc_maphw_pace_deadline(p, j);
    uint64_t now = tsc_now();
    if (now >= due + (uint64_t)p->period) {
        st->late++;
        return;
    }
    while (now < due)
        now = tsc_now();
}

static int check_cfg(const struct llc_maphw_walk_cfg *c, char *err, size_t errlen)
{
    if (!c->tsc_hz || !c->batch || !c->journal)
        return llc_errf(err, errlen, -EINVAL, "walk needs the TSC rate and a batch journal");
    return 0;
}

/* Ends a batch: keeps its accesses, or drops them all when the thread was
 * switched out or one access was interrupted meanwhile. */
static void commit(const struct llc_maphw_walk_cfg *c, const uint32_t *units, uint64_t *misses,
                   uint64_t *accesses, struct llc_maphw_walk_stats *st, size_t *in_batch,
                   size_t *trace_mark, bool *spoiled, long *sw0)
{
    if (!*in_batch)
        return;
    const long sw1 = switches();
    st->batches++;
    if (*spoiled || sw1 != *sw0 || *sw0 < 0) {
        st->batches_dropped++;
        st->discarded += *in_batch;
        st->trace_n = *trace_mark; /* its traced ticks go too */
    } else {
        for (size_t k = 0; k < *in_batch; k++) {
            const uint32_t u = units[c->journal[k] >> 1];
            misses[u] += c->journal[k] & 1;
            accesses[u]++;
        }
        st->accesses += *in_batch;
    }
    *in_batch = 0;
    *trace_mark = st->trace_n;
    *spoiled = false;
    *sw0 = switches();
}

int llc_maphw_walk_timed(const struct llc_maphw_walk_cfg *c, void **cursors, const uint32_t *units,
                         size_t n, double dwell_s, uint64_t *misses, uint64_t *accesses,
                         struct llc_maphw_walk_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    int rc = check_cfg(c, err, errlen);
    if (rc < 0)
        return rc;
    if (!n)
        return 0;
    if (n > UINT32_MAX / 2)
        return llc_errf(err, errlen, -EINVAL, "too many units (%zu) in one walk", n);
    struct llc_maphw_pace pace;
    const bool paced = !c->delay_nops && c->rate > 0;
    rc = llc_maphw_pace_init(&pace, c->tsc_hz, paced ? c->rate : 0, n, tsc_now(), err, errlen);
    if (rc < 0)
        return rc;
    const uint64_t end = tsc_now() + llc_maphw_ticks(c->tsc_hz, dwell_s);
    uint64_t j = 0;
    size_t in_batch = 0;
    bool spoiled = false;
    size_t trace_mark = 0;
    long sw0 = switches();
    for (;;) {
        uint64_t t1 = 0;
        for (size_t i = 0; i < n; i++) {
            if (paced)
                pace_wait(&pace, j, st);
            const uint64_t t0 = llc_tsc_begin();
            void *next = *(void *const volatile *)cursors[i];
            t1 = llc_tsc_end();
            cursors[i] = next;
            j++;
            llc_maphw_nops(c->delay_nops);
            const uint64_t d = t1 - t0;
            spoiled |= d > c->discard_ticks;
            c->journal[in_batch++] = (uint32_t)(i << 1 | (d > c->threshold));
            if (c->trace && st->trace_n < c->trace_cap)
                c->trace[st->trace_n++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
            if (in_batch == c->batch)
                commit(c, units, misses, accesses, st, &in_batch, &trace_mark, &spoiled, &sw0);
        }
        if (t1 >= end) {
            commit(c, units, misses, accesses, st, &in_batch, &trace_mark, &spoiled, &sw0);
            break;
        }
    }
    return 0;
}

int llc_maphw_walk_counted(const struct llc_maphw_walk_cfg *c, void **cursor, double dwell_s,
                           llc_maphw_counter_read read, void *read_ctx, uint64_t *misses,
                           uint64_t *accesses, struct llc_maphw_walk_stats *st, char *err,
                           size_t errlen)
{
    memset(st, 0, sizeof(*st));
    if (!c->tsc_hz || !c->batch)
        return llc_errf(err, errlen, -EINVAL, "walk needs the TSC rate and a batch size");
    struct llc_maphw_pace pace;
    const bool paced = !c->delay_nops && c->rate > 0;
    int rc = llc_maphw_pace_init(&pace, c->tsc_hz, paced ? c->rate : 0, 1, tsc_now(), err, errlen);
    if (rc < 0)
        return rc;
    const uint64_t end = tsc_now() + llc_maphw_ticks(c->tsc_hz, dwell_s);
    void *p = *cursor;
    uint64_t j = 0, v0, v1;
    bool complete;
    rc = read(read_ctx, &v0, &complete);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "reading the counter failed");
    long sw0 = switches();
    for (;;) {
        for (unsigned k = 0; k < c->batch; k++) {
            if (paced)
                pace_wait(&pace, j, st);
            p = *(void *const volatile *)p;
            j++;
            llc_maphw_nops(c->delay_nops);
        }
        rc = read(read_ctx, &v1, &complete);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "reading the counter failed");
        const long sw1 = switches();
        st->batches++;
        if (!complete || sw1 != sw0 || sw0 < 0 || v1 < v0) {
            st->batches_dropped++;
            st->discarded += c->batch;
        } else {
            *misses += v1 - v0;
            *accesses += c->batch;
            st->accesses += c->batch;
        }
        v0 = v1;
        sw0 = sw1;
        if (tsc_now() >= end)
            break;
    }
    *cursor = p;
    return 0;
}

#else /* no TSC */

int llc_maphw_walk_timed(const struct llc_maphw_walk_cfg *c, void **cursors, const uint32_t *units,
                         size_t n, double dwell_s, uint64_t *misses, uint64_t *accesses,
                         struct llc_maphw_walk_stats *st, char *err, size_t errlen)
{
    (void)c, (void)cursors, (void)units, (void)n, (void)dwell_s, (void)misses, (void)accesses;
    memset(st, 0, sizeof(*st));
    return llc_errf(err, errlen, -ENOTSUP, "timed walks need x86-64 (rdtsc, lfence)");
}

int llc_maphw_walk_counted(const struct llc_maphw_walk_cfg *c, void **cursor, double dwell_s,
                           llc_maphw_counter_read read, void *read_ctx, uint64_t *misses,
                           uint64_t *accesses, struct llc_maphw_walk_stats *st, char *err,
                           size_t errlen)
{
    (void)c, (void)cursor, (void)dwell_s, (void)read, (void)read_ctx, (void)misses, (void)accesses;
    memset(st, 0, sizeof(*st));
    return llc_errf(err, errlen, -ENOTSUP, "paced walks need x86-64 (rdtsc)");
}

#endif
