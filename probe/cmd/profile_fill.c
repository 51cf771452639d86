/* llcprobe profile: the profile's parts (program, machine, phases and
 * their solo figures, what is missing and why) from what the run gave. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/map_opts.h"
#include "cmd/profile_cmd.h"
#include "cmd/sim_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/phase.h"
#include "llcprobe/profile.h"
#include "llcprobe/sim.h"
#include "llcprobe/sysinfo.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "mrc/mrc.h"
#include "sysinfo/report.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"
#include "util/sha256.h"

/* ---- the profile ------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int profile_set_program(struct llc_profile *p, const struct prof_opts *o, const char *trace_cmd,
                        char *err, size_t errlen)
{
    struct llc_profile_program *g = &p->program;
    char name[128];
    if (o->name)
        snprintf(name, sizeof(name), "%s", o->name);
    else if (o->workload)
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->workload, ":"), o->workload);
    else if (o->trace)
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(base_name(o->trace), "."),
                 base_name(o->trace));
    else
        snprintf(name, sizeof(name), "%s", base_name(o->argv[0]));
    g->name = strdup(name[0] ? name : "program");
    g->source = strdup(o->workload ? "workload" : o->trace ? "trace" : "live");
    g->workload = dup_or_null(o->workload);
    g->trace = dup_or_null(o->trace);
    /* argv: the live command, or the one a trace was recorded from */
    size_t n = 0;
    char *words[256];
    char buf[1024] = "";
    if (o->argv) {
        while (o->argv[n] && n < 256) {
            words[n] = o->argv[n];
            n++;
        }
    } else if (trace_cmd && o->trace) {
        snprintf(buf, sizeof(buf), "%s", trace_cmd);
        char *save = NULL;
        for (char *w = strtok_r(buf, " ", &save); w && n < 256; w = strtok_r(NULL, " ", &save))
            words[n++] = w;
    }
    if (n) {
        g->command = calloc(n, sizeof(*g->command));
        if (!g->command)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        g->n_command = n;
        for (size_t i = 0; i < n; i++)
            if (!(g->command[i] = strdup(words[i])))
                return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    /* The binary: the live program (searched in PATH), or a trace's file. */
    char hex[65];
    if (o->argv) {
        char path[4096] = "";
        if (strchr(o->argv[0], '/')) {
            snprintf(path, sizeof(path), "%s", o->argv[0]);
        } else {
            const char *env = getenv("PATH");
            char dirs[4096];
            snprintf(dirs, sizeof(dirs), "%s", env ? env : "/usr/bin:/bin");
            char *save = NULL;
            for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                snprintf(path, sizeof(path), "%s/%s", d, o->argv[0]);
                if (access(path, X_OK) == 0)
                    break;
                path[0] = 0;
            }
        }
        if (path[0]) {
            char *real = realpath(path, NULL);
            g->binary = real ? real : strdup(path);
            if (llc_sha256_file(g->binary, hex, err, errlen) < 0)
                return -EIO;
            g->sha256 = strdup(hex);
        }
    } else if (o->trace) {
        if (llc_sha256_file(o->trace, hex, err, errlen) < 0)
            return -EIO;
        g->sha256 = strdup(hex);
    }
    if (!g->name || !g->source)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    return 0;
}

void profile_set_machine_preset(struct llc_profile *p, const char *preset,
                                const struct llc_sim_config *c)
{
    struct llc_profile_machine *m = &p->machine;
    m->kind = strdup("preset");
    m->preset = strdup(preset);
    m->llc.bytes = llc_sim_geometry_bytes(&c->llc);
    m->llc.lines = m->llc.bytes / c->llc.line_size;
    m->llc.sets = llc_sim_geometry_sets(&c->llc);
    m->llc.ways = c->llc.ways;
    m->llc.slices = c->llc.slices;
    m->llc.policy = strdup(llc_sim_policy_name(c->llc_policy));
    m->llc.inclusion = strdup(llc_sim_inclusion_name(c->inclusion));
}

