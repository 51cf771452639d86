/* llcprobe map --backend sim: the probe co-runs with a workload, a trace,
 * or a program traced first under valgrind, in the simulated hierarchy. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/map_opts.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/trace.h"
#include "map/rate_search.h"
#include "util/cli.h"

/* Target accesses per set per sweep that the default dwell aims at in
 * global mode: enough foreign traffic per set for its rank to be read. */
#define TARGET_ACCESSES_PER_SET 150.0

/* --rate auto: candidate rates 10^7 .. 10^8.5 in half decades, each
 * trial a map of one sweep at this fraction of the map's dwell (plus the
 * warm-up), with PLANTED units holding 1, 2, 4 or 8 lines beside the
 * target. */
#define AUTO_TRIALS 4
#define AUTO_LOG_FIRST 7.0
#define AUTO_LOG_STEP 0.5
#define TRIAL_DWELL_SHARE 0.25
#define PLANTED 1024
#define MAX_WARM_SHARE 0.5
#define DEFAULT_RATE 1e8
/* --rate linear: trial dwell as a share of the map's, and at most as long
 * as this many probe accesses per set take (q needs no more; the cost of
 * a simulated trial grows with the rate). */
#define LINEAR_DWELL_SHARE 0.05
#define LINEAR_TRIAL_ACCESSES 500.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One trial: a fresh simulator (target from its start) with the probe at
 * rate and, when k is given, the planted co-runner; one sweep of the map's
 * plan. With keep, the map is handed over in *keep instead of scored. */
static int run_trial(const struct map_opts *o, const struct llc_sim_config *cfg,
                     const struct llc_map_sim_options *base, double rate, const uint8_t *k, double touch,
                     const uint32_t *scored, size_t n_scored, double dwell, volatile sig_atomic_t *stop,
                     struct llc_map_rate_trial *t, struct llc_map_result **keep, char *err, size_t errlen)
{
    struct llc_map_sim_options so = *base;
    so.probe_rate = rate / 1e9;
    so.plant_lines = k;
    so.plant_rate = touch / 1e9;
    struct llc_map_backend *b = NULL;
    struct llc_map_result *r = NULL;
    int rc = llc_map_backend_sim(cfg, &so, &b, err, errlen);
    if (rc < 0)
        goto out;
    const uint32_t units = llc_map_units(&b->geo);
    const struct llc_map_plan plan = {
        .mode = o->mode,
        .group = o->group ? o->group : (units + 7) / 8,
        .dwell_s = dwell,
        .sweeps = 1,
        .seed = o->seed,
        .stop = stop,
    };
    rc = llc_map_run(b, &plan, &r, err, errlen);
    if (rc < 0)
        goto out;
    t->rate = rate;
    if (keep) {
        *keep = r;
        r = NULL;
    } else if (k) {
        llc_map_rate_score(r, k, scored, n_scored, t);
    } else {
        /* The linear rule needs only q: score the target alone. */
        uint8_t *none = calloc(units, 1);
        uint32_t all[2] = {0, 1};
        if (!none) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        llc_map_rate_score(r, none, all, 0, t);
        free(none);
    }
    if (stop && *stop)
        rc = llc_errf(err, errlen, -EINTR, "interrupted while choosing the probe rate");
out:
    llc_map_result_free(r);
    llc_map_backend_release(b);
    return rc;
}

static void trial_line(const struct map_opts *o, const struct llc_map_rate_trial *t)
{
    if (o->quiet)
        return;
    if (o->rate_mode == MAP_RATE_LINEAR) {
        fprintf(stderr, "llcprobe: %s: rate %.3g: probe miss ratio q median %.3f p95 %.3f max %.3f\n", o->cmd,
                t->rate, t->q_median, t->q_p95, t->q_max);
        return;
    }
    fprintf(stderr, "llcprobe: %s: rate %.3g: paired score %.3f ± %.3f (miss-ratio increment per planted 1/2/4/8 "
                    "lines %.4f %.4f %.4f %.4f); one map: Spearman %.3f, effect %.1f sd; target-only q median %.3f "
                    "p95 %.3f max %.3f\n",
            o->cmd, t->rate, t->score, t->score_se, t->increment[0], t->increment[1], t->increment[2],
            t->increment[3], t->spearman, t->effect, t->q_median, t->q_p95, t->q_max);
}

/* Simulated seconds the backend spends warming a global walk at rate
 * (two rounds of every unit's walk, at most W_LLC + W_L2 lines) before
 * its misses count: a trial's dwell adds it, or slow candidates would
 * count nothing. */
