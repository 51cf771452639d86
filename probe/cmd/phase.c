/* llcprobe phase: ScarPhase online phase detection of a running program
 * (live perf sampling) or of a recorded trace (offline, same classifier),
 * with optional references for evaluation: exp-bbv vectors and per-window
 * LLC miss ratios from the simulator. The run, its evaluation and its files
 * are the library's (llcprobe/phaserun.h); here: options, summary. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "llcprobe/phaserun.h"
#include "llcprobe/sampling.h"
#include "llcprobe/target.h"
#include "util/cli.h"
#include "util/stopsig.h"

struct phase_opts {
    const char *prefix;
    struct llc_phaserun_config cfg;
    bool quiet, no_plot;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe phase [options] [-o PREFIX] -- PROGRAM [ARGS...]\n"
            "       llcprobe phase --trace FILE [--bbv FILE] [--sim PRESET [--noise SPEC]]\n"
            "                      [options] [-o PREFIX]\n\n"
            "Divides a program's execution into windows and classifies each window's\n"
            "sampled code addresses into phases online (ScarPhase: 32-bucket signatures,\n"
            "leader-follower clustering, run-length next-phase predictor, dynamic sample\n"
            "rate; Sembrant, Eklov, Hagersten, \"Efficient Software-based Online Phase\n"
            "Classification\", IISWC 2011). Live, PROGRAM runs under perf sampling of\n"
            "all its threads and children: precise branch samples (PEBS) if available, else\n"
            "hardware IP samples, else the user IP at the kernel's timer tick (tracepoint;\n"
            "root or CAP_PERFMON; no interrupt of its own), else the cpu-clock software\n"
            "event; windows by retired instructions if a counter exists, else by the\n"
            "target's CPU time. The chosen source and unit, and why better ones were\n"
            "refused, are in the output.\n"
            "With --trace, the same classification runs on a trace recorded by\n"
            "'llcprobe trace' (lackey or qemu: windows of N instructions) or by the clang\n"
            "runtime (LLCPROBE_RT_MODE=trace: no instruction records, so windows of N\n"
            "references, sampling the accesses' code addresses; the unit is printed).\n"
            "A run of fewer than %d windows is too short to show phases: live, a\n"
            "warning gives the numbers and a smaller window.\n\n"
            "Writes PREFIX.phase.json (format llcprobe-phase v1), PREFIX.phase.csv (one row\n"
            "per window) and PREFIX.phase.png (phase timeline, gnuplot), and prints a summary.\n\n"
            "options:\n"
            "  -o, --output PREFIX  output prefix (default: the program's or trace's name)\n"
            "      --trace FILE     classify a trace ('llcprobe trace', or the runtime's)\n"
            "                       offline instead of running a program\n"
            "      --window N       window length in instructions, 1000 to 2^50 (live, if\n"
            "                       counted: default 100M; --trace: default 1M, in the\n"
            "                       trace's window unit)\n"
            "      --window-unit U  --trace: auto (default: instructions if the trace has\n"
            "                       instruction records, else references), instructions\n"
            "                       or references (data records)\n"
            "      --window-ms MS   live window in target CPU milliseconds, 1 to 3600000\n"
            "                       (default: with cpu-clock, samples / max rate = 2000;\n"
            "                       with the tick, samples / HZ = 1600 at HZ 250; else 50)\n"
            "      --max-rate HZ    cpu-clock: highest sample rate, 1 to 100000 (default\n"
            "                       200); each sample is a timer interrupt, costly in a VM\n"
            "      --cpu-time       live: windows by CPU time even if instructions count\n"
            "      --source S       best source to try: auto, pebs, hw-ip, tick, cpu-clock\n"
            "      --samples N      samples per window at full rate, %d to 100000 (default\n"
            "                       400 for IPs, 200 for branches)\n"
            "      --theta X        clustering threshold on d~ in (0,1] (default 0.2)\n"
            "      --theta-dsr X    low-rate match threshold in (0,1] (default 0.5)\n"
            "      --transition N   windows before a cluster gets a phase id, 0 to 1000000\n"
            "                       (default 0)\n"
            "      --no-dynamic-rate  always sample at the full rate\n"
            "      --seed S         --trace: seed of the sample positions, 0 to 2^64-1\n"
            "                       (default 1)\n"
            "      --bbv FILE       --trace: exp-bbv output of the same run: clustered alike,\n"
            "                       compared (ARI, similarity-matrix difference) with each\n"
            "                       window paired with the exp-bbv interval it overlaps most\n"
            "                       in instructions, if by half of it (any interval size;\n"
            "                       needs a trace with instruction records)\n"
            "      --bbv-tolerance PCT  largest gap between the trace's and exp-bbv's\n"
            "                       instruction totals, 0 to 100 %% of the larger (default\n"
            "                       2), beyond the one interval exp-bbv leaves unwritten at\n"
            "                       the end; over it the BBV is refused as another run\n"
            "      --bbv-pc FILE    exp-bbv's --pc-out-file of that run: also compare with\n"
            "                       the 32-entry BBVs (blocks hashed by address like the\n"
            "                       samples, as in the ScarPhase paper's Fig. 2)\n"
            "      --sim PRESET     --trace: per-window LLC miss ratio from the simulator;\n"
            "                       CoV and CCoV of it within phases\n"
            "      --noise SPEC     with --sim: co-run a synthetic workload (llcprobe sim)\n"
            "      --no-plot        no PNG\n"
            "  -q, --quiet          no warnings\n"
            "  -h, --help           this text\n\n"
            "SIGINT, SIGTERM or SIGHUP stops PROGRAM's process group; the windows seen so\n"
            "far are written, marked \"complete\": false.\n\n"
            "exit status: 0 ok (whatever the program's own exit status), 1 failure, 2 usage,\n"
            "128 + N when stopped by signal N.\n",
            LLC_PHASERUN_SHORT_RUN_WINDOWS, LLC_PHASE_MIN_SAMPLES);
}

static int parse_unit_interval(const char *opt, const char *s, double *out)
{
    double v;
    if (llc_parse_double(s, &v) < 0 || !(v > 0) || v > 1)
        return llc_cli_usage("phase", "%s wants a number in (0,1], not '%s'", opt, s);
    *out = v;
    return 0;
}

static int parse_source(const char *s, enum llc_sampling_source *out)
{
    static const struct {
        const char *name;
        enum llc_sampling_source src;
    } names[] = {{"auto", LLC_SAMPLING_PEBS_BRANCHES},
                 {"pebs", LLC_SAMPLING_PEBS_BRANCHES},
                 {"hw-ip", LLC_SAMPLING_HW_IP},
                 {"tick", LLC_SAMPLING_TICK},
                 {"cpu-clock", LLC_SAMPLING_CPU_CLOCK}};
    for (size_t i = 0; i < LLC_ARRAY_LEN(names); i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].src;
            return 0;
        }
    return llc_cli_usage("phase", "--source is auto, pebs, hw-ip, tick or cpu-clock, not '%s'", s);
}

/* 0 = parsed, -1 = --help printed, else the exit status. */
static enum llc_parse parse_args(int argc, char **argv, struct phase_opts *o, int *first_arg)
{
    enum {
        O_WINDOW = 256,
        O_WINDOW_MS,
        O_CPU_TIME,
        O_SOURCE,
        O_SAMPLES,
        O_THETA,
        O_THETA_DSR,
        O_TRANSITION,
        O_NO_DSR,
        O_SEED,
        O_TRACE,
        O_BBV,
        O_SIM,
        O_NOISE,
        O_NO_PLOT,
        O_MAX_RATE,
        O_BBV_PC,
        O_WINDOW_UNIT,
        O_BBV_TOL
    };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"window", required_argument, 0, O_WINDOW},
        {"window-ms", required_argument, 0, O_WINDOW_MS},
        {"max-rate", required_argument, 0, O_MAX_RATE},
        {"cpu-time", no_argument, 0, O_CPU_TIME},
        {"source", required_argument, 0, O_SOURCE},
        {"samples", required_argument, 0, O_SAMPLES},
        {"theta", required_argument, 0, O_THETA},
        {"theta-dsr", required_argument, 0, O_THETA_DSR},
        {"transition", required_argument, 0, O_TRANSITION},
        {"no-dynamic-rate", no_argument, 0, O_NO_DSR},
        {"seed", required_argument, 0, O_SEED},
        {"trace", required_argument, 0, O_TRACE},
        {"bbv", required_argument, 0, O_BBV},
        {"bbv-pc", required_argument, 0, O_BBV_PC},
        {"window-unit", required_argument, 0, O_WINDOW_UNIT},
        {"bbv-tolerance", required_argument, 0, O_BBV_TOL},
        {"sim", required_argument, 0, O_SIM},
        {"noise", required_argument, 0, O_NOISE},
        {"no-plot", no_argument, 0, O_NO_PLOT},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof(*o));
    llc_sampling_config_default(&o->cfg.samp);
    llc_phase_config_default(&o->cfg.det);
    o->cfg.seed = 1;
    o->cfg.bbv_tolerance = LLC_PHASERUN_BBV_TOLERANCE_DEFAULT;
    bool window_given = false, unit_given = false, tol_given = false;
    double pct = 0;
    uint64_t v;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    /* '+': options end at the program's name; its options are its own. */
    while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->prefix = optarg;
            break;
        case O_WINDOW:
            if (llc_parse_u64_range(optarg, 1000, UINT64_C(1) << 50, &v) < 0)
                return llc_cli_usage("phase",
                                     "--window wants at least 1000 instructions, not "
                                     "'%s'",
                                     optarg);
            o->cfg.samp.window_instr = o->cfg.trace_window = v;
            window_given = true;
            break;
        case O_WINDOW_MS:
            if (llc_parse_u64_range(optarg, 1, 3600000, &v) < 0)
                return llc_cli_usage("phase", "--window-ms wants 1..3600000, not '%s'", optarg);
            o->cfg.samp.window_ns = v * 1000000ULL;
            break;
        case O_MAX_RATE:
            if (llc_parse_u64_range(optarg, 1, 100000, &v) < 0)
                return llc_cli_usage("phase", "--max-rate wants 1..100000 Hz, not '%s'", optarg);
            o->cfg.samp.max_rate_hz = (unsigned)v;
            break;
        case O_CPU_TIME:
            o->cfg.samp.force_cpu_time = true;
            break;
        case O_SOURCE:
            rc = parse_source(optarg, &o->cfg.samp.best_source);
            break;
        case O_SAMPLES:
            if (llc_parse_u64_range(optarg, LLC_PHASE_MIN_SAMPLES, 100000, &v) < 0)
                return llc_cli_usage("phase", "--samples wants %d..100000, not '%s'",
                                     LLC_PHASE_MIN_SAMPLES, optarg);
            o->cfg.samp.samples_per_window = (unsigned)v;
            break;
        case O_THETA:
            rc = parse_unit_interval("--theta", optarg, &o->cfg.det.theta);
            break;
        case O_THETA_DSR:
            rc = parse_unit_interval("--theta-dsr", optarg, &o->cfg.det.theta_dsr);
            break;
        case O_TRANSITION:
            if (llc_parse_u64_range(optarg, 0, 1000000, &v) < 0)
                return llc_cli_usage("phase", "--transition wants a window count, not '%s'",
                                     optarg);
            o->cfg.det.transition_threshold = (unsigned)v;
            break;
        case O_NO_DSR:
            o->cfg.det.dynamic_rate = false;
            break;
        case O_SEED:
            if (llc_parse_u64(optarg, &o->cfg.seed) < 0)
                return llc_cli_usage("phase", "--seed wants a whole number, not '%s'", optarg);
            break;
        case O_TRACE:
            o->cfg.trace = optarg;
            break;
        case O_BBV:
            o->cfg.bbv = optarg;
            break;
        case O_BBV_PC:
            o->cfg.bbv_pc = optarg;
            break;
        case O_WINDOW_UNIT:
            if (strcmp(optarg, "auto") == 0)
                o->cfg.trace_unit = LLC_SAMPLING_TRACE_AUTO;
            else if (strcmp(optarg, "instructions") == 0)
                o->cfg.trace_unit = LLC_SAMPLING_TRACE_INSTRUCTIONS;
            else if (strcmp(optarg, "references") == 0)
                o->cfg.trace_unit = LLC_SAMPLING_TRACE_REFERENCES;
            else
                return llc_cli_usage("phase",
                                     "--window-unit is auto, instructions or "
                                     "references, not '%s'",
                                     optarg);
            unit_given = true;
            break;
        case O_BBV_TOL:
            rc = llc_opt_double("phase", "bbv-tolerance", optarg, 0, 100, &pct);
            o->cfg.bbv_tolerance = pct / 100.0;
            tol_given = true;
            break;
        case O_SIM:
            o->cfg.sim = optarg;
            break;
        case O_NOISE:
            o->cfg.noise = optarg;
            break;
        case O_NO_PLOT:
            o->no_plot = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_PARSE_HELP;
        case ':':
            return llc_cli_usage("phase", "%s needs a value", argv[optind - 1]);
        default:
            return llc_cli_usage("phase", "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    *first_arg = optind;
    if (!window_given)
        o->cfg.trace_window = 1000000;
    if (o->cfg.trace && optind < argc)
        return llc_cli_usage("phase", "give either --trace FILE or a program, not both");
    if (!o->cfg.trace && optind >= argc)
        return llc_cli_usage("phase", "no program to run (llcprobe phase -- PROGRAM ...) and "
                                      "no --trace FILE");
    if (!o->cfg.trace && (o->cfg.bbv || o->cfg.sim || unit_given))
        return llc_cli_usage("phase", "--bbv, --sim and --window-unit go with --trace FILE");
    if (tol_given && !o->cfg.bbv)
        return llc_cli_usage("phase", "--bbv-tolerance goes with --bbv FILE");
    if (o->cfg.bbv_pc && !o->cfg.bbv)
        return llc_cli_usage("phase", "--bbv-pc goes with --bbv FILE");
    if (o->cfg.noise && !o->cfg.sim)
        return llc_cli_usage("phase", "--noise goes with --sim PRESET");
    /* One event per rate the detector may ask for, and no more. */
    o->cfg.samp.max_multiplier = o->cfg.det.dynamic_rate ? o->cfg.det.max_multiplier : 1;
    if (o->cfg.trace && o->cfg.samp.samples_per_window == 0)
        o->cfg.samp.samples_per_window = 400; /* instruction addresses, like EIPV */
    return LLC_PARSE_RUN;
}

