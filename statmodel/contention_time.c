/* docs/METHODS.md §12.7 Phases of co-runners over time: each program walks its solo window
 * sequence at the CPI its current phase tuple gives it; a tuple is solved
 * once (memoised) and reused whenever the programs meet in it again. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

/* More segments than this means runaway restarts (programs of very
 * different lengths); refuse rather than fill memory. */
#define MAX_SEGMENTS (1u << 24)

/* Age classes whose solo solves are memoised (class 160 is an age of
 * 2^80 references: none is met; a larger one is solved each time). */
#define YOUNG_CLASSES 160

struct memo {
    size_t n;     /* programs */
    size_t cap;   /* slots, power of two */
    size_t *slot; /* tuple index + 1, 0 = empty */
    /* Each program's phases alone, solved once: solo[base[i] + phase]. */
    size_t base[64];
    struct llc_contention_share *solo;
    bool *solved;
    /* Young phases alone (same phase and age class, same solo), solved
     * on first use: young[(base[i] + phase) * YOUNG_CLASSES + class]. */
    struct llc_contention_share *young;
    bool *young_solved;
    /* Each phase's warm age (sm_contention_warm_age), found on first use
     * (NAN until then): warm[base[i] + phase]. */
    double *warm;
    double capacity;
};

/* A solo cache entry: a phase (address), its clock and age class. */
struct solo_key {
    const struct llc_contention_phase *ph;
    double freq;
    int cls;
};

struct llc_contention_solo_cache {
    struct llc_contention_config cfg; /* of the first timeline */
    bool has_cfg;
    size_t n, cap; /* entries, slots (power of two) */
    struct solo_key *key;
    struct llc_contention_share *share;
    bool *used;
};

int llc_contention_solo_cache_create(struct llc_contention_solo_cache **out, char *err,
                                     size_t errlen)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : llc_errf(err, errlen, -ENOMEM, "solo cache: out of memory");
}

void llc_contention_solo_cache_free(struct llc_contention_solo_cache *c)
{
    if (!c)
        return;
    free(c->key);
    free(c->share);
    free(c->used);
    free(c);
}

static uint64_t hash_key(const struct solo_key *k)
{
    uint64_t f;
    memcpy(&f, &k->freq, sizeof(f));
    uint64_t h = (uint64_t)(uintptr_t)k->ph * 0x9E3779B97F4A7C15ull;
    h ^= (f + (uint64_t)(uint32_t)k->cls * 0xBF58476D1CE4E5B9ull) + (h << 6) + (h >> 2);
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

/* The slot of key k: where it is, or the empty one it would go to. */
static size_t cache_slot(const struct llc_contention_solo_cache *c, const struct solo_key *k)
{
    size_t s = hash_key(k) & (c->cap - 1);
    while (c->used[s] && !(c->key[s].ph == k->ph && c->key[s].cls == k->cls &&
                           memcmp(&c->key[s].freq, &k->freq, sizeof(k->freq)) == 0))
        s = (s + 1) & (c->cap - 1);
    return s;
}

static int cache_grow(struct llc_contention_solo_cache *c)
{
    const size_t cap = c->cap ? 2 * c->cap : 256;
    struct llc_contention_solo_cache g = {.cap = cap,
                                          .key = malloc(cap * sizeof(*g.key)),
                                          .share = malloc(cap * sizeof(*g.share)),
                                          .used = calloc(cap, sizeof(*g.used))};
    if (!g.key || !g.share || !g.used) {
        free(g.key);
        free(g.share);
        free(g.used);
        return -ENOMEM;
    }
    for (size_t i = 0; i < c->cap; i++)
        if (c->used[i]) {
            const size_t s = cache_slot(&g, &c->key[i]);
            g.used[s] = true;
            g.key[s] = c->key[i];
            g.share[s] = c->share[i];
        }
    free(c->key);
    free(c->share);
    free(c->used);
    c->key = g.key;
    c->share = g.share;
    c->used = g.used;
    c->cap = cap;
    return 0;
}

/* The configuration fields a solo solve reads (policy, options, cache). */
static bool same_cfg(const struct llc_contention_config *a, const struct llc_contention_config *b)
{
    return a->capacity == b->capacity && a->ways == b->ways && a->policy == b->policy &&
           a->coupling == b->coupling && a->anchor == b->anchor && a->skew == b->skew &&
           a->together == b->together && a->assoc == b->assoc && a->guess_warm == b->guess_warm &&
           a->tables == b->tables && a->private_lines == b->private_lines &&
           a->exclusive_lru == b->exclusive_lru && a->exclusive_entered == b->exclusive_entered;
}

/* ph alone (tp: ph at its age class cls, -1 = warm) from the cache, or
 * solved and kept. */
static int cache_solo(struct llc_contention_solo_cache *c, const struct llc_contention_phase *ph,
                      const struct llc_contention_phase *tp, int cls, double freq,
                      const struct llc_contention_config *cfg, struct llc_contention_share *out,
                      char *err, size_t errlen)
{
    if (2 * (c->n + 1) > c->cap && cache_grow(c) < 0)
        return llc_errf(err, errlen, -ENOMEM, "solo cache: out of memory");
    const struct solo_key k = {.ph = ph, .freq = freq, .cls = cls};
    const size_t s = cache_slot(c, &k);
    if (c->used[s]) {
        *out = c->share[s];
        return 0;
    }
    int rc = llc_contention_solo(tp, freq, cfg, out, err, errlen);
    if (rc < 0)
        return rc;
    c->used[s] = true;
    c->key[s] = k;
    c->share[s] = *out;
    c->n++;
    return 0;
}

static uint64_t hash_tuple(const int *ph, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint64_t)(uint32_t)ph[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
    }
    return h ^ (h >> 31);
}

