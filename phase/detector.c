/* Per-window phase classifier: signature, leader-follower clustering,
 * next-phase prediction and the dynamic sample rate (docs/METHODS.md §10.4-§10.8), with a record of
 * every window for the summary. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

struct llc_phase_detector {
    struct llc_phase_config cfg;
    struct llc_phase_lf *lf;
    struct llc_phase_predictor *predictor;
    double *vec;         /* cfg.dim scratch for the current window */
    unsigned multiplier; /* for the next window */
    struct llc_phase_window *windows;
    size_t n_windows, cap_windows;
};

void llc_phase_config_default(struct llc_phase_config *cfg)
{
    *cfg = (struct llc_phase_config){
        .dim = LLC_PHASE_BUCKETS,
        .theta = 0.2,
        .theta_dsr = 0.5,
        .transition_threshold = 0,
        .max_clusters = 0,
        .min_samples = LLC_PHASE_MIN_SAMPLES,
        .dynamic_rate = true,
        .max_multiplier = 8,
    };
    llc_phase_predictor_config_default(&cfg->predictor);
}

int llc_phase_detector_create(const struct llc_phase_config *cfg, struct llc_phase_detector **out,
                              char *err, size_t errlen)
{
    *out = NULL;
    if (!(cfg->theta_dsr > 0.0 && cfg->theta_dsr <= 1.0))
        return llc_errf(err, errlen, -EINVAL, "theta_dsr %g outside (0,1]", cfg->theta_dsr);
    const unsigned mm = cfg->max_multiplier;
    if (mm == 0 || (mm & (mm - 1)) != 0)
        return llc_errf(err, errlen, -EINVAL,
                        "maximum sample-rate multiplier %u is not a power of two", mm);

    int rc = -ENOMEM;
    struct llc_phase_detector *d = calloc(1, sizeof *d);
    if (!d) {
        llc_errf(err, errlen, rc, "out of memory");
        goto out;
    }
    d->cfg = *cfg;
    d->multiplier = 1;
    const struct llc_phase_lf_config lcfg = {
        .dim = cfg->dim,
        .theta = cfg->theta,
        .transition_threshold = cfg->transition_threshold,
        .max_clusters = cfg->max_clusters,
    };
    rc = llc_phase_lf_create(&lcfg, &d->lf, err, errlen);
    if (rc < 0)
        goto out;
    rc = llc_phase_predictor_create(&cfg->predictor, &d->predictor, err, errlen);
    if (rc < 0)
        goto out;
    d->vec = calloc(cfg->dim, sizeof *d->vec);
    if (!d->vec) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for a %zu-element vector", cfg->dim);
        goto out;
    }
    *out = d;
    d = NULL;
    rc = 0;
out:
    llc_phase_detector_destroy(d);
    return rc;
}

void llc_phase_detector_destroy(struct llc_phase_detector *d)
{
    if (!d)
        return;
    llc_phase_lf_destroy(d->lf);
    llc_phase_predictor_destroy(d->predictor);
    free(d->vec);
    free(d->windows);
    free(d);
}

unsigned llc_phase_detector_multiplier(const struct llc_phase_detector *d)
{
    return d->multiplier;
}

static int reserve_window(struct llc_phase_detector *d)
{
    if (d->n_windows < d->cap_windows)
        return 0;
    const size_t cap = d->cap_windows ? 2 * d->cap_windows : 64;
    struct llc_phase_window *w = realloc(d->windows, cap * sizeof *w);
    if (!w)
        return -ENOMEM;
    d->windows = w;
    d->cap_windows = cap;
    return 0;
}

/* docs/METHODS.md §10.8: slow down while the phase is stable and predicted to stay. */
static unsigned next_multiplier(const struct llc_phase_detector *d, int phase,
                                struct llc_phase_prediction pred)
{
    if (!d->cfg.dynamic_rate || d->n_windows == 0)
        return d->multiplier;
    if (phase != d->windows[d->n_windows - 1].phase)
        return 1;
    if (pred.phase == phase && pred.confidence >= 1 && phase >= 0) {
        const unsigned m = 2 * d->multiplier;
        return m < d->cfg.max_multiplier ? m : d->cfg.max_multiplier;
    }
    return 1; /* a change is predicted: sample its first window at full rate */
}

/* Classifies d->vec (or nothing, if !usable) as the next window. */
static int classify_window(struct llc_phase_detector *d, bool usable, uint64_t samples,
                           struct llc_phase_window *out, char *err, size_t errlen)
{
    if (reserve_window(d) < 0)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for window %zu", d->n_windows);