/* This host's LLC and `info` summary; *backend_reason gets why the probe
 * backends can or cannot run here. */
int profile_set_machine_host(struct llc_profile *p, char *backend_reason, size_t len, char *err,
                             size_t errlen)
{
    struct llc_sysinfo *si = calloc(1, sizeof(*si));
    if (!si)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const struct llc_sysinfo_options opt = {.live = true, .allow_hugepage_reserve = false};
    int rc = llc_sysinfo_collect(&opt, si, err, errlen);
    if (rc < 0)
        goto out;
    if (!si->geometry_ok || !si->geometry.size || !si->geometry.ways) {
        rc = llc_errf(err, errlen, -ENODATA, "this machine's LLC geometry is unknown: %s",
                      si->geometry_reason);
        goto out;
    }
    struct llc_profile_machine *m = &p->machine;
    m->kind = strdup("host");
    const struct llc_geometry *g = &si->geometry;
    m->llc.lines = g->size / 64;
    m->llc.bytes = m->llc.lines * 64;
    m->llc.ways = g->ways;
    m->llc.sets = m->llc.lines / g->ways;
    m->llc.slices = g->slices && m->llc.sets % g->slices == 0 ? g->slices : 1;
    m->llc.policy = strdup("lru"); /* unknown; the model's assumption */
    m->llc.inclusion = strdup(g->hierarchy == LLC_HIER_EXCLUSIVE_VICTIM ? "exclusive"
                              : g->hierarchy == LLC_HIER_NON_INCLUSIVE  ? "nine"
                                                                        : "inclusive");
    json_t *doc = llc_sysinfo_to_json(si);
    m->info_json = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    snprintf(backend_reason, len, "%s", si->backend.reason);
out:
    free(si);
    return rc;
}

/* ---- phases and solo figures ------------------------------------------- */

/* Phase ids >= 0 of the run, in ascending order; *n of them. */
static int *phase_ids(const struct llc_mrc_phase_run *run, size_t *n)
{
    *n = 0;
    int *ids = malloc((run->n_windows + 1) * sizeof(*ids));
    if (!ids)
        return NULL;
    for (size_t k = 0; k < run->n_windows; k++) {
        const int id = run->windows[k].phase;
        if (id < 0)
            continue;
        size_t j = 0;
        while (j < *n && ids[j] < id)
            j++;
        if (j < *n && ids[j] == id)
            continue;
        memmove(&ids[j + 1], &ids[j], (*n - j) * sizeof(*ids));
        ids[j] = id;
        ++*n;
    }
    return ids;
}

static double window_instructions(const struct llc_mrc_phase_run *run,
                                  const struct solo_windows *sw, size_t k)
{
    if (sw->sim && k < sw->sim->n)
        return (double)sw->sim->w[k].instructions;
    return (double)run->window;
}

static struct llc_statmodel_hist **phase_own(void *ctx, struct llc_profile *p, size_t phase,
                                             int group)
{
    (void)ctx;
    (void)group;
    return &p->phases[phase].rdhist_own;
}

/* Fills windows[] and phases[] of p from the phase run and the solo
 * windows. A run whose windows all stay unclassified (too short for
 * ScarPhase) becomes one phase 0 with every sample. */
