/* llcprobe study: report.html, one self-contained file (inline SVG and
 * CSS, no scripts, no network): the pairwise slowdown heatmap, the ranked
 * co-schedules, occupancy and miss ratio over time for the best
 * co-schedule, machine, version and the model's assumptions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/study.h"
#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/version.h"

static void esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", o);
            break;
        case '>':
            fputs("&gt;", o);
            break;
        case '&':
            fputs("&amp;", o);
            break;
        case '"':
            fputs("&quot;", o);
            break;
        default:
            fputc(*s, o);
        }
    }
}

static const char *pname(const struct study *s, size_t i)
{
    return s->progs[i].prof.program.name;
}

/* Slowdown 1 (white) to hi (dark red). */
static void heat_colour(double v, double hi, char *buf, size_t len)
{
    double t = hi > 1 ? (v - 1) / (hi - 1) : 0;
    t = fmin(1, fmax(0, t));
    snprintf(buf, len, "rgb(%d,%d,%d)", (int)(255 - 75 * t), (int)(255 - 230 * t),
             (int)(255 - 230 * t));
}

static void heatmap(FILE *o, const struct study *s)
{
    size_t longest = 4;
    for (size_t i = 0; i < s->n; i++)
        longest = strlen(pname(s, i)) > longest ? strlen(pname(s, i)) : longest;
    /* room for the labels: about 6.5 px a character at 11 px */
    const size_t label = 10 + (longest > 40 ? 40 : longest) * 13 / 2;
    const size_t n = s->n, cell = n > 24 ? 16 : 28, left = label, top = label;
    double hi = 1;
    for (size_t i = 0; i < n * n; i++)
        if (isfinite(s->pair[i]))
            hi = fmax(hi, s->pair[i]);
    fprintf(
        o,
        "<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\">\n",
        left + n * cell + 20, top + n * cell + 20);
    for (size_t i = 0; i < n; i++) {
        fprintf(o, "<text x=\"%zu\" y=\"%zu\" text-anchor=\"end\" font-size=\"11\">", left - 4,
                top + i * cell + cell / 2 + 4);
        esc(o, pname(s, i));
        fprintf(o, "</text>\n<text transform=\"translate(%zu,%zu) rotate(-60)\" font-size=\"11\">",
                left + i * cell + cell / 2 + 4, top - 4);
        esc(o, pname(s, i));
        fputs("</text>\n", o);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const double v = s->pair[i * n + j];
            char col[32] = "#cccccc";
            if (isfinite(v))
                heat_colour(v, hi, col, sizeof(col));
            fprintf(
                o,
                "<rect class=\"cell\" data-row=\"%zu\" data-col=\"%zu\" x=\"%zu\" y=\"%zu\" width=\"%zu\" "
                "height=\"%zu\" fill=\"%s\" stroke=\"#fff\"><title>",
                i, j, left + j * cell, top + i * cell, cell, cell, col);
            esc(o, pname(s, i));
            fputs(" with ", o);
            esc(o, pname(s, j));
            if (isfinite(v))
                fprintf(o, ": slowdown %.4f</title></rect>\n", v);
            else
                fputs(": (itself)</title></rect>\n", o);
        }
    fputs("</svg>\n", o);
    fprintf(
        o,
        "<p class=\"note\">Row program's predicted slowdown when it shares the LLC with the column "
        "program alone (white 1.0, darkest %.3f).</p>\n",
        hi);
}

static void sched_row(FILE *o, const struct study *s, const struct study_sched *c,
                      const char *label)
{
    fprintf(o, "<tr><td>%s</td><td>%.6g</td><td>%+.2f%%</td><td>", label, c->value,
            study_from_best(s, c->value));
    for (size_t i = 0; i < c->ng; i++) {
        const struct study_group *g = &s->groups[c->g[i]];
        fputs("<span class=\"grp\">", o);
        for (size_t j = 0; j < g->n; j++) {
            fputs(j ? ", " : "", o);
            esc(o, pname(s, g->m[j]));
            fprintf(o, " <b>%.3f</b>", g->slow[j]);
        }
        fputs("</span> ", o);
    }
    fputs("</td></tr>\n", o);
}

