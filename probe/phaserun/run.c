/* llc_phaserun_run: a live program or a trace, window by window through
 * the ScarPhase detector. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "llcprobe/common.h"
#include "llcprobe/phaserun.h"
#include "util/cli.h"
#include "util/stopsig.h"

static int add_row(struct llc_phaserun *r, const struct llc_phaserun_row *x)
{
    if (r->n == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 256;
        struct llc_phaserun_row *p = realloc(r->rows, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        r->rows = p;
        r->cap = cap;
    }
    r->rows[r->n++] = *x;
    return 0;
}

/* Classifies one window's addresses and records it. */
static int classify(struct llc_phaserun *r, struct llc_phase_detector *d,
                    const struct llc_sampling_window *sw, const uint64_t *ips, size_t n, char *err,
                    size_t errlen)
{
    struct llc_phaserun_row x = {.s = *sw,
                                 .bbv_phase = LLC_PHASE_UNCLASSIFIED,
                                 .bbv32_phase = LLC_PHASE_UNCLASSIFIED,
                                 .miss_ratio = NAN};
    x.predicted = r->n ? r->rows[r->n - 1].p.predicted : LLC_PHASE_UNCLASSIFIED;
    x.pred_confidence = r->n ? r->rows[r->n - 1].p.confidence : 0;
    llc_phase_signature_ips(ips, n, x.sig);
    const int rc = llc_phase_detector_feed_ips(d, ips, n, &x.p, err, errlen);
    if (rc < 0)
        return rc;
    if (add_row(r, &x) < 0)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    return 0;
}

static int run_live(const struct llc_phaserun_config *o, char **argv, struct llc_phase_detector *d,
                    struct llc_phaserun *r, char *err, size_t errlen)
{
    struct llc_target_options to;
    llc_target_options_init(&to);
    to.cpu = LLC_TARGET_CPU_NONE;
    to.die_with_parent = true;
    struct llc_target *t = NULL;
    struct llc_sampling *s = NULL;
    llc_join_argv(argv, r->command, sizeof(r->command));
    int rc = llc_target_launch(argv, &to, &t, err, errlen);
    if (rc < 0)
        return rc;
    /* Opened on the held child: enable_on_exec starts counting at its first
     * instruction, and every thread or child it creates inherits the events. */
    rc = llc_sampling_open(llc_target_info(t)->pid, &o->samp, &s, err, errlen);
    if (rc < 0)
        goto out;
    r->choice = *llc_sampling_choice(s);
    rc = llc_target_start(t, err, errlen);
    if (rc < 0)
        goto out;
    llc_sampling_start(s);
    struct llc_sampling_window w;
    do {
        if (llc_stop_requested()) {
            rc = 0;
            r->stopped_by = (int)llc_stop_signal;
            break;
        }
        rc = llc_sampling_set_multiplier(s, llc_phase_detector_multiplier(d), err, errlen);
        if (rc < 0)
            break;
        rc = llc_sampling_next_window(s, t, &w, err, errlen);
        if (rc < 0 && llc_stop_requested()) {
            rc = 0;
            r->stopped_by = (int)llc_stop_signal;
        }
        if (rc < 0 || r->stopped_by)
            break;
        size_t n;
        const uint64_t *ips = llc_sampling_ips(s, &n);
        /* An exit right at a window boundary leaves an empty last window:
         * nothing ran in it. */
        if (!(w.last && w.progress == 0 && n == 0)) {
            const int crc = classify(r, d, &w, ips, n, err, errlen);
            if (crc < 0) {
                rc = crc;
                break;
            }
        }
    } while (rc == 1);
    /* Stopped early: the whole process group goes (destroy below); the
     * status is the one stop() saw. */
    if (rc == 0 && r->stopped_by)
        rc = llc_target_stop(t, &r->status, err, errlen);
    else if (rc == 0)
        rc = llc_target_poll(t, &r->status, err, errlen);
out:
    llc_sampling_close(s);
    llc_target_destroy(t);
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        r->target_user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
        r->target_sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    }
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        r->monitor_user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
        r->monitor_sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    }
    return rc;
}

/* A live run of fewer than LLC_PHASERUN_SHORT_RUN_WINDOWS windows cannot show its
 * phases (the default windows are long: 1.6 s of CPU with the tick): the
 * numbers, and what would give enough windows, go into r->short_msg
 * (printed after the summary) and the JSON. */
