/* Per-phase reuse histograms of a trace (docs/METHODS.md §9): windows
 * classified by the phase library's ScarPhase detector, samples grouped by
 * the phase of the window they were taken in.
 *
 * Instruction windows reuse `phase --trace`'s offline classification as
 * is: a second reader (llc_sampling_trace) walks the same trace window by
 * window, sampling instruction addresses exactly as `phase --trace
 * --no-dynamic-rate` does with the same window, sample count and seed, so
 * both commands give the same labels. Traces without instruction records (the instrumented
 * runtime's) are windowed by line references, and a window's signature is
 * the code address of each of its data records: the call sites of its
 * loads and stores. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sampling.h"
#include "mrc/mrc.h"

void llc_mrc_phase_config_default(struct llc_mrc_phase_config *cfg)
{
    *cfg = (struct llc_mrc_phase_config){.unit = LLC_MRC_WINDOW_AUTO,
                                         .window = LLC_REUSEFILE_WINDOW_DEFAULT,
                                         .ip_samples = 400, /* phase --trace's, like EIPV */
                                         .ip_seed = 1};
    llc_statmodel_sampler_config_default(&cfg->sampler);
    llc_phase_config_default(&cfg->detector);
}

struct windowing {
    const struct llc_mrc_phase_config *cfg;
    struct llc_phase_detector *det;
    /* instructions */
    struct llc_sampling_trace *ips;
    uint64_t instr, window_end;
    bool started;
    /* references */
    double counts[LLC_PHASE_BUCKETS];
    uint64_t pcs, refs_end;
    /* labels of the windows classified so far, in order */
    int *labels;
    size_t n, cap;
};

static int push_label(struct windowing *w, int phase, char *err, size_t errlen)
{
    if (w->n == w->cap) {
        const size_t cap = w->cap ? 2 * w->cap : 64;
        int *v = realloc(w->labels, cap * sizeof *v);
        if (!v)
            return llc_errf(err, errlen, -ENOMEM, "phase windows: out of memory");
        w->labels = v;
        w->cap = cap;
    }
    w->labels[w->n++] = phase;
    return 0;
}

/* The next instruction window from the address sampler, classified. */
static int next_instr_window(struct windowing *w, char *err, size_t errlen)
{
    struct llc_sampling_window sw;
    const int rc =
        llc_sampling_trace_next(w->ips, llc_phase_detector_multiplier(w->det), &sw, err, errlen);
    if (rc < 0)
        return rc;
    if (sw.instructions == 0)
        return llc_errf(err, errlen, -EIO, "phase windows: the trace ended early on a second read");
    size_t n;
    const uint64_t *ips = llc_sampling_trace_ips(w->ips, &n);
    struct llc_phase_window pw;
    const int crc = llc_phase_detector_feed_ips(w->det, ips, n, &pw, err, errlen);
    if (crc < 0)
        return crc;
    w->window_end += sw.instructions;
    return push_label(w, pw.phase, err, errlen);
}

static int before_instr(void *ctx, const struct llc_trace_rec *rec, uint64_t refs, char *err,
                        size_t errlen)
{
    (void)refs;
    struct windowing *w = ctx;
    if (rec->kind != LLC_TRACE_INSTR)
        return 0;
    /* Data records belong to the window of the instruction before them. */
    const bool boundary = w->started && w->instr == w->window_end;
    w->instr++;
    if (w->started && !boundary)
        return 0;
    w->started = true;
    const int rc = next_instr_window(w, err, errlen);
    return rc < 0 ? rc : boundary;
}

static int close_refs_window(struct windowing *w, char *err, size_t errlen)
{
    struct llc_phase_window pw;
    const int rc = llc_phase_detector_feed_dense(w->det, w->counts, LLC_PHASE_BUCKETS, w->pcs, &pw,
                                                 err, errlen);
    if (rc < 0)
        return rc;
    memset(w->counts, 0, sizeof w->counts);
    w->pcs = 0;
    w->refs_end += w->cfg->window;
    return push_label(w, pw.phase, err, errlen);
}

static int before_refs(void *ctx, const struct llc_trace_rec *rec, uint64_t refs, char *err,
                       size_t errlen)
{
    struct windowing *w = ctx;
    if (rec->kind == LLC_TRACE_INSTR)
        return 0;
    /* A record is not split: a window ends at the first record that starts
     * at or past its length. */
    int boundary = 0;
    if (refs >= w->refs_end) {
        const int rc = close_refs_window(w, err, errlen);
        if (rc < 0)
            return rc;
        boundary = 1;
    }
    if (rec->pc) {
        w->counts[llc_phase_hash_ip(rec->pc)]++;
        w->pcs++;
    }
    return boundary;
}

