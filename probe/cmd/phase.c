/* llcprobe phase: ScarPhase online phase detection of a running program
 * (live perf sampling) or of a recorded trace (offline, same classifier),
 * with optional references for evaluation: exp-bbv vectors and per-window
 * LLC miss ratios from the simulator. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "llcprobe/sampling.h"
#include "llcprobe/target.h"
#include "util/atomic_file.h"
#include "util/plot.h"
#include "util/cli.h"
#include "util/stopsig.h"
#include "util/json.h"


/* Live: fewer windows than this and the run is too short to show phases
 * (a leader-follower cluster and the run-length predictor need a few
 * windows of each phase); the user is told with the numbers. */
#define SHORT_RUN_WINDOWS 8
/* --bbv: default largest gap between the trace's and exp-bbv's instruction
 * totals (a fraction of the larger) before the two are refused as different
 * runs. Runs of one program under lackey and exp-bbv were up to 1.1% apart
 * (perl, with rep iterations counted once) beyond exp-bbv's unwritten last
 * interval. */
#define BBV_TOLERANCE_DEFAULT 0.02

struct phase_opts {
    const char *prefix, *trace, *bbv, *bbv_pc, *sim, *noise;
    struct llc_sampling_config samp;
    uint64_t trace_window, seed;
    enum llc_sampling_trace_unit trace_unit;
    double bbv_tolerance;
    struct llc_phase_config det;
    bool quiet, no_plot;
};

/* One classified window with what the sampler and references said. */
struct row {
    struct llc_sampling_window s;
    struct llc_phase_window p;
    int predicted;            /* prediction made before this window */
    unsigned pred_confidence;
    double sig[LLC_PHASE_BUCKETS];
    int bbv_phase;            /* reference label, if --bbv */
    int bbv32_phase;          /* label from the 32-entry BBV, if --bbv-pc */
    double miss_ratio;        /* simulated, if --sim; NAN otherwise */
};

struct run {
    struct row *rows;
    size_t n, cap;
    bool live;
    int stopped_by;          /* live: the signal that stopped the run early, 0 if none */
    char command[1024];
    struct llc_sampling_choice choice;
    struct llc_target_status status;
    /* live: CPU seconds (user, sys) of the target and its waited-for
     * descendants (llcprobe's only child while it runs), and of llcprobe
     * itself: the overhead the sampler imposes is the target's, the
     * monitor's own competes for the same CPUs. */
    double target_user_s, target_sys_s, monitor_user_s, monitor_sys_s;
    /* evaluation figures (NAN when not computed) */
    double ari, simdiff, cov_all, cov_phase, ccov_phase, cov_bbv, ccov_bbv, cov_bbv32, ccov_bbv32;
    /* against the 32-entry BBVs, with --bbv-pc */
    double ari32, simdiff32;
    size_t bbv_windows, bbv_dim, bbv_phases, bbv_phases32, compared;
    struct llc_phase_alignment align; /* --bbv: windows paired by instruction count */
    uint64_t bbv_tail; /* --bbv: exp-bbv's longest interval: how far the trace may run on */
    double bbv_gap;    /* --bbv: the totals' gap beyond that, a fraction of the larger */
    enum llc_sampling_trace_unit unit; /* --trace: windows by instructions or references */
    char recorder[32];                 /* --trace: the trace's recorder */
    /* live: the run was too short for its windows (SHORT_RUN_WINDOWS) */
    bool short_run;
    double suggest_window; /* a window giving SHORT_RUN_WINDOWS (ms of CPU, or instructions) */
    double suggest_samples; /* samples per window it would get at the source's rate */
    char short_msg[640];    /* the warning, printed after the summary */
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
            SHORT_RUN_WINDOWS, LLC_PHASE_MIN_SAMPLES);
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
    } names[] = {{"auto", LLC_SAMPLING_PEBS_BRANCHES}, {"pebs", LLC_SAMPLING_PEBS_BRANCHES},
                 {"hw-ip", LLC_SAMPLING_HW_IP}, {"tick", LLC_SAMPLING_TICK},
                 {"cpu-clock", LLC_SAMPLING_CPU_CLOCK}};
    for (size_t i = 0; i < LLC_ARRAY_LEN(names); i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].src;
            return 0;
        }
    return llc_cli_usage("phase", "--source is auto, pebs, hw-ip, tick or cpu-clock, not '%s'",
                         s);
}

