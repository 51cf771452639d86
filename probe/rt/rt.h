/* The sampling core shared by libllcprobe-rt (rt.c, libc.c) and the QEMU
 * plugin (probe/qemu/plugin.c): per-thread state, the countdown to the
 * slow path, the watch table and its filter, windows, and the profile. */
#ifndef LLC_RT_RT_H
#define LLC_RT_RT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"
#include "llcprobe/reusefile.h"

enum rt_mode { RT_OFF = 0, RT_HIST, RT_TRACE };

/* Per-thread fields read on every access (the runtime keeps them in TLS,
 * initial-exec, so one segment-relative load; the plugin per vCPU), the
 * rest of the thread's state on the heap. The per-access path decrements
 * only the countdown: references so far are refs + (armed - countdown)
 * (rt_refs), one chain of dependent memory updates per access, not two. */
struct rt_hot {
    uint64_t countdown;       /* accesses until the slow path; starts at 1 */
    uint64_t refs;            /* accesses of this thread when the countdown was set */
    uint64_t armed;           /* the countdown's value then; starts at 1 */
    const uint64_t *filter;   /* bit per watched line's position (may be stale-set) */
    unsigned shift;           /* 64 - log2(filter bits) */
    struct rt_thread *thread; /* NULL until the thread's first access */
    uint32_t busy;            /* inside the runtime: libc wrappers do not feed it */
    uint64_t lines;           /* lines this thread touched first (rt.c, lines_map) */
};

#define RT_PC_CACHE 64

