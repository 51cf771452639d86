/* The map on an open session: the plan the configuration describes, the
 * baseline subtracted, the simulator's ground truth beside it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/session_internal.h"

static void iso_now(char *buf, size_t len)
{
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int llc_session_map(struct llc_session *s, struct llc_session_map_result *out, char *err,
                    size_t errlen)
{
    const struct llc_session_config *c = &s->cfg;
    struct llc_map_backend *b = s->b;
    memset(out, 0, sizeof(*out));
    const uint32_t units = llc_map_units(&b->geo);
    out->plan = (struct llc_map_plan){
        .mode = c->mode,
        .group = c->group ? c->group : (b->all_at_once ? (units + 7) / 8 : 1),
        .dwell_s = c->dwell_s,
        .sweeps = c->sweeps,
        .sets = c->sets,
        .n_sets = c->n_sets,
        .seed = c->seed,
        .stop = c->stop,
        .progress = c->progress,
        .progress_ctx = c->progress_ctx,
        .restart_target = !s->info.sim && c->per_set_runs ? llc_session_restart_target : NULL,
        .restart_ctx = &s->h,
    };
    iso_now(out->start_time, sizeof(out->start_time));
    int rc = llc_map_run(b, &out->plan, &out->result, err, errlen);
    iso_now(out->end_time, sizeof(out->end_time));
    if (rc < 0)
        goto fail;
    if (s->baseline && (rc = llc_map_baseline_apply(s->baseline, out->result, err, errlen)) < 0)
        goto fail;
    if (s->info.sim) {
        out->truth = malloc(units * sizeof(*out->truth));
        if (!out->truth || llc_map_sim_truth(b, out->truth, NULL, NULL) < 0) {
            rc = llc_errf(err, errlen, -EIO, "simulator ground truth unavailable");
            goto fail;
        }
    }
    return 0;
fail:
    llc_session_map_result_free(out);
    return llc_session_fail_code(rc);
}

void llc_session_map_meta(const struct llc_session *s, const struct llc_session_map_result *m,
                          struct llc_map_meta *meta)
{
    *meta = (struct llc_map_meta){.machine = s->machine,
                                  .target = s->target,
                                  .policy = s->info.policy,
                                  .rate = s->cfg.rate,
                                  .delay_nops = s->cfg.delay_nops,
                                  .seed = s->cfg.seed,
                                  .start_time = m->start_time,
                                  .end_time = m->end_time,
                                  .plan = &m->plan,
                                  .truth_occupancy = m->truth,
                                  .rate_selection = s->info.rate_selection,
                                  .baseline = s->baseline,
                                  .prefetch = s->info.prefetch};
}

void llc_session_map_result_free(struct llc_session_map_result *m)
{
    llc_map_result_free(m->result);
    free(m->truth);
    m->result = NULL;
    m->truth = NULL;
}
