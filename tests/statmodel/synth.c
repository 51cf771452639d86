#include "llcprobe/common.h"
#include "synth.h"

#include <math.h>
#include <stdlib.h>

uint64_t synth_next(struct synth_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double synth_uniform(struct synth_rng *r)
{
    return (double)(synth_next(r) >> 11) * 0x1.0p-53;
}

void synth_stream(const struct synth_mix *mix, struct synth_rng *r, uint64_t *stream_next,
                  uint64_t *lines, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double u = synth_uniform(r);
        if (u < mix->p_hot)
            lines[i] = synth_next(r) % mix->hot_lines;
        else if (u < mix->p_hot + mix->p_med)
            lines[i] = (UINT64_C(1) << 40) + synth_next(r) % mix->med_lines;
        else if (u < mix->p_hot + mix->p_med + mix->p_large)
            lines[i] = (UINT64_C(2) << 40) + synth_next(r) % mix->large_lines;
        else
            lines[i] = (UINT64_C(3) << 40) + (*stream_next)++;
    }
}

/* Open-addressing map line -> slot in the cache array. */
struct map {
    uint64_t *key; /* line + 1, 0 = empty, UINT64_MAX = deleted */
    size_t *val;
    size_t mask;
};

static size_t home(const struct map *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & m->mask;
}

static size_t *map_find(struct map *m, uint64_t key)
{
    for (size_t s = home(m, key); m->key[s]; s = (s + 1) & m->mask)
        if (m->key[s] == key)
            return &m->val[s];
    return NULL;
}

static void map_put(struct map *m, uint64_t key, size_t val)
{
    size_t s = home(m, key);
    while (m->key[s] && m->key[s] != UINT64_MAX)
        s = (s + 1) & m->mask;
    m->key[s] = key;
    m->val[s] = val;
}

static void map_del(struct map *m, uint64_t key)
{
    for (size_t s = home(m, key); m->key[s]; s = (s + 1) & m->mask)
        if (m->key[s] == key) {
            m->key[s] = UINT64_MAX;
            return;
        }
}

double synth_random_cache_windows(const uint64_t *lines, size_t n, size_t cache_lines,
                                  uint64_t seed, size_t window, double *miss)
{
    size_t size = 1024;
    while (size < 4 * cache_lines)
        size *= 2;
    struct map m = {calloc(size, sizeof(uint64_t)), calloc(size, sizeof(size_t)), size - 1};
    uint64_t *slots = calloc(cache_lines, sizeof *slots);
    struct synth_rng r = {seed};
    size_t used = 0, misses = 0, wmiss = 0, tomb = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = lines[i] + 1;
        if (!map_find(&m, key)) {
            misses++;
            wmiss++;
            size_t slot = used;
            if (used < cache_lines) {
                used++;
            } else {
                slot = (size_t)(synth_next(&r) % cache_lines);
                map_del(&m, slots[slot]);
                tomb++;
            }
            slots[slot] = key;
            map_put(&m, key, slot);
            if (tomb > size / 4) { /* rebuild without tombstones */
                for (size_t s = 0; s < size; s++)
                    m.key[s] = 0;
                for (size_t s = 0; s < used; s++)
                    map_put(&m, slots[s], s);
                tomb = 0;
            }
        }
        if (window && miss && (i + 1) % window == 0) {
            miss[i / window] = (double)wmiss / (double)window;
            wmiss = 0;
        }
    }
    free(m.key);
    free(m.val);
    free(slots);
    return (double)misses / (double)n;
}

double synth_random_cache(const uint64_t *lines, size_t n, size_t cache_lines, uint64_t seed)
{
    return synth_random_cache_windows(lines, n, cache_lines, seed, 0, NULL);
}

struct llc_statmodel_model *synth_model_of_pairs(const struct llc_statmodel_bucket_count *pairs,
                                                 size_t n, double n_inf)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    if (llc_statmodel_hist_create(&h, err, sizeof err) == 0 &&
        llc_statmodel_hist_set_pairs(h, pairs, n, n_inf, err, sizeof err) == 0 &&
        llc_statmodel_prepare(h, &m, err, sizeof err) != 0)
        m = NULL;
    llc_statmodel_hist_destroy(h);
    return m;
}

struct llc_statmodel_model *synth_model_power(double cold)
{
    struct llc_statmodel_bucket_count pairs[LLC_STATMODEL_BUCKETS];
    size_t n = 0;
    double total = 0;
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++) {
        const uint64_t lo = llc_statmodel_bucket_lo(b);
        if (lo > (1u << 22))
            break;
        const double mass = 1e6 * (double)llc_statmodel_bucket_width(b) * pow((double)lo + 1, -1.3);
        pairs[n++] = (struct llc_statmodel_bucket_count){.bucket = b, .count = mass};
        total += mass;
    }
    return synth_model_of_pairs(pairs, n, cold * total / (1 - cold));
}