int profile_fill_phases(struct llc_profile *p, const struct llc_mrc_phase_run *run,
                        const struct solo_windows *sw, const struct prof_opts *o, char *err,
                        size_t errlen)
{
    size_t np = 0;
    int *ids = phase_ids(run, &np);
    if (!ids)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const bool one = np == 0;
    int rc = llc_profile_alloc_windows(p, run->n_windows, err, errlen);
    if (rc == 0)
        rc = llc_profile_alloc_phases(p, one ? 1 : np, err, errlen);
    if (rc < 0)
        goto out;
    p->windows.unit =
        strdup(run->unit == LLC_MRC_WINDOW_REFERENCES ? "references" : "instructions");
    p->windows.length = run->window;
    const double penalty = (o->lat[2] - o->lat[1]) / o->mlp;
    for (size_t j = 0; j < p->n_phases; j++) {
        struct llc_profile_phase *ph = &p->phases[j];
        ph->id = one ? 0 : ids[j];
        const struct llc_statmodel_hist *h =
            one ? run->pooled : llc_statmodel_groups_hist(run->phases, ph->id);
        if (h && (rc = llc_statmodel_hist_merge(ph->rdhist, h, err, errlen)) < 0)
            goto out;
        ph->samples = llc_statmodel_hist_total(ph->rdhist);
        double cycles = 0, acc = 0, llc_acc = 0, misses = 0, occ = 0, sim_instr = 0;
        for (size_t k = 0; k < run->n_windows; k++) {
            const int id = one ? 0 : run->windows[k].phase;
            if (id != ph->id)
                continue;
            p->windows.phase_of[k] = id;
            ph->windows++;
            ph->instructions += window_instructions(run, sw, k);
            ph->references += run->windows[k].refs;
            if (sw->sim && k < sw->sim->n) {
                const struct llc_corun_window *w = &sw->sim->w[k];
                cycles += w->cycles;
                acc += (double)w->accesses;
                llc_acc += (double)w->llc_accesses;
                misses += (double)w->llc_misses;
                occ += (double)w->occupancy;
                sim_instr += (double)w->instructions;
            }
        }
        ph->refs_per_instruction = ph->instructions > 0 ? ph->references / ph->instructions : 0;
        if (sw->sim && sim_instr > 0) {
            ph->solo.cpi = cycles / sim_instr;
            ph->solo.llc_miss_ratio = acc > 0 ? misses / acc : NAN;
            ph->solo.llc_accesses_per_reference = acc > 0 ? llc_acc / acc : NAN;
            ph->solo.occupancy_lines = occ / (double)ph->windows;
            ph->cpi0 = ph->solo.cpi - misses / sim_instr * penalty;
        } else {
            ph->solo.cpi = sw->sim ? o->cpi : sw->live_cpi;
            ph->cpi0 = ph->solo.cpi;
        }
    }
    for (size_t k = 0; k < run->n_windows; k++) {
        p->windows.instructions[k] = window_instructions(run, sw, k);
        p->windows.references[k] = run->windows[k].refs;
    }
    /* one phase: its own references are the program's */
    if (!one && run->reuses &&
        (rc = llc_profile_own_distances(p, run->reuses, run->n_reuses, phase_own, NULL, err,
                                        errlen)) == 0 &&
        (rc = llc_profile_own_complete(p, err, errlen)) == 0)
        rc = llc_profile_own_spans(p, run->reuses, run->n_reuses, err, errlen);
out:
    free(ids);
    return rc;
}

void profile_set_timing_sampler(struct llc_profile *p, const struct prof_opts *o)
{
    p->timing = (struct llc_profile_timing){
        .freq_hz = o->freq,
        .base_cpi = o->cpi,
        .mlp = o->mlp,
        .lat_l1 = 0, /* the presets model no L1: every access pays at least the L2's */
        .lat_l2 = o->lat[0],
        .lat_llc = o->lat[1],
        .lat_mem = o->lat[2],
        .miss_penalty_cycles = (o->lat[2] - o->lat[1]) / o->mlp,
    };
    p->sampler.kind = strdup("trace");
    p->sampler.rate = o->rate;
    p->sampler.seed = o->seed;
}

void profile_set_probe_missing(struct llc_profile *p, const struct prof_opts *o,
                               const char *backend_reason)
{
    char why[1024];
    if (o->no_probe)
        snprintf(why, sizeof(why), "skipped (--no-probe)");
    else if (backend_reason)
        snprintf(why, sizeof(why),
                 "not produced by this version of llcprobe profile (the per-phase Gaussian-25 "
                 "probe readings at 3 rates are not implemented for live runs); this machine's "
                 "probe backend: %s",
                 backend_reason);
    else
        snprintf(why, sizeof(why), "not measured");
    p->probe.ok = false;
    p->probe.reason = strdup(why);
}