    struct llc_phase_match m = {.phase = LLC_PHASE_UNCLASSIFIED, .cluster = -1, .distance = -1.0};
    if (usable && d->multiplier > 1) {
        /* Too few samples to found or move a cluster, enough to recognise one. */
        llc_phase_lf_match(d->lf, d->vec, d->cfg.theta_dsr, &m);
    } else if (usable) {
        const int rc = llc_phase_lf_classify(d->lf, d->vec, &m, err, errlen);
        if (rc < 0)
            return rc;
    }
    llc_phase_predictor_update(d->predictor, m.phase);
    const struct llc_phase_prediction pred = llc_phase_predictor_predict(d->predictor);
    const unsigned next = next_multiplier(d, m.phase, pred);

    const struct llc_phase_window w = {
        .window = d->n_windows,
        .samples = samples,
        .multiplier = d->multiplier,
        .phase = m.phase,
        .cluster = m.cluster,
        .distance = m.distance,
        .new_cluster = m.created,
        .predicted = pred.phase,
        .confidence = pred.confidence,
        .next_multiplier = next,
    };
    d->windows[d->n_windows++] = w;
    d->multiplier = next;
    if (out)
        *out = w;
    return 0;
}

int llc_phase_detector_feed_ips(struct llc_phase_detector *d, const uint64_t *ips, size_t n,
                                struct llc_phase_window *out, char *err, size_t errlen)
{
    if (d->cfg.dim != LLC_PHASE_BUCKETS)
        return llc_errf(err, errlen, -EINVAL,
                        "code addresses give %d-bucket vectors, the detector expects %zu",
                        LLC_PHASE_BUCKETS, d->cfg.dim);
    const bool usable = n >= d->cfg.min_samples && n > 0;
    if (usable)
        llc_phase_signature_ips(ips, n, d->vec);
    return classify_window(d, usable, n, out, err, errlen);
}

int llc_phase_detector_feed_dense(struct llc_phase_detector *d, const double *weights, size_t dim,
                                  uint64_t samples, struct llc_phase_window *out, char *err,
                                  size_t errlen)
{
    if (dim != d->cfg.dim)
        return llc_errf(err, errlen, -EINVAL, "vector has %zu elements, the detector expects %zu",
                        dim, d->cfg.dim);
    bool usable = samples >= d->cfg.min_samples;
    if (usable) {
        memcpy(d->vec, weights, dim * sizeof *weights);
        const int rc = llc_phase_normalize(d->vec, dim);
        if (rc == -EINVAL)
            return llc_errf(err, errlen, rc, "window %zu: a weight is negative or not finite",
                            d->n_windows);
        usable = rc == 0; /* an all-zero vector says nothing about the code */
    }
    return classify_window(d, usable, samples, out, err, errlen);
}

const struct llc_phase_window *llc_phase_detector_windows(const struct llc_phase_detector *d,
                                                          size_t *n)
{
    *n = d->n_windows;
    return d->windows;
}

void llc_phase_detector_summary(const struct llc_phase_detector *d, struct llc_phase_summary *s)
{
    *s = (struct llc_phase_summary){
        .windows = d->n_windows,
        .phases = llc_phase_lf_phases(d->lf),
        .clusters = llc_phase_lf_count(d->lf),
    };
    double rate_sum = 0.0;
    for (size_t t = 0; t < d->n_windows; t++) {
        const struct llc_phase_window *w = &d->windows[t];
        s->samples += w->samples;
        s->unclassified += w->phase == LLC_PHASE_UNCLASSIFIED;
        s->transition += w->phase == LLC_PHASE_TRANSITION;
        s->low_rate += w->multiplier > 1;
        rate_sum += 1.0 / w->multiplier;
        if (t > 0) {
            s->predictions++;
            s->predictions_correct += d->windows[t - 1].predicted == w->phase;
            s->phase_changes += d->windows[t - 1].phase != w->phase;
        }
    }
    if (d->n_windows) {
        s->unclassified_share = (double)s->unclassified / (double)d->n_windows;
        s->mean_rate = rate_sum / (double)d->n_windows;
    }
    if (s->predictions)
        s->prediction_accuracy = (double)s->predictions_correct / (double)s->predictions;
}

size_t llc_phase_detector_phase_counts(const struct llc_phase_detector *d, uint64_t *counts,
                                       size_t n)
{
    const size_t phases = llc_phase_lf_phases(d->lf);
    const size_t fill = phases < n ? phases : n;
    if (fill)
        memset(counts, 0, fill * sizeof *counts);
    for (size_t t = 0; t < d->n_windows; t++) {
        const int p = d->windows[t].phase;
        if (p >= 0 && (size_t)p < fill)
            counts[p]++;
    }
    return phases;
}

const struct llc_phase_lf *llc_phase_detector_clusters(const struct llc_phase_detector *d)
{
    return d->lf;
}