static double warm_up(const struct llc_sim_config *cfg, double rate, double walked)
{
    const double walk = cfg->llc.ways + (cfg->inclusion == LLC_SIM_EXCLUSIVE ? cfg->l2_ways : 0);
    return 2.0 * walk * walked / rate;
}

struct linear_trial_ctx {
    const struct map_opts *o;
    const struct llc_sim_config *cfg;
    const struct llc_map_sim_options *base;
    double walked, dwell;
    volatile sig_atomic_t *stop;
};

/* One trial of the linear-regime search: the target alone at rate. */
static int linear_trial(void *ctx, double rate, struct llc_map_rate_trial *t, char *err, size_t errlen)
{
    const struct linear_trial_ctx *c = ctx;
    const double dwell = fmin(c->dwell, LINEAR_TRIAL_ACCESSES * c->walked / rate);
    const int rc = run_trial(c->o, c->cfg, c->base, rate, NULL, 0, NULL, 0, dwell + warm_up(c->cfg, rate, c->walked),
                             c->stop, t, NULL, err, errlen);
    if (rc == 0)
        trial_line(c->o, t);
    return rc;
}

/* Chooses o->rate (auto or linear) before the map. */
static int select_rate(struct map_opts *o, const struct llc_sim_config *cfg, const struct llc_map_sim_options *base,
                       double dwell, volatile sig_atomic_t *stop, struct llc_map_rate_selection *sel)
{
    char err[LLC_ERRLEN];
    const uint32_t units = cfg->llc.sets_per_slice * cfg->llc.slices;
    uint8_t *k = NULL, *kb = NULL;
    uint32_t *scored = NULL;
    struct llc_map_result *ra = NULL, *rb = NULL;
    int status = LLC_EXIT_FAIL;
    const double t0 = now_s();
    /* Units walked together: every unit in global mode, a group in sweep. */
    const double walked = o->mode == LLC_MAP_GLOBAL ? units : o->group ? o->group : (units + 7) / 8;
    memset(sel, 0, sizeof(*sel));
    sel->chosen = -1;
    /* A short trace's dwell is too short for a few planted lines to be
     * touched at all: trials last as long as a workload's would, with the
     * trace replayed from its start when it ends (as --repeat). */
    const double workload_dwell = TARGET_ACCESSES_PER_SET * units / (o->target_rate * 1e9);
    sel->dwell_s = (dwell > workload_dwell ? dwell : workload_dwell) * TRIAL_DWELL_SHARE;
    struct llc_map_sim_options trial_base = *base;
    trial_base.repeat = base->trace != NULL;
    base = &trial_base;
    if (o->rate_mode == MAP_RATE_LINEAR) {
        /* Shorter trials than auto's: q needs no planted pattern, and a
         * long trace's dwell would make each trial minutes long. */
        sel->dwell_s = fmax(dwell * LINEAR_DWELL_SHARE, workload_dwell * TRIAL_DWELL_SHARE);
        struct linear_trial_ctx lc = {.o = o, .cfg = cfg, .base = base, .walked = walked, .dwell = sel->dwell_s,
                                      .stop = stop};
        struct llc_map_rate_search_config rc;
        llc_map_rate_search_config_default(&rc);
        rc.start = o->rate;
        if (llc_map_rate_search(&rc, linear_trial, &lc, sel, err, sizeof(err)) < 0) {
            llc_cli_fail(o->cmd, "choosing the probe rate: %s", err);
            goto out;
        }
    } else {
        sel->method = "auto";
        k = malloc(units);
        kb = malloc(units);
        scored = malloc(2 * PLANTED * sizeof(*scored));
        if (!k || !kb || !scored) {
            llc_cli_fail(o->cmd, "out of memory");
            goto out;
        }
        struct llc_map_geometry g = {.sets_per_slice = cfg->llc.sets_per_slice, .slices = cfg->llc.slices,
                                     .llc_ways = cfg->llc.ways, .l2_sets = cfg->l2_sets,
                                     .l2_ways = cfg->l2_ways, .victim_llc = cfg->inclusion == LLC_SIM_EXCLUSIVE};
        sel->planted_units = llc_map_plant_pattern(&g, PLANTED, k, scored);
        if (!sel->planted_units) {
            llc_cli_fail(o->cmd, "choosing the probe rate: the LLC is too small for a planted pattern");
            goto out;
        }
        llc_map_plant_swap(units, k, scored, sel->planted_units, kb);
        /* The touch rate a line would see if the target's accesses were
         * spread evenly over every line of the LLC: the planted increments
         * are then as small as the differences between the target's own
         * sets that the map has to rank. The simulator's target rate is its
         * clock, so this is known here. */
        const double touch = o->target_rate * 1e9 / ((double)units * g.llc_ways);
        for (unsigned i = 0; i < AUTO_TRIALS; i++) {
            const double rate = pow(10, AUTO_LOG_FIRST + AUTO_LOG_STEP * i);
            /* The backend warms each group's walk before counting: a rate
             * whose warm-up takes over half the map's dwell would leave the
             * map itself (a short trace's share, say) little to count. */
            if (warm_up(cfg, rate, walked) > MAX_WARM_SHARE * dwell) {
                struct llc_map_rate_trial *t = &sel->trials[sel->n++];
                *t = (struct llc_map_rate_trial){.rate = rate, .spearman = NAN, .effect = NAN, .q_median = NAN,
                                                 .q_p95 = NAN, .q_max = NAN};
                if (!o->quiet)
                    fprintf(stderr, "llcprobe: %s: rate %.3g: skipped: warming the walk takes %.3g s of the map's "
                                    "%.3g s dwell\n",
                            o->cmd, rate, warm_up(cfg, rate, walked), dwell);
                continue;
            }
            sel->plant_touch_rate = touch;
            struct llc_map_rate_trial *t = &sel->trials[sel->n];
            /* A pair of trials, planted and idle units swapped, so each
             * scored unit is seen with and without planted lines. */
            const double trial_dwell = sel->dwell_s + warm_up(cfg, rate, walked);
            if (run_trial(o, cfg, base, rate, k, touch, scored, 2 * sel->planted_units, trial_dwell, stop, t, &ra,
                          err, sizeof(err)) < 0 ||
                run_trial(o, cfg, base, rate, kb, touch, scored, 2 * sel->planted_units, trial_dwell, stop, t, &rb,
                          err, sizeof(err)) < 0) {
                llc_cli_fail(o->cmd, "choosing the probe rate: %s", err);
                goto out;
            }
            llc_map_rate_score_pair(ra, rb, k, kb, scored, 2 * sel->planted_units, t);
            llc_map_result_free(ra);
            llc_map_result_free(rb);
            ra = rb = NULL;
            sel->n++;
            trial_line(o, t);
        }
        sel->chosen = llc_map_rate_pick(sel->trials, sel->n, DEFAULT_RATE, sel->why, sizeof(sel->why));
        if (sel->chosen < 0) {
            snprintf(sel->why, sizeof(sel->why), "no candidate could be measured in this dwell: the default 1e8 "
                                                 "kept");
            o->rate = DEFAULT_RATE;
        } else if (!(sel->trials[sel->chosen].score > LLC_MAP_RATE_TIE_SE * sel->trials[sel->chosen].score_se)) {
            /* The planted lines' increments were noise at the chosen
             * candidate: the trials say nothing about the rate, so the
             * fixed default stands. */
            snprintf(sel->why, sizeof(sel->why),
                     "the planted lines' miss increments were within noise at the chosen candidate (paired score "
                     "%.3f ± %.3f): the default 1e8 kept",
                     sel->trials[sel->chosen].score, sel->trials[sel->chosen].score_se);
            o->rate = DEFAULT_RATE;
            sel->chosen = -1;
        }
    }
    if (sel->chosen >= 0)
        o->rate = sel->trials[sel->chosen].rate;
    sel->rate = o->rate;
    sel->seconds = now_s() - t0;
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: rate %s chose %.3g probe accesses per second (%s; %zu trials in %.1f s)\n",
                o->cmd, sel->method, o->rate, sel->why, sel->n, sel->seconds);
    o->rate_selection = sel;
    status = LLC_EXIT_OK;