static void check_short_run(struct llc_phaserun *r)
{
    if (r->stopped_by || r->n >= LLC_PHASERUN_SHORT_RUN_WINDOWS)
        return;
    const struct llc_sampling_choice *c = &r->choice;
    uint64_t done = 0;
    for (size_t i = 0; i < r->n; i++)
        done += r->rows[i].s.progress;
    r->short_run = true;
    const bool cpu = c->unit == LLC_SAMPLING_CPU_NS;
    /* The source's samples per unit at full rate. */
    const double per_unit = c->window ? (double)c->samples_per_window / (double)c->window : 0;
    const double floor = cpu ? 1e6 : 1000; /* the smallest --window-ms / --window */
    double want = (double)done / LLC_PHASERUN_SHORT_RUN_WINDOWS;
    want = want < floor ? floor : want;
    r->suggest_window = cpu ? want / 1e6 : want;
    r->suggest_samples = per_unit * want;
    char seen[160], fix[256];
    if (cpu)
        snprintf(seen, sizeof(seen), "%zu window%s of %.3f s CPU (the target's CPU time %.3f s)",
                 r->n, r->n == 1 ? "" : "s", (double)c->window / 1e9, (double)done / 1e9);
    else
        snprintf(seen, sizeof(seen),
                 "%zu window%s of %" PRIu64 " instructions (the target "
                 "retired %" PRIu64 ")",
                 r->n, r->n == 1 ? "" : "s", c->window, done);
    if (r->suggest_samples >= LLC_PHASE_MIN_SAMPLES)
        snprintf(fix, sizeof(fix),
                 "Try %s %.0f (about %.0f samples per window at this source's "
                 "rate; %d at least), or phases offline",
                 cpu ? "--window-ms" : "--window", r->suggest_window, r->suggest_samples,
                 LLC_PHASE_MIN_SAMPLES);
    else
        snprintf(fix, sizeof(fix),
                 "Windows short enough (%s %.0f) would get %.1f samples each "
                 "at this source's rate (%d at least): use phases offline",
                 cpu ? "--window-ms" : "--window", r->suggest_window, r->suggest_samples,
                 LLC_PHASE_MIN_SAMPLES);
    snprintf(r->short_msg, sizeof(r->short_msg),
             "the run is too short for its windows: %s; "
             "phases need at least %d. %s: llcprobe trace -o F -- PROGRAM, then llcprobe phase "
             "--trace F",
             seen, LLC_PHASERUN_SHORT_RUN_WINDOWS, fix);
}

static int run_trace(const struct llc_phaserun_config *o, struct llc_phase_detector *d,
                     struct llc_phaserun *r, char *err, size_t errlen)
{
    const struct llc_sampling_trace_config tc = {
        .window_instr = o->trace_window,
        .samples_per_window = o->samp.samples_per_window,
        .seed = o->seed,
        .unit = o->trace_unit,
    };
    struct llc_sampling_trace *t = NULL;
    int rc = llc_sampling_trace_open(o->trace, &tc, &t, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(r->command, sizeof(r->command), "%s", llc_sampling_trace_command(t));
    snprintf(r->recorder, sizeof(r->recorder), "%s", llc_sampling_trace_recorder(t));
    r->unit = llc_sampling_trace_unit(t);
    struct llc_sampling_window w;
    do {
        rc = llc_sampling_trace_next(t, llc_phase_detector_multiplier(d), &w, err, errlen);
        if (rc < 0 || (rc == 0 && w.progress == 0))
            break;
        size_t n;
        const uint64_t *ips = llc_sampling_trace_ips(t, &n);
        const int crc = classify(r, d, &w, ips, n, err, errlen);
        if (crc < 0)
            rc = crc;
    } while (rc == 1);
    llc_sampling_trace_close(t);
    if (rc >= 0 && r->n == 0)
        rc = r->unit == LLC_SAMPLING_TRACE_REFERENCES
                 ? llc_errf(err, errlen, -ENODATA, "%s: the trace holds no data records", o->trace)
                 : llc_errf(err, errlen, -ENODATA,
                            "%s: the trace holds no instruction records "
                            "(recorder %s; --window-unit references windows by its data "
                            "records)",
                            o->trace, r->recorder);
    return rc < 0 ? rc : 0;
}

void llc_phaserun_init(struct llc_phaserun *r, bool live)
{
    *r = (struct llc_phaserun){.live = live,
                               .ari = NAN,
                               .simdiff = NAN,
                               .ari32 = NAN,
                               .simdiff32 = NAN,
                               .cov_all = NAN,
                               .cov_phase = NAN,
                               .ccov_phase = NAN,
                               .cov_bbv = NAN,
                               .ccov_bbv = NAN,
                               .cov_bbv32 = NAN,
                               .ccov_bbv32 = NAN};
}

void llc_phaserun_free(struct llc_phaserun *r)
{
    free(r->rows);
    free(r->counts);
    r->rows = NULL;
    r->counts = NULL;
    r->n = r->cap = r->nphases = 0;
}

/* The detector's summary and windows per stable phase, kept in the run
 * for its files and the CLI's summary. */
static int summarize(struct llc_phaserun *r, const struct llc_phase_detector *d, char *err,
                     size_t errlen)
{
    llc_phase_detector_summary(d, &r->summary);
    r->nphases = llc_phase_detector_phase_counts(d, NULL, 0);
    r->counts = calloc(r->nphases + 1, sizeof(*r->counts));
    if (!r->counts)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    llc_phase_detector_phase_counts(d, r->counts, r->nphases);
    uint64_t stable = 0;
    for (size_t i = 0; i < r->nphases; i++)
        stable += r->counts[i];
    r->coverage = r->summary.windows ? (double)stable / (double)r->summary.windows : 0.0;
    return 0;
}

int llc_phaserun_run(const struct llc_phaserun_config *cfg, char **argv, struct llc_phaserun *r,
                     char *err, size_t errlen)
{
    struct llc_phase_detector *d = NULL;
    int rc = llc_phase_detector_create(&cfg->det, &d, err, errlen);
    if (rc == 0)
        rc =
            cfg->trace ? run_trace(cfg, d, r, err, errlen) : run_live(cfg, argv, d, r, err, errlen);
    if (rc == 0 && r->live)
        check_short_run(r);
    if (rc == 0 && cfg->bbv && !r->stopped_by)
        rc = llc_phaserun_compare_bbv(cfg, r, err, errlen);
    if (rc == 0 && cfg->sim && !r->stopped_by)
        rc = llc_phaserun_sim_metrics(cfg, r, err, errlen);
    if (rc == 0)
        rc = summarize(r, d, err, errlen);
    llc_phase_detector_destroy(d);
    return rc;
}
