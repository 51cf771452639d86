/* Reuse-distance sampler (docs/METHODS.md §6.1, §6.2): picks references with geometric gaps
 * (every reference has the same chance rho), watches the picked lines and
 * records the distance at their next touch. The per-reference path is a
 * counter decrement and, while lines are watched, one hash probe. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

/* Slots per watch at most: a sparse table makes the common probe (line not
 * watched) land on an empty slot, a well-predicted branch. */
#define SM_WATCH_SPARSITY 8

/* What a watch records besides its key. Keys live in their own array so
 * that the per-reference probe touches as little memory as possible. */
struct watch {
    uint64_t pos; /* index of the sampled reference */
    struct llc_statmodel_hist *hist;
    int group; /* for the log */
};

struct llc_statmodel_sampler {
    uint64_t refs;      /* references seen = index of the next one */
    uint64_t countdown; /* references until the next sample, >= 1 */
    uint64_t *key;      /* line + 1; 0 = empty slot */
    struct watch *watch;
    uint64_t mask;  /* table size - 1 (power of two) */
    unsigned shift; /* 64 - log2(table size) */
    uint64_t n_watch;
    double log1m_rate; /* log1p(-rho); 0 means rho = 1 */
    struct llc_xoshiro rng;
    struct llc_statmodel_groups *sink;
    /* Group receiving new samples, and where its reference count began. */
    int group;
    struct llc_statmodel_hist *group_hist;
    uint64_t group_start;
    uint64_t slot_refs;
    uint64_t taken, reused, dangling;
    struct llc_statmodel_lineset *lines; /* distinct lines, exact */
    /* Every finite sample, when the config asks (own distances, §12.7) */
    bool log_reuses;
    struct llc_statmodel_reuse *log;
    size_t n_log, cap_log;
    bool finished;
    int error;
    char error_msg[LLC_ERRLEN];
};

void llc_statmodel_sampler_config_default(struct llc_statmodel_sampler_config *cfg)
{
    *cfg = (struct llc_statmodel_sampler_config){
        .rate = 1e-4, .seed = 1, .slot_refs = 0, .watch_hint = 0};
}

static uint64_t next_gap(struct llc_statmodel_sampler *s)
{
    if (s->log1m_rate == 0)
        return 1;
    const double g = floor(log(sm_rng_open0(&s->rng)) / s->log1m_rate);
    /* A gap this long never ends in practice; the cap only keeps the
     * conversion defined. */
    return g >= 0x1p62 ? (UINT64_C(1) << 62) : 1 + (uint64_t)g;
}

static int alloc_table(struct llc_statmodel_sampler *s, unsigned bits)
{
    uint64_t *key = calloc((size_t)1 << bits, sizeof *key);
    struct watch *w = malloc(((size_t)1 << bits) * sizeof *w);
    if (!key || !w) {
        free(key);
        free(w);
        return -ENOMEM;
    }
    s->key = key;
    s->watch = w;
    s->mask = (UINT64_C(1) << bits) - 1;
    s->shift = 64u - bits;
    return 0;
}

int llc_statmodel_sampler_create(const struct llc_statmodel_sampler_config *cfg,
                                 struct llc_statmodel_groups *sink,
                                 struct llc_statmodel_sampler **out, char *err, size_t errlen)
{
    if (!(cfg->rate > 0 && cfg->rate <= 1))
        return llc_errf(err, errlen, -EINVAL, "sampler: rate %g is not in (0, 1]", cfg->rate);
    if (!sink)
        return llc_errf(err, errlen, -EINVAL, "sampler: no group set to record into");
    struct llc_statmodel_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return llc_errf(err, errlen, -ENOMEM, "sampler: out of memory");
    unsigned bits = 6;
    while (bits < 40 && ((size_t)1 << bits) < SM_WATCH_SPARSITY * cfg->watch_hint)
        bits++;
    int rc = alloc_table(s, bits);
    if (rc) {
        rc = llc_errf(err, errlen, rc, "sampler: out of memory for %zu watches", cfg->watch_hint);
        goto out;
    }
    rc = llc_statmodel_lineset_create(&s->lines, err, errlen);
    if (rc)
        goto out;
    s->log1m_rate = cfg->rate < 1 ? log1p(-cfg->rate) : 0;
    llc_xoshiro_seed(&s->rng, cfg->seed);
    s->sink = sink;
    s->slot_refs = cfg->slot_refs;
    s->log_reuses = cfg->log_reuses;
    s->group = 0;
    rc = llc_statmodel_groups_ensure(sink, 0, &s->group_hist, err, errlen);
    if (rc)
        goto out;
    s->countdown = next_gap(s);
    *out = s;
    return 0;
out:
    free(s->key);
    free(s->watch);
    llc_statmodel_lineset_destroy(s->lines);
    free(s);
    return rc;
}