static int grow_tuples(struct llc_contention_run *r, size_t *cap)
{
    if (r->n_tuples < *cap)
        return 0;
    const size_t nc = *cap ? 2 * *cap : 16;
    struct llc_contention_tuple_result *t = realloc(r->tuples, nc * sizeof(*t));
    if (!t)
        return -ENOMEM;
    r->tuples = t;
    *cap = nc;
    return 0;
}

static int memo_rehash(struct memo *m, const struct llc_contention_run *r)
{
    const size_t cap = m->cap ? 2 * m->cap : 64;
    size_t *slot = calloc(cap, sizeof(*slot));
    if (!slot)
        return -ENOMEM;
    for (size_t k = 0; k < r->n_tuples; k++) {
        size_t s = hash_tuple(r->tuples[k].phase, 3 * m->n) & (cap - 1);
        while (slot[s])
            s = (s + 1) & (cap - 1);
        slot[s] = k + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

/* Program i's solo figures in phase index k (tp: the phase at its age
 * class cls, -1 = warm), memoised per phase and class. */
static int solo_of(struct memo *m, struct llc_contention_solo_cache *cache,
                   const struct llc_contention_prog *progs, size_t i, size_t k, int cls,
                   const struct llc_contention_phase *tp, const struct llc_contention_config *cfg,
                   struct llc_contention_share *out, char *err, size_t errlen)
{
    const double freq = progs[i].freq_hz;
    const size_t slot = m->base[i] + k;
    if (cache && cls < YOUNG_CLASSES)
        return cache_solo(cache, &progs[i].phases[k], tp, cls, freq, cfg, out, err, errlen);
    if (cls >= YOUNG_CLASSES)
        return llc_contention_solo(tp, freq, cfg, out, err, errlen);
    int rc = 0;
    if (cls >= 0) { /* young: alone at the same age */
        const size_t y = slot * YOUNG_CLASSES + (size_t)cls;
        if (!m->young_solved[y])
            rc = llc_contention_solo(tp, freq, cfg, &m->young[y], err, errlen);
        m->young_solved[y] = rc == 0;
        *out = m->young[y];
        return rc;
    }
    if (!m->solved[slot])
        rc = llc_contention_solo(tp, freq, cfg, &m->solo[slot], err, errlen);
    m->solved[slot] = rc == 0;
    *out = m->solo[slot];
    return rc;
}

/* Program i's phase k: the age from which it is warm. */
static double warm_age(struct memo *m, const struct llc_contention_prog *progs, size_t i, size_t k)
{
    double *w = &m->warm[m->base[i] + k];
    if (isnan(*w))
        *w = sm_contention_warm_age(&progs[i].phases[k], m->capacity);
    return *w;
}

/* Program i's phase k at age class cls (-1 = warm), in *young if young. */
static const struct llc_contention_phase *at_age(struct memo *m,
                                                 const struct llc_contention_prog *progs, size_t i,
                                                 size_t k, int cls,
                                                 struct llc_contention_phase *young)
{
    if (cls < 0)
        return &progs[i].phases[k];
    *young = progs[i].phases[k];
    young->age = sm_contention_class_mid(cls);
    /* only the class in which the phase turns warm needs its warm age */
    if (sm_contention_age_class(young, young->age, m->capacity) < 0)
        young->age = sm_contention_priced_age(cls, warm_age(m, progs, i, k));
    return young;
}

/* The memo slot of key ph (3n ints), or the empty one it would go to. */
static size_t memo_find(const struct memo *m, const struct llc_contention_run *r, const int *ph)
{
    const size_t n = m->n;
    size_t s = hash_tuple(ph, 3 * n) & (m->cap - 1);
    while (m->slot[s] && memcmp(r->tuples[m->slot[s] - 1].phase, ph, 3 * n * sizeof(int)) != 0)
        s = (s + 1) & (m->cap - 1);
    return s;
}

/* A new tuple of key ph at the end of r->tuples (phase set, shares and
 * solo zeroed), or NULL out of memory. */
static struct llc_contention_tuple_result *new_tuple(struct memo *m, struct llc_contention_run *r,
                                                     size_t *tcap, const int *ph)
{
    const size_t n = m->n;
    if (grow_tuples(r, tcap) < 0)
        return NULL;
    struct llc_contention_tuple_result *t = &r->tuples[r->n_tuples];
    memset(t, 0, sizeof(*t));
    t->phase = malloc(3 * n * sizeof(int));
    t->share = calloc(n, sizeof(*t->share));
    t->solo = calloc(n, sizeof(*t->solo));
    t->age = calloc(n, sizeof(*t->age));
    if (!t->phase || !t->share || !t->solo || !t->age) {
        free(t->phase);
        free(t->share);
        free(t->solo);
        free(t->age);
        return NULL;
    }
    r->n_tuples++; /* owned by the run from here on, freed with it */
    memcpy(t->phase, ph, 3 * n * sizeof(int));
    t->min_window_s = INFINITY;
    return t;
}

/* The tuple of key ph: memoised (1, *index), or a new one to fill (0, *t,
 * its memo slot *s for memo_insert); < 0 out of memory. */
static int memo_get(struct memo *m, struct llc_contention_run *r, size_t *tcap, const int *ph,
                    size_t *s, size_t *index, struct llc_contention_tuple_result **t, char *err,
                    size_t errlen)
{
    *s = memo_find(m, r, ph);
    if (m->slot[*s]) {
        *index = m->slot[*s] - 1;
        return 1;
    }
    *t = new_tuple(m, r, tcap, ph);
    return *t ? 0 : llc_errf(err, errlen, -ENOMEM, "timeline: out of memory");
}

static int memo_insert(struct memo *m, struct llc_contention_run *r, size_t s, size_t *index,
                       char *err, size_t errlen)
{
    m->slot[s] = r->n_tuples;
    *index = r->n_tuples - 1;
    if (2 * r->n_tuples > m->cap && memo_rehash(m, r) < 0)
        return llc_errf(err, errlen, -ENOMEM, "timeline: out of memory");
    return 0;
}

/* Index of the tuple, solving it if new. ph holds the n phases, then their
 * n age classes (-1 = warm; a cold-start phase's age otherwise,
 * docs/METHODS.md §12.2), then n zeros (see compose): a tuple is met again
 * only at the same ages. */
static int lookup(struct memo *m, struct llc_contention_run *r, size_t *tcap, const int *ph,
                  const struct llc_contention_prog *progs, const struct llc_contention_config *cfg,
                  struct llc_contention_solo_cache *cache, size_t prev_index, size_t *index,
                  char *err, size_t errlen)
{
    const size_t n = m->n;
    size_t s;
    struct llc_contention_tuple_result *t;
    int rc = memo_get(m, r, tcap, ph, &s, index, &t, err, errlen);
    if (rc)
        return rc > 0 ? 0 : rc;
    const struct llc_contention_phase *tp[64];
    struct llc_contention_phase young[64];
    double freq[64];
    for (size_t i = 0; i < n; i++) {
        tp[i] = at_age(m, progs, i, (size_t)ph[i], ph[n + i], &young[i]);
        t->age[i] = ph[n + i] < 0 ? NAN : tp[i]->age;
        freq[i] = progs[i].freq_hz;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = solo_of(m, cache, progs, i, (size_t)ph[i], ph[n + i], tp[i], cfg, &t->solo[i], err,
                     errlen);
    /* A young tuple's coupling starts from the previous tuple's slowdowns
     * (each program's co-run / solo rate then) applied to the solo rates
     * here: the tuples a program meets in turn differ in one phase or age
     * class. A warm one starts from the solo rates (unless cfg->guess_warm),
     * so it is the same whatever came before (predict's pair grid copies it). */
    bool warm = true;
    for (size_t i = 0; i < n; i++)
        warm &= ph[n + i] < 0;
    const struct llc_contention_tuple_result *prev =
        prev_index < r->n_tuples && (!warm || cfg->guess_warm) ? &r->tuples[prev_index] : NULL;
    double guess[64];
    for (size_t i = 0; prev && i < n; i++)
        guess[i] =
            prev->solo[i].rate > 0 ? t->solo[i].rate * prev->share[i].rate / prev->solo[i].rate : 0;
    if (rc == 0)
        rc = sm_contention_corun_guess(tp, freq, n, cfg, t->solo, prev ? guess : NULL, t->share,
                                       &t->info, err, errlen);
    if (rc < 0)
        return rc;
    return memo_insert(m, r, s, index, err, errlen);
}

/* The tuple of key ph whose marked programs (ph[2n + j] > 0) are seen by
 * the others through their whole-program phases (docs/METHODS.md §12.7):
 * program i's co-run figures are tuple src[i]'s (the co-run with every
 * other marked program pooled), its solo figures and info tuple s0's (its
 * phases, none pooled). */
static int compose(struct memo *m, struct llc_contention_run *r, size_t *tcap, const int *ph,
                   const size_t *src, size_t s0, size_t *index, char *err, size_t errlen)
{
    size_t s;
    struct llc_contention_tuple_result *t;
    const int rc = memo_get(m, r, tcap, ph, &s, index, &t, err, errlen);
    if (rc)
        return rc > 0 ? 0 : rc;
    for (size_t i = 0; i < m->n; i++) {
        t->share[i] = r->tuples[src[i]].share[i];
        t->age[i] = r->tuples[src[i]].age[i];
    }
    memcpy(t->solo, r->tuples[s0].solo, m->n * sizeof(*t->solo));
    t->info = r->tuples[s0].info;
    return memo_insert(m, r, s, index, err, errlen);
}

/* The plain tuple of key ph with the programs in `pooled` (a bit each) in
 * their whole-program phases at the age classes cls[j]. */
static int lookup_pooled(struct memo *m, struct llc_contention_run *r, size_t *tcap, const int *ph,
                         uint64_t pooled, const int *cls, const struct llc_contention_prog *progs,
                         const struct llc_contention_config *cfg,
                         struct llc_contention_solo_cache *cache, size_t prev_index, size_t *index,
                         char *err, size_t errlen)
{
    const size_t n = m->n;
    int key[192];
    memcpy(key, ph, 2 * n * sizeof(int));
    for (size_t j = 0; j < n; j++) {
        key[2 * n + j] = 0;
        if (pooled >> j & 1) {
            key[j] = (int)(progs[j].whole - progs[j].phases);
            key[n + j] = cls[j];
        }
    }
    return lookup(m, r, tcap, key, progs, cfg, cache, prev_index, index, err, errlen);
}

void llc_contention_run_free(struct llc_contention_run *r)
{
    if (!r)
        return;
    for (size_t k = 0; k < r->n_tuples; k++) {
        free(r->tuples[k].phase);
        free(r->tuples[k].share);
        free(r->tuples[k].solo);
        free(r->tuples[k].age);
    }
    free(r->tuples);
    free(r->segments);
    free(r->segment_window);
    free(r->summary);
    free(r);
}

static int check_progs(const struct llc_contention_prog *progs, size_t n, char *err, size_t errlen)
{
    if (n == 0 || n > 64)
        return llc_errf(err, errlen, -EINVAL, "timeline: %zu programs (1..64)", n);
    for (size_t i = 0; i < n; i++) {
        const struct llc_contention_prog *p = &progs[i];
        if (p->n_windows == 0 || p->n_phases == 0)
            return llc_errf(err, errlen, -EINVAL, "timeline: program %zu has no windows or phases",
                            i);
        for (size_t w = 0; w < p->n_windows; w++) {
            if (p->window_phase[w] < 0 || (size_t)p->window_phase[w] >= p->n_phases)
                return llc_errf(err, errlen, -EINVAL, "timeline: program %zu window %zu: phase %d",
                                i, w, p->window_phase[w]);
            if (!(p->window_instructions[w] > 0) || !isfinite(p->window_instructions[w]))
                return llc_errf(err, errlen, -EINVAL,
                                "timeline: program %zu window %zu: %g instructions", i, w,
                                p->window_instructions[w]);
            if (!p->phases[p->window_phase[w]].model)
                return llc_errf(err, errlen, -EINVAL,
                                "timeline: program %zu phase %d has no reuse profile", i,
                                p->window_phase[w]);
        }
        if (p->whole &&
            (p->whole < p->phases || p->whole >= p->phases + p->n_phases || !p->whole->model))
            return llc_errf(err, errlen, -EINVAL,
                            "timeline: program %zu: its whole-program phase is not one of its "
                            "phases with a reuse profile",
                            i);
    }
    return 0;
}

/* Per window, the instructions of the run of consecutive windows in the
 * same phase it belongs to: the cache has to settle once per phase change,
 * not once per window. */
static double *phase_runs(const struct llc_contention_prog *p)
{
    double *run = malloc(p->n_windows * sizeof(double));
    if (!run)
        return NULL;
    for (size_t w = 0; w < p->n_windows;) {
        size_t e = w;
        double ins = 0;
        for (; e < p->n_windows && p->window_phase[e] == p->window_phase[w]; e++)
            ins += p->window_instructions[e];
        for (; w < e; w++)
            run[w] = ins;
    }
    return run;
}

/* Tuple k (plain) with its programs whose current phase run is shorter
 * than T* seen by the others through their whole-program phases: over T*,
 * a line of theirs waits across those phase changes (docs/METHODS.md
 * §12.7). T* is the co-run's with every such candidate pooled: with their
 * phases now everything may fit while their other phases hold lines that
 * outlast the run. LRU only: random replacement's lines fall at any age,
 * most at the victims' own reuse times, not at one threshold. *k becomes
 * the marked tuple's index, or stays. */
static int whole_marks(struct memo *m, struct llc_contention_run *r, size_t *tcap, int *ph,
                       const struct llc_contention_prog *progs,
                       const struct llc_contention_config *cfg,
                       struct llc_contention_solo_cache *cache, double *const *run_ins,
                       const size_t *win, const double *left, const double *age,
                       const double *prog_refs, size_t *k, char *err, size_t errlen)
{
    const size_t n = m->n, k0 = *k;
    if (llc_contention_base_policy(cfg->policy) != LLC_CONTENTION_LRU)
        return 0;
    const double tstar0 = r->tuples[k0].info.t_star;
    double run_s[64];
    int cls[64];
    uint64_t cand = 0;
    for (size_t j = 0; j < n; j++) {
        const struct llc_contention_phase *w = progs[j].whole;
        run_s[j] = run_ins[j][win[j]] * r->tuples[k0].share[j].cpi / progs[j].freq_hz;
        if (!w || w == &progs[j].phases[ph[j]] || tstar0 < run_s[j])
            continue;
        const double a = w->program_age ? prog_refs[j] + fmax(0, w->age0)
                                        : age[m->base[j] + (size_t)(w - progs[j].phases)];
        const double mid = a + 0.5 * left[j] * w->api;
        if (!(tstar0 < INFINITY)) {
            /* all fits now: and with the lines its whole run can hold by
             * now in place of its phase's? then nothing changes */
            double held = llc_statmodel_footprint(w->model, mid);
            if (w->lines > 0)
                held = fmin(held, w->lines);
            for (size_t i = 0; i < n; i++)
                if (i != j)
                    held += r->tuples[k0].share[i].occupancy;
            if (held <= cfg->capacity)
                continue;
        }
        cls[j] = sm_contention_age_class(w, mid, cfg->capacity);
        cand |= (uint64_t)1 << j;
    }
    if (!cand)
        return 0;
    size_t k_all;
    int rc = lookup_pooled(m, r, tcap, ph, cand, cls, progs, cfg, cache, k0, &k_all, err, errlen);
    if (rc < 0)
        return rc;
    const double tstar = r->tuples[k_all].info.t_star;
    uint64_t marked = 0;
    for (size_t j = 0; j < n; j++)
        if ((cand >> j & 1) && tstar < INFINITY && tstar >= run_s[j])
            marked |= (uint64_t)1 << j;
    if (!marked)
        return 0;
    size_t src[64], k_m = k_all;
    if (marked != cand && (rc = lookup_pooled(m, r, tcap, ph, marked, cls, progs, cfg, cache, k0,
                                              &k_m, err, errlen)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        src[i] = k_m;
        if (!(marked >> i & 1))
            continue;
        const uint64_t others = marked & ~((uint64_t)1 << i);
        src[i] = k0;
        if (others && (rc = lookup_pooled(m, r, tcap, ph, others, cls, progs, cfg, cache, k0,
                                          &src[i], err, errlen)) < 0)
            return rc;
    }
    for (size_t j = 0; j < n; j++)
        ph[2 * n + j] = marked >> j & 1 ? 2 + cls[j] : 0;
    return compose(m, r, tcap, ph, src, k0, k, err, errlen);
}

static int push_segment(struct llc_contention_run *r, size_t *cap, double t0, double dt,
                        size_t tuple, const size_t *win)
{
    const size_t n = r->n;
    if (r->n_segments == *cap) {
        if (*cap >= MAX_SEGMENTS)
            return -E2BIG;
        const size_t nc = *cap ? 2 * *cap : 256;
        struct llc_contention_segment *s = realloc(r->segments, nc * sizeof(*s));
        if (s)
            r->segments = s;
        size_t *w = realloc(r->segment_window, nc * n * sizeof(*w));
        if (w)
            r->segment_window = w;
        if (!s || !w)
            return -ENOMEM;
        *cap = nc;
    }
    r->segments[r->n_segments] =
        (struct llc_contention_segment){.t0 = t0, .dt = dt, .tuple = tuple};
    memcpy(&r->segment_window[r->n_segments * n], win, n * sizeof(*win));
    r->n_segments++;
    return 0;
}

int llc_contention_timeline(const struct llc_contention_prog *progs, size_t n,
                            const struct llc_contention_config *cfg,
                            struct llc_contention_run **out, char *err, size_t errlen)
{
    return llc_contention_timeline_cached(progs, n, cfg, NULL, out, err, errlen);
}

int llc_contention_timeline_cached(const struct llc_contention_prog *progs, size_t n,
                                   const struct llc_contention_config *cfg,
                                   struct llc_contention_solo_cache *cache,
                                   struct llc_contention_run **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = check_progs(progs, n, err, errlen);
    if (rc)
        return rc;
    if (cache && cache->has_cfg && !same_cfg(&cache->cfg, cfg))
        return llc_errf(err, errlen, -EINVAL,
                        "timeline: the solo cache was filled with another configuration");
    if (cache && !cache->has_cfg) {
        cache->cfg = *cfg;
        cache->has_cfg = true;
    }
    struct llc_contention_run *r = calloc(1, sizeof(*r));
    struct memo m = {.n = n};
    double *run_ins[64] = {NULL};
    size_t tcap = 0, scap = 0, win[64];
    double left[64];
    int ph[192];
    bool first[64];
    size_t nph = 0;
    for (size_t i = 0; i < n; i++) {
        m.base[i] = nph;
        nph += progs[i].n_phases;
    }
    m.solo = calloc(nph, sizeof(*m.solo));
    m.solved = calloc(nph, sizeof(*m.solved));
    m.young = calloc(nph * YOUNG_CLASSES, sizeof(*m.young));
    m.young_solved = calloc(nph * YOUNG_CLASSES, sizeof(*m.young_solved));
    m.warm = malloc(nph * sizeof(*m.warm));
    m.capacity = cfg->capacity;
    /* Own references of each program's phases so far (cold start), from
     * each phase's starting age */
    double *age = calloc(nph, sizeof(*age));
    if (!r || !m.solo || !m.solved || !m.young || !m.young_solved || !m.warm || !age ||
        !(r->summary = calloc(n, sizeof(*r->summary))) || memo_rehash(&m, r) < 0) {
        rc = llc_errf(err, errlen, -ENOMEM, "timeline: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < progs[i].n_phases; j++) {
            age[m.base[i] + j] = progs[i].phases[j].age0 > 0 ? progs[i].phases[j].age0 : 0;
            m.warm[m.base[i] + j] = NAN;
        }
    for (size_t i = 0; i < n; i++)
        if (!(run_ins[i] = phase_runs(&progs[i]))) {
            rc = llc_errf(err, errlen, -ENOMEM, "timeline: out of memory");
            goto out;
        }
    r->n = n;
    size_t running = n;
    for (size_t i = 0; i < n; i++) {
        win[i] = 0;
        left[i] = progs[i].window_instructions[0];
        first[i] = true;
    }
    double t = 0;
    double prog_refs[64] = {0}; /* each program's references so far */
    while (running > 0) {
        size_t k = 0;
        /* A young program's segment runs to the end of its window, priced
         * at the age halfway through it, unless its first touches fall so
         * steeply over those ages that the middle misprices them by more
         * than cfg->first_touch_tol per reference: then it ends where the
         * age leaves its class, or where the phase turns warm (each class
         * priced at its middle, or the middle of its young ages). That
         * holds for a segment that starts young and would turn warm by its
         * middle too: a stream's last first touches are all misses. */
        double young_left[64];
        for (size_t i = 0; i < n; i++) {
            ph[i] = progs[i].window_phase[win[i]];
            const struct llc_contention_phase *p = &progs[i].phases[ph[i]];
            const double own = age[m.base[i] + (size_t)ph[i]];
            const double a = p->program_age ? prog_refs[i] + fmax(0, p->age0) : own;
            const double rest = left[i] * p->api;
            ph[n + i] = sm_contention_age_class(p, a + 0.5 * rest, cfg->capacity);
            young_left[i] = INFINITY;
            if (cfg->first_touch_tol < INFINITY &&
                (ph[n + i] >= 0 || sm_contention_age_class(p, a, cfg->capacity) >= 0) &&
                !(fabs(sm_contention_first_touch_error(p, a, rest)) <= cfg->first_touch_tol)) {
                const double warm = warm_age(&m, progs, i, (size_t)ph[i]);
                /* the coarsest class whose ages from a price within the
                 * tolerance, down to 32 classes per octave */
                for (unsigned level = 0; level < SM_CONTENTION_CLASS_LEVELS; level++) {
                    const int key = sm_contention_class_key(a, level);
                    if (key < 0)
                        break;
                    const double end = fmin(sm_contention_class_end(key), warm);
                    ph[n + i] = key;
                    young_left[i] = fmax(end - a, 1) / p->api;
                    if (fabs(sm_contention_first_touch_error(p, a, fmax(end - a, 1))) <=
                        cfg->first_touch_tol)
                        break;
                }
            }
        }
        for (size_t i = 0; i < n; i++)
            ph[2 * n + i] = 0;
        if ((rc = lookup(&m, r, &tcap, ph, progs, cfg, cache,
                         r->n_segments ? r->segments[r->n_segments - 1].tuple : SIZE_MAX, &k, err,
                         errlen)) < 0)
            goto out;
        if ((rc = whole_marks(&m, r, &tcap, ph, progs, cfg, cache, run_ins, win, left, age,
                              prog_refs, &k, err, errlen)) < 0)
            goto out;
        struct llc_contention_tuple_result *tr = &r->tuples[k];
        double dt = INFINITY, shortest = INFINITY;
        for (size_t i = 0; i < n; i++) {
            const double spi = tr->share[i].cpi / progs[i].freq_hz; /* seconds per instruction */
            dt = fmin(dt, fmin(left[i], young_left[i]) * spi);
            shortest = fmin(shortest, run_ins[i][win[i]] * spi);
        }
        if (!(dt > 0) || !isfinite(dt)) {
            rc = llc_errf(err, errlen, -EDOM, "timeline: tuple %zu gives a step of %g s (CPI %g)",
                          k, dt, tr->share[0].cpi);
            goto out;
        }
        tr->seconds += dt;
        tr->min_window_s = fmin(tr->min_window_s, shortest);
        for (size_t i = 0; i < n; i++)
            if (tr->phase[2 * n + i] > 0) {
                r->whole_segments++;
                r->whole_seconds += dt;
                break;
            }
        if (tr->info.t_star > 0.1 * shortest) {
            r->warn_segments++;
            r->warn_seconds += dt;
        }
        r->worst_tstar_ratio =
            fmax(r->worst_tstar_ratio, isinf(tr->info.t_star) ? 0 : tr->info.t_star / shortest);
        if ((rc = push_segment(r, &scap, t, dt, k, win)) < 0) {
            rc = llc_errf(err, errlen, rc, "timeline: %s",
                          rc == -E2BIG
                              ? "more than 16M segments (programs of very different lengths?)"
                              : "out of memory");
            goto out;
        }
        const bool counts = !cfg->together || running == n;
        for (size_t i = 0; i < n; i++) {
            const struct llc_contention_phase *p = &progs[i].phases[ph[i]];
            const struct llc_contention_share *s = &tr->share[i];
            const double ins = fmin(left[i], dt * progs[i].freq_hz / s->cpi);
            left[i] -= ins;
            age[m.base[i] + (size_t)ph[i]] += ins * p->api;
            prog_refs[i] += ins * p->api;
            if (first[i] && counts) {
                struct llc_contention_prog_summary *u = &r->summary[i];
                u->instructions += ins;
                u->references += ins * p->api;
                u->misses += ins * p->api * s->miss_ratio;
                u->occupancy += s->occupancy * dt;
                u->seconds += dt;
                u->solo_seconds += ins * tr->solo[i].cpi / progs[i].freq_hz;
            }
            /* Window done (the shortest one exactly, the others to rounding). */
            if (left[i] <= 1e-9 * progs[i].window_instructions[win[i]]) {
                if (++win[i] == progs[i].n_windows) {
                    win[i] = 0;
                    if (first[i]) {
                        first[i] = false;
                        running--;
                    }
                }
                left[i] = progs[i].window_instructions[win[i]];
            }
        }
        t += dt;
    }
    r->total_s = t;
    for (size_t i = 0; i < n; i++) {
        struct llc_contention_prog_summary *u = &r->summary[i];
        u->miss_ratio = u->references > 0 ? u->misses / u->references : NAN;
        u->occupancy = u->seconds > 0 ? u->occupancy / u->seconds : NAN;
        u->cpi = u->seconds * progs[i].freq_hz / u->instructions;
        u->solo_cpi = u->solo_seconds * progs[i].freq_hz / u->instructions;
        u->slowdown = u->seconds / u->solo_seconds;
    }
out:
    for (size_t i = 0; i < n; i++)
        free(run_ins[i]);
    free(m.slot);
    free(m.solo);
    free(m.solved);
    free(m.young);
    free(m.young_solved);
    free(m.warm);
    free(age);
    if (rc < 0)
        llc_contention_run_free(r);
    else
        *out = r;
    return rc;
}
