/* libllcprobe-rt internals shared by its files. */
#ifndef LLC_RT_RT_H
#define LLC_RT_RT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"
#include "mrc/mrc.h"

enum rt_mode { RT_OFF = 0, RT_HIST, RT_TRACE };

/* Per-thread fields read on every access: in TLS (initial-exec, so one
 * segment-relative load), the rest of the thread's state on the heap. */
struct rt_hot {
    uint64_t countdown;       /* accesses until the slow path; starts at 1 */
    uint64_t refs;            /* accesses of this thread so far */
    const uint64_t *filter;   /* bit per hash of watched lines (may be stale-set) */
    unsigned shift;           /* 64 - log2(filter bits) */
    struct rt_thread *thread; /* NULL until the thread's first access */
    uint32_t busy;            /* inside the runtime: libc wrappers do not feed it */
    uint64_t lines;           /* lines this thread touched first (rt.c, lines_map) */
};

#define RT_PC_CACHE 64

/* A window that ended, in the order windows ended over all threads. */
struct rt_window {
    uint64_t seq;
    struct llc_mrc_profile_window w;
};

/* A resolved (or, at the end, dangling) sample: the access index it was
 * taken at, which says its window, and its distance. */
struct rt_sample {
    uint64_t pos;
    uint64_t distance;
};

/* A thread's watches and histogram. Lives until exit (the final profile
 * reads it), also after the thread ends. */
struct rt_thread {
    pthread_mutex_t lock;
    struct rt_hot *hot;       /* NULL once the thread has ended */
    uint64_t refs_final;      /* hot->refs when it ended */
    uint64_t lines_final;     /* hot->lines when it ended */
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
    unsigned level;           /* adaptive rate: halvings applied to this thread */
    double log1m_rate;        /* log(1 - its rate) */
    uint64_t rng;
    uint32_t index;           /* order of the thread's first access */
    /* Windows (LLCPROBE_RT_WINDOW > 0, else 0 and the targets stay at
     * UINT64_MAX): reference numbers (h->refs, 1-based) of the next
     * sample, the next signature sample and the window's last access. */
    uint64_t window;
    uint64_t next_sample, next_pc, window_end;
    uint64_t pc_rng;
    struct llc_mrc_profile_window cur; /* the window in progress */
    /* Recent code lines (+ 1; 0 = empty) and their llc_phase_hash_ip
     * buckets, direct-mapped: sampled code addresses repeat (loops), and
     * the hash costs about 190 instructions. */
    uint64_t pc_line[RT_PC_CACHE];
    uint8_t pc_bucket[RT_PC_CACHE];
    struct rt_window *win;
    size_t n_win, cap_win;
    struct rt_sample *smp;
    size_t n_smp, cap_smp;
    bool truncated;           /* a cap or malloc stopped the window records */
    struct rt_thread *next;
};

/* Watch table (watch.c). */
int rt_watch_init(struct rt_thread *t);
/* Inserts line (sampled at pos); resolves nothing. -ENOMEM. */
int rt_watch_add(struct rt_thread *t, uint64_t line, uint64_t pos);
/* If line is watched, records its reuse distance and unwatches it. */
int rt_watch_hit(struct rt_thread *t, uint64_t line, uint64_t pos);
void rt_watch_free(struct rt_thread *t);
/* Keeps each watch with probability 2^-halvings (1 <= halvings < 64), as if
 * it had been sampled at that fraction of the rate. -ENOMEM. */
int rt_watch_thin(struct rt_thread *t, unsigned halvings);

/* Windows (window.c): all called with t->lock held. */
/* Counts the code address of a signature sample in the current window. */
void rt_window_pc(struct rt_thread *t, uint64_t pc);
/* Ends the current (full) window. */
void rt_window_close(struct rt_thread *t);
/* Records a sample taken at pos that was reused after distance more
 * references (LLC_MRC_NEVER_REUSED: not yet / never). */
void rt_window_sample(struct rt_thread *t, uint64_t pos, uint64_t distance);
/* Appends t's windows (the current one ends at refs references) and
 * samples, pending watches as dangling, to the collection c. */
struct rt_collect {
    struct rt_entry {
        uint64_t seq, key;   /* key: slot of (thread, window index) */
        struct llc_mrc_profile_window w;
    } *win;
    size_t n_win, cap_win;
    struct rt_sample *smp;   /* pos rewritten to the key of its window */
    size_t n_smp, cap_smp;
    uint64_t slots;          /* keys handed out */
    bool truncated;
};
int rt_windows_collect(struct rt_collect *c, const struct rt_thread *t, uint64_t refs);
/* Orders c's windows by when they ended and fills out (pointing into
 * fresh arrays, freed with llc_mrc_profile_windows_free). c is freed. */
int rt_windows_finish(struct rt_collect *c, uint64_t length, uint32_t pcs_per_window,
                      struct llc_mrc_profile_windows *out);
void rt_windows_free(struct rt_thread *t);
/* Caps per thread (memory stays bounded): about 40 MB of windows and
 * 64 MB of samples. */
#define RT_MAX_WINDOWS (UINT64_C(1) << 18)
#define RT_MAX_SAMPLES (UINT64_C(1) << 22)

/* Feeds the lines of [p, p + n) as accesses of kind (LLC_TRACE_LOAD or
 * _STORE) made at pc, one per line, in address order; two ranges (b may
 * be NULL) are fed interleaved, line by line, as a copy reads and writes
 * them. Does nothing inside the runtime itself. (rt.c, for libc.c.) */
void rt_range(const void *a, uint8_t kind_a, const void *b, uint8_t kind_b, size_t n,
              uint64_t pc);

static inline uint64_t rt_hash(uint64_t line) { return line * 0x9E3779B97F4A7C15ull; }

#endif