void llc_statmodel_sampler_destroy(struct llc_statmodel_sampler *s)
{
    if (!s)
        return;
    free(s->key);
    free(s->watch);
    free(s->log);
    llc_statmodel_lineset_destroy(s->lines);
    free(s);
}

static void set_error(struct llc_statmodel_sampler *s, int code, const char *what)
{
    if (s->error)
        return;
    s->error = code;
    llc_errf(s->error_msg, sizeof s->error_msg, code, "sampler: %s", what);
}

int llc_statmodel_sampler_set_group(struct llc_statmodel_sampler *s, int group, char *err,
                                    size_t errlen)
{
    if (s->slot_refs)
        return llc_errf(err, errlen, -EINVAL, "sampler: groups are time slots in slot mode");
    if (s->finished)
        return llc_errf(err, errlen, -EINVAL, "sampler: already finished");
    struct llc_statmodel_hist *h = NULL;
    int rc = llc_statmodel_groups_ensure(s->sink, group, &h, err, errlen);
    if (!rc)
        rc = llc_statmodel_groups_add_refs(s->sink, s->group, (double)(s->refs - s->group_start),
                                           err, errlen);
    if (rc)
        return rc;
    s->group = group;
    s->group_hist = h;
    s->group_start = s->refs;
    return 0;
}

static inline uint64_t slot_of(const struct llc_statmodel_sampler *s, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> s->shift;
}

static int grow(struct llc_statmodel_sampler *s)
{
    uint64_t *const old_key = s->key;
    struct watch *const old_watch = s->watch;
    const uint64_t old_size = s->mask + 1;
    const unsigned old_shift = s->shift;
    const uint64_t old_mask = s->mask;
    const unsigned bits = 64u - s->shift + 1u;
    if (bits > 40 || alloc_table(s, bits)) {
        s->key = old_key;
        s->watch = old_watch;
        s->shift = old_shift;
        s->mask = old_mask;
        return -ENOMEM;
    }
    for (uint64_t i = 0; i < old_size; i++) {
        if (!old_key[i])
            continue;
        uint64_t j = slot_of(s, old_key[i]);
        while (s->key[j])
            j = (j + 1) & s->mask;
        s->key[j] = old_key[i];
        s->watch[j] = old_watch[i];
    }
    free(old_key);
    free(old_watch);
    return 0;
}

/* Linear-probing removal by backward shift: no tombstones, so lookups of
 * unwatched lines stop at the first empty slot. */
static void remove_at(struct llc_statmodel_sampler *s, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & s->mask;
        if (!s->key[j])
            break;
        const uint64_t home = slot_of(s, s->key[j]);
        /* Move j back to i unless its home lies cyclically in (i, j]. */
        const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            s->key[i] = s->key[j];
            s->watch[i] = s->watch[j];
            i = j;
        }
    }
    s->key[i] = 0;
    s->n_watch--;
}

static void take_sample(struct llc_statmodel_sampler *s, uint64_t line, uint64_t pos)
{
    s->countdown = next_gap(s);
    if (s->slot_refs) {
        const uint64_t slot = pos / s->slot_refs;
        if (slot > INT32_MAX) {
            set_error(s, -EOVERFLOW, "too many time slots");
            return;
        }
        if (!s->group_hist || (uint64_t)s->group != slot) {
            if (llc_statmodel_groups_ensure(s->sink, (int)slot, &s->group_hist, NULL, 0)) {
                set_error(s, -ENOMEM, "out of memory for a time-slot histogram");
                return;
            }
            s->group = (int)slot;
        }
    }
    if (SM_WATCH_SPARSITY * (s->n_watch + 1) > s->mask + 1 && grow(s)) {
        set_error(s, -ENOMEM, "out of memory for the watch table");
        return;
    }
    const uint64_t key = line + 1;
    uint64_t j = slot_of(s, key);
    while (s->key[j])
        j = (j + 1) & s->mask;
    s->key[j] = key;
    s->watch[j] = (struct watch){.pos = pos, .hist = s->group_hist, .group = s->group};
    s->n_watch++;
    s->taken++;
}