/* AUTO: instructions if the header counts any. */
static int resolve_unit(const char *path, enum llc_mrc_window_unit unit,
                        enum llc_mrc_window_unit *out, char *err, size_t errlen)
{
    struct llc_trace_reader *r = NULL;
    const int rc = llc_trace_reader_open(path, &r, err, errlen);
    if (rc < 0)
        return rc;
    const uint64_t n_instr = llc_trace_reader_info(r)->n_instr;
    llc_trace_reader_close(r);
    if (unit == LLC_MRC_WINDOW_AUTO)
        unit = n_instr ? LLC_MRC_WINDOW_INSTRUCTIONS : LLC_MRC_WINDOW_REFERENCES;
    if (unit == LLC_MRC_WINDOW_INSTRUCTIONS && !n_instr)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: no instruction records to count windows in "
                        "(window by references)",
                        path);
    *out = unit;
    return 0;
}

size_t llc_mrc_phase_windows_of(const struct llc_mrc_phase_run *r, int phase)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_windows; i++)
        n += r->windows[i].phase == phase;
    return n;
}

int llc_mrc_phase_timeline(const struct llc_mrc_phase_run *r, struct llc_statmodel_timeline **out,
                           char *err, size_t errlen)
{
    *out = NULL;
    if (!r->window_hists)
        return 0;
    int *labels = malloc((r->n_windows ? r->n_windows : 1) * sizeof *labels);
    if (!labels)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t w = 0; w < r->n_windows; w++)
        labels[w] = r->windows[w].phase;
    struct llc_statmodel_timeline_config cfg;
    llc_statmodel_timeline_config_default(&cfg);
    const int rc =
        llc_statmodel_timeline_create(r->phases, r->window_hists, labels, &cfg, out, err, errlen);
    free(labels);
    return rc;
}

void llc_mrc_phase_run_free(struct llc_mrc_phase_run *r)
{
    free(r->windows);
    llc_statmodel_groups_destroy(r->window_hists);
    llc_statmodel_groups_destroy(r->phases);
    llc_statmodel_hist_destroy(r->pooled);
    free(r->reuses);
    *r = (struct llc_mrc_phase_run){0};
}

/* Shared by traces and profiles: the windows' groups (one per window, in
 * order) and their labels become out's windows, per-phase groups and
 * pooled histogram. */