/* 0 = parsed, -1 = --help printed, else the exit status. */
static int parse_args(int argc, char **argv, struct phase_opts *o, int *first_arg)
{
    enum { O_WINDOW = 256, O_WINDOW_MS, O_CPU_TIME, O_SOURCE, O_SAMPLES, O_THETA, O_THETA_DSR,
           O_TRANSITION, O_NO_DSR, O_SEED, O_TRACE, O_BBV, O_SIM, O_NOISE, O_NO_PLOT, O_MAX_RATE,
           O_BBV_PC, O_WINDOW_UNIT, O_BBV_TOL };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"window", required_argument, 0, O_WINDOW},
        {"window-ms", required_argument, 0, O_WINDOW_MS},
        {"max-rate", required_argument, 0, O_MAX_RATE},
        {"cpu-time", no_argument, 0, O_CPU_TIME}, {"source", required_argument, 0, O_SOURCE},
        {"samples", required_argument, 0, O_SAMPLES}, {"theta", required_argument, 0, O_THETA},
        {"theta-dsr", required_argument, 0, O_THETA_DSR},
        {"transition", required_argument, 0, O_TRANSITION},
        {"no-dynamic-rate", no_argument, 0, O_NO_DSR}, {"seed", required_argument, 0, O_SEED},
        {"trace", required_argument, 0, O_TRACE}, {"bbv", required_argument, 0, O_BBV},
        {"bbv-pc", required_argument, 0, O_BBV_PC},
        {"window-unit", required_argument, 0, O_WINDOW_UNIT},
        {"bbv-tolerance", required_argument, 0, O_BBV_TOL},
        {"sim", required_argument, 0, O_SIM}, {"noise", required_argument, 0, O_NOISE},
        {"no-plot", no_argument, 0, O_NO_PLOT}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    memset(o, 0, sizeof(*o));
    llc_sampling_config_default(&o->samp);
    llc_phase_config_default(&o->det);
    o->seed = 1;
    o->bbv_tolerance = BBV_TOLERANCE_DEFAULT;
    bool window_given = false, unit_given = false, tol_given = false;
    double pct = 0;
    uint64_t v;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    /* '+': options end at the program's name; its options are its own. */
    while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o->prefix = optarg; break;
        case O_WINDOW:
            if (llc_parse_u64_range(optarg, 1000, UINT64_C(1) << 50, &v) < 0)
                return llc_cli_usage("phase", "--window wants at least 1000 instructions, not "
                                     "'%s'", optarg);
            o->samp.window_instr = o->trace_window = v;
            window_given = true;
            break;
        case O_WINDOW_MS:
            if (llc_parse_u64_range(optarg, 1, 3600000, &v) < 0)
                return llc_cli_usage("phase", "--window-ms wants 1..3600000, not '%s'", optarg);
            o->samp.window_ns = v * 1000000ULL;
            break;
        case O_MAX_RATE:
            if (llc_parse_u64_range(optarg, 1, 100000, &v) < 0)
                return llc_cli_usage("phase", "--max-rate wants 1..100000 Hz, not '%s'", optarg);
            o->samp.max_rate_hz = (unsigned)v;
            break;
        case O_CPU_TIME: o->samp.force_cpu_time = true; break;
        case O_SOURCE: rc = parse_source(optarg, &o->samp.best_source); break;
        case O_SAMPLES:
            if (llc_parse_u64_range(optarg, LLC_PHASE_MIN_SAMPLES, 100000, &v) < 0)
                return llc_cli_usage("phase", "--samples wants %d..100000, not '%s'",
                                     LLC_PHASE_MIN_SAMPLES, optarg);
            o->samp.samples_per_window = (unsigned)v;
            break;
        case O_THETA: rc = parse_unit_interval("--theta", optarg, &o->det.theta); break;
        case O_THETA_DSR: rc = parse_unit_interval("--theta-dsr", optarg, &o->det.theta_dsr); break;
        case O_TRANSITION:
            if (llc_parse_u64_range(optarg, 0, 1000000, &v) < 0)
                return llc_cli_usage("phase", "--transition wants a window count, not '%s'",
                                     optarg);
            o->det.transition_threshold = (unsigned)v;
            break;
        case O_NO_DSR: o->det.dynamic_rate = false; break;
        case O_SEED:
            if (llc_parse_u64(optarg, &o->seed) < 0)
                return llc_cli_usage("phase", "--seed wants a whole number, not '%s'", optarg);
            break;
        case O_TRACE: o->trace = optarg; break;
        case O_BBV: o->bbv = optarg; break;
        case O_BBV_PC: o->bbv_pc = optarg; break;
        case O_WINDOW_UNIT:
            if (strcmp(optarg, "auto") == 0)
                o->trace_unit = LLC_SAMPLING_TRACE_AUTO;
            else if (strcmp(optarg, "instructions") == 0)
                o->trace_unit = LLC_SAMPLING_TRACE_INSTRUCTIONS;
            else if (strcmp(optarg, "references") == 0)
                o->trace_unit = LLC_SAMPLING_TRACE_REFERENCES;
            else
                return llc_cli_usage("phase", "--window-unit is auto, instructions or "
                                     "references, not '%s'", optarg);
            unit_given = true;
            break;
        case O_BBV_TOL:
            rc = llc_opt_double("phase", "bbv-tolerance", optarg, 0, 100, &pct);
            o->bbv_tolerance = pct / 100.0;
            tol_given = true;
            break;
        case O_SIM: o->sim = optarg; break;
        case O_NOISE: o->noise = optarg; break;
        case O_NO_PLOT: o->no_plot = true; break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); return -1;
        case ':': return llc_cli_usage("phase", "%s needs a value", argv[optind - 1]);
        default: return llc_cli_usage("phase", "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    *first_arg = optind;
    if (!window_given)
        o->trace_window = 1000000;
    if (o->trace && optind < argc)
        return llc_cli_usage("phase", "give either --trace FILE or a program, not both");
    if (!o->trace && optind >= argc)
        return llc_cli_usage("phase", "no program to run (llcprobe phase -- PROGRAM ...) and "
                             "no --trace FILE");
    if (!o->trace && (o->bbv || o->sim || unit_given))
        return llc_cli_usage("phase", "--bbv, --sim and --window-unit go with --trace FILE");
    if (tol_given && !o->bbv)
        return llc_cli_usage("phase", "--bbv-tolerance goes with --bbv FILE");
    if (o->bbv_pc && !o->bbv)
        return llc_cli_usage("phase", "--bbv-pc goes with --bbv FILE");
    if (o->noise && !o->sim)
        return llc_cli_usage("phase", "--noise goes with --sim PRESET");
    /* One event per rate the detector may ask for, and no more. */
    o->samp.max_multiplier = o->det.dynamic_rate ? o->det.max_multiplier : 1;
    if (o->trace && o->samp.samples_per_window == 0)
        o->samp.samples_per_window = 400; /* instruction addresses, like EIPV */
    return 0;
}