static void print_summary(const struct phase_opts *o, const struct llc_phaserun *r,
                          const char *json)
{
    const struct llc_phase_summary *s = &r->summary;
    const uint64_t *counts = r->counts;
    const double coverage = r->coverage;
    if (r->live) {
        const struct llc_sampling_choice *c = &r->choice;
        printf("source: %s (%s)\n", llc_sampling_source_name(c->source), c->event);
        if (c->source == LLC_SAMPLING_TICK)
            printf("  tick: %u Hz (self-test measured %.0f per CPU second)%s%s\n", c->tick_hz,
                   c->tick_hz_measured, c->tick_note[0] ? "; " : "", c->tick_note);
        for (int i = 0; i < (int)c->source; i++)
            printf("  refused %s: %s\n", llc_sampling_source_name((enum llc_sampling_source)i),
                   c->refused[i]);
        printf("window unit: %s, %" PRIu64 " per window\n", llc_sampling_unit_name(c->unit),
               c->window);
        if (c->unit_refused[0])
            printf("  refused instructions: %s\n", c->unit_refused);
        if (c->unit_note[0])
            printf("  note: %s\n", c->unit_note);
        char st[64];
        if (r->status.state == LLC_TARGET_SIGNALLED)
            snprintf(st, sizeof(st), "killed by signal %d", r->status.signal);
        else
            snprintf(st, sizeof(st), "exit status %d", r->status.exit_code);
        printf("target: %s, %.3f s, CPU %.3f s user + %.3f s sys (llcprobe: %.3f + %.3f s)\n", st,
               r->status.runtime_s, r->target_user_s, r->target_sys_s, r->monitor_user_s,
               r->monitor_sys_s);
    } else {
        const bool refs = r->unit == LLC_SAMPLING_TRACE_REFERENCES;
        printf("trace: %s (recorder %s), %" PRIu64 " %s per window, %u samples per window%s\n",
               o->cfg.trace, r->recorder, o->cfg.trace_window, refs ? "references" : "instructions",
               o->cfg.samp.samples_per_window, refs ? " (code addresses of the accesses)" : "");
    }
    printf("windows: %" PRIu64 "\n", s->windows);
    printf("phases: %zu\n", s->phases);
    for (size_t i = 0; i < r->nphases; i++)
        printf("  phase %zu: %" PRIu64 " windows (%.1f%%)\n", i, counts[i],
               s->windows ? 100.0 * (double)counts[i] / (double)s->windows : 0.0);
    printf("coverage: %.1f%% of windows in a stable phase\n", 100.0 * coverage);
    printf("unclassified: %.1f%% (%" PRIu64 " windows), transition: %" PRIu64 "\n",
           100.0 * s->unclassified_share, s->unclassified, s->transition);
    printf("predictor accuracy: %.1f%% (%" PRIu64 " predictions)\n", 100.0 * s->prediction_accuracy,
           s->predictions);
    printf("mean sample rate: %.1f%% of full\n", 100.0 * s->mean_rate);
    if (o->cfg.bbv) {
        printf("bbv: %zu windows, %zu blocks, %zu phases; compared %zu windows: ari %.4f, "
               "similarity diff %.4f\n",
               r->bbv_windows, r->bbv_dim, r->bbv_phases, r->compared, r->ari, r->simdiff);
        printf("  aligned by instructions (a rep-prefixed instruction's iterations counted once, "
               "as exp-bbv counts): trace %" PRIu64 ", exp-bbv %" PRIu64 " (%.3f%% apart; "
               "%.3f%% beyond exp-bbv's unwritten last interval, tolerance %.2f%%); %zu windows "
               "past exp-bbv's end\n",
               r->align.total_a, r->align.total_b, 100.0 * r->align.total_diff, 100.0 * r->bbv_gap,
               100.0 * o->cfg.bbv_tolerance, r->n - r->align.matched);
    }
    if (o->cfg.bbv_pc)
        printf("bbv hashed to 32 entries by block address: %zu phases: ari %.4f, similarity "
               "diff %.4f\n",
               r->bbv_phases32, r->ari32, r->simdiff32);
    if (o->cfg.sim) {
        printf("llc miss ratio cov: program %.4f, phases %.4f, ccov %.4f\n", r->cov_all,
               r->cov_phase, r->ccov_phase);
        if (o->cfg.bbv)
            printf("llc miss ratio cov bbv phases: %.4f, ccov %.4f\n", r->cov_bbv, r->ccov_bbv);
        if (o->cfg.bbv_pc)
            printf("llc miss ratio cov 32-entry bbv phases: %.4f, ccov %.4f\n", r->cov_bbv32,
                   r->ccov_bbv32);
    }
    printf("output: %s\n", json);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static int write_outputs(const struct phase_opts *o, const struct llc_phaserun *r)
{
    char err[LLC_ERRLEN], json[4200], csv[4200], png[4200], prefix[4096];
    if (o->prefix) {
        snprintf(prefix, sizeof(prefix), "%s", o->prefix);
    } else {
        snprintf(prefix, sizeof(prefix), "%s", base_name(o->cfg.trace ? o->cfg.trace : r->command));
        prefix[strcspn(prefix, " ")] = '\0';
    }
    snprintf(json, sizeof(json), "%s.phase.json", prefix);
    snprintf(csv, sizeof(csv), "%s.phase.csv", prefix);
    snprintf(png, sizeof(png), "%s.phase.png", prefix);
    if (llc_phaserun_write_json(json, &o->cfg, r, err, sizeof(err)) < 0 ||
        llc_phaserun_write_csv(csv, r, err, sizeof(err)) < 0)
        return llc_cli_fail("phase", "%s", err);
    if (!o->no_plot && llc_phaserun_plot(csv, png, r, err, sizeof(err)) < 0)
        llc_cli_warn(o->quiet, "no timeline plot: %s", err);
    print_summary(o, r, json);
    if (r->short_run)
        llc_cli_warn(o->quiet, "%s", r->short_msg);
    return LLC_EXIT_OK;
}

int llc_cmd_phase(int argc, char **argv)
{
    struct phase_opts o;
    int first = 0;
    const enum llc_parse p = parse_args(argc, argv, &o, &first);
    if (p != LLC_PARSE_RUN)
        return llc_parse_exit(p);
    char err[LLC_ERRLEN];
    struct llc_phaserun r;
    llc_phaserun_init(&r, !o.cfg.trace);
    struct llc_stop_saved saved_signals;
    llc_stop_install(&saved_signals);
    const int rc = llc_phaserun_run(&o.cfg, argv + first, &r, err, sizeof(err));
    int status;
    if (llc_stop_requested() && (rc < 0 || r.n == 0)) {
        fprintf(stderr, "llcprobe: phase: stopped by signal %d; nothing was written\n",
                (int)llc_stop_signal);
        status = llc_stop_exit_code();
    } else if (rc < 0) {
        status = llc_cli_fail("phase", "%s", err);
    } else {
        status = write_outputs(&o, &r);
        if (llc_stop_requested()) {
            fprintf(stderr,
                    "llcprobe: phase: stopped by signal %d; the %zu windows seen are "
                    "written, marked incomplete\n",
                    (int)llc_stop_signal, r.n);
            status = llc_stop_exit_code();
        }
    }
    llc_stop_restore(&saved_signals);
    llc_phaserun_free(&r);
    return status;
}
