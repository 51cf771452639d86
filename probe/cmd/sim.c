/* llcprobe sim: run a workload or a trace (plus background noise) through
 * the cache simulator and write the per-set ground truth. */
#include <errno.h>
#include <sys/stat.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/sim_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/simrun.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"

#define MAX_NOISE 8
#define DEFAULT_DURATION 10000000ULL

struct sim_opts {
    struct llc_sim_cmd_opts sim;
    const char *workload, *trace, *out;
    const char *noise[MAX_NOISE];
    unsigned nnoise;
    double rate, noise_rate;
    uint64_t duration, interval, seed;
    bool duration_given, quiet;
    uint32_t page_size;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe sim --preset NAME (--workload SPEC | --trace FILE) -o OUT.json\n"
            "                    [--policy P] [--inclusion I] [--no-l2] [--noise SPEC]...\n"
            "                    [--noise-rate R] [--rate R] [--duration N] [--page-size 4K|2M]\n"
            "                    [--seed S] [--interval N] [--quiet]\n\n"
            "Runs a target (synthetic workload or recorded trace), optionally with background\n"
            "noise agents, through the simulated cache hierarchy on a shared clock, and\n"
            "writes the exact per-agent, per-set LLC ground truth: OUT.json (format\n"
            "llcprobe-sim v1) and OUT.csv beside it. Same seed, same output.\n\n"
            "options:\n"
            "  --preset NAME      cache preset (required):");
    for (const char *const *p = llc_sim_preset_names(); *p; p++)
        fprintf(out, " %s", *p);
    fprintf(out,
            "\n"
            "                       intel8: 8 MiB 16-way inclusive, 4 slices, L2 256 KiB\n"
            "                       amd32: 32 MiB 16-way victim L3, 8 slices, L2 1 MiB\n"
            "  --policy P         LLC replacement: lru random plru srrip brrip drrip\n"
            "                     (default: the preset's, lru)\n"
            "  --inclusion I      inclusive | victim (exclusive) | nine (non-inclusive)\n"
            "  --no-l2            no private L2 (every access looks up the LLC)\n"
            "  --workload SPEC    target: synthetic workload (see below)\n"
            "  --trace FILE       target: a trace recorded by 'llcprobe trace'\n"
            "  --rate R           target accesses per tick, 1e-9 to 1e9 (default 1)\n"
            "  --noise SPEC       add a background agent running SPEC (repeatable, up to %d)\n"
            "  --noise-rate R     each noise agent's accesses per tick, 1e-9 to 1e9\n"
            "                     (default 1)\n"
            "  --duration N       target accesses to simulate, 1 to 1e12 (default %llu for a\n"
            "                     workload, the whole trace for a trace)\n"
            "  --page-size 4K|2M  page size of the simulated OS (default 4K)\n"
            "  --seed S           seed of everything random, 0 to 2^64-1 (default 1)\n"
            "  --interval N       also record the per-set state every N target accesses,\n"
            "                     1 to 1e12\n"
            "  -o, --output FILE  JSON output; the CSV goes beside it (.csv)\n"
            "  -q, --quiet        no progress display\n"
            "  --list-workloads   print only the workload SPEC list below\n"
            "  -h, --help         this text\n\n"
            "SIGINT, SIGTERM or SIGHUP stops the run; nothing is written.\n\n"
            "exit status: 0 ok, 1 failed run, 2 bad usage or value, 128 + N when stopped\n"
            "by signal N.\n\n",
            MAX_NOISE, (unsigned long long)DEFAULT_DURATION);
    llc_sim_corun_usage(out);
    fprintf(out, "\n%s", llc_workload_help());
}

/* Ranges (stated in --help): a rate up to 1e9 accesses per tick; a run or
 * frame interval up to 1e12 accesses (hours of simulation; a signal stops
 * it earlier). */
#define SIM_RATE_MIN 1e-9
#define SIM_RATE_MAX 1e9
#define SIM_COUNT_MAX UINT64_C(1000000000000)