/* A window that ended, in the order windows ended over all threads. */
struct rt_window {
    uint64_t seq;
    struct llc_reusefile_window w;
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
    struct rt_hot *hot;   /* NULL once the thread has ended */
    uint64_t refs_final;  /* hot->refs when it ended */
    uint64_t lines_final; /* hot->lines when it ended */
    uint64_t *key;        /* line + 1; 0 = empty */
    uint64_t *pos;        /* access index of the sample */
    uint64_t mask;
    unsigned shift;
    uint64_t n_watch;
    uint64_t *filter;
    unsigned filter_bits_log2;
    uint64_t filter_set; /* watches inserted since the filter was built */
    struct llc_statmodel_hist *hist;
    uint64_t taken;
    unsigned level;    /* adaptive rate: halvings applied to this thread */
    double log1m_rate; /* log(1 - its rate) */
    uint64_t rng;
    uint32_t index; /* order of the thread's first access */
    /* Windows (LLCPROBE_RT_WINDOW > 0, else 0 and the targets stay at
     * UINT64_MAX): reference numbers (h->refs, 1-based) of the next
     * sample, the next signature sample and the window's last access. */
    uint64_t window;
    uint64_t next_sample, next_pc, window_end;
    uint64_t pc_rng;
    struct llc_reusefile_window cur; /* the window in progress */
    /* Recent code lines (+ 1; 0 = empty) and their llc_phase_hash_ip
     * buckets, direct-mapped: sampled code addresses repeat (loops), and
     * the hash costs about 190 instructions. */
    uint64_t pc_line[RT_PC_CACHE];
    uint8_t pc_bucket[RT_PC_CACHE];
    struct rt_window *win;
    size_t n_win, cap_win;
    struct rt_sample *smp;
    size_t n_smp, cap_smp;
    bool truncated; /* a cap or malloc stopped the window records */
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
 * references (LLC_REUSEFILE_NEVER_REUSED: not yet / never). */
void rt_window_sample(struct rt_thread *t, uint64_t pos, uint64_t distance);
/* Appends t's windows (the current one ends at refs references) and
 * samples, pending watches as dangling, to the collection c. */
struct rt_collect {
    struct rt_entry {
        uint64_t seq, key; /* key: slot of (thread, window index) */
        struct llc_reusefile_window w;
    } * win;
    size_t n_win, cap_win;
    struct rt_sample *smp; /* pos rewritten to the key of its window */
    size_t n_smp, cap_smp;
    uint64_t slots; /* keys handed out */
    bool truncated;
};
int rt_windows_collect(struct rt_collect *c, const struct rt_thread *t, uint64_t refs);
/* Orders c's windows by when they ended and fills out (pointing into
 * fresh arrays, freed with llc_reusefile_windows_free). c is freed. */
int rt_windows_finish(struct rt_collect *c, uint64_t length, uint32_t pcs_per_window,
                      struct llc_reusefile_windows *out);
void rt_windows_free(struct rt_thread *t);
/* Caps per thread (memory stays bounded): about 40 MB of windows and
 * 64 MB of samples. */
#define RT_MAX_WINDOWS (UINT64_C(1) << 18)
#define RT_MAX_SAMPLES (UINT64_C(1) << 22)

/* Feeds the lines of [p, p + n) as accesses of kind (LLC_TRACE_LOAD or
 * _STORE) made at pc, one per line, in address order; two ranges (b may
 * be NULL) are fed interleaved, line by line, as a copy reads and writes
 * them. Does nothing inside the runtime itself. (rt.c, for libc.c.) */
void rt_range(const void *a, uint8_t kind_a, const void *b, uint8_t kind_b, size_t n, uint64_t pc);

static inline uint64_t rt_hash(uint64_t line)
{
    return line * 0x9E3779B97F4A7C15ull;
}

/* Position of a line in a table or filter of 2^bits entries (1 <= bits
 * <= 64): the top bits of its hash. Lines at one position at some size
 * share it at every smaller size (watch.c relies on it). */
static inline uint64_t rt_pos(uint64_t line, unsigned bits)
{
    return rt_hash(line) >> (64u - bits);
}

/* The per-access filter test: a multiply, a load, a bit. */
static inline bool rt_filter_hit(const struct rt_hot *h, uint64_t line)
{
    const uint64_t b = rt_hash(line) >> h->shift;
    return (h->filter[b >> 6] >> (b & 63)) & 1;
}

/* References of h's thread so far. */
static inline uint64_t rt_refs(const struct rt_hot *h)
{
    return h->refs + (h->armed - h->countdown);
}

static inline void rt_set_countdown(struct rt_hot *h, uint64_t countdown)
{
    h->refs = rt_refs(h);
    h->armed = countdown;
    h->countdown = countdown;
}

/* ---- the sampler (core.c) ------------------------------------------------ */

/* What the runtime and the plugin configure alike, and the registry of
 * their threads. */
struct rt_core {
    const char *name;        /* prefix of warnings: llcprobe-rt, llcprobe-qemu */
    double rate;             /* adaptive: the starting rate */
    uint64_t samples_target; /* adaptive rate: 0 = fixed */
    unsigned level;          /* adaptive: halvings so far (atomic) */
    uint64_t taken_all;      /* adaptive: samples at this level, all threads (atomic) */
    uint64_t seed;
    uint64_t window; /* 0: no windows */
    uint32_t window_pcs;
    uint64_t pc_gap_span; /* signature gaps are uniform in [1, span] (rt_core_ready) */
    char command[1024];
    pthread_mutex_t lock; /* the registry (and the callers' own shared state) */
    struct rt_thread *threads;
    uint64_t n_threads;
};

/* The defaults of both samplers: rate 1e-4, seed 1, windows of
 * LLC_REUSEFILE_WINDOW_DEFAULT references with 400 signature samples. */
void rt_core_init(struct rt_core *c, const char *name);
/* After the fields are set: derived values. */
void rt_core_ready(struct rt_core *c);
void rt_core_warn(const struct rt_core *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A filter with no bits set (rt_filter_hit with shift 63 reads word 0). */
extern const uint64_t rt_no_filter[1];
/* No more sampling in h's thread: the slow path is never reached again. */
void rt_hot_idle(struct rt_hot *h);
/* The countdown reached zero (rt_refs(h) is the access being made, of
 * line at code address pc): starts the thread's sampler on its first
 * access, takes a sample, a signature sample, closes a window, and sets
 * the countdown to the next of them. Returns the thread started, if any
 * (NULL: none or out of memory, which idles h). */
struct rt_thread *rt_core_due(struct rt_core *c, struct rt_hot *h, uint64_t line, uint64_t pc);
/* A watched line's filter bit was set: resolves the watch, if any. */
void rt_core_hit(struct rt_core *c, struct rt_hot *h, uint64_t line);
/* h's thread ended: its sampler stays in the registry with its counts. */
void rt_core_thread_end(struct rt_hot *h);
/* Writes the profile of every thread (c->lock held) to path; lines: the
 * profile's distinct lines are the threads' counts (else none). Warns on
 * failure. */
void rt_core_write_profile(struct rt_core *c, const char *path, bool lines);

/* Distinct lines, the exact cold misses of the profile (core.c): a bit per
 * line of the user address space below 2^47 (RT_LINES_MAX lines), in one
 * reservation of 256 GiB (MAP_NORESERVE) that the kernel backs only where
 * lines were touched (1/512 of the data touched). rt_lines_limit stays 0
 * (nothing counted, the profile says no "lines") until rt_lines_map
 * succeeds; an access above 2^47 makes the count inexact: rt_lines_lost. */
#define RT_LINES_MAX (UINT64_C(1) << 41)
extern uint64_t *rt_lines_bits;
extern uint64_t rt_lines_limit;
extern bool rt_lines_lost;
void rt_lines_map(void);
/* line's first touch (by any thread): counted for h. */
void rt_lines_new(struct rt_hot *h, uint64_t line);
/* The per-access test: the out-of-line rt_lines_new only on a new line. */
static inline void rt_lines_touch(struct rt_hot *h, uint64_t line)
{
    if (rt_lines_limit &&
        __builtin_expect(line >= rt_lines_limit || !((rt_lines_bits[line >> 6] >> (line & 63)) & 1),
                         0))
        rt_lines_new(h, line);
}
/* The counts are exact: the map exists and nothing was lost. */
static inline bool rt_lines_exact(void)
{
    return rt_lines_limit && !rt_lines_lost;
}

#endif