static void log_reuse(struct llc_statmodel_sampler *s, const struct watch *w, uint64_t pos)
{
    if (s->n_log == s->cap_log) {
        const size_t cap = s->cap_log ? 2 * s->cap_log : 1024;
        struct llc_statmodel_reuse *log = realloc(s->log, cap * sizeof(*log));
        if (!log) {
            set_error(s, -ENOMEM, "out of memory for the log of reuses");
            return;
        }
        s->log = log;
        s->cap_log = cap;
    }
    s->log[s->n_log++] = (struct llc_statmodel_reuse){
        .pos = w->pos, .distance = pos - w->pos - 1, .group = w->group};
}

static inline void access_one(struct llc_statmodel_sampler *s, uint64_t line)
{
    const uint64_t pos = s->refs++;
    if (llc_statmodel_lineset_add(s->lines, line) < 0)
        set_error(s, -ENOMEM, "out of memory for the set of touched lines");
    if (s->n_watch) {
        const uint64_t key = line + 1;
        for (uint64_t j = slot_of(s, key); s->key[j]; j = (j + 1) & s->mask) {
            if (s->key[j] != key)
                continue;
            const struct watch *const w = &s->watch[j];
            if (llc_statmodel_hist_add(w->hist, pos - w->pos - 1, 1.0, NULL, 0))
                set_error(s, -ENOMEM, "out of memory for a histogram page");
            if (s->log_reuses)
                log_reuse(s, w, pos);
            s->reused++;
            remove_at(s, j);
            break;
        }
    }
    if (--s->countdown == 0)
        take_sample(s, line, pos);
}

void llc_statmodel_sampler_access(struct llc_statmodel_sampler *s, uint64_t line)
{
    access_one(s, line);
}

int llc_statmodel_sampler_access_batch(struct llc_statmodel_sampler *s, const uint64_t *lines,
                                       size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        access_one(s, lines[i]);
    return llc_statmodel_sampler_status(s, err, errlen);
}

int llc_statmodel_sampler_status(const struct llc_statmodel_sampler *s, char *err, size_t errlen)
{
    if (s->error)
        return llc_errf(err, errlen, s->error, "%s", s->error_msg);
    return 0;
}

int llc_statmodel_sampler_finish(struct llc_statmodel_sampler *s, char *err, size_t errlen)
{
    if (s->finished)
        return llc_errf(err, errlen, -EINVAL, "sampler: already finished");
    int rc = llc_statmodel_sampler_status(s, err, errlen);
    if (rc)
        return rc;
    s->finished = true;
    for (uint64_t i = 0; i <= s->mask; i++) {
        if (!s->key[i])
            continue;
        rc = llc_statmodel_hist_add_dangling(s->watch[i].hist, 1.0, err, errlen);
        if (rc)
            return rc;
        s->key[i] = 0;
        s->dangling++;
    }
    s->n_watch = 0;
    if (!s->slot_refs)
        return llc_statmodel_groups_add_refs(s->sink, s->group, (double)(s->refs - s->group_start),
                                             err, errlen);
    /* Slots are equal except the last; only slots with samples exist. */
    for (size_t i = 0; i < llc_statmodel_groups_count(s->sink); i++) {
        const int id = llc_statmodel_groups_id_at(s->sink, i);
        const uint64_t start = (uint64_t)id * s->slot_refs;
        if (id < 0 || start >= s->refs)
            continue;
        const uint64_t len = s->refs - start < s->slot_refs ? s->refs - start : s->slot_refs;
        rc = llc_statmodel_groups_add_refs(s->sink, id, (double)len, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

void llc_statmodel_sampler_stats(const struct llc_statmodel_sampler *s,
                                 struct llc_statmodel_sampler_stats *out)
{
    *out = (struct llc_statmodel_sampler_stats){.refs = s->refs,
                                                .taken = s->taken,
                                                .reused = s->reused,
                                                .dangling = s->dangling,
                                                .pending = s->n_watch,
                                                .lines = llc_statmodel_lineset_count(s->lines)};
}

const struct llc_statmodel_reuse *llc_statmodel_sampler_reuses(
    const struct llc_statmodel_sampler *s, size_t *n)
{
    *n = s->n_log;
    return s->log;
}
