/* llcprobe sim --corun: the timed co-run of 2 to 8 programs (traces or
 * workloads), each on its own core and clock, and each alone. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/map_opts.h"
#include "cmd/sim_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "llcprobe/workload.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"

#define CMD "sim"
#define MAX_T LLC_CORUN_MAX_AGENTS
#define DEFAULT_BUDGET 10000000ULL

void llc_sim_corun_usage(FILE *out)
{
    fprintf(out,
            "co-run mode: llcprobe sim --corun --preset NAME -o OUT.json TARGET TARGET...\n"
            "                    [--policy P] [--inclusion I] [--no-l2] [--seed S]\n"
            "                    [--cpi LIST] [--mlp LIST] [--ipa LIST] [--instructions LIST]\n"
            "                    [--latency L2,LLC,MEM] [--window N] [--restart] [--no-solo]\n"
            "                    [--quiet]\n\n"
            "Runs 2 to %d TARGETs (a trace file recorded by 'llcprobe trace', or else a\n"
            "workload SPEC) together, each on its own core (private L2, shared LLC) with\n"
            "its own clock in cycles: an access adds (instructions since the previous one)\n"
            "x CPI + latency of the level that served it / MLP, and the agent with the\n"
            "earliest clock always goes next. Then runs each alone. Writes per program and\n"
            "per window of instructions: cycles, LLC accesses, misses, occupancy, co-run\n"
            "and solo, and slowdown = co-run cycles / solo cycles (OUT.json, format\n"
            "llcprobe-corun v1, and OUT.csv beside it). A LIST is one value for every\n"
            "target or one per target, comma separated.\n\n"
            "  --corun              co-run mode (the targets are the arguments)\n"
            "  --cpi LIST           base cycles per instruction, (0, 100] (default %g)\n"
            "  --mlp LIST           memory-level parallelism, [1, 64] (default %g)\n"
            "  --ipa LIST           instructions per access of workloads, (0, 1e6]\n"
            "                       (default %g; traces count their instruction records)\n"
            "  --instructions LIST  instructions each target runs, 1..1e15 (default %llu for\n"
            "                       a workload, the whole trace for a trace)\n"
            "  --latency L2,LLC,MEM cycles of the level serving an access, each (0, 1e5]\n"
            "                       (default %g,%g,%g)\n"
            "  --window N           instructions per window, 1..1e15 (default %llu)\n"
            "  --restart            a target that ends starts again, until every target has\n"
            "                       ended once (each keeps loading the cache; figures are\n"
            "                       each target's first run; the steady co-schedule that\n"
            "                       'llcprobe study' predicts)\n"
            "  --no-solo            skip the solo runs (no slowdown)\n",
            MAX_T, LLC_CORUN_DEFAULT_CPI, LLC_CORUN_DEFAULT_MLP, LLC_CORUN_DEFAULT_IPA,
            (unsigned long long)DEFAULT_BUDGET, LLC_CORUN_DEFAULT_LAT_L2, LLC_CORUN_DEFAULT_LAT_LLC,
            LLC_CORUN_DEFAULT_LAT_MEM, (unsigned long long)LLC_CORUN_DEFAULT_WINDOW);
}

struct corun_opts {
    struct llc_sim_cmd_opts sim;
    const char *out;
    const char *cpi, *mlp, *ipa, *budget, *latency;
    uint64_t window, seed;
    bool no_solo, quiet, restart;
    const char *targets[MAX_T];
    unsigned n;
};

/* A comma list of doubles in [lo, hi] (lo exclusive if open): one value,
 * or exactly n. */
static int parse_list(const char *opt, const char *arg, unsigned n, double lo, bool open, double hi,
                      double *out)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", arg);
    unsigned k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (k == n)
            return llc_cli_usage(CMD, "%s: more than %u values in '%s'", opt, n, arg);
        if (llc_parse_double(tok, &v) < 0 || v < lo || (open && v == lo) || v > hi)
            return llc_cli_usage(CMD, "%s: '%s' is not a number in %s%g, %g]", opt, tok,
                                 open ? "(" : "[", lo, hi);
        out[k++] = v;
    }
    if (k == 0)
        return llc_cli_usage(CMD, "%s: no value", opt);
    if (k != 1 && k != n)
        return llc_cli_usage(CMD, "%s: give one value or %u, not %u", opt, n, k);
    for (; k < n; k++)
        out[k] = out[0];
    return 0;
}

