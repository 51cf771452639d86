/* The runtime's windows (`mrc --phases` from a profile): each thread's
 * references cut into windows of a fixed length, each window's signature
 * from code addresses sampled in it, and every reuse sample with the access
 * index it was taken at (which names its window). All of it is done on the
 * slow path (a sample, a signature sample, a window's end), never per
 * access. Memory grows by doubling up to a cap per thread; past the cap the
 * records stop and the profile says "truncated". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/rt.h"

/* v (n used of *cap elements of size sz) with room for one more: v itself,
 * or v grown (doubling, up to max elements), or NULL (v unchanged). */
static void *room(void *v, size_t n, size_t *cap, size_t sz, uint64_t max)
{
    if (n < *cap)
        return v;
    if (*cap >= max)
        return NULL;
    const size_t want = *cap ? 2 * *cap : 64;
    const size_t next = want > max ? (size_t)max : want;
    void *p = realloc(v, next * sz);
    if (p)
        *cap = next;
    return p;
}

/* The next free element of array arr (count n, capacity cap), or NULL. */
#define PUSH(arr, n, cap, max, tmp) \
    ((tmp = room(arr, n, &(cap), sizeof *(arr), max)) ? ((arr) = tmp, &(arr)[(n)++]) : NULL)

static void truncate_windows(struct rt_thread *t)
{
    if (!t->truncated)
        fprintf(stderr,
                "llcprobe-rt: window records of thread %u stop after %zu windows and "
                "%zu samples (memory cap or out of memory): the profile's windows are "
                "truncated and mrc --phases will refuse it (use a longer "
                "LLCPROBE_RT_WINDOW or a lower rate)\n",
                t->index, t->n_win, t->n_smp);
    t->truncated = true;
}

void rt_window_pc(struct rt_thread *t, uint64_t pc)
{
    const uint64_t line = (pc >> LLC_PHASE_IP_GRANULE_BITS) + 1;
    const size_t slot = (size_t)(rt_hash(line) >> (64 - 6));
    _Static_assert(RT_PC_CACHE == 1 << 6, "slot bits");
    if (t->pc_line[slot] != line) {
        t->pc_line[slot] = line;
        t->pc_bucket[slot] = (uint8_t)llc_phase_hash_ip(pc);
    }
    t->cur.counts[t->pc_bucket[slot]]++;
    t->cur.pcs++;
}

static uint64_t window_seq;

void rt_window_close(struct rt_thread *t)
{
    if (!t->truncated) {
        void *tmp;
        struct rt_window *w = PUSH(t->win, t->n_win, t->cap_win, RT_MAX_WINDOWS, tmp);
        if (w) {
            t->cur.refs = t->window;
            t->cur.thread = t->index;
            w->seq = __atomic_fetch_add(&window_seq, 1, __ATOMIC_RELAXED);
            w->w = t->cur;
        } else {
            truncate_windows(t);
        }
    }
    memset(&t->cur, 0, sizeof t->cur);
}

void rt_window_sample(struct rt_thread *t, uint64_t pos, uint64_t distance)
{
    if (t->truncated)
        return;
    void *tmp;
    struct rt_sample *s = PUSH(t->smp, t->n_smp, t->cap_smp, RT_MAX_SAMPLES, tmp);
    if (s)
        *s = (struct rt_sample){.pos = pos, .distance = distance};
    else
        truncate_windows(t);
}

int rt_windows_collect(struct rt_collect *c, const struct rt_thread *t, uint64_t refs)
{
    void *tmp;
    const uint64_t base = c->slots;
    c->slots += t->n_win + 1;
    c->truncated |= t->truncated;
    for (size_t k = 0; k < t->n_win; k++) {
        struct rt_entry *e = PUSH(c->win, c->n_win, c->cap_win, SIZE_MAX, tmp);
        if (!e)
            return -ENOMEM;
        *e = (struct rt_entry){.seq = t->win[k].seq, .key = base + k, .w = t->win[k].w};
    }
    /* The window in progress, after every window that ended (the seq
     * counter stays far below 2^63). */
    const uint64_t done = (uint64_t)t->n_win * t->window;
    if (!t->truncated && refs > done) {
        struct rt_entry *e = PUSH(c->win, c->n_win, c->cap_win, SIZE_MAX, tmp);
        if (!e)
            return -ENOMEM;
        *e = (struct rt_entry){
            .seq = (UINT64_C(1) << 63) + t->index, .key = base + t->n_win, .w = t->cur};
        e->w.refs = refs - done;
        e->w.thread = t->index;
    }
    for (size_t i = 0; i < t->n_smp; i++) {
        struct rt_sample *s = PUSH(c->smp, c->n_smp, c->cap_smp, SIZE_MAX, tmp);
        if (!s)
            return -ENOMEM;
        *s = (struct rt_sample){.pos = base + t->smp[i].pos / t->window,
                                .distance = t->smp[i].distance};
    }
    for (uint64_t j = 0; t->key && j <= t->mask; j++) {
        if (!t->key[j])
            continue;
        struct rt_sample *s = PUSH(c->smp, c->n_smp, c->cap_smp, SIZE_MAX, tmp);
        if (!s)
            return -ENOMEM;
        *s = (struct rt_sample){.pos = base + t->pos[j] / t->window,
                                .distance = LLC_REUSEFILE_NEVER_REUSED};
    }
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const uint64_t x = ((const struct rt_entry *)a)->seq, y = ((const struct rt_entry *)b)->seq;
    return (x > y) - (x < y);
}

int rt_windows_finish(struct rt_collect *c, uint64_t length, uint32_t pcs_per_window,
                      struct llc_reusefile_windows *out)
{
    int rc = 0;
    uint64_t *index_of = malloc((c->slots ? c->slots : 1) * sizeof *index_of);
    *out = (struct llc_reusefile_windows){
        .length = length, .pcs_per_window = pcs_per_window, .complete = !c->truncated};
    out->windows = calloc(c->n_win ? c->n_win : 1, sizeof *out->windows);
    out->samples = calloc(c->n_smp ? c->n_smp : 1, sizeof *out->samples);
    if (!index_of || !out->windows || !out->samples) {
        rc = -ENOMEM;
        goto out;
    }
    if (c->n_win)
        qsort(c->win, c->n_win, sizeof *c->win, by_seq);
    for (uint64_t k = 0; k < c->slots; k++)
        index_of[k] = UINT64_MAX;
    for (size_t i = 0; i < c->n_win; i++) {
        index_of[c->win[i].key] = i;
        out->windows[i] = c->win[i].w;
    }
    out->n_windows = c->n_win;
    for (size_t i = 0; i < c->n_smp; i++) {
        const uint64_t w = c->smp[i].pos < c->slots ? index_of[c->smp[i].pos] : UINT64_MAX;
        if (w == UINT64_MAX)
            continue; /* its window was not recorded (truncated) */
        out->samples[out->n_samples++] =
            (struct llc_reusefile_sample){.window = w, .distance = c->smp[i].distance};
    }
out:
    if (rc < 0)
        llc_reusefile_windows_free(out);
    free(index_of);
    free(c->win);
    free(c->smp);
    *c = (struct rt_collect){0};
    return rc;
}

void rt_windows_free(struct rt_thread *t)
{
    free(t->win);
    free(t->smp);
    t->win = NULL;
    t->smp = NULL;
    t->n_win = t->cap_win = t->n_smp = t->cap_smp = 0;
}
