/* phase's references: exp-bbv vectors clustered with the same algorithm
 * and compared window by window; the simulator's per-window miss ratios. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phaserun.h"

/* Clusters a reference's rows (full rate: a dense vector has no sampling
 * to save) into labels[0..windows). */
static int cluster_rows(const struct llc_phase_config *det, const double *rows, size_t windows,
                        size_t dim, int *labels, size_t *phases, char *err, size_t errlen)
{
    struct llc_phase_config cfg = *det;
    cfg.dim = dim;
    cfg.dynamic_rate = false;
    cfg.min_samples = 1;
    struct llc_phase_detector *d = NULL;
    int rc = llc_phase_detector_create(&cfg, &d, err, errlen);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < windows; i++) {
        double total = 0;
        for (size_t j = 0; j < dim; j++)
            total += rows[i * dim + j];
        struct llc_phase_window w;
        rc =
            llc_phase_detector_feed_dense(d, rows + i * dim, dim, (uint64_t)total, &w, err, errlen);
        if (rc < 0)
            goto out;
        labels[i] = w.phase;
    }
    struct llc_phase_summary sum;
    llc_phase_detector_summary(d, &sum);
    *phases = sum.phases;
out:
    llc_phase_detector_destroy(d);
    return rc;
}

/* Pairs our windows with exp-bbv's intervals by instruction count:
 * exp-bbv ends an interval at the first block boundary past its size, so
 * its intervals are a little longer than ours and the pairs would drift
 * apart by index; reference-count windows hold any number of instructions.
 * Each window gets the interval it overlaps most (llc_phase_align). exp-bbv
 * writes whole intervals only (the run's last, partial one is dropped), so
 * the trace may run on for up to one interval past its end; a gap beyond
 * that, over the tolerance, is another run, and refused. */
static int align_bbv(const struct llc_phaserun_config *o, struct llc_phaserun *r,
                     const struct llc_sampling_bbv *b, size_t *map, char *err, size_t errlen)
{
    if (r->n && !r->rows[0].s.instructions_known)
        return llc_errf(err, errlen, -EINVAL,
                        "--bbv: %s has no instruction records (recorder "
                        "%s), so its windows cannot be paired with exp-bbv's instruction "
                        "intervals",
                        o->trace, r->recorder);
    uint64_t *la = malloc((r->n + 1) * sizeof(*la)), *lb = malloc((b->windows + 1) * sizeof(*lb));
    int rc = 0;
    if (!la || !lb) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* Counted as exp-bbv counts: lackey records each iteration of a
     * rep-prefixed instruction, exp-bbv counts the instruction once (1.4%
     * of perl's and sqlite3's instructions in the evaluation). */
    for (size_t i = 0; i < r->n; i++)
        la[i] = r->rows[i].s.instructions_bbv;
    r->bbv_tail = 0;
    for (size_t j = 0; j < b->windows; j++) {
        double total = 0;
        for (size_t k = 0; k < b->dim; k++)
            total += b->rows[j * b->dim + k];
        lb[j] = (uint64_t)total;
        r->bbv_tail = lb[j] > r->bbv_tail ? lb[j] : r->bbv_tail;
    }
    rc = llc_phase_align(la, r->n, lb, b->windows, map, &r->align, err, errlen);
    if (rc < 0)
        goto out;
    const uint64_t ta = r->align.total_a, tb = r->align.total_b;
    const uint64_t excess = ta > tb ? (ta - tb > r->bbv_tail ? ta - tb - r->bbv_tail : 0) : tb - ta;
    r->bbv_gap = ta || tb ? (double)excess / (double)(ta > tb ? ta : tb) : 0.0;
    if (r->bbv_gap > o->bbv_tolerance)
        rc = llc_errf(err, errlen, -EPROTO,
                      "--bbv: %s counts %" PRIu64 " instructions, the trace "
                      "%" PRIu64 ": %.2f%% apart beyond exp-bbv's unwritten last interval (up to "
                      "%" PRIu64 "), more than --bbv-tolerance %.2f%% (not the same run?)",
                      o->bbv, tb, ta, 100.0 * r->bbv_gap, r->bbv_tail, 100.0 * o->bbv_tolerance);
out:
    free(la);
    free(lb);
    return rc;
}

/* ARI and similarity difference of our windows against reference rows
 * (dim wide, one per exp-bbv interval) labelled ref[], through map. */
static int compare_aligned(const struct llc_phaserun *r, const size_t *map, const int *la,
                           const int *ref, const double *rows, size_t windows, size_t dim,
                           double *ari, double *simdiff, char *err, size_t errlen)
{
    size_t compared = 0;
    int rc = llc_phase_ari_aligned(la, r->n, ref, windows, map, ari, &compared, err, errlen);
    if (rc < 0 || compared < 2)
        return rc;
    /* Similarity matrices over the paired windows: ours, and the partner
     * intervals' rows (repeated where several windows share one). */
    if (compared > LLC_SAMPLING_BBV_MAX_CELLS / dim)
        return 0; /* left NAN: too large to gather */
    double *sig = malloc(compared * LLC_PHASE_BUCKETS * sizeof(*sig));
    double *part = malloc(compared * dim * sizeof(*part));
    if (!sig || !part) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (map[i] == LLC_PHASE_NO_WINDOW)
            continue;
        memcpy(sig + n * LLC_PHASE_BUCKETS, r->rows[i].sig, sizeof(r->rows[i].sig));
        memcpy(part + n * dim, rows + map[i] * dim, dim * sizeof(*part));
        n++;
    }
    rc = llc_phase_similarity_diff(sig, LLC_PHASE_BUCKETS, part, dim, n, simdiff, err, errlen);
out:
    free(sig);
    free(part);
    return rc;
}

