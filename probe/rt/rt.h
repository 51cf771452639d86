/* libllcprobe-rt internals shared by its files. */
#ifndef LLC_RT_RT_H
#define LLC_RT_RT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"

enum rt_mode { RT_OFF = 0, RT_HIST, RT_TRACE };

/* Per-thread fields read on every access: in TLS (initial-exec, so one
 * segment-relative load), the rest of the thread's state on the heap. */
struct rt_hot {
    uint64_t countdown;       /* accesses until the slow path; starts at 1 */
    uint64_t refs;            /* accesses of this thread so far */
    const uint64_t *filter;   /* bit per hash of watched lines (may be stale-set) */
    unsigned shift;           /* 64 - log2(filter bits) */
    struct rt_thread *thread; /* NULL until the thread's first access */
};

/* A thread's watches and histogram. Lives until exit (the final profile
 * reads it), also after the thread ends. */
struct rt_thread {
    pthread_mutex_t lock;
    struct rt_hot *hot;       /* NULL once the thread has ended */
    uint64_t refs_final;      /* hot->refs when it ended */
    uint64_t *key;            /* line + 1; 0 = empty */
    uint64_t *pos;            /* access index of the sample */
    uint64_t mask;
    unsigned shift;
    uint64_t n_watch;
    uint64_t *filter;
    unsigned filter_bits_log2;
    uint64_t filter_set;      /* watches inserted since the filter was built */
    struct llc_statmodel_hist *hist;
    uint64_t taken;
    uint64_t rng;
    struct rt_thread *next;
};

/* Watch table (watch.c). */
int rt_watch_init(struct rt_thread *t);
/* Inserts line (sampled at pos); resolves nothing. -ENOMEM. */
int rt_watch_add(struct rt_thread *t, uint64_t line, uint64_t pos);
/* If line is watched, records its reuse distance and unwatches it. */
int rt_watch_hit(struct rt_thread *t, uint64_t line, uint64_t pos);
void rt_watch_free(struct rt_thread *t);

static inline uint64_t rt_hash(uint64_t line) { return line * 0x9E3779B97F4A7C15ull; }

#endif
