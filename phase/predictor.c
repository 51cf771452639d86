/* Next-phase predictors (docs/METHODS.md §10.7): last value, and the run-length table predictor
 * that falls back to it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_rng.h"

struct run {
    int phase;
    uint64_t length;
};

/* Run-length table entry; its tag is the pattern it was learned after. */
struct rl_entry {
    bool valid;
    unsigned tag_len;
    int prediction;
    unsigned confidence;
};

/* Last-value confidence of one phase: how reliably it has stayed. */
struct lv_entry {
    bool valid;
    int phase;
    unsigned confidence;
};

struct llc_phase_predictor {
    struct llc_phase_predictor_config cfg;
    struct run *history; /* newest first, cfg.history records */
    size_t runs;         /* records in use */
    struct rl_entry *table;
    struct run *tags; /* table_size x pattern_length */
    struct lv_entry *lv;
    bool have_last;
    int last;
};

void llc_phase_predictor_config_default(struct llc_phase_predictor_config *cfg)
{
    *cfg = (struct llc_phase_predictor_config){
        .kind = LLC_PHASE_PREDICT_RUN_LENGTH,
        .table_size = 256,
        .pattern_length = 2,
        .confidence_threshold = 1,
        .confidence_max = 100,
        .history = 20,
    };
}

int llc_phase_predictor_create(const struct llc_phase_predictor_config *cfg,
                               struct llc_phase_predictor **out, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg->kind != LLC_PHASE_PREDICT_LAST_VALUE && cfg->kind != LLC_PHASE_PREDICT_RUN_LENGTH)
        return llc_errf(err, errlen, -EINVAL, "unknown predictor kind %d", (int)cfg->kind);
    if (cfg->table_size == 0 || cfg->confidence_max == 0)
        return llc_errf(err, errlen, -EINVAL,
                        "predictor table size and confidence maximum must be positive");
    if (cfg->pattern_length == 0 || cfg->history < cfg->pattern_length)
        return llc_errf(err, errlen, -EINVAL,
                        "pattern length %u must be positive and at most the history (%u)",
                        cfg->pattern_length, cfg->history);

    int rc = -ENOMEM;
    struct llc_phase_predictor *p = calloc(1, sizeof *p);
    if (!p)
        goto out;
    p->cfg = *cfg;
    p->history = calloc(cfg->history, sizeof *p->history);
    p->table = calloc(cfg->table_size, sizeof *p->table);
    p->tags = calloc((size_t)cfg->table_size * cfg->pattern_length, sizeof *p->tags);
    p->lv = calloc(cfg->table_size, sizeof *p->lv);
    if (!p->history || !p->table || !p->tags || !p->lv)
        goto out;
    *out = p;
    p = NULL;
    rc = 0;
out:
    llc_phase_predictor_destroy(p);
    if (rc < 0)
        llc_errf(err, errlen, rc, "out of memory for the phase predictor");
    return rc;
}

void llc_phase_predictor_destroy(struct llc_phase_predictor *p)
{
    if (!p)
        return;
    free(p->history);
    free(p->table);
    free(p->tags);
    free(p->lv);
    free(p);
}

static unsigned saturating_step(unsigned c, bool up, unsigned max)
{
    if (up)
        return c < max ? c + 1 : max;
    return c > 0 ? c - 1 : 0;
}

static size_t pattern_len(const struct llc_phase_predictor *p)
{
    return p->runs < p->cfg.pattern_length ? p->runs : p->cfg.pattern_length;
}

/* SplitMix64-mixed (phase, length) pairs, newest record first. */
static size_t pattern_index(const struct llc_phase_predictor *p)
{
    uint64_t h = 0;
    for (size_t i = 0; i < pattern_len(p); i++) {
        h = llc_splitmix64(h + (uint32_t)p->history[i].phase);
        h = llc_splitmix64(h + p->history[i].length);
    }
    return (size_t)(h % p->cfg.table_size);
}

/* The table entry at the pattern's index if its tag is the current pattern. */
static const struct rl_entry *rl_lookup(const struct llc_phase_predictor *p, size_t idx)
{
    const struct rl_entry *e = &p->table[idx];
    const size_t len = pattern_len(p);
    if (!e->valid || e->tag_len != len)
        return NULL;
    const struct run *tag = p->tags + idx * p->cfg.pattern_length;
    for (size_t i = 0; i < len; i++)
        if (tag[i].phase != p->history[i].phase || tag[i].length != p->history[i].length)
            return NULL;
    return e;
}

static size_t lv_index(const struct llc_phase_predictor *p, int phase)
{
    return (size_t)((uint32_t)phase % p->cfg.table_size);
}

static void rl_update(struct llc_phase_predictor *p, int phase)
{
    if (p->runs == 0)
        return;
    const size_t idx = pattern_index(p);
    struct rl_entry *e = &p->table[idx];
    if (rl_lookup(p, idx)) {
        const bool right = e->prediction == phase;
        e->confidence = saturating_step(e->confidence, right, p->cfg.confidence_max);
        e->prediction = phase;
        return;
    }
    /* Entries exist only for change points; staying is the fallback's job. */
    if (phase == p->history[0].phase)
        return;
    const size_t len = pattern_len(p);
    *e = (struct rl_entry){.valid = true, .tag_len = (unsigned)len, .prediction = phase};
    memcpy(p->tags + idx * p->cfg.pattern_length, p->history, len * sizeof *p->history);
}

static void lv_update(struct llc_phase_predictor *p, int phase)
{
    if (!p->have_last)
        return;
    struct lv_entry *e = &p->lv[lv_index(p, p->last)];
    if (!e->valid || e->phase != p->last)
        *e = (struct lv_entry){.valid = true, .phase = p->last};
    e->confidence = saturating_step(e->confidence, phase == p->last, p->cfg.confidence_max);
}

static void push_history(struct llc_phase_predictor *p, int phase)
{
    if (p->runs > 0 && p->history[0].phase == phase) {
        p->history[0].length++;
        return;
    }
    const size_t keep = p->runs < p->cfg.history ? p->runs : p->cfg.history - 1;
    memmove(p->history + 1, p->history, keep * sizeof *p->history);
    p->history[0] = (struct run){.phase = phase, .length = 1};
    p->runs = keep + 1;
}

void llc_phase_predictor_update(struct llc_phase_predictor *p, int phase)
{
    if (p->cfg.kind == LLC_PHASE_PREDICT_RUN_LENGTH)
        rl_update(p, phase);
    lv_update(p, phase);
    push_history(p, phase);
    p->last = phase;
    p->have_last = true;
}

static struct llc_phase_prediction lv_predict(const struct llc_phase_predictor *p)
{
    if (!p->have_last)
        return (struct llc_phase_prediction){.phase = LLC_PHASE_UNCLASSIFIED};
    const struct lv_entry *e = &p->lv[lv_index(p, p->last)];
    const unsigned conf = e->valid && e->phase == p->last ? e->confidence : 0;
    return (struct llc_phase_prediction){.phase = p->last, .confidence = conf};
}

struct llc_phase_prediction llc_phase_predictor_predict(const struct llc_phase_predictor *p)
{
    if (p->cfg.kind == LLC_PHASE_PREDICT_RUN_LENGTH && p->runs > 0) {
        const struct rl_entry *e = rl_lookup(p, pattern_index(p));
        if (e && e->confidence >= p->cfg.confidence_threshold)
            return (struct llc_phase_prediction){.phase = e->prediction,
                                                 .confidence = e->confidence};
    }
    return lv_predict(p);
}