out:
    llc_map_result_free(ra);
    llc_map_result_free(rb);
    free(k);
    free(kb);
    free(scored);
    return status;
}

/* Spec §1.2: one sweep of the map's plan with no target (noise still
 * runs), giving each unit's own miss rate and the exclusion mask, with the
 * simulator's leader sets added. */
static int measure_baseline(const struct map_opts *o, const struct llc_sim_config *cfg,
                            const struct llc_map_sim_options *base, volatile sig_atomic_t *stop,
                            struct llc_map_baseline **out)
{
    char err[LLC_ERRLEN];
    struct llc_map_sim_options so = *base;
    so.baseline = true;
    struct llc_map_backend *b = NULL;
    struct llc_map_result *r = NULL;
    uint32_t *sets = NULL;
    size_t n_sets = 0;
    bool *leaders = NULL;
    int status = LLC_EXIT_FAIL;
    if (o->sets_list && llc_map_parse_sets(o->sets_list, &sets, &n_sets, err, sizeof(err)) < 0) {
        status = llc_cli_usage(o->cmd, "--sets: %s", err);
        goto out;
    }
    if (llc_map_backend_sim(cfg, &so, &b, err, sizeof(err)) < 0)
        goto fail;
    const uint32_t units = llc_map_units(&b->geo);
    const struct llc_map_plan plan = {
        .mode = o->mode,
        .group = o->group ? o->group : (units + 7) / 8,
        .dwell_s = o->dwell_s,
        .sweeps = 1,
        .sets = sets,
        .n_sets = n_sets,
        .seed = o->seed,
        .stop = stop,
    };
    if (llc_map_run(b, &plan, &r, err, sizeof(err)) < 0)
        goto fail;
    if (stop && *stop) {
        llc_cli_fail(o->cmd, "interrupted during the baseline sweep, before the map");
        goto out;
    }
    leaders = malloc(units * sizeof(*leaders));
    if (!leaders || llc_map_sim_leaders(b, leaders) < 0) {
        llc_cli_fail(o->cmd, "baseline: simulator leader sets unavailable");
        goto out;
    }
    if (llc_map_baseline_new(r, leaders, out, err, sizeof(err)) < 0)
        goto fail;
    (*out)->dwell_s = o->dwell_s;
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: baseline sweep (no target): %u set%s over %.0f%% probe misses, %u leader "
                        "set%s; %u excluded\n",
                o->cmd, (*out)->n_baseline, (*out)->n_baseline == 1 ? "" : "s", 100 * LLC_MAP_BASELINE_MAX_Q,
                (*out)->n_leader, (*out)->n_leader == 1 ? "" : "s", (*out)->n_excluded);
    status = LLC_EXIT_OK;
    goto out;