static int add_row(struct run *r, const struct row *x)
{
    if (r->n == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 256;
        struct row *p = realloc(r->rows, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        r->rows = p;
        r->cap = cap;
    }
    r->rows[r->n++] = *x;
    return 0;
}

/* Classifies one window's addresses and records it. */
static int classify(struct run *r, struct llc_phase_detector *d, const struct llc_sampling_window *sw,
                    const uint64_t *ips, size_t n, char *err, size_t errlen)
{
    struct row x = {.s = *sw, .bbv_phase = LLC_PHASE_UNCLASSIFIED,
                    .bbv32_phase = LLC_PHASE_UNCLASSIFIED, .miss_ratio = NAN};
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

static int run_live(const struct phase_opts *o, char **argv, struct llc_phase_detector *d,
                    struct run *r, char *err, size_t errlen)
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

/* A live run of fewer than SHORT_RUN_WINDOWS windows cannot show its
 * phases (the default windows are long: 1.6 s of CPU with the tick): the
 * numbers, and what would give enough windows, go into r->short_msg
 * (printed after the summary) and the JSON. */
static void check_short_run(struct run *r)
{
    if (r->stopped_by || r->n >= SHORT_RUN_WINDOWS)
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
    double want = (double)done / SHORT_RUN_WINDOWS;
    want = want < floor ? floor : want;
    r->suggest_window = cpu ? want / 1e6 : want;
    r->suggest_samples = per_unit * want;
    char seen[160], fix[256];
    if (cpu)
        snprintf(seen, sizeof(seen), "%zu window%s of %.3f s CPU (the target's CPU time %.3f s)",
                 r->n, r->n == 1 ? "" : "s", (double)c->window / 1e9, (double)done / 1e9);
    else
        snprintf(seen, sizeof(seen), "%zu window%s of %" PRIu64 " instructions (the target "
                 "retired %" PRIu64 ")", r->n, r->n == 1 ? "" : "s", c->window, done);
    if (r->suggest_samples >= LLC_PHASE_MIN_SAMPLES)
        snprintf(fix, sizeof(fix), "Try %s %.0f (about %.0f samples per window at this source's "
                 "rate; %d at least), or phases offline", cpu ? "--window-ms" : "--window",
                 r->suggest_window, r->suggest_samples, LLC_PHASE_MIN_SAMPLES);
    else
        snprintf(fix, sizeof(fix), "Windows short enough (%s %.0f) would get %.1f samples each "
                 "at this source's rate (%d at least): use phases offline",
                 cpu ? "--window-ms" : "--window", r->suggest_window, r->suggest_samples,
                 LLC_PHASE_MIN_SAMPLES);
    snprintf(r->short_msg, sizeof(r->short_msg), "the run is too short for its windows: %s; "
             "phases need at least %d. %s: llcprobe trace -o F -- PROGRAM, then llcprobe phase "
             "--trace F", seen, SHORT_RUN_WINDOWS, fix);
}

static int run_trace(const struct phase_opts *o, struct llc_phase_detector *d, struct run *r,
                     char *err, size_t errlen)
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
                 ? llc_errf(err, errlen, -ENODATA, "%s: the trace holds no data records",
                            o->trace)
                 : llc_errf(err, errlen, -ENODATA, "%s: the trace holds no instruction records "
                            "(recorder %s; --window-unit references windows by its data "
                            "records)", o->trace, r->recorder);
    return rc < 0 ? rc : 0;
}

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
        rc = llc_phase_detector_feed_dense(d, rows + i * dim, dim, (uint64_t)total, &w, err,
                                           errlen);
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
static int align_bbv(const struct phase_opts *o, struct run *r, const struct llc_sampling_bbv *b,
                     size_t *map, char *err, size_t errlen)
{
    if (r->n && !r->rows[0].s.instructions_known)
        return llc_errf(err, errlen, -EINVAL, "--bbv: %s has no instruction records (recorder "
                        "%s), so its windows cannot be paired with exp-bbv's instruction "
                        "intervals", o->trace, r->recorder);
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
        rc = llc_errf(err, errlen, -EPROTO, "--bbv: %s counts %" PRIu64 " instructions, the trace "
                      "%" PRIu64 ": %.2f%% apart beyond exp-bbv's unwritten last interval (up to "
                      "%" PRIu64 "), more than --bbv-tolerance %.2f%% (not the same run?)", o->bbv,
                      tb, ta, 100.0 * r->bbv_gap, r->bbv_tail, 100.0 * o->bbv_tolerance);
out:
    free(la);
    free(lb);
    return rc;
}

/* ARI and similarity difference of our windows against reference rows
 * (dim wide, one per exp-bbv interval) labelled ref[], through map. */
static int compare_aligned(const struct run *r, const size_t *map, const int *la,
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
static int compare_bbv(const struct phase_opts *o, struct run *r, char *err, size_t errlen)
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
static int sim_metrics(const struct phase_opts *o, struct run *r, char *err, size_t errlen)
{
    struct llc_sampling_simwin sw;
    int rc = llc_sampling_sim_windows(o->trace, o->sim, o->noise, o->trace_window,
                                      r->unit == LLC_SAMPLING_TRACE_REFERENCES, o->seed, &sw,
                                      err, errlen);
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

/* ---- outputs ----------------------------------------------------------- */

static json_t *choice_json(const struct llc_sampling_choice *c)
{
    json_t *refused = json_array();
    for (int s = 0; s < (int)c->source; s++)
        json_array_append_new(refused, json_pack("{s:s,s:s}", "source",
                                                 llc_sampling_source_name((enum llc_sampling_source)s),
                                                 "reason", c->refused[s]));
    json_t *j = json_pack("{s:s,s:s,s:i,s:o,s:s,s:s?,s:I,s:i,s:i}", "source",
                          llc_sampling_source_name(c->source), "event", c->event, "precise_ip",
                          (int)c->precise_ip, "refused", refused, "window_unit",
                          llc_sampling_unit_name(c->unit), "window_unit_refused",
                          c->unit_refused[0] ? c->unit_refused : NULL, "window",
                          (json_int_t)c->window, "samples_per_window",
                          (int)c->samples_per_window, "cpus", (int)c->ncpus);
    if (j && c->unit_note[0])
        json_object_set_new(j, "window_unit_note", json_string(c->unit_note));
    if (j && c->source == LLC_SAMPLING_TICK)
        json_object_update_new(j, json_pack("{s:i,s:o,s:s?}", "tick_hz", (int)c->tick_hz,
                                            "tick_hz_measured", llc_json_finite(c->tick_hz_measured),
                                            "tick_note", c->tick_note[0] ? c->tick_note : NULL));
    return j;
}

static json_t *windows_json(const struct run *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const struct row *x = &r->rows[i];
        json_t *w = json_pack(
            "{s:I,s:I,s:I,s:I,s:i,s:f,s:I,s:i,s:i,s:i,s:i,s:f,s:I,s:i,s:i}", "window",
            (json_int_t)x->s.index, "samples", (json_int_t)x->s.n_ips, "period",
            (json_int_t)x->s.period, "progress", (json_int_t)x->s.progress, "multiplier",
            (int)x->s.multiplier, "rate", 1.0 / x->s.multiplier, "lost", (json_int_t)x->s.lost,
            "phase", x->p.phase, "predicted", x->predicted, "confidence", (int)x->pred_confidence,
            "cluster", (int)x->p.cluster, "distance", x->p.distance, "processes",
            (json_int_t)x->s.processes, "threads", (int)x->s.tasks, "new_cluster",
            (int)x->p.new_cluster);
        json_object_set_new(w, "instructions", x->s.instructions_known
                                                   ? json_integer((json_int_t)x->s.instructions)
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
        json_array_append_new(per, json_pack("{s:i,s:I}", "phase", (int)i, "windows",
                                             (json_int_t)counts[i]));
    return json_pack("{s:I,s:I,s:I,s:o,s:f,s:I,s:I,s:f,s:f,s:I,s:f,s:I}", "windows",
                     (json_int_t)s->windows, "samples", (json_int_t)s->samples, "phases",
                     (json_int_t)s->phases, "windows_per_phase", per, "coverage", coverage,
                     "unclassified", (json_int_t)s->unclassified, "transition",
                     (json_int_t)s->transition, "unclassified_share", s->unclassified_share,
                     "mean_rate", s->mean_rate, "predictions", (json_int_t)s->predictions,
                     "prediction_accuracy", s->prediction_accuracy, "phase_changes",
                     (json_int_t)s->phase_changes);
}

static int write_json(const char *path, const struct phase_opts *o, const struct run *r,
                      const struct llc_phase_summary *s, const uint64_t *counts, size_t nphases,
                      double coverage, char *err, size_t errlen)
{
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
                                  o->det.dynamic_rate, "max_multiplier",
                                  (int)o->det.max_multiplier, "min_samples",
                                  (json_int_t)o->det.min_samples));
    if (r->live) {
        json_t *samp = choice_json(&r->choice);
        /* How the dynamic rate acts (see llcprobe/sampling.h). */
        json_object_set_new(samp, "rate_control", json_string("inherited-events"));
        json_object_set_new(samp, "max_rate_hz", json_integer((json_int_t)o->samp.max_rate_hz));
        json_object_set_new(doc, "sampling", samp);
        json_object_set_new(doc, "target",
                            json_pack("{s:s,s:i,s:i,s:f,s:f,s:f}", "state",
                                      llc_target_state_name(r->status.state), "exit_code",
                                      r->status.exit_code, "signal", r->status.signal,
                                      "runtime_s", r->status.runtime_s, "cpu_user_s",
                                      r->target_user_s, "cpu_sys_s", r->target_sys_s));
        json_object_set_new(doc, "short_run",
                            r->short_run
                                ? json_pack("{s:I,s:i,s:I,s:s,s:f,s:f}", "windows",
                                            (json_int_t)r->n, "min_windows", SHORT_RUN_WINDOWS,
                                            "window", (json_int_t)r->choice.window, "unit",
                                            llc_sampling_unit_name(r->choice.unit),
                                            "suggested_window", r->suggest_window,
                                            "suggested_samples_per_window", r->suggest_samples)
                                : json_null());
        json_object_set_new(doc, "monitor",
                            json_pack("{s:f,s:f}", "cpu_user_s", r->monitor_user_s, "cpu_sys_s",
                                      r->monitor_sys_s));
    } else {
        const bool refs = r->unit == LLC_SAMPLING_TRACE_REFERENCES;
        /* window_instructions stays for readers of instruction windows. */
        json_object_set_new(doc, "trace",
                            json_pack("{s:s,s:s,s:s,s:I,s:o,s:i}", "path", o->trace, "recorder",
                                      r->recorder, "window_unit",
                                      refs ? "references" : "instructions", "window",
                                      (json_int_t)o->trace_window, "window_instructions",
                                      refs ? json_null() : json_integer((json_int_t)o->trace_window),
                                      "samples_per_window", (int)o->samp.samples_per_window));
    }
    json_object_set_new(doc, "summary", summary_json(s, counts, nphases, coverage));
    if (o->bbv)
        json_object_set_new(
            doc, "bbv",
            json_pack("{s:s,s:s?,s:I,s:I,s:I,s:I,s:o,s:o}", "path", o->bbv, "pc_path",
                      o->bbv_pc, "windows", (json_int_t)r->bbv_windows, "blocks",
                      (json_int_t)r->bbv_dim, "phases", (json_int_t)r->bbv_phases, "compared",
                      (json_int_t)r->compared, "ari", llc_json_finite(r->ari), "similarity_diff",
                      llc_json_finite(r->simdiff)));
    if (o->bbv)
        json_object_update_new(
            json_object_get(doc, "bbv"),
            json_pack("{s:s,s:I,s:I,s:f,s:I,s:f,s:f,s:I}", "aligned_by", "instructions",
                      "trace_instructions", (json_int_t)r->align.total_a, "bbv_instructions",
                      (json_int_t)r->align.total_b, "total_diff", r->align.total_diff,
                      "tail_allowance", (json_int_t)r->bbv_tail, "gap", r->bbv_gap,
                      "tolerance", o->bbv_tolerance, "unmatched",
                      (json_int_t)(r->n - r->align.matched)));
    if (o->bbv_pc)
        json_object_set_new(json_object_get(doc, "bbv"), "bbv32",
                            json_pack("{s:I,s:o,s:o}", "phases", (json_int_t)r->bbv_phases32,
                                      "ari", llc_json_finite(r->ari32), "similarity_diff",
                                      llc_json_finite(r->simdiff32)));
    if (o->sim)
        json_object_set_new(doc, "sim",
                            json_pack("{s:s,s:s?,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "preset", o->sim,
                                      "noise", o->noise, "cov_program", llc_json_finite(r->cov_all),
                                      "cov_phases", llc_json_finite(r->cov_phase), "ccov_phases",
                                      llc_json_finite(r->ccov_phase), "cov_bbv_phases", llc_json_finite(r->cov_bbv),
                                      "ccov_bbv_phases", llc_json_finite(r->ccov_bbv), "cov_bbv32_phases",
                                      llc_json_finite(r->cov_bbv32), "ccov_bbv32_phases",
                                      llc_json_finite(r->ccov_bbv32)));
    json_object_set_new(doc, "windows", windows_json(r));
    const int rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

/* CSV columns; the plot script refers to them by number (x: 2,3). */
static int write_csv(const char *path, const struct run *r, char *err, size_t errlen)
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
        const struct row *w = &r->rows[i];
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
    const struct run *r;
    size_t nphases;
};

static void emit_timeline(void *ctx, FILE *g)
{
    const struct phase_plot_ctx *c = ctx;
    fprintf(g, "set datafile separator ','\nset key off\nset title ");
    llc_plot_quote(g, c->r->command);
    fprintf(g, "\nset xlabel '%s'\nset ylabel 'phase'\n"
               "set ytics ('unclassified' -2, 'transition' -1)\n"
               "set yrange [-2.6:%zu.6]\nset grid ytics\n"
               "set style fill solid 0.9 noborder\n",
            c->r->live ? "time (s)"
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

static int plot(const char *csv, const char *png, const struct run *r, size_t nphases, char *err,
                size_t errlen)
{
    struct phase_plot_ctx ctx = {csv, r, nphases};
    const int height = (int)(260 + 14 * (nphases < 20 ? nphases : 20));
    return llc_plot_png(NULL, png, 1100, height, emit_timeline, &ctx, err, errlen);
}

static void print_summary(const struct phase_opts *o, const struct run *r,
                          const struct llc_phase_summary *s, const uint64_t *counts,
                          size_t nphases, double coverage, const char *json)
{
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
        printf("target: %s, %.3f s, CPU %.3f s user + %.3f s sys (llcprobe: %.3f + %.3f s)\n",
               st, r->status.runtime_s, r->target_user_s, r->target_sys_s, r->monitor_user_s,
               r->monitor_sys_s);
    } else {
        const bool refs = r->unit == LLC_SAMPLING_TRACE_REFERENCES;
        printf("trace: %s (recorder %s), %" PRIu64 " %s per window, %u samples per window%s\n",
               o->trace, r->recorder, o->trace_window, refs ? "references" : "instructions",
               o->samp.samples_per_window,
               refs ? " (code addresses of the accesses)" : "");
    }
    printf("windows: %" PRIu64 "\n", s->windows);
    printf("phases: %zu\n", s->phases);
    for (size_t i = 0; i < nphases; i++)
        printf("  phase %zu: %" PRIu64 " windows (%.1f%%)\n", i, counts[i],
               s->windows ? 100.0 * (double)counts[i] / (double)s->windows : 0.0);
    printf("coverage: %.1f%% of windows in a stable phase\n", 100.0 * coverage);
    printf("unclassified: %.1f%% (%" PRIu64 " windows), transition: %" PRIu64 "\n",
           100.0 * s->unclassified_share, s->unclassified, s->transition);
    printf("predictor accuracy: %.1f%% (%" PRIu64 " predictions)\n",
           100.0 * s->prediction_accuracy, s->predictions);
    printf("mean sample rate: %.1f%% of full\n", 100.0 * s->mean_rate);
    if (o->bbv) {
        printf("bbv: %zu windows, %zu blocks, %zu phases; compared %zu windows: ari %.4f, "
               "similarity diff %.4f\n", r->bbv_windows, r->bbv_dim, r->bbv_phases, r->compared,
               r->ari, r->simdiff);
        printf("  aligned by instructions (a rep-prefixed instruction's iterations counted once, "
               "as exp-bbv counts): trace %" PRIu64 ", exp-bbv %" PRIu64 " (%.3f%% apart; "
               "%.3f%% beyond exp-bbv's unwritten last interval, tolerance %.2f%%); %zu windows "
               "past exp-bbv's end\n", r->align.total_a, r->align.total_b,
               100.0 * r->align.total_diff, 100.0 * r->bbv_gap, 100.0 * o->bbv_tolerance,
               r->n - r->align.matched);
    }
    if (o->bbv_pc)
        printf("bbv hashed to 32 entries by block address: %zu phases: ari %.4f, similarity "
               "diff %.4f\n", r->bbv_phases32, r->ari32, r->simdiff32);
    if (o->sim) {
        printf("llc miss ratio cov: program %.4f, phases %.4f, ccov %.4f\n", r->cov_all,
               r->cov_phase, r->ccov_phase);
        if (o->bbv)
            printf("llc miss ratio cov bbv phases: %.4f, ccov %.4f\n", r->cov_bbv, r->ccov_bbv);
        if (o->bbv_pc)
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

static int write_outputs(const struct phase_opts *o, struct run *r,
                         const struct llc_phase_detector *d)
{
    char err[LLC_ERRLEN], json[4200], csv[4200], png[4200], prefix[4096];
    if (o->prefix) {
        snprintf(prefix, sizeof(prefix), "%s", o->prefix);
    } else {
        snprintf(prefix, sizeof(prefix), "%s", base_name(o->trace ? o->trace : r->command));
        prefix[strcspn(prefix, " ")] = '\0';
    }
    snprintf(json, sizeof(json), "%s.phase.json", prefix);
    snprintf(csv, sizeof(csv), "%s.phase.csv", prefix);
    snprintf(png, sizeof(png), "%s.phase.png", prefix);
    struct llc_phase_summary s;
    llc_phase_detector_summary(d, &s);
    const size_t nphases = llc_phase_detector_phase_counts(d, NULL, 0);
    uint64_t *counts = calloc(nphases + 1, sizeof(*counts));
    if (!counts)
        return llc_cli_fail("phase", "out of memory");
    llc_phase_detector_phase_counts(d, counts, nphases);
    uint64_t stable = 0;
    for (size_t i = 0; i < nphases; i++)
        stable += counts[i];
    const double coverage = s.windows ? (double)stable / (double)s.windows : 0.0;
    int rc = LLC_EXIT_OK;
    if (write_json(json, o, r, &s, counts, nphases, coverage, err, sizeof(err)) < 0 ||
        write_csv(csv, r, err, sizeof(err)) < 0) {
        rc = llc_cli_fail("phase", "%s", err);
        goto out;
    }
    if (!o->no_plot && plot(csv, png, r, nphases, err, sizeof(err)) < 0)
        llc_cli_warn(o->quiet, "no timeline plot: %s", err);
    print_summary(o, r, &s, counts, nphases, coverage, json);
    if (r->short_run)
        llc_cli_warn(o->quiet, "%s", r->short_msg);
out:
    free(counts);
    return rc;
}

int llc_cmd_phase(int argc, char **argv)
{
    struct phase_opts o;
    int first = 0;
    int rc = parse_args(argc, argv, &o, &first);
    if (rc != 0)
        return rc < 0 ? LLC_EXIT_OK : rc;
    char err[LLC_ERRLEN];
    struct llc_phase_detector *d = NULL;
    struct run r = {.live = !o.trace, .ari = NAN, .simdiff = NAN, .ari32 = NAN,
                    .simdiff32 = NAN, .cov_all = NAN,
                    .cov_phase = NAN, .ccov_phase = NAN, .cov_bbv = NAN, .ccov_bbv = NAN,
                    .cov_bbv32 = NAN, .ccov_bbv32 = NAN};
    struct llc_stop_saved saved_signals;
    llc_stop_install(&saved_signals);
    rc = llc_phase_detector_create(&o.det, &d, err, sizeof(err));
    if (rc == 0)
        rc = o.trace ? run_trace(&o, d, &r, err, sizeof(err))
                     : run_live(&o, argv + first, d, &r, err, sizeof(err));
    if (rc == 0 && r.live)
        check_short_run(&r);
    if (rc == 0 && o.bbv && !r.stopped_by)
        rc = compare_bbv(&o, &r, err, sizeof(err));
    if (rc == 0 && o.sim && !r.stopped_by)
        rc = sim_metrics(&o, &r, err, sizeof(err));
    int status;
    if (llc_stop_requested() && (rc < 0 || r.n == 0)) {
        fprintf(stderr, "llcprobe: phase: stopped by signal %d; nothing was written\n",
                (int)llc_stop_signal);
        status = llc_stop_exit_code();
    } else if (rc < 0) {
        status = llc_cli_fail("phase", "%s", err);
    } else {
        status = write_outputs(&o, &r, d);
        if (llc_stop_requested()) {
            fprintf(stderr, "llcprobe: phase: stopped by signal %d; the %zu windows seen are "
                    "written, marked incomplete\n", (int)llc_stop_signal, r.n);
            status = llc_stop_exit_code();
        }
    }
    llc_stop_restore(&saved_signals);
    llc_phase_detector_destroy(d);
    free(r.rows);
    return status;
}
