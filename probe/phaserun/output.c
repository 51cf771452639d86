/* phase's files: PREFIX.phase.json, PREFIX.phase.csv, PREFIX.phase.png. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "llcprobe/common.h"
#include "llcprobe/phaserun.h"
#include "util/atomic_file.h"
#include "util/json.h"
#include "util/plot.h"

/* ---- outputs ----------------------------------------------------------- */

static json_t *choice_json(const struct llc_sampling_choice *c)
{
    json_t *refused = json_array();
    for (int s = 0; s < (int)c->source; s++)
        json_array_append_new(refused,
                              json_pack("{s:s,s:s}", "source",
                                        llc_sampling_source_name((enum llc_sampling_source)s),
                                        "reason", c->refused[s]));
    json_t *j = json_pack(
        "{s:s,s:s,s:i,s:o,s:s,s:s?,s:I,s:i,s:i}", "source", llc_sampling_source_name(c->source),
        "event", c->event, "precise_ip", (int)c->precise_ip, "refused", refused, "window_unit",
        llc_sampling_unit_name(c->unit), "window_unit_refused",
        c->unit_refused[0] ? c->unit_refused : NULL, "window", (json_int_t)c->window,
        "samples_per_window", (int)c->samples_per_window, "cpus", (int)c->ncpus);
    if (j && c->unit_note[0])
        json_object_set_new(j, "window_unit_note", json_string(c->unit_note));
    if (j && c->source == LLC_SAMPLING_TICK)
        json_object_update_new(j,
                               json_pack("{s:i,s:o,s:s?}", "tick_hz", (int)c->tick_hz,
                                         "tick_hz_measured", llc_json_finite(c->tick_hz_measured),
                                         "tick_note", c->tick_note[0] ? c->tick_note : NULL));
    return j;
}

static json_t *windows_json(const struct llc_phaserun *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const struct llc_phaserun_row *x = &r->rows[i];
        json_t *w =
            json_pack("{s:I,s:I,s:I,s:I,s:i,s:f,s:I,s:i,s:i,s:i,s:i,s:f,s:I,s:i,s:i}", "window",
                      (json_int_t)x->s.index, "samples", (json_int_t)x->s.n_ips, "period",
                      (json_int_t)x->s.period, "progress", (json_int_t)x->s.progress, "multiplier",
                      (int)x->s.multiplier, "rate", 1.0 / x->s.multiplier, "lost",
                      (json_int_t)x->s.lost, "phase", x->p.phase, "predicted", x->predicted,
                      "confidence", (int)x->pred_confidence, "cluster", (int)x->p.cluster,
                      "distance", x->p.distance, "processes", (json_int_t)x->s.processes, "threads",
                      (int)x->s.tasks, "new_cluster", (int)x->p.new_cluster);
        json_object_set_new(w, "instructions",
                            x->s.instructions_known ? json_integer((json_int_t)x->s.instructions)
                                                    : json_null());
        if (r->live) {
            json_object_set_new(w, "kernel_samples", json_integer((json_int_t)x->s.kernel_samples));
            json_object_set_new(w, "t_start", json_real(x->s.t_start));
            json_object_set_new(w, "t_end", json_real(x->s.t_end));
            json_object_set_new(w, "cpu_ns", json_integer((json_int_t)x->s.cpu_ns));
        }
        if (isfinite(x->miss_ratio))
            json_object_set_new(w, "llc_miss_ratio", json_real(x->miss_ratio));
        json_array_append_new(a, w);
    }
    return a;
}

static json_t *summary_json(const struct llc_phase_summary *s, const uint64_t *counts,
                            size_t nphases, double coverage)
{
    json_t *per = json_array();
    for (size_t i = 0; i < nphases; i++)
        json_array_append_new(
            per, json_pack("{s:i,s:I}", "phase", (int)i, "windows", (json_int_t)counts[i]));
    return json_pack(
        "{s:I,s:I,s:I,s:o,s:f,s:I,s:I,s:f,s:f,s:I,s:f,s:I}", "windows", (json_int_t)s->windows,
        "samples", (json_int_t)s->samples, "phases", (json_int_t)s->phases, "windows_per_phase",
        per, "coverage", coverage, "unclassified", (json_int_t)s->unclassified, "transition",
        (json_int_t)s->transition, "unclassified_share", s->unclassified_share, "mean_rate",
        s->mean_rate, "predictions", (json_int_t)s->predictions, "prediction_accuracy",
        s->prediction_accuracy, "phase_changes", (json_int_t)s->phase_changes);
}