fail:
    llc_cli_fail(o->cmd, "baseline sweep: %s", err);
out:
    free(sets);
    free(leaders);
    llc_map_result_free(r);
    llc_map_backend_release(b);
    return status;
}

static int trace_program(const struct map_opts *o, volatile sig_atomic_t *stop, char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/llcprobe-map-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0)
        return llc_cli_fail(o->cmd, "%s: %s", path, strerror(errno));
    close(fd);
    const struct llc_trace_record_opts ro = {.output = path, .argv = o->argv, .keep_root = o->as_root, .stop = stop};
    struct llc_trace_record_stats st;
    char err[LLC_ERRLEN];
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: tracing %s under valgrind for the simulator...\n", o->cmd, o->argv[0]);
    const int rc = llc_trace_record_lackey(&ro, &st, err, sizeof(err));
    if (rc < 0) {
        unlink(path);
        return llc_cli_fail(o->cmd, "tracing %s: %s", o->argv[0], err);
    }
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: traced %llu loads, %llu stores in %.1f s (exit status %d)\n",
                o->cmd, (unsigned long long)st.n_load, (unsigned long long)st.n_store, st.seconds, st.exit_status);
    if (st.n_load + st.n_store + st.n_modify == 0) {
        unlink(path);
        return llc_cli_fail(o->cmd, "%s made no memory accesses (exited at once?)", o->argv[0]);
    }
    return 0;
}

static int trace_accesses(const char *path, uint64_t *n)
{
    struct llc_trace_reader *r;
    char err[LLC_ERRLEN];
    if (llc_trace_reader_open(path, &r, err, sizeof(err)) < 0)
        return -1;
    const struct llc_trace_info *info = llc_trace_reader_info(r);
    *n = info->n_load + info->n_store + info->n_modify;
    llc_trace_reader_close(r);
    return *n ? 0 : -1;
}

static const char *default_prefix(const struct map_opts *o, char *buf, size_t len)
{
    const char *src = o->argv ? o->argv[0] : o->trace ? o->trace : NULL;
    if (!src) {
        /* A workload spec: its kind ("gaussian:size=..." -> "gaussian"). */
        snprintf(buf, len, "%s", o->workload);
        buf[strcspn(buf, ":")] = '\0';
        return buf;
    }
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", src);
    snprintf(buf, len, "%s", basename(copy));
    char *dot = strstr(buf, ".trace");
    if (dot && dot != buf)
        *dot = '\0';
    return buf;
}