/* 0 = parsed, otherwise the exit status. -1 = --help printed. */
static enum llc_parse parse_args(int argc, char **argv, struct sim_opts *o)
{
    enum {
        O_WORKLOAD = 256,
        O_TRACE,
        O_NOISE,
        O_NRATE,
        O_RATE,
        O_DUR,
        O_PAGE,
        O_SEED,
        O_INTERVAL,
        O_LIST
    };
    static const struct option longopts[] = {
        LLC_SIM_CMD_LONGOPTS,
        {"workload", required_argument, 0, O_WORKLOAD},
        {"trace", required_argument, 0, O_TRACE},
        {"noise", required_argument, 0, O_NOISE},
        {"noise-rate", required_argument, 0, O_NRATE},
        {"rate", required_argument, 0, O_RATE},
        {"duration", required_argument, 0, O_DUR},
        {"page-size", required_argument, 0, O_PAGE},
        {"seed", required_argument, 0, O_SEED},
        {"interval", required_argument, 0, O_INTERVAL},
        {"list-workloads", no_argument, 0, O_LIST},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (struct sim_opts){.rate = 1, .noise_rate = 1, .seed = 1, .page_size = 4096};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case LLC_SIM_OPT_PRESET:
        case LLC_SIM_OPT_POLICY:
        case LLC_SIM_OPT_INCL:
        case LLC_SIM_OPT_NOL2:
            llc_sim_cmd_opt(c, optarg, &o->sim);
            break;
        case O_WORKLOAD:
            o->workload = optarg;
            break;
        case O_TRACE:
            o->trace = optarg;
            break;
        case O_NOISE:
            if (o->nnoise == MAX_NOISE)
                return llc_cli_usage("sim", "at most %d --noise agents", MAX_NOISE);
            o->noise[o->nnoise++] = optarg;
            break;
        case O_NRATE:
            rc = llc_opt_double("sim", "noise-rate", optarg, SIM_RATE_MIN, SIM_RATE_MAX,
                                &o->noise_rate);
            break;
        case O_RATE:
            rc = llc_opt_double("sim", "rate", optarg, SIM_RATE_MIN, SIM_RATE_MAX, &o->rate);
            break;
        case O_DUR:
            rc = llc_opt_u64("sim", "duration", optarg, 1, SIM_COUNT_MAX, &o->duration);
            o->duration_given = true;
            break;
        case O_PAGE: {
            uint64_t v;
            if (llc_parse_size(optarg, &v) < 0 || (v != 4096 && v != (2u << 20)))
                rc = llc_cli_usage("sim", "--page-size: '%s' is neither 4K nor 2M", optarg);
            o->page_size = (uint32_t)v;
            break;
        }
        case O_SEED:
            rc = llc_opt_u64("sim", "seed", optarg, 0, UINT64_MAX, &o->seed);
            break;
        case O_INTERVAL:
            rc = llc_opt_u64("sim", "interval", optarg, 1, SIM_COUNT_MAX, &o->interval);
            break;
        case O_LIST:
            fputs(llc_workload_help(), stdout);
            return LLC_PARSE_HELP;
        case 'o':
            o->out = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_PARSE_HELP;
        case ':':
            return llc_cli_usage("sim", "%s needs a value", argv[optind - 1]);
        default:
            return llc_cli_usage("sim", "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return llc_cli_usage("sim", "unexpected argument '%s'", argv[optind]);
    if (!o->sim.preset)
        return llc_cli_usage("sim", "--preset is required");
    if (!o->workload == !o->trace)
        return llc_cli_usage("sim", "give exactly one of --workload and --trace");
    if (!o->out)
        return llc_cli_usage("sim", "-o OUT.json is required");
    return LLC_PARSE_RUN;
}

bool llc_sim_cmd_opt(int c, const char *arg, struct llc_sim_cmd_opts *o)
{
    switch (c) {
    case LLC_SIM_OPT_PRESET:
        o->preset = arg;
        return true;
    case LLC_SIM_OPT_POLICY:
        o->policy = arg;
        return true;
    case LLC_SIM_OPT_INCL:
        o->inclusion = arg;
        return true;
    case LLC_SIM_OPT_NOL2:
        o->no_l2 = true;
        return true;
    default:
        return false;
    }
}

int llc_sim_cmd_config(const struct llc_sim_cmd_opts *o, uint32_t page_size, uint64_t seed,
                       unsigned agents, struct llc_sim_config *c)
{
    char err[LLC_ERRLEN];
    if (llc_sim_preset(o->preset, c, err, sizeof(err)) < 0)
        return llc_cli_fail("--preset", "%s", err);
    if (o->policy) {
        const int p = llc_sim_policy_parse(o->policy, err, sizeof(err));
        if (p < 0)
            return llc_cli_fail("--policy", "%s", err);
        c->llc_policy = (enum llc_sim_policy)p;
    }
    if (o->inclusion) {
        const char *name = strcmp(o->inclusion, "victim") == 0 ? "exclusive" : o->inclusion;
        const int i = llc_sim_inclusion_parse(name, err, sizeof(err));
        if (i < 0)
            return llc_cli_fail("--inclusion", "%s", err);
        c->inclusion = (enum llc_sim_inclusion)i;
    }
    if (o->no_l2) {
        c->l2_sets = 0;
        c->l2_ways = 0;
    }
    c->page_size = page_size;
    c->seed = seed;
    c->agents = agents;
    if (llc_sim_config_check(c, err, sizeof(err)) < 0)
        return llc_cli_fail("sim", "%s", err);
    return 0;
}

static int build_config(const struct sim_opts *o, struct llc_sim_config *c)
{
    return llc_sim_cmd_config(&o->sim, o->page_size, o->seed, 1 + o->nnoise, c);
}

/* Trace data records, for the progress bar of a whole-trace run. */
static int trace_records(const char *path, uint64_t *out)
{
    char err[LLC_ERRLEN];
    struct llc_trace_reader *r = NULL;
    if (llc_trace_reader_open(path, &r, err, sizeof(err)) < 0) {
        llc_cli_fail("sim", "%s", err);
        return LLC_EXIT_FAIL;
    }
    const struct llc_trace_info *info = llc_trace_reader_info(r);
    *out = info->n_load + info->n_store + info->n_modify;
    llc_trace_reader_close(r);
    return 0;
}

struct progress_ctx {
    struct llc_progress bar;
    uint64_t expected; /* target accesses the run should take */
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct progress_ctx *p = ctx;
    (void)total;
    if (p->expected)
        llc_progress_update(&p->bar, (double)done / (double)p->expected);
}

/* Fails before a long run rather than after it. */
static int check_writable(const char *path)
{
    char err[LLC_ERRLEN];
    struct llc_afile *f = NULL;
    if (llc_afile_open(path, &f, err, sizeof(err)) < 0) {
        llc_cli_fail("sim", "%s", err);
        return LLC_EXIT_FAIL;
    }
    llc_afile_abort(f);
    return 0;
}

void llc_sim_cmd_csv_path(const char *json, char *buf, size_t len)
{
    const size_t n = strlen(json);
    if (n > 5 && strcmp(json + n - 5, ".json") == 0)
        snprintf(buf, len, "%.*s.csv", (int)(n - 5), json);
    else
        snprintf(buf, len, "%s.csv", json);
}

static void print_summary(struct llc_simrun *r, const char *preset, double wall)
{
    struct llc_sim *sim = llc_simrun_sim(r);
    const struct llc_sim_config *c = llc_sim_config_of(sim);
    const uint32_t nsets = llc_sim_sets(sim);
    const uint64_t llc_lines = (uint64_t)nsets * c->llc.ways;
    char b1[32], b2[32];
    printf("cache: %s, %s %u-way LLC (%u slices x %u sets), %s, %s", preset,
           llc_format_size(llc_sim_geometry_bytes(&c->llc), b1, sizeof(b1)), c->llc.ways,
           c->llc.slices, c->llc.sets_per_slice, llc_sim_policy_name(c->llc_policy),
           llc_sim_inclusion_name(c->inclusion));
    if (c->l2_sets)
        printf(
            ", L2 %s %u-way\n",
            llc_format_size((uint64_t)c->l2_sets * c->l2_ways * c->llc.line_size, b2, sizeof(b2)),
            c->l2_ways);
    else
        printf(", no L2\n");
    printf("%-10s %-7s %12s %12s %8s %10s %10s %6s %20s\n", "agent", "role", "accesses",
           "llc-lookups", "miss", "occ-lines", "occ-bytes", "%LLC", "per-set mean/sd/min/max");
    struct llc_sim_set_stats *s = malloc(nsets * sizeof(*s));
    for (unsigned i = 0; s && i < llc_simrun_agents(r); i++) {
        struct llc_sim_agent_stats st;
        struct llc_simrun_agent_state as;
        llc_sim_agent_stats(sim, (int)i, &st);
        llc_simrun_agent_state(r, i, &as);
        llc_sim_set_stats(sim, (int)i, s, nsets);
        double sum = 0, sq = 0;
        uint32_t lo = UINT32_MAX, hi = 0;
        for (uint32_t k = 0; k < nsets; k++) {
            sum += s[k].occupancy;
            sq += (double)s[k].occupancy * s[k].occupancy;
            lo = s[k].occupancy < lo ? s[k].occupancy : lo;
            hi = s[k].occupancy > hi ? s[k].occupancy : hi;
        }
        const double mean = sum / nsets, var = sq / nsets - mean * mean;
        const uint64_t lookups = st.llc_hits + st.llc_misses;
        char occ[48];
        snprintf(occ, sizeof(occ), "%.2f/%.2f/%u/%u", mean, sqrt(var > 0 ? var : 0), lo, hi);
        printf("%-10s %-7s %12llu %12llu %8.4f %10llu %10s %5.1f%% %20s\n",
               llc_simrun_agent_name(r, i), llc_simrun_role_name(as.role),
               (unsigned long long)as.accesses, (unsigned long long)lookups,
               lookups ? (double)st.llc_misses / lookups : 0.0,
               (unsigned long long)st.llc_occupancy,
               llc_format_size(st.llc_occupancy * c->llc.line_size, b1, sizeof(b1)),
               100.0 * st.llc_occupancy / llc_lines, occ);
    }
    free(s);
    const uint64_t total = llc_simrun_total(r);
    printf("simulated %llu accesses in %.3f s: %.3g accesses/s\n", (unsigned long long)total, wall,
           wall > 0 ? total / wall : 0.0);
}

int llc_cmd_sim(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--corun") == 0)
            return llc_cmd_sim_corun(argc, argv);
    struct sim_opts o;
    const enum llc_parse p = parse_args(argc, argv, &o);
    if (p != LLC_PARSE_RUN)
        return llc_parse_exit(p);
    char err[LLC_ERRLEN];
    if (o.workload && llc_workload_check(o.workload, err, sizeof(err)) < 0)
        return llc_cli_fail("--workload", "%s", err);
    for (unsigned i = 0; i < o.nnoise; i++)
        if (llc_workload_check(o.noise[i], err, sizeof(err)) < 0)
            return llc_cli_fail("--noise", "%s", err);
    struct llc_sim_config cfg;
    int rc = build_config(&o, &cfg);
    if (rc)
        return rc;
    /* The run bounds a trace by its trailer's counts, read by seeking to the
     * end: a pipe or FIFO has none, and would be read twice. */
    struct stat st;
    if (o.trace && stat(o.trace, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return llc_cli_fail("sim",
                            "%s: not a regular file (a pipe or FIFO): the trace's trailer "
                            "is read first, which needs a file that can be seeked; save it to a "
                            "file",
                            o.trace);
    uint64_t expected = o.duration_given ? o.duration : o.workload ? DEFAULT_DURATION : 0;
    const uint64_t duration = expected;
    if (o.trace && !o.duration_given && (rc = trace_records(o.trace, &expected)) != 0)
        return rc;
    char csv[4096];
    llc_sim_cmd_csv_path(o.out, csv, sizeof(csv));
    if ((rc = check_writable(o.out)) != 0 || (rc = check_writable(csv)) != 0)
        return rc;

    struct llc_simrun_agent agents[1 + MAX_NOISE];
    agents[0] = (struct llc_simrun_agent){
        .name = "target",
        .role = LLC_SIMRUN_TARGET,
        .source = o.workload ? LLC_SIMRUN_WORKLOAD : LLC_SIMRUN_TRACE,
        .spec = o.workload,
        .trace_path = o.trace,
        .rate = o.rate,
    };
    char names[MAX_NOISE][16];
    for (unsigned i = 0; i < o.nnoise; i++) {
        snprintf(names[i], sizeof(names[i]), "noise%u", i);
        agents[1 + i] = (struct llc_simrun_agent){
            .name = names[i],
            .role = LLC_SIMRUN_NOISE,
            .source = LLC_SIMRUN_WORKLOAD,
            .spec = o.noise[i],
            .rate = o.noise_rate,
        };
    }
    cfg.stop = &llc_stop_signal; /* a signal ends the run (handler installed below) */
    struct llc_simrun *run = NULL;
    rc = llc_simrun_create(&cfg, agents, 1 + o.nnoise, &run, err, sizeof(err));
    if (rc < 0) {
        llc_cli_fail("sim", "%s", err);
        return LLC_EXIT_FAIL;
    }
    struct progress_ctx progress = {.expected = expected};
    llc_progress_begin(&progress.bar, "sim", o.quiet);
    const struct llc_simrun_limits lim = {
        .duration = duration,
        .interval = o.interval,
        .progress = on_progress,
        .progress_ctx = &progress,
    };
    const double t0 = llc_now();
    struct llc_stop_saved saved_signals;
    llc_stop_install(&saved_signals);
    const int status = llc_simrun_run(run, &lim, err, sizeof(err));
    llc_stop_restore(&saved_signals);
    const double wall = llc_now() - t0;
    llc_progress_end(&progress.bar);
    if (status == -EINTR) {
        fprintf(stderr,
                "llcprobe: sim: stopped by signal %d after %llu accesses; nothing was "
                "written\n",
                (int)llc_stop_signal, (unsigned long long)llc_simrun_counted(run));
        rc = llc_stop_exit_code();
        goto out;
    }
    if (status < 0) {
        llc_cli_fail("sim", "%s", err);
        rc = LLC_EXIT_FAIL;
        goto out;
    }
    const struct llc_simrun_report_meta meta = {
        .preset = o.sim.preset,
        .duration = duration,
        .interval = o.interval,
        .ended_early = status == 1 && duration != 0,
    };
    if (llc_simrun_write_json(run, &meta, o.out, err, sizeof(err)) < 0 ||
        llc_simrun_write_csv(run, csv, err, sizeof(err)) < 0) {
        llc_cli_fail("sim", "%s", err);
        rc = LLC_EXIT_FAIL;
        goto out;
    }
    print_summary(run, o.sim.preset, wall);
    if (meta.ended_early)
        printf("note: the target's trace ended after %llu of %llu accesses\n",
               (unsigned long long)llc_simrun_counted(run), (unsigned long long)duration);
    printf("wrote %s and %s\n", o.out, csv);
    rc = LLC_EXIT_OK;
out:
    llc_simrun_destroy(run);
    return rc;
}