/* exp-bbv reference, clustered with the same algorithm and compared. With
 * the block addresses, also the 32-entry BBV of the ScarPhase paper (Sherwood's hashed
 * BBV): each block's instructions land in the bucket its address hashes to,
 * with the samples' masks, so both sides are vectors of one space. It is
 * not the sampled signature's limit either: samples hash each instruction's
 * address, the BBV only each block's start. */
int llc_phaserun_compare_bbv(const struct llc_phaserun_config *o, struct llc_phaserun *r, char *err,
                             size_t errlen)
{
    struct llc_sampling_bbv b;
    int rc = llc_sampling_bbv_read(o->bbv, &b, err, errlen);
    if (rc < 0)
        return rc;
    int *la = NULL, *ld = NULL, *lh = NULL;
    size_t *map = NULL;
    double *hashed = NULL;
    if (o->bbv_pc) {
        rc = llc_sampling_bbv_read_pcs(o->bbv_pc, &b, err, errlen);
        if (rc < 0)
            goto out;
    }
    la = malloc((r->n + 1) * sizeof(*la));
    map = malloc((r->n + 1) * sizeof(*map));
    ld = malloc((b.windows + 1) * sizeof(*ld));
    lh = malloc((b.windows + 1) * sizeof(*lh));
    hashed = calloc(b.windows * LLC_PHASE_BUCKETS + 1, sizeof(*hashed));
    if (!la || !map || !ld || !lh || !hashed) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    rc = align_bbv(o, r, &b, map, err, errlen);
    if (rc < 0)
        goto out;
    rc = cluster_rows(&o->det, b.rows, b.windows, b.dim, ld, &r->bbv_phases, err, errlen);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < r->n; i++) {
        la[i] = r->rows[i].p.phase;
        if (map[i] != LLC_PHASE_NO_WINDOW)
            r->rows[i].bbv_phase = ld[map[i]];
    }
    r->bbv_windows = b.windows;
    r->bbv_dim = b.dim;
    r->compared = r->align.matched;
    rc = compare_aligned(r, map, la, ld, b.rows, b.windows, b.dim, &r->ari, &r->simdiff, err,
                         errlen);
    if (rc < 0 || !o->bbv_pc)
        goto out;
    for (size_t i = 0; i < b.windows; i++)
        for (size_t j = 0; j < b.dim; j++)
            hashed[i * LLC_PHASE_BUCKETS + llc_phase_hash_ip(b.addr[j])] += b.rows[i * b.dim + j];
    rc = cluster_rows(&o->det, hashed, b.windows, LLC_PHASE_BUCKETS, lh, &r->bbv_phases32, err,
                      errlen);
    for (size_t i = 0; rc == 0 && i < r->n; i++)
        if (map[i] != LLC_PHASE_NO_WINDOW)
            r->rows[i].bbv32_phase = lh[map[i]];
    if (rc == 0)
        rc = compare_aligned(r, map, la, lh, hashed, b.windows, LLC_PHASE_BUCKETS, &r->ari32,
                             &r->simdiff32, err, errlen);
out:
    free(la);
    free(map);
    free(ld);
    free(lh);
    free(hashed);
    llc_sampling_bbv_free(&b);
    return rc;
}

/* CoV / CCoV of the simulated per-window LLC miss ratio (docs/METHODS.md §10.9). */
int llc_phaserun_sim_metrics(const struct llc_phaserun_config *o, struct llc_phaserun *r, char *err,
                             size_t errlen)
{
    struct llc_sampling_simwin sw;
    int rc = llc_sampling_sim_windows(o->trace, o->sim, o->noise, o->trace_window,
                                      r->unit == LLC_SAMPLING_TRACE_REFERENCES, o->seed, &sw, err,
                                      errlen);
    if (rc < 0)
        return rc;
    const size_t n = sw.windows < r->n ? sw.windows : r->n;
    int *all = calloc(n + 1, sizeof(*all)), *lp = malloc((n + 1) * sizeof(*lp)),
        *lb = malloc((n + 1) * sizeof(*lb)), *lh = malloc((n + 1) * sizeof(*lh));
    double *m = malloc((n + 1) * sizeof(*m));
    if (!all || !lp || !lb || !lh || !m) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        m[i] = sw.accesses[i] ? (double)sw.misses[i] / (double)sw.accesses[i] : 0.0;
        r->rows[i].miss_ratio = m[i];
        lp[i] = r->rows[i].p.phase;
        lb[i] = r->rows[i].bbv_phase;
        lh[i] = r->rows[i].bbv32_phase;
    }
    rc = llc_phase_cov(all, m, n, &r->cov_all, err, errlen);
    if (rc == 0)
        rc = llc_phase_cov(lp, m, n, &r->cov_phase, err, errlen);
    if (rc == 0)
        rc = llc_phase_ccov(lp, m, n, &r->ccov_phase, err, errlen);
    if (rc == 0 && o->bbv) {
        rc = llc_phase_cov(lb, m, n, &r->cov_bbv, err, errlen);
        if (rc == 0)
            rc = llc_phase_ccov(lb, m, n, &r->ccov_bbv, err, errlen);
    }
    /* The seed's own reference (32-entry BBV): where dense vectors split a
     * program into many one-window phases, CCoV counts those at the whole
     * program's CoV, so the dense figure alone would blame the program. */
    if (rc == 0 && o->bbv_pc) {
        rc = llc_phase_cov(lh, m, n, &r->cov_bbv32, err, errlen);
        if (rc == 0)
            rc = llc_phase_ccov(lh, m, n, &r->ccov_bbv32, err, errlen);
    }
out:
    free(all);
    free(lp);
    free(lb);
    free(lh);
    free(m);
    llc_sampling_simwin_free(&sw);
    return rc;
}