static void table(FILE *o, const struct study *s)
{
    const struct study_search *q = &s->search;
    fprintf(o,
            "<table id=\"ranked\"><tr><th>co-schedule</th><th>%s</th><th>from best</th>"
            "<th>groups (program <b>slowdown</b>)</th></tr>\n",
            study_metric_name(s->metric));
    for (size_t i = 0; i < s->n_top; i++) {
        char label[48];
        if (i == 0)
            snprintf(label, sizeof(label), "best");
        else
            snprintf(label, sizeof(label), q->median_sampled ? "drawn #%zu" : "rank %zu", i + 1);
        sched_row(o, s, &s->top[i], label);
    }
    sched_row(o, s, &s->median, q->median_sampled ? "median (drawn)" : "median");
    sched_row(o, s, &s->worst, "worst");
    fputs("</table>\n", o);
    fprintf(o, "<p class=\"note\">Search: %s over %.4g co-schedules (%.4g %s, %.2f s). ", q->method,
            q->n_schedules, q->evaluated, strcmp(q->method, "exhaustive") ? "nodes" : "valued",
            s->search_s);
    if (q->best_exact)
        fputs("The best is optimal. ", o);
    else
        fprintf(o, "The best is not proven optimal: gap to the bound %.6g at most %.3g%%. ",
                q->best_bound, q->gap_pct);
    if (!q->worst_exact)
        fprintf(o, "The worst is not proven: gap at most %.3g%%. ", q->worst_gap_pct);
    if (q->median_sampled)
        fprintf(o, "Median and the drawn rows from %zu uniformly drawn co-schedules (seed %llu).",
                q->samples, (unsigned long long)q->seed);
    fputs("</p>\n", o);
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

/* One step plot per program of one group: what = 0 occupancy (lines),
 * 1 miss ratio. */
static void plot(FILE *o, const struct study *s, size_t gi, int what)
{
    const struct study_group *g = &s->groups[s->top[0].g[gi]];
    const struct llc_contention_run *r = s->runs[gi];
    const double W = 520, H = 180, L = 60, B = 30;
    double tmax = 0, ymax = what ? 1 : s->cfg.capacity;
    for (size_t k = 0; k < r->n_segments; k++)
        tmax = fmax(tmax, r->segments[k].t0 + r->segments[k].dt);
    if (what) {
        ymax = 0;
        for (size_t k = 0; k < r->n_tuples; k++)
            for (size_t j = 0; j < g->n; j++)
                if (isfinite(r->tuples[k].share[j].miss_ratio))
                    ymax = fmax(ymax, r->tuples[k].share[j].miss_ratio);
        ymax = ymax > 0 ? ymax * 1.05 : 1;
    }
    fprintf(
        o,
        "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n",
        L + W + 10, H + B + 24);
    fprintf(
        o,
        "<rect x=\"%.0f\" y=\"10\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n",
        L, W, H);
    fprintf(
        o,
        "<text x=\"4\" y=\"16\" font-size=\"11\">%.3g</text><text x=\"4\" y=\"%.0f\" font-size=\"11\">0"
        "</text>\n",
        ymax, H + 10);
    fprintf(o,
            "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">0 s</text><text x=\"%.0f\" y=\"%.0f\" "
            "font-size=\"11\" text-anchor=\"end\">%.3g s</text>\n",
            L, H + 24, L + W, H + 24, tmax);
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
            L + W / 2, H + B + 18,
            what ? "LLC miss ratio over time" : "LLC occupancy (lines) over time");
    for (size_t j = 0; j < g->n; j++) {
        fprintf(o, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" points=\"",
                palette[j % 8]);
        for (size_t k = 0; k < r->n_segments && tmax > 0; k++) {
            const struct llc_contention_segment *sg = &r->segments[k];
            const struct llc_contention_share *sh = &r->tuples[sg->tuple].share[j];
            const double v = what ? sh->miss_ratio : sh->occupancy;
            if (!isfinite(v))
                continue;
            const double y = 10 + H - H * fmin(1, v / ymax);
            fprintf(o, "%.1f,%.1f %.1f,%.1f ", L + W * sg->t0 / tmax, y,
                    L + W * (sg->t0 + sg->dt) / tmax, y);
        }
        fputs("\"/>\n", o);
        fprintf(o, "<text x=\"%.0f\" y=\"%zu\" font-size=\"11\" fill=\"%s\">", L + 6, 24 + 13 * j,
                palette[j % 8]);
        esc(o, pname(s, g->m[j]));
        fputs("</text>\n", o);
    }
    fputs("</svg>\n", o);
}

int study_report(const char *dir, const struct study *s, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/report.html", dir);
    struct llc_afile *f;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *o = llc_afile_stream(f);
    const struct pred_machine *m = &s->machine;
    fputs(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<title>llcprobe study</title>\n<style>\n"
        "body{font-family:sans-serif;margin:2em;max-width:1100px}td,th{border:1px solid #ccc;padding:3px 6px;"
        "font-size:13px;text-align:left;vertical-align:top}table{border-collapse:collapse}"
        ".grp{display:inline-block;border:1px solid #bbb;border-radius:3px;padding:0 4px;margin:1px}"
        ".note{color:#444;font-size:13px}svg{display:block;margin:6px 0}\n</style></head><body>\n",
        o);
    fprintf(o, "<h1>Co-scheduling study: %zu programs, %zu per shared LLC</h1>\n", s->n, s->k);
    fprintf(
        o,
        "<p>Metric: <b>%s</b>. Best %.6g, median %.6g (%+.2f%%), worst %.6g (%+.2f%% from the best).</p>\n",
        study_metric_name(s->metric), s->top[0].value, s->median.value,
        study_from_best(s, s->median.value), s->worst.value, study_from_best(s, s->worst.value));
    fputs("<p class=\"note\">Machine: ", o);
    esc(o, m->kind);
    fputc(' ', o);
    esc(o, m->preset);
    fprintf(o, ", LLC %llu bytes, %llu sets x %u ways, policy ", m->bytes, m->sets, m->ways);
    esc(o, m->policy);
    fprintf(o, ", %s. llcprobe %s. %zu groups predicted in %.2f s.</p>\n", m->inclusion,
            LLCPROBE_VERSION_STRING, s->n_groups, s->predict_s);
    fputs("<h2>Pairwise slowdown</h2>\n", o);
    heatmap(o, s);
    fputs("<h2>Co-schedules</h2>\n", o);
    table(o, s);
    fputs("<h2>The best co-schedule over time</h2>\n", o);
    for (size_t i = 0; i < s->top[0].ng; i++) {
        fprintf(o, "<h3>Group %zu</h3>\n", i + 1);
        plot(o, s, i, 0);
        plot(o, s, i, 1);
    }
    fputs("<h2>Assumptions and flags</h2>\n<ul>\n", o);
    char lines[64][STUDY_LINE];
    const size_t nl = study_assumptions(s, lines, 64);
    for (size_t i = 0; i < nl; i++) {
        fputs("<li>", o);
        esc(o, lines[i]);
        fputs("</li>\n", o);
    }
    fputs("</ul>\n</body></html>\n", o);
    return llc_afile_commit(f, err, errlen);
}