static enum llc_parse parse_args(int argc, char **argv, struct corun_opts *o)
{
    enum {
        O_SEED = 256,
        O_CPI,
        O_MLP,
        O_IPA,
        O_INSTR,
        O_LAT,
        O_WINDOW,
        O_NOSOLO,
        O_CORUN,
        O_RESTART
    };
    static const struct option longopts[] = {
        {"corun", no_argument, 0, O_CORUN},
        LLC_SIM_CMD_LONGOPTS,
        {"seed", required_argument, 0, O_SEED},
        {"cpi", required_argument, 0, O_CPI},
        {"mlp", required_argument, 0, O_MLP},
        {"ipa", required_argument, 0, O_IPA},
        {"instructions", required_argument, 0, O_INSTR},
        {"latency", required_argument, 0, O_LAT},
        {"window", required_argument, 0, O_WINDOW},
        {"no-solo", no_argument, 0, O_NOSOLO},
        {"restart", no_argument, 0, O_RESTART},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (struct corun_opts){.seed = 1, .window = LLC_CORUN_DEFAULT_WINDOW};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_CORUN:
            break;
        case LLC_SIM_OPT_PRESET:
        case LLC_SIM_OPT_POLICY:
        case LLC_SIM_OPT_INCL:
        case LLC_SIM_OPT_NOL2:
            llc_sim_cmd_opt(c, optarg, &o->sim);
            break;
        case O_SEED:
            rc = llc_opt_u64(CMD, "seed", optarg, 0, UINT64_MAX, &o->seed);
            break;
        case O_CPI:
            o->cpi = optarg;
            break;
        case O_MLP:
            o->mlp = optarg;
            break;
        case O_IPA:
            o->ipa = optarg;
            break;
        case O_INSTR:
            o->budget = optarg;
            break;
        case O_LAT:
            o->latency = optarg;
            break;
        case O_WINDOW:
            rc = llc_opt_u64(CMD, "window", optarg, 1, 1000000000000000ULL, &o->window);
            break;
        case O_NOSOLO:
            o->no_solo = true;
            break;
        case O_RESTART:
            o->restart = true;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            llc_sim_corun_usage(stdout);
            return LLC_PARSE_HELP;
        case ':':
            return llc_cli_usage(CMD, "%s needs a value", argv[optind - 1]);
        default:
            return llc_cli_usage(CMD, "unknown option '%s' in co-run mode", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    for (; optind < argc; optind++) {
        if (o->n == MAX_T)
            return llc_cli_usage(CMD, "--corun takes 2 to %d targets", MAX_T);
        o->targets[o->n++] = argv[optind];
    }
    if (o->n < 2)
        return llc_cli_usage(CMD, "--corun takes 2 to %d targets, got %u", MAX_T, o->n);
    if (!o->sim.preset)
        return llc_cli_usage(CMD, "--preset is required");
    if (!o->out)
        return llc_cli_usage(CMD, "-o OUT.json is required");
    return LLC_PARSE_RUN;
}

/* Fills agents from the targets and the per-target lists. */
static int make_agents(const struct corun_opts *o, struct llc_corun_agent *ag, char (*names)[64])
{
    double cpi[MAX_T], mlp[MAX_T], ipa[MAX_T], budget[MAX_T];
    int rc = 0;
    for (unsigned i = 0; i < o->n; i++) {
        cpi[i] = LLC_CORUN_DEFAULT_CPI;
        mlp[i] = LLC_CORUN_DEFAULT_MLP;
        ipa[i] = LLC_CORUN_DEFAULT_IPA;
        budget[i] = 0;
    }
    if ((o->cpi && (rc = parse_list("--cpi", o->cpi, o->n, 0, true, 100, cpi))) ||
        (o->mlp && (rc = parse_list("--mlp", o->mlp, o->n, 1, false, 64, mlp))) ||
        (o->ipa && (rc = parse_list("--ipa", o->ipa, o->n, 0, true, 1e6, ipa))) ||
        (o->budget && (rc = parse_list("--instructions", o->budget, o->n, 1, false, 1e15, budget))))
        return rc;
    for (unsigned i = 0; i < o->n; i++) {
        const char *t = o->targets[i];
        char err[LLC_ERRLEN];
        ag[i] = (struct llc_corun_agent){
            .cpi = cpi[i], .mlp = mlp[i], .ipa = ipa[i], .instructions = (uint64_t)budget[i]};
        if (access(t, R_OK) == 0) {
            ag[i].source = LLC_CORUN_TRACE;
            ag[i].trace_path = t;
            const char *slash = strrchr(t, '/');
            snprintf(names[i], 64, "%u:%s", i, slash ? slash + 1 : t);
        } else if (llc_workload_check(t, err, sizeof(err)) == 0) {
            ag[i].source = LLC_CORUN_WORKLOAD;
            ag[i].spec = t;
            if (!ag[i].instructions)
                ag[i].instructions = DEFAULT_BUDGET;
            snprintf(names[i], 64, "%u:%.*s", i, (int)strcspn(t, ":"), t);
        } else {
            return llc_cli_fail(CMD,
                                "target '%s': neither a readable trace file nor a "
                                "workload (%s)",
                                t, err);
        }
        ag[i].name = names[i];
    }
    return 0;
}

static int parse_latency(const char *arg, struct llc_corun_params *p)
{
    double lat[3];
    int rc = parse_list("--latency", arg, 3, 0, true, 1e5, lat);
    if (rc)
        return rc;
    if (!strchr(arg, ','))
        return llc_cli_usage(CMD, "--latency: give three values L2,LLC,MEM");
    p->lat_l2 = lat[0];
    p->lat_llc = lat[1];
    p->lat_mem = lat[2];
    return 0;
}

struct progress_ctx {
    struct llc_progress bar;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct progress_ctx *p = ctx;
    if (total)
        llc_progress_update(&p->bar, (double)done / (double)total);
}

static void print_summary(const struct llc_corun_result *r)
{
    printf("%-24s %14s %10s %8s %8s %10s %9s\n", "program", "instructions", "cpi", "llc-mr",
           "solo-mr", "occ-lines", "slowdown");
    for (unsigned i = 0; i < r->n; i++) {
        const struct llc_corun_series *c = &r->corun[i], *s = &r->solo[i];
        const double mr = c->llc_accesses ? (double)c->llc_misses / c->llc_accesses : 0;
        const double smr = s->llc_accesses ? (double)s->llc_misses / s->llc_accesses : 0;
        printf("%-24s %14llu %10.3f %8.4f ", r->name[i], (unsigned long long)c->instructions,
               c->instructions ? c->cycles / c->instructions : 0.0, mr);
        if (r->has_solo)
            printf("%8.4f %10llu %9.4f\n", smr, (unsigned long long)c->occupancy_end,
                   s->cycles > 0 ? c->cycles / s->cycles : 0.0);
        else
            printf("%8s %10llu %9s\n", "-", (unsigned long long)c->occupancy_end, "-");
    }
    printf("simulated %llu co-run accesses in %.3f s (%.3f s CPU): %.3g accesses/s\n",
           (unsigned long long)r->total_accesses, r->wall_corun_s, r->cpu_corun_s,
           r->wall_corun_s > 0 ? r->total_accesses / r->wall_corun_s : 0.0);
}

int llc_cmd_sim_corun(int argc, char **argv)
{
    struct corun_opts o;
    const enum llc_parse parsed = parse_args(argc, argv, &o);
    if (parsed != LLC_PARSE_RUN)
        return llc_parse_exit(parsed);
    int rc = 0;
    struct llc_corun_params p;
    llc_corun_params_default(&p);
    p.window = o.window;
    p.solo = !o.no_solo;
    p.restart = o.restart;
    if (o.latency && (rc = parse_latency(o.latency, &p)))
        return rc;
    struct llc_corun_agent ag[MAX_T];
    char names[MAX_T][64];
    if ((rc = make_agents(&o, ag, names)))
        return rc;
    struct llc_sim_config cfg;
    if ((rc = llc_sim_cmd_config(&o.sim, 4096, o.seed, o.n, &cfg)))
        return rc;
    char csv[4096], err[LLC_ERRLEN];
    llc_sim_cmd_csv_path(o.out, csv, sizeof(csv));
    /* Fail before a long run rather than after it. */
    const char *outs[2] = {o.out, csv};
    for (unsigned i = 0; i < 2; i++) {
        struct llc_afile *f = NULL;
        if (llc_afile_open(outs[i], &f, err, sizeof(err)) < 0)
            return llc_cli_fail(CMD, "%s", err);
        llc_afile_abort(f);
    }
    volatile sig_atomic_t *stop = llc_map_cmd_signals();
    p.stop = stop;
    struct progress_ctx progress;
    llc_progress_begin(&progress.bar, "sim --corun", o.quiet);
    p.progress = on_progress;
    p.progress_ctx = &progress;
    struct llc_corun_result *r = NULL;
    rc = llc_corun_run(&cfg, ag, o.n, &p, &r, err, sizeof(err));
    llc_progress_end(&progress.bar);
    if (rc < 0 && llc_stop_requested()) {
        fprintf(stderr, "llcprobe: %s: stopped by signal %d; nothing was written\n", CMD,
                (int)llc_stop_signal);
        return llc_stop_exit_code();
    }
    if (rc < 0)
        return llc_cli_fail(CMD, "%s", err);
    const struct llc_corun_report_meta meta = {
        .preset = o.sim.preset, .targets = o.targets, .agents = ag};
    if (llc_corun_write_json(r, &cfg, &p, &meta, o.out, err, sizeof(err)) < 0 ||
        llc_corun_write_csv(r, csv, err, sizeof(err)) < 0) {
        llc_corun_free(r);
        return llc_cli_fail(CMD, "%s", err);
    }
    print_summary(r);
    printf("wrote %s and %s\n", o.out, csv);
    llc_corun_free(r);
    return LLC_EXIT_OK;
}