static int finish_run(struct llc_statmodel_groups **owned, const int *labels, size_t n_labels,
                      const struct llc_phase_detector *det, const char *name,
                      struct llc_mrc_phase_run *out, char *err, size_t errlen)
{
    const struct llc_statmodel_groups *windows = *owned;
    const size_t n = llc_statmodel_groups_count(windows);
    if (n != n_labels)
        return llc_errf(err, errlen, -EIO, "%s: %zu windows sampled but %zu classified", name, n,
                        n_labels);
    out->n_windows = n;
    out->windows = calloc(n ? n : 1, sizeof *out->windows);
    if (!out->windows)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const int id = llc_statmodel_groups_id_at(windows, i);
        out->windows[i] = (struct llc_mrc_phase_window){
            .phase = labels[i],
            .refs = llc_statmodel_groups_refs(windows, id),
            .samples = llc_statmodel_hist_total(llc_statmodel_groups_hist(windows, id))};
    }
    llc_phase_detector_summary(det, &out->summary);
    int rc = llc_statmodel_groups_create(&out->phases, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_hist_create(&out->pooled, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_groups_pool(windows, out->pooled, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_groups_regroup(windows, labels, n, out->phases, err, errlen);
    if (rc < 0)
        return rc;
    out->pooled_groups = (size_t)rc;
    out->window_hists = *owned;
    *owned = NULL;
    return 0;
}

/* The detector of both paths: the dynamic rate off. */
static int create_detector(const struct llc_mrc_phase_config *cfg, struct llc_phase_detector **det,
                           char *err, size_t errlen)
{
    struct llc_phase_config c = cfg->detector;
    c.dim = LLC_PHASE_BUCKETS;
    /* Offline a lower address-sampling rate saves nothing, and a window
     * sampled at a lowered rate only matches known phases: the first
     * window of a new phase would stay unclassified. */
    c.dynamic_rate = false;
    return llc_phase_detector_create(&c, det, err, errlen);
}

int llc_mrc_sample_trace_phases(const char *path, const struct llc_mrc_phase_config *cfg,
                                struct llc_mrc_phase_run *out, char *err, size_t errlen)
{
    *out = (struct llc_mrc_phase_run){0};
    struct windowing w = {.cfg = cfg, .refs_end = cfg->window};
    struct llc_statmodel_groups *windows = NULL;
    if (cfg->window == 0 || cfg->sampler.slot_refs)
        return llc_errf(err, errlen, -EINVAL, "phase windows need a length and no time slots");
    int rc = resolve_unit(path, cfg->unit, &out->unit, err, errlen);
    if (rc < 0)
        goto out;
    rc = create_detector(cfg, &w.det, err, errlen);
    if (rc < 0)
        goto out;
    if (out->unit == LLC_MRC_WINDOW_INSTRUCTIONS) {
        const struct llc_sampling_trace_config tc = {.window_instr = cfg->window,
                                                     .samples_per_window = cfg->ip_samples,
                                                     .seed = cfg->ip_seed};
        rc = llc_sampling_trace_open(path, &tc, &w.ips, err, errlen);
        if (rc < 0)
            goto out;
    }
    rc = llc_statmodel_groups_create(&windows, err, errlen);
    if (rc < 0)
        goto out;
    const struct llc_mrc_window_hook hook = {
        .before = out->unit == LLC_MRC_WINDOW_INSTRUCTIONS ? before_instr : before_refs,
        .ctx = &w,
        .reuses = &out->reuses,
        .n_reuses = &out->n_reuses};
    rc =
        llc_mrc_sample_trace_windows(path, &cfg->sampler, &hook, windows, &out->stats, err, errlen);
    if (rc < 0)
        goto out;
    if (out->unit == LLC_MRC_WINDOW_REFERENCES)
        rc = close_refs_window(&w, err, errlen);
    if (rc < 0)
        goto out;
    rc = finish_run(&windows, w.labels, w.n, w.det, path, out, err, errlen);
    out->window = cfg->window;
out:
    if (rc < 0)
        llc_mrc_phase_run_free(out);
    llc_statmodel_groups_destroy(windows);
    llc_sampling_trace_close(w.ips);
    llc_phase_detector_destroy(w.det);
    free(w.labels);
    return rc;
}

int llc_mrc_profile_phases(const char *name, const struct llc_reusefile_info *info,
                           const struct llc_reusefile_windows *pw,
                           const struct llc_mrc_phase_config *cfg, struct llc_mrc_phase_run *out,
                           char *err, size_t errlen)
{
    *out = (struct llc_mrc_phase_run){.unit = LLC_MRC_WINDOW_REFERENCES};
    if (!pw->length)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: recorded without windows (%s), and --phases needs them: run the "
                        "program again with this runtime and LLCPROBE_RT_WINDOW unset or > 0",
                        name, info->version < 2 ? "a version 1 profile" : "LLCPROBE_RT_WINDOW=0");
    if (!pw->complete)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: its windows are truncated (the runtime's memory cap was reached): "
                        "--phases would model part of the run; record with a longer "
                        "LLCPROBE_RT_WINDOW or a lower rate",
                        name);
    if (cfg->unit == LLC_MRC_WINDOW_INSTRUCTIONS)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: a profile's windows count references, not "
                        "instructions",
                        name);
    if (cfg->window && cfg->window != pw->length)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: windows of %" PRIu64 " references were "
                        "recorded, not %" PRIu64 " (leave out --phase-window, or record again "
                        "with LLCPROBE_RT_WINDOW)",
                        name, pw->length, cfg->window);
    struct llc_phase_detector *det = NULL;
    struct llc_statmodel_groups *windows = NULL;
    int *labels = calloc(pw->n_windows ? pw->n_windows : 1, sizeof *labels);
    int rc = labels ? 0 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = create_detector(cfg, &det, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_groups_create(&windows, err, errlen);
    for (size_t i = 0; rc == 0 && i < pw->n_windows; i++) {
        const struct llc_reusefile_window *x = &pw->windows[i];
        double counts[LLC_PHASE_BUCKETS];
        for (unsigned b = 0; b < LLC_PHASE_BUCKETS; b++)
            counts[b] = x->counts[b];
        struct llc_phase_window ph;
        rc = llc_statmodel_groups_add_refs(windows, (int)i, (double)x->refs, err, errlen);
        if (rc == 0)
            rc = llc_phase_detector_feed_dense(det, counts, LLC_PHASE_BUCKETS, x->pcs, &ph, err,
                                               errlen);
        if (rc == 0)
            labels[i] = ph.phase;
    }
    for (size_t i = 0; rc == 0 && i < pw->n_samples; i++) {
        const struct llc_reusefile_sample *x = &pw->samples[i];
        struct llc_statmodel_hist *h = llc_statmodel_groups_hist(windows, (int)x->window);
        rc = x->distance == LLC_REUSEFILE_NEVER_REUSED
                 ? llc_statmodel_hist_add_dangling(h, 1.0, err, errlen)
                 : llc_statmodel_hist_add(h, x->distance, 1.0, err, errlen);
    }
    if (rc == 0)
        rc = finish_run(&windows, labels, pw->n_windows, det, name, out, err, errlen);
    if (rc == 0) {
        out->stats.refs = info->refs;
        out->window = pw->length;
    }
    if (rc < 0)
        llc_mrc_phase_run_free(out);
    llc_statmodel_groups_destroy(windows);
    llc_phase_detector_destroy(det);
    free(labels);
    return rc;
}