int llc_map_cmd_sim(const struct map_opts *in, volatile sig_atomic_t *stop)
{
    struct map_opts o = *in;
    char err[LLC_ERRLEN], trace_path[4096] = "", prefix[256], machine[128], target[4200];
    struct llc_map_backend *b = NULL;
    struct llc_map_baseline *baseline = NULL;
    int status = LLC_EXIT_FAIL;
    struct llc_sim_config cfg;
    const char *preset = o.preset ? o.preset : "amd32";
    if (llc_sim_preset(preset, &cfg, err, sizeof(err)) < 0)
        return llc_cli_usage(o.cmd, "--preset: %s", err);
    if (o.policy) {
        const int p = llc_sim_policy_parse(o.policy, err, sizeof(err));
        if (p < 0)
            return llc_cli_usage(o.cmd, "--policy: %s", err);
        cfg.llc_policy = (enum llc_sim_policy)p;
    }
    cfg.seed = o.seed;
    if (!o.mode_given)
        o.mode = LLC_MAP_GLOBAL;
    if (!o.out_prefix)
        o.out_prefix = default_prefix(&o, prefix, sizeof(prefix));
    if (o.argv) {
        if (trace_program(&o, stop, trace_path, sizeof(trace_path)) != 0)
            return LLC_EXIT_FAIL;
        o.trace = trace_path;
    }
    struct llc_map_sim_options so;
    llc_map_sim_options_default(&so);
    so.preset = preset;
    so.workload = o.workload;
    so.trace = o.trace;
    so.noise = o.noise;
    so.noise_rate = o.noise_rate;
    so.target_rate = o.target_rate;
    so.probe_rate = o.rate / 1e9;
    so.repeat = o.repeat;
    so.calib_lines = o.calib_lines;
    so.calib_rate = o.calib_rate;
    if (!o.dwell_given && o.mode == LLC_MAP_GLOBAL) {
        double accesses = TARGET_ACCESSES_PER_SET * cfg.llc.sets_per_slice * cfg.llc.slices;
        uint64_t in_trace;
        /* A trace ends: share it out over the sweeps, leaving a little at
         * the end (records spanning two lines make a few more accesses
         * than records, never fewer). */
        if (o.trace && !o.repeat && trace_accesses(o.trace, &in_trace) == 0)
            accesses = 0.98 * (double)in_trace / o.sweeps;
        o.dwell_s = accesses / (o.target_rate * 1e9);
    }
    o.prefetch = "not applicable: the simulator models no prefetchers";
    struct llc_map_rate_selection sel;
    if (o.rate_mode != MAP_RATE_GIVEN) {
        if (select_rate(&o, &cfg, &so, o.dwell_s, stop, &sel) != LLC_EXIT_OK)
            goto out;
        so.probe_rate = o.rate / 1e9;
    }
    /* The baseline belongs to the map; sample and calibrate (which put
     * their own stage here) measure their sets their own way. */
    if (llc_map_backend_sim(&cfg, &so, &b, err, sizeof(err)) < 0) {
        llc_cli_fail(o.cmd, "%s", err);
        goto out;
    }
    if (!o.stage && !o.no_baseline) {
        const int brc = measure_baseline(&o, &cfg, &so, stop, &baseline);
        if (brc != LLC_EXIT_OK) {
            status = brc;
            goto out;
        }
        o.baseline = baseline;
    }
    snprintf(machine, sizeof(machine), "simulator preset %s, LLC %s", preset, o.policy ? o.policy : "lru");
    if (o.argv) {
        size_t at = (size_t)snprintf(target, sizeof(target), "%s", o.argv[0]);
        for (char **a = o.argv + 1; *a && at < sizeof(target); a++)
            at += (size_t)snprintf(target + at, sizeof(target) - at, " %s", *a);
    } else {
        snprintf(target, sizeof(target), "%s%s", o.workload ? "workload " : "trace ",
                 o.workload ? o.workload : o.trace);
    }
    if (!o.quiet)
        fprintf(stderr, "llcprobe: %s: %s; %s\n", o.cmd, b->walk_check, b->calibration);
    status = (o.stage ? o.stage : llc_map_cmd_finish)(&o, b, machine, target, o.rate, stop, true, NULL, NULL);
    if (!o.quiet && o.repeat)
        fprintf(stderr, "llcprobe: %s: the simulated target ran %u time%s\n", o.cmd, llc_map_sim_target_runs(b),
                llc_map_sim_target_runs(b) == 1 ? "" : "s");
out:
    llc_map_backend_release(b);
    llc_map_baseline_free(baseline);
    if (trace_path[0])
        unlink(trace_path);
    return status;
}