int llc_phaserun_write_json(const char *path, const struct llc_phaserun_config *o,
                            const struct llc_phaserun *r, char *err, size_t errlen)
{
    const struct llc_phase_summary *s = &r->summary;
    json_t *doc = llc_json_doc_new("llcprobe-phase", 1);
    if (!doc)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    json_object_set_new(doc, "mode", json_string(r->live ? "live" : "trace"));
    /* A run stopped by a signal keeps the windows seen so far. */
    json_object_set_new(doc, "complete", json_boolean(!r->stopped_by));
    if (r->stopped_by)
        json_object_set_new(doc, "stopped_by_signal", json_integer(r->stopped_by));
    json_object_set_new(doc, "command", json_string(r->command));
    json_object_set_new(doc, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(doc, "config",
                        json_pack("{s:f,s:f,s:i,s:b,s:i,s:I}", "theta", o->det.theta, "theta_dsr",
                                  o->det.theta_dsr, "transition_threshold",
                                  (int)o->det.transition_threshold, "dynamic_rate",
                                  o->det.dynamic_rate, "max_multiplier", (int)o->det.max_multiplier,
                                  "min_samples", (json_int_t)o->det.min_samples));
    if (r->live) {
        json_t *samp = choice_json(&r->choice);
        /* How the dynamic rate acts (see llcprobe/sampling.h). */
        json_object_set_new(samp, "rate_control", json_string("inherited-events"));
        json_object_set_new(samp, "max_rate_hz", json_integer((json_int_t)o->samp.max_rate_hz));
        json_object_set_new(doc, "sampling", samp);
        json_object_set_new(doc, "target",
                            json_pack("{s:s,s:i,s:i,s:f,s:f,s:f}", "state",
                                      llc_target_state_name(r->status.state), "exit_code",
                                      r->status.exit_code, "signal", r->status.signal, "runtime_s",
                                      r->status.runtime_s, "cpu_user_s", r->target_user_s,
                                      "cpu_sys_s", r->target_sys_s));
        json_object_set_new(
            doc, "short_run",
            r->short_run
                ? json_pack("{s:I,s:i,s:I,s:s,s:f,s:f}", "windows", (json_int_t)r->n, "min_windows",
                            LLC_PHASERUN_SHORT_RUN_WINDOWS, "window", (json_int_t)r->choice.window,
                            "unit", llc_sampling_unit_name(r->choice.unit), "suggested_window",
                            r->suggest_window, "suggested_samples_per_window", r->suggest_samples)
                : json_null());
        json_object_set_new(
            doc, "monitor",
            json_pack("{s:f,s:f}", "cpu_user_s", r->monitor_user_s, "cpu_sys_s", r->monitor_sys_s));
    } else {
        const bool refs = r->unit == LLC_SAMPLING_TRACE_REFERENCES;
        /* window_instructions stays for readers of instruction windows. */
        json_object_set_new(
            doc, "trace",
            json_pack("{s:s,s:s,s:s,s:I,s:o,s:i}", "path", o->trace, "recorder", r->recorder,
                      "window_unit", refs ? "references" : "instructions", "window",
                      (json_int_t)o->trace_window, "window_instructions",
                      refs ? json_null() : json_integer((json_int_t)o->trace_window),
                      "samples_per_window", (int)o->samp.samples_per_window));
    }
    json_object_set_new(doc, "summary", summary_json(s, r->counts, r->nphases, r->coverage));
    if (o->bbv)
        json_object_set_new(doc, "bbv",
                            json_pack("{s:s,s:s?,s:I,s:I,s:I,s:I,s:o,s:o}", "path", o->bbv,
                                      "pc_path", o->bbv_pc, "windows", (json_int_t)r->bbv_windows,
                                      "blocks", (json_int_t)r->bbv_dim, "phases",
                                      (json_int_t)r->bbv_phases, "compared",
                                      (json_int_t)r->compared, "ari", llc_json_finite(r->ari),
                                      "similarity_diff", llc_json_finite(r->simdiff)));
    if (o->bbv)
        json_object_update_new(
            json_object_get(doc, "bbv"),
            json_pack("{s:s,s:I,s:I,s:f,s:I,s:f,s:f,s:I}", "aligned_by", "instructions",
                      "trace_instructions", (json_int_t)r->align.total_a, "bbv_instructions",
                      (json_int_t)r->align.total_b, "total_diff", r->align.total_diff,
                      "tail_allowance", (json_int_t)r->bbv_tail, "gap", r->bbv_gap, "tolerance",
                      o->bbv_tolerance, "unmatched", (json_int_t)(r->n - r->align.matched)));
    if (o->bbv_pc)
        json_object_set_new(json_object_get(doc, "bbv"), "bbv32",
                            json_pack("{s:I,s:o,s:o}", "phases", (json_int_t)r->bbv_phases32, "ari",
                                      llc_json_finite(r->ari32), "similarity_diff",
                                      llc_json_finite(r->simdiff32)));
    if (o->sim)
        json_object_set_new(doc, "sim",
                            json_pack("{s:s,s:s?,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "preset", o->sim,
                                      "noise", o->noise, "cov_program", llc_json_finite(r->cov_all),
                                      "cov_phases", llc_json_finite(r->cov_phase), "ccov_phases",
                                      llc_json_finite(r->ccov_phase), "cov_bbv_phases",
                                      llc_json_finite(r->cov_bbv), "ccov_bbv_phases",
                                      llc_json_finite(r->ccov_bbv), "cov_bbv32_phases",
                                      llc_json_finite(r->cov_bbv32), "ccov_bbv32_phases",
                                      llc_json_finite(r->ccov_bbv32)));
    json_object_set_new(doc, "windows", windows_json(r));
    const int rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

/* CSV columns; the plot script refers to them by number (x: 2,3). */
int llc_phaserun_write_csv(const char *path, const struct llc_phaserun *r, char *err, size_t errlen)
{
    struct llc_afile *f = NULL;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *out = llc_afile_stream(f);
    fprintf(out, "window,x_start,x_end,time_start_s,time_end_s,instructions,cpu_ns,samples,"
                 "multiplier,rate,phase,predicted,confidence,lost,llc_miss_ratio,bbv_phase,"
                 "bbv32_phase\n");
    double x = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct llc_phaserun_row *w = &r->rows[i];
        /* x axis: seconds live, millions of instructions for a trace */
        const double x0 = r->live ? w->s.t_start : x;
        const double x1 = r->live ? w->s.t_end : x + (double)w->s.progress / 1e6;
        x = x1;
        fprintf(out, "%" PRIu64 ",%.6f,%.6f,", w->s.index, x0, x1);
        if (r->live)
            fprintf(out, "%.6f,%.6f,", w->s.t_start, w->s.t_end);
        else
            fprintf(out, ",,");
        if (w->s.instructions_known)
            fprintf(out, "%" PRIu64, w->s.instructions);
        fprintf(out, ",");
        if (r->live)
            fprintf(out, "%" PRIu64, w->s.cpu_ns);
        fprintf(out, ",%zu,%u,%.6g,%d,%d,%u,%" PRIu64 ",", w->s.n_ips, w->s.multiplier,
                1.0 / w->s.multiplier, w->p.phase, w->predicted, w->pred_confidence, w->s.lost);
        if (isfinite(w->miss_ratio))
            fprintf(out, "%.6g", w->miss_ratio);
        fprintf(out, ",");
        if (w->bbv_phase != LLC_PHASE_UNCLASSIFIED || isfinite(w->miss_ratio))
            fprintf(out, "%d", w->bbv_phase);
        fprintf(out, ",");
        if (w->bbv32_phase != LLC_PHASE_UNCLASSIFIED || isfinite(w->miss_ratio))
            fprintf(out, "%d", w->bbv32_phase);
        fprintf(out, "\n");
    }
    return llc_afile_commit(f, err, errlen);
}

struct phase_plot_ctx {
    const char *csv;
    const struct llc_phaserun *r;
    size_t nphases;
};

static void emit_timeline(void *ctx, FILE *g)
{
    const struct phase_plot_ctx *c = ctx;
    fprintf(g, "set datafile separator ','\nset key off\nset title ");
    llc_plot_quote(g, c->r->command);
    fprintf(g,
            "\nset xlabel '%s'\nset ylabel 'phase'\n"
            "set ytics ('unclassified' -2, 'transition' -1)\n"
            "set yrange [-2.6:%zu.6]\nset grid ytics\n"
            "set style fill solid 0.9 noborder\n",
            c->r->live                                    ? "time (s)"
            : c->r->unit == LLC_SAMPLING_TRACE_REFERENCES ? "references (millions)"
                                                          : "instructions (millions)",
            c->nphases ? c->nphases - 1 : 0);
    for (size_t i = 0; i < c->nphases; i += 1 + c->nphases / 25)
        fprintf(g, "set ytics add ('%zu' %zu)\n", i, i);
    fprintf(g, "plot ");
    llc_plot_quote(g, c->csv);
    fprintf(g, " every ::1 using (($2+$3)/2):11:(($3-$2)/2):(0.4):($11 < 0 ? 0 : $11 + 1) "
               "with boxxyerror lc variable\n");
}

int llc_phaserun_plot(const char *csv, const char *png, const struct llc_phaserun *r, char *err,
                      size_t errlen)
{
    const size_t nphases = r->nphases;
    struct phase_plot_ctx ctx = {csv, r, nphases};
    const int height = (int)(260 + 14 * (nphases < 20 ? nphases : 20));
    return llc_plot_png(NULL, png, 1100, height, emit_timeline, &ctx, err, errlen);
}
