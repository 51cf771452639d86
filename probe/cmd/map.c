/* llcprobe map: the stress probe's per-set contention map. Option parsing
 * and the run shared by the simulator and hardware paths (map_sim.c,
 * map_hw.c). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/commands.h"
#include "cmd/map_opts.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "util/cli.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe map [options] -- PROGRAM [ARGS...]\n"
            "       llcprobe map --backend sim --preset NAME (--workload SPEC | --trace FILE | -- PROGRAM ...)\n\n"
            "Co-runs a stress probe with a target and counts the probe's own LLC misses in\n"
            "every cache set (slice, index): the per-set contention map. Writes\n"
            "PREFIX.map.json (format llcprobe-map v1), PREFIX.map.csv (set, slice, index,\n"
            "misses, accesses, dwell) and prints a summary.\n\n"
            "backends:\n"
            "  --backend B        auto (default: pmu if an LLC-miss event opens, else timing),\n"
            "                     pmu, timing, or sim (the built-in simulator, ground truth)\n"
            "simulator (--backend sim):\n"
            "  --preset NAME      cache preset:");
    for (const char *const *p = llc_sim_preset_names(); *p; p++)
        fprintf(out, " %s", *p);
    fprintf(out,
            " (default amd32)\n"
            "  --policy P         LLC replacement: lru random plru srrip brrip drrip\n"
            "  --workload SPEC    target: a synthetic workload (see 'llcprobe sim --help')\n"
            "  --trace FILE       target: a trace recorded by 'llcprobe trace'\n"
            "                     (with -- PROGRAM, the program is traced under valgrind first)\n"
            "  --target-rate R    target accesses per simulated ns (default 0.01)\n"
            "  --noise SPEC       a background agent; --noise-rate R its rate (default 0.01)\n"
            "coverage:\n"
            "  --mode M           sweep (groups of sets in turn; the default on hardware),\n"
            "                     global (all sets at once; sim and timing; the simulator's\n"
            "                     default), sets (only --sets)\n"
            "  --sets LIST        set ids, e.g. 0-63,4096 (implies --mode sets)\n"
            "  --group N          sets walked together in sweep mode (default: all that the\n"
            "                     backend can attribute: sim/timing 1/8 of the sets, pmu 1)\n"
            "  --dwell S          seconds per group (simulated seconds for sim; default\n"
            "                     0.02 on hardware, 0.002 in the simulator)\n"
            "  --sweeps N         passes over the sets (default 2: gives the retest correlation)\n"
            "probe:\n"
            "  --rate R           probe accesses per second (sim: per simulated second, 1e8\n"
            "                     with --mode sets; hardware: clock-paced, as fast as it goes)\n"
            "  --rate auto        (sim, the default) before mapping, map a co-runner with a\n"
            "                     planted per-set pattern beside the target, twice with planted\n"
            "                     and idle sets swapped, at candidate rates 1e7..3.2e8 and keep\n"
            "                     the one whose per-set miss increments rank the planted lines\n"
            "                     best; ties within noise go to 1e8 (q-bounds checked)\n"
            "  --rate linear      (sim) the spec's linear-regime rule: short trials from 1e8,\n"
            "                     each predicting the next rate from q ~ 1/rate, until the probe\n"
            "                     miss ratio q has p95 <= 0.1 and median in 0.002..0.05 (max q\n"
            "                     is reported); says which bound it could not meet and why\n"
            "  --delay N          null operations after each access instead of clock pacing\n"
            "  --event E          pmu: libpfm4 event string (default: the LLC-miss event)\n"
            "  --reserve N        hugepages to reserve (root); the pool is restored at exit\n"
            "  --no-baseline      (sim) skip the baseline sweep with no target (spec 1.2: sets\n"
            "                     whose misses exceed 1%% of probe accesses, and leader sets,\n"
            "                     are excluded; each set's baseline rate is subtracted)\n"
            "  --small-pages      allow 4 KiB pages when no hugepage can be had (warns)\n"
            "  --llc WxSxN        the LLC's ways, sets per slice and slices, where the machine\n"
            "                     does not report them (some VMs); eviction tests still verify\n"
            "target:\n"
            "  --attach PID       map a running process instead of launching one\n"
            "  --as-root          under sudo, run the target as root (default: the sudo user)\n"
            "  --repeat           restart the target until the map is complete (sim: a trace\n"
            "                     replays from its start; the dwell is then not cut to fit it)\n"
            "  --per-set-runs     one whole target run per set (or group), as in the paper;\n"
            "                     hardware only (the simulator maps all sets in one run)\n"
            "  --target-output F  the target's stdout and stderr go to F\n"
            "output:\n"
            "  -o, --output P     prefix of the output files (default: the program's, workload's\n"
            "                     or trace's name)\n"
            "  --seed S           seed of the walk order and the simulator (default 1)\n"
            "  -q, --quiet        no progress display\n\n"
            "Hardware backends self-test first (an aggressor thread on a known set against an\n"
            "idle control) and refuse with the measured numbers when the machine cannot show\n"
            "contention. On SIGINT/SIGTERM the target is stopped, hugepages released, and the\n"
            "partial map written with \"complete\": false.\n\n"
            "exit status: 0 ok, 1 failure or refusal, 2 bad usage.\n");
}

enum {
    O_BACKEND = 256, O_PRESET, O_POLICY, O_WORKLOAD, O_TRACE, O_TARGET_RATE, O_NOISE, O_NOISE_RATE,
    O_MODE, O_SETS, O_GROUP, O_DWELL, O_SWEEPS, O_RATE, O_DELAY, O_EVENT, O_RESERVE, O_SMALL, O_ATTACH,
    O_AS_ROOT, O_REPEAT, O_PER_SET_RUNS, O_TARGET_OUTPUT, O_SEED, O_LLC, O_NO_BASELINE, O_HELP
};

#define positive(opt, s, out) positive_(cmd, opt, s, out)
#define whole(opt, s, lo, hi, out) whole_(cmd, opt, s, lo, hi, out)
#define llc_cli_usage(c, ...) llc_cli_usage(cmd, __VA_ARGS__)

static int positive_(const char *cmd, const char *opt, const char *s, double *out)
{
    if (llc_parse_double(s, out) < 0 || !(*out > 0))
        return llc_cli_usage("map", "%s: '%s' is not a positive number", opt, s);
    return 0;
}

static int whole_(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (llc_parse_u64_range(s, lo, hi, out) < 0)
        return llc_cli_usage("map", "%s: '%s' is not a whole number in %llu..%llu", opt, s,
                             (unsigned long long)lo, (unsigned long long)hi);
    return 0;
}

#define MAP_LONGOPTS 32
#define MAX_EXTRA 32

int llc_map_cmd_parse(const char *cmd, int argc, char **argv, struct map_opts *o, const struct map_cmd_extra *x)
{
    static const struct option map_longopts[MAP_LONGOPTS] = {
        {"backend", required_argument, 0, O_BACKEND},     {"preset", required_argument, 0, O_PRESET},
        {"policy", required_argument, 0, O_POLICY},       {"workload", required_argument, 0, O_WORKLOAD},
        {"trace", required_argument, 0, O_TRACE},         {"target-rate", required_argument, 0, O_TARGET_RATE},
        {"noise", required_argument, 0, O_NOISE},         {"noise-rate", required_argument, 0, O_NOISE_RATE},
        {"mode", required_argument, 0, O_MODE},           {"sets", required_argument, 0, O_SETS},
        {"group", required_argument, 0, O_GROUP},         {"dwell", required_argument, 0, O_DWELL},
        {"sweeps", required_argument, 0, O_SWEEPS},       {"rate", required_argument, 0, O_RATE},
        {"delay", required_argument, 0, O_DELAY},         {"event", required_argument, 0, O_EVENT},
        {"reserve", required_argument, 0, O_RESERVE},     {"small-pages", no_argument, 0, O_SMALL},
        {"attach", required_argument, 0, O_ATTACH},       {"as-root", no_argument, 0, O_AS_ROOT},
        {"repeat", no_argument, 0, O_REPEAT},             {"per-set-runs", no_argument, 0, O_PER_SET_RUNS},             {"target-output", required_argument, 0, O_TARGET_OUTPUT},
        {"seed", required_argument, 0, O_SEED},           {"llc", required_argument, 0, O_LLC},           {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},                   {"help", no_argument, 0, O_HELP},
        {"no-baseline", no_argument, 0, O_NO_BASELINE},
        {0, 0, 0, 0}};
    /* map's options, then the command's extra ones, then the terminator. */
    struct option longopts[MAP_LONGOPTS + MAX_EXTRA + 1];
    size_t nl = 0;
    for (const struct option *p = map_longopts; p->name; p++)
        longopts[nl++] = *p;
    for (const struct option *p = x ? x->longopts : NULL; p && p->name && nl < MAP_LONGOPTS + MAX_EXTRA; p++)
        longopts[nl++] = *p;
    memset(&longopts[nl], 0, sizeof(longopts[nl]));
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->backend = "auto";
    o->sweeps = 2;
    o->seed = 1;
    o->target_rate = 0.01;
    o->noise_rate = 0.01;
    o->attach_pid = -1;
    uint64_t v;
    int c, rc = 0;
    optind = 1;
    while (rc == 0 && (c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_BACKEND: o->backend = optarg; break;
        case O_PRESET: o->preset = optarg; break;
        case O_POLICY: o->policy = optarg; break;
        case O_WORKLOAD: o->workload = optarg; break;
        case O_TRACE: o->trace = optarg; break;
        case O_TARGET_RATE: rc = positive("--target-rate", optarg, &o->target_rate); break;
        case O_NOISE: o->noise = optarg; break;
        case O_NOISE_RATE: rc = positive("--noise-rate", optarg, &o->noise_rate); break;
        case O_MODE:
            o->mode_given = true;
            if (strcmp(optarg, "sweep") == 0)
                o->mode = LLC_MAP_SWEEP;
            else if (strcmp(optarg, "global") == 0)
                o->mode = LLC_MAP_GLOBAL;
            else if (strcmp(optarg, "sets") == 0)
                o->mode = LLC_MAP_SETS;
            else
                rc = llc_cli_usage("map", "--mode: '%s' is not sweep, global or sets", optarg);
            break;
        case O_SETS: o->sets_list = optarg; break;
        case O_GROUP: rc = whole("--group", optarg, 1, UINT32_MAX, &v); o->group = (uint32_t)v; break;
        case O_DWELL: rc = positive("--dwell", optarg, &o->dwell_s); o->dwell_given = true; break;
        case O_SWEEPS: rc = whole("--sweeps", optarg, 1, LLC_MAP_MAX_SWEEPS, &v); o->sweeps = (unsigned)v; break;
        case O_RATE:
            o->rate_given = true;
            if (strcmp(optarg, "auto") == 0)
                o->rate_mode = MAP_RATE_AUTO;
            else if (strcmp(optarg, "linear") == 0)
                o->rate_mode = MAP_RATE_LINEAR;
            else {
                o->rate_mode = MAP_RATE_GIVEN;
                rc = positive("--rate", optarg, &o->rate);
            }
            break;
        case O_DELAY: rc = whole("--delay", optarg, 1, 1000000, &v); o->delay_nops = (unsigned)v; break;
        case O_EVENT: o->event = optarg; break;
        case O_RESERVE: rc = whole("--reserve", optarg, 1, 1 << 20, &v); o->reserve = (uint32_t)v; break;
        case O_SMALL: o->small_pages_ok = true; break;
        case O_ATTACH: rc = whole("--attach", optarg, 1, 1 << 30, &v); o->attach_pid = (int)v; break;
        case O_AS_ROOT: o->as_root = true; break;
        case O_REPEAT: o->repeat = true; break;
        case O_NO_BASELINE: o->no_baseline = true; break;
        case O_PER_SET_RUNS: o->per_set_runs = true; break;
        case O_TARGET_OUTPUT: o->target_output = optarg; break;
        case O_SEED: rc = whole("--seed", optarg, 0, UINT64_MAX, &o->seed); break;
        case O_LLC: {
            unsigned w, sps, sl = 1;
            char tail;
            const int k = sscanf(optarg, "%ux%ux%u%c", &w, &sps, &sl, &tail);
            if ((k != 2 && k != 3) || w == 0 || w > 64 || sps == 0 || (sps & (sps - 1)) || sl == 0 || sl > 64)
                rc = llc_cli_usage("map", "--llc: '%s' is not WAYSxSETSxSLICES (e.g. 16x2048x4; sets per slice "
                                          "a power of two)", optarg);
            o->llc_ways = w;
            o->llc_sets_per_slice = sps;
            o->llc_slices = sl;
            break;
        }
        case 'o': o->out_prefix = optarg; break;
        case 'q': o->quiet = true; break;
        case 'h':
        case O_HELP:
            if (x && x->usage)
                x->usage(stdout);
            else
                usage(stdout);
            return 1;
        default:
            if (x && c >= 512) {
                rc = x->on_extra(x->ctx, c, optarg);
                if (rc == 1)
                    return 1;
                break;
            }
            return llc_cli_usage("map", "unknown option");
        }
    }
    if (rc)
        return rc;
    o->argv = optind < argc ? argv + optind : NULL;
    if (o->sets_list && !o->mode_given) {
        o->mode = LLC_MAP_SETS;
        o->mode_given = true;
    }
    if (o->mode == LLC_MAP_SETS && !o->sets_list)
        return llc_cli_usage("map", "--mode sets needs --sets LIST");
    if (o->sets_list && o->mode != LLC_MAP_SETS)
        return llc_cli_usage("map", "--sets goes with --mode sets");
    if (o->delay_nops && o->rate_given)
        return llc_cli_usage("map", "--delay and --rate are two ways of pacing the probe: give one");
    const bool sim = strcmp(o->backend, "sim") == 0;
    if (!sim && strcmp(o->backend, "auto") && strcmp(o->backend, "pmu") && strcmp(o->backend, "timing"))
        return llc_cli_usage("map", "--backend: '%s' is not auto, pmu, timing or sim", o->backend);
    if (sim && o->llc_ways)
        return llc_cli_usage("map", "--llc describes real hardware; the simulator's LLC is its --preset");
    if (!sim && (o->preset || o->policy || o->workload || o->trace || o->noise))
        return llc_cli_usage("map", "--preset, --policy, --workload, --trace and --noise need --backend sim");
    if (sim && o->workload && o->trace)
        return llc_cli_usage("map", "give --workload or --trace, not both");
    if (sim && !o->workload && !o->trace && !o->argv)
        return llc_cli_usage("map", "the simulator needs a target: --workload, --trace or -- PROGRAM");
    if (sim && (o->workload || o->trace) && o->argv)
        return llc_cli_usage("map", "a program after -- and --workload/--trace are two targets: give one");
    if (!sim && !o->argv && o->attach_pid < 0)
        return llc_cli_usage("map", "no target: give -- PROGRAM [ARGS] or --attach PID");
    if (o->argv && o->attach_pid >= 0)
        return llc_cli_usage("map", "--attach and a program to launch are two targets: give one");
    if (o->repeat && sim && o->workload)
        return llc_cli_usage("map", "--repeat restarts a target that ends: a synthetic --workload never does");
    if (o->per_set_runs && (sim || o->attach_pid >= 0 || o->repeat))
        return llc_cli_usage("map", "--per-set-runs launches the program once per set: not with --backend sim, "
                                    "--attach or --repeat");
    if (o->per_set_runs && !o->dwell_given) {
        o->dwell_s = 3600; /* each run's dwell lasts until the run ends */
        o->dwell_given = true;
    }
    if (!o->dwell_given)
        o->dwell_s = sim ? 0.002 : 0.02;
    if (o->rate_mode != MAP_RATE_GIVEN && (!sim || strcmp(cmd, "map") != 0))
        return llc_cli_usage("map", "--rate auto and --rate linear choose the rate in the simulator's map for now; "
                                    "give a number here");
    if (o->rate_mode != MAP_RATE_GIVEN && o->mode == LLC_MAP_SETS)
        return llc_cli_usage("map", "--rate %s scores a planted pattern over sets of its own: not with --mode sets",
                             o->rate_mode == MAP_RATE_AUTO ? "auto" : "linear");
    /* The simulator's map chooses its rate unless told: the paired
     * planted-pattern score beat the fixed 1e8 on the bench (README).
     * --mode sets has no spare sets to plant in, so it keeps 1e8. */
    if (!o->rate_given && !o->delay_nops && sim && strcmp(cmd, "map") == 0 && o->mode != LLC_MAP_SETS)
        o->rate_mode = MAP_RATE_AUTO;
    if ((!o->rate_given || o->rate_mode != MAP_RATE_GIVEN) && sim)
        o->rate = 1e8; /* --rate linear starts its search here; --mode sets keeps it */
    return 0;
}

