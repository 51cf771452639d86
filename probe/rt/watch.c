/* The runtime's per-thread watch table: open addressing keyed by line, and
 * a bit filter in front of it so that the per-access check of an unwatched
 * line is one load and a predictable branch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/rng.h"
#include "rt/rt.h"

/* Table slots per watch at most, and filter bits per watch at least. */
#define TABLE_SPARSITY 4
#define FILTER_BITS_PER_WATCH 32
#define FILTER_MIN_LOG2 16 /* 8 KiB: small next to any cache the program uses */
#define FILTER_MAX_LOG2 40

static int alloc_table(struct rt_thread *t, unsigned bits)
{
    uint64_t *key = calloc((size_t)1 << bits, sizeof *key);
    uint64_t *pos = malloc(((size_t)1 << bits) * sizeof *pos);
    if (!key || !pos) {
        free(key);
        free(pos);
        return -ENOMEM;
    }
    t->key = key;
    t->pos = pos;
    t->mask = (UINT64_C(1) << bits) - 1;
    t->shift = 64u - bits;
    return 0;
}

/* Rebuilds the filter from the table: bits of resolved watches are not
 * cleared when they resolve (another watch may share the bit), so they
 * accumulate until this. */
static int rebuild_filter(struct rt_thread *t)
{
    unsigned log2 = FILTER_MIN_LOG2;
    while (log2 < FILTER_MAX_LOG2 &&
           ((uint64_t)1 << log2) < FILTER_BITS_PER_WATCH * (t->n_watch + 1))
        log2++;
    uint64_t *f = calloc(((size_t)1 << log2) / 64, sizeof *f);
    if (!f)
        return -ENOMEM;
    for (uint64_t i = 0; i <= t->mask; i++) {
        if (!t->key[i])
            continue;
        const uint64_t b = rt_pos(t->key[i] - 1, log2);
        f[b >> 6] |= UINT64_C(1) << (b & 63);
    }
    /* The thread reads hot->filter without the lock: publish the new one
     * before freeing the old. Only the owning thread frees, and it is the
     * one running here (watches are added by their thread only). */
    uint64_t *old = t->filter;
    t->filter = f;
    t->filter_bits_log2 = log2;
    t->filter_set = t->n_watch;
    if (t->hot) {
        t->hot->filter = f;
        t->hot->shift = 64u - log2;
    }
    free(old);
    return 0;
}

int rt_watch_init(struct rt_thread *t)
{
    if (alloc_table(t, 8))
        return -ENOMEM;
    return rebuild_filter(t);
}

/* Home slot of a key (line + 1): the line's position (rt_pos) at the
 * table's size, as the filter's at its size, which clear_if_unshared
 * relies on. */
static uint64_t slot_of(const struct rt_thread *t, uint64_t key)
{
    return rt_pos(key - 1, 64u - t->shift);
}

/* Moves the watches into a fresh table of 2^bits slots, each kept with
 * probability 2^-halvings (0: all). */
static int rehash(struct rt_thread *t, unsigned bits, unsigned halvings)
{
    uint64_t *const old_key = t->key, *const old_pos = t->pos;
    const uint64_t old_size = t->mask + 1, old_mask = t->mask;
    const unsigned old_shift = t->shift;
    if (alloc_table(t, bits)) {
        t->key = old_key;
        t->pos = old_pos;
        t->mask = old_mask;
        t->shift = old_shift;
        return -ENOMEM;
    }
    t->n_watch = 0;
    for (uint64_t i = 0; i < old_size; i++) {
        if (!old_key[i] || (halvings && llc_splitmix_next(&t->rng) >> (64 - halvings)))
            continue;
        uint64_t j = slot_of(t, old_key[i]);
        while (t->key[j])
            j = (j + 1) & t->mask;
        t->key[j] = old_key[i];
        t->pos[j] = old_pos[i];
        t->n_watch++;
    }
    free(old_key);
    free(old_pos);
    return 0;
}

static int grow(struct rt_thread *t)
{
    return rehash(t, 64u - t->shift + 1u, 0);
}

int rt_watch_thin(struct rt_thread *t, unsigned halvings)
{
    const int rc = rehash(t, 64u - t->shift, halvings);
    return rc ? rc : rebuild_filter(t);
}

int rt_watch_add(struct rt_thread *t, uint64_t line, uint64_t pos)
{
    if (TABLE_SPARSITY * (t->n_watch + 1) > t->mask + 1 && grow(t))
        return -ENOMEM;
    const uint64_t key = line + 1;
    uint64_t j = slot_of(t, key);
    while (t->key[j])
        j = (j + 1) & t->mask;
    t->key[j] = key;
    t->pos[j] = pos;
    t->n_watch++;
    t->filter_set++;
    /* A filter too full of set bits sends too many accesses to the table. */
    if (((uint64_t)1 << t->filter_bits_log2) < FILTER_BITS_PER_WATCH / 2 * t->filter_set)
        return rebuild_filter(t);
    const uint64_t b = rt_pos(line, t->filter_bits_log2);
    t->filter[b >> 6] |= UINT64_C(1) << (b & 63);
    return 0;
}

/* Backward-shift deletion: no tombstones, lookups stop at the first gap. */
static void remove_at(struct rt_thread *t, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        if (!t->key[j])
            break;
        const uint64_t home = slot_of(t, t->key[j]);
        const int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            t->key[i] = t->key[j];
            t->pos[i] = t->pos[j];
            i = j;
        }
    }
    t->key[i] = 0;
    t->n_watch--;
}

/* Clears line's filter bit unless a watched line still shares it. A set
 * bit whose watch has resolved sends every access to that line here, and
 * the lines sampled most are the hottest: left set (as before), such bits
 * put 40% of bzip2's run time into this table. Lines that share a filter
 * bit share their position at the filter's size, hence their home slot
 * whenever the table has no more bits than the filter (rt_pos), and so all
 * lie in the run of occupied slots from that home. */
static void clear_if_unshared(struct rt_thread *t, uint64_t line)
{
    const unsigned table_log2 = 64u - t->shift;
    if (t->filter_bits_log2 < table_log2)
        return; /* not decidable cheaply: the next rebuild clears it */
    const uint64_t b = rt_pos(line, t->filter_bits_log2);
    for (uint64_t j = slot_of(t, line + 1); t->key[j]; j = (j + 1) & t->mask)
        if (rt_pos(t->key[j] - 1, t->filter_bits_log2) == b)
            return;
    t->filter[b >> 6] &= ~(UINT64_C(1) << (b & 63));
}

int rt_watch_hit(struct rt_thread *t, uint64_t line, uint64_t pos)
{
    const uint64_t key = line + 1;
    int rc = 0;
    for (uint64_t j = slot_of(t, key); t->key[j]; j = (j + 1) & t->mask) {
        if (t->key[j] != key)
            continue;
        rc = llc_statmodel_hist_add(t->hist, pos - t->pos[j] - 1, 1.0, NULL, 0);
        if (rc == 0 && t->window)
            rt_window_sample(t, t->pos[j], pos - t->pos[j] - 1);
        remove_at(t, j);
        break;
    }
    /* Also after a false positive: the bit may be one a resolved watch left. */
    clear_if_unshared(t, line);
    return rc;
}

void rt_watch_free(struct rt_thread *t)
{
    free(t->key);
    free(t->pos);
    free(t->filter);
    t->key = t->pos = t->filter = NULL;
}
