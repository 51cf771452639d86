/* Reuse-distance sampling of a trace file (the trace sampler of `mrc`). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"

/* Lines are handed to the sampler in batches to keep its loop tight. */
#define BATCH 4096

int llc_mrc_sample_trace_windows(const char *path, const struct llc_statmodel_sampler_config *cfg,
                                 const struct llc_mrc_window_hook *hook,
                                 struct llc_statmodel_groups *groups,
                                 struct llc_mrc_trace_stats *stats, char *err, size_t errlen)
{
    struct llc_trace_reader *reader = NULL;
    struct llc_statmodel_sampler *sampler = NULL;
    uint64_t *batch = NULL;
    *stats = (struct llc_mrc_trace_stats){0};
    int rc = llc_trace_reader_open(path, &reader, err, errlen);
    if (rc < 0)
        goto out;
    rc = llc_statmodel_sampler_create(cfg, groups, &sampler, err, errlen);
    if (rc < 0)
        goto out;
    batch = malloc(BATCH * sizeof *batch);
    if (!batch) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    size_t n = 0;
    int window = 0;
    struct llc_trace_rec rec;
    while ((rc = llc_trace_reader_next(reader, &rec, err, errlen)) > 0) {
        stats->records++;
        if (hook) {
            /* The hook sees the references up to the previous record. */
            rc = hook->before(hook->ctx, &rec, stats->refs + n, err, errlen);
            if (rc < 0)
                goto out;
            if (rc == 1) {
                rc = llc_statmodel_sampler_access_batch(sampler, batch, n, err, errlen);
                if (rc == 0)
                    rc = llc_statmodel_sampler_set_group(sampler, ++window, err, errlen);
                if (rc < 0)
                    goto out;
                stats->refs += n;
                n = 0;
            }
        }
        if (rec.kind == LLC_TRACE_INSTR)
            continue;
        /* The simulator's replay refuses larger records as damage; so do we. */
        if (rec.size > 4096) {
            rc = llc_errf(err, errlen, -EINVAL,
                          "%s: corrupt trace (a data record of %u bytes at record %llu)", path,
                          rec.size, (unsigned long long)stats->records);
            goto out;
        }
        if (rec.kind > LLC_TRACE_MODIFY) {
            rc = llc_errf(err, errlen, -EINVAL, "%s: corrupt trace (record %llu has kind %u)", path,
                          (unsigned long long)stats->records, rec.kind);
            goto out;
        }
        const uint64_t size = rec.size ? rec.size : 1;
        /* Relative to the line start: no overflow at the top of memory. */
        const uint64_t n_lines = ((rec.addr & 63) + size - 1) / 64 + 1;
        for (uint64_t k = 0; k < n_lines; k++) {
            batch[n++] = (rec.addr >> 6) + k;
            if (n == BATCH) {
                rc = llc_statmodel_sampler_access_batch(sampler, batch, n, err, errlen);
                if (rc < 0)
                    goto out;
                stats->refs += n;
                n = 0;
            }
        }
    }
    if (rc < 0)
        goto out;
    rc = llc_statmodel_sampler_access_batch(sampler, batch, n, err, errlen);
    if (rc < 0)
        goto out;
    stats->refs += n;
    rc = llc_statmodel_sampler_finish(sampler, err, errlen);
    if (rc < 0)
        goto out;
    llc_statmodel_sampler_stats(sampler, &stats->sampler);
    if (hook && hook->reuses && cfg->log_reuses) {
        size_t nr = 0;
        const struct llc_statmodel_reuse *log = llc_statmodel_sampler_reuses(sampler, &nr);
        *hook->reuses = malloc((nr ? nr : 1) * sizeof(*log));
        if (!*hook->reuses) {
            rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
            goto out;
        }
        if (nr)
            memcpy(*hook->reuses, log, nr * sizeof(*log));
        *hook->n_reuses = nr;
    }
out:
    free(batch);
    llc_statmodel_sampler_destroy(sampler);
    llc_trace_reader_close(reader);
    return rc < 0 ? rc : 0;
}

int llc_mrc_sample_trace_groups(const char *path, const struct llc_statmodel_sampler_config *cfg,
                                struct llc_statmodel_groups *groups,
                                struct llc_mrc_trace_stats *stats, char *err, size_t errlen)
{
    return llc_mrc_sample_trace_windows(path, cfg, NULL, groups, stats, err, errlen);
}

int llc_mrc_sample_trace(const char *path, const struct llc_statmodel_sampler_config *cfg,
                         struct llc_statmodel_hist *h, struct llc_mrc_trace_stats *stats, char *err,
                         size_t errlen)
{
    struct llc_statmodel_groups *groups = NULL;
    int rc = llc_statmodel_groups_create(&groups, err, errlen);
    if (rc < 0)
        goto out;
    rc = llc_mrc_sample_trace_groups(path, cfg, groups, stats, err, errlen);
    if (rc < 0)
        goto out;
    /* All groups: in slot mode the samples are spread over the slots. */
    rc = llc_statmodel_groups_pool(groups, h, err, errlen);
out:
    llc_statmodel_groups_destroy(groups);
    return rc < 0 ? rc : 0;
}