#undef llc_cli_usage
#undef positive
#undef whole

static void iso_now(char *buf, size_t len)
{
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void show_progress(void *ctx, double f)
{
    llc_progress_update(ctx, f);
}

int llc_map_cmd_finish(const struct map_opts *o, struct llc_map_backend *b, const char *machine,
                       const char *target, double rate, volatile sig_atomic_t *stop, bool want_truth,
                       int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx)
{
    char err[LLC_ERRLEN], start[32], end[32], path[4096];
    uint32_t *sets = NULL;
    size_t n_sets = 0;
    double *truth = NULL;
    struct llc_map_result *r = NULL;
    int status = LLC_EXIT_FAIL;
    if (o->sets_list && llc_map_parse_sets(o->sets_list, &sets, &n_sets, err, sizeof(err)) < 0) {
        status = llc_cli_usage(o->cmd, "--sets: %s", err);
        goto out;
    }
    const uint32_t units = llc_map_units(&b->geo);
    struct llc_progress prog;
    const struct llc_map_plan plan = {
        .mode = o->mode,
        .group = o->group ? o->group : (b->all_at_once ? (units + 7) / 8 : 1),
        .dwell_s = o->dwell_s,
        .sweeps = o->sweeps,
        .sets = sets,
        .n_sets = n_sets,
        .seed = o->seed,
        .stop = stop,
        .progress = show_progress,
        .progress_ctx = &prog,
        .restart_target = restart,
        .restart_ctx = restart_ctx,
    };
    iso_now(start, sizeof(start));
    llc_progress_begin(&prog, o->cmd, o->quiet);
    const int rc = llc_map_run(b, &plan, &r, err, sizeof(err));
    llc_progress_end(&prog);
    iso_now(end, sizeof(end));
    if (rc < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    if (o->baseline && llc_map_baseline_apply(o->baseline, r, err, sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    if (want_truth) {
        truth = malloc(units * sizeof(*truth));
        if (!truth || llc_map_sim_truth(b, truth, NULL, NULL) < 0) {
            llc_cli_fail(o->cmd, "simulator ground truth unavailable");
            goto out;
        }
    }
    const char *policy = NULL;
    if (strcmp(b->name, "sim") == 0)
        policy = o->policy ? o->policy : "lru";
    const struct llc_map_meta meta = {
        .machine = machine, .target = target, .policy = policy, .rate = rate, .delay_nops = o->delay_nops,
        .seed = o->seed, .start_time = start, .end_time = end, .plan = &plan, .truth_occupancy = truth,
        .rate_selection = o->rate_selection, .baseline = o->baseline,
        .prefetch = o->prefetch};
    snprintf(path, sizeof(path), "%s.map.json", o->out_prefix);
    if (llc_map_write_json(b, r, &meta, path, err, sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    snprintf(path, sizeof(path), "%s.map.csv", o->out_prefix);
    if (llc_map_write_csv(b, r, &meta, path, err, sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "%s", err);
        goto out;
    }
    llc_map_print_summary(stdout, b, r);
    if (truth) {
        double *m = malloc(units * sizeof(*m)), *t = malloc(units * sizeof(*t));
        size_t k = 0;
        for (uint32_t u = 0; m && t && u < units; u++)
            if (r->measured[u]) {
                m[k] = (double)r->misses[u];
                t[k++] = truth[u];
            }
        if (m && t)
            printf("vs true target occupancy  Spearman %.3f over %zu sets (simulator ground truth)\n",
                   llc_map_spearman(m, t, k), k);
        free(m);
        free(t);
    }
    printf("wrote %s.map.json and %s.map.csv (%.2f s of probing)\n", o->out_prefix, o->out_prefix, r->seconds);
    if (!r->complete) {
        llc_cli_warn(false, "map incomplete: %s", r->incomplete_reason);
        status = stop && *stop ? LLC_EXIT_FAIL : LLC_EXIT_OK;
        goto out;
    }
    status = LLC_EXIT_OK;
out:
    free(sets);
    free(truth);
    llc_map_result_free(r);
    return status;
}

volatile sig_atomic_t *llc_map_cmd_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &stop_requested;
}

int llc_map_cmd_dispatch(const struct map_opts *o)
{
    volatile sig_atomic_t *stop = llc_map_cmd_signals();
    return strcmp(o->backend, "sim") == 0 ? llc_map_cmd_sim(o, stop) : llc_map_cmd_hw(o, stop);
}

int llc_cmd_map(int argc, char **argv)
{
    struct map_opts o;
    const int rc = llc_map_cmd_parse("map", argc, argv, &o, NULL);
    if (rc)
        return rc == 1 ? LLC_EXIT_OK : rc;
    return llc_map_cmd_dispatch(&o);
}
