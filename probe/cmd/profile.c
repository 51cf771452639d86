/* llcprobe profile: one program, profiled alone, into an llcprobe-profile
 * v1 file (docs/FORMATS-profile.md): identity, machine, ScarPhase phase
 * trace, per-phase reuse histograms (the `mrc --phases` machinery), and
 * per-phase solo figures from the timed simulator (sim) or what a live run
 * can measure. */
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

#define DEFAULT_INSTRUCTIONS 10000000ULL
#define DEFAULT_SAMPLES 20000
#define DEFAULT_FREQ 3e9

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe profile [-o PREFIX] --backend sim --preset P (--workload SPEC | --trace FILE)\n"
        "       llcprobe profile [-o PREFIX] -- PROGRAM [ARGS...]\n"
        "         [--rate R | --samples N] [--seed S] [--window N] [--name NAME] [--no-probe]\n"
        "         [--quiet]\n"
        "         [--strata N | --no-strata]\n"
        "         [--policy P] [--inclusion I] [--no-l2] [--instructions N] [--ipa X]\n"
        "         [--cpi X] [--mlp X] [--latency L2,LLC,MEM] [--freq HZ]\n\n"
        "Profiles one program alone into PREFIX.profile.json (format llcprobe-profile\n"
        "v1, the input of 'llcprobe predict') and PREFIX.profile.csv (window, phase,\n"
        "instructions, references): the program (command, binary or trace and its\n"
        "SHA-256), the machine (preset, or this host's 'info' summary), the ScarPhase\n"
        "phase of every window, each phase's reuse-distance histogram (as 'mrc --phases'\n"
        "samples them), and per phase references per instruction and the solo figures.\n\n"
        "With --backend sim the solo figures come from the simulator's timed mode (as\n"
        "'sim --corun' runs each program alone): CPI, LLC misses per reference, LLC\n"
        "accesses per reference, mean occupancy, and cpi0 = CPI - (LLC misses per\n"
        "instruction) x (MEM - LLC) / MLP. A workload is first written as a synthetic\n"
        "trace (one code region per workload phase) for the reuse and phase samplers.\n"
        "Live (-- PROGRAM): traced under valgrind lackey (about 4000x slower: runs of\n"
        "tens of milliseconds), then run natively once for its CPU time; CPI = CPU\n"
        "time x --freq / instructions for every phase, cpi0 = CPI, miss ratio and\n"
        "occupancy null (no PMU counts them here).\n\n"
        "With --backend sim, per phase the stress probe co-runs with the target's\n"
        "windows of that phase (the target paced at its timed solo rate): a map of\n"
        "--probe-map-sets sets until they saw --probe-events foreign insertions each on\n"
        "average, fit's Gaussian-25 selection and noise-corrected CV of that map, then\n"
        "the 25 sets read at 3 probe rates spanning 10x in the linear regime (probe miss\n"
        "ratio <= 0.1; an entry's note says when no rate is): Phi_hat(tau) per rate, the\n"
        "anchor and set-skew input of 'predict'. Live runs record probe.status\n"
        "\"missing\" and why ('predict' then assumes uniform set usage).\n\n"
        "With --backend sim, each phase's LLC sets are also grouped by how often the\n"
        "phase references each of their lines (up to --strata groups, cut where that\n"
        "differs most; none when its noise-corrected CV is below %g), and each group\n"
        "gets its own reuse histogram (phases[].strata): 'predict' then solves the\n"
        "cache per group of sets.\n\n"
        "  -o, --output PREFIX  output prefix (default: the program's name)\n"
        "  --backend B          sim (with --preset), or live with -- PROGRAM (default)\n"
        "  --preset P           simulator preset: intel8 amd32\n"
        "  --policy P           LLC replacement: lru random plru srrip brrip drrip\n"
        "  --inclusion I        inclusive | victim | nine\n"
        "  --no-l2              no private L2\n"
        "  --workload SPEC      a synthetic workload ('llcprobe sim --list-workloads')\n"
        "  --trace FILE         a trace recorded by 'llcprobe trace' (or the runtime)\n"
        "  --instructions N     instructions of a workload, 1..1e12 (default %llu)\n"
        "  --ipa X              instructions per access of a workload, (0, 1e6] (default %g)\n"
        "  --cpi X              base cycles per instruction, (0, 100] (default %g)\n"
        "  --mlp X              memory-level parallelism, [1, 64] (default %g)\n"
        "  --latency L2,LLC,MEM cycles per level, each (0, 1e5] (default %g,%g,%g)\n"
        "  --freq HZ            core clock recorded in the timing model and used for\n"
        "                       live CPI, [1e6, 1e11] (default %g)\n"
        "  --rate R             reuse sampling rate, (0, 1] (default: chosen for --samples)\n"
        "  --samples N          without --rate: aim at N reuse samples in all, 100..1e8\n"
        "                       (default %d; the rate is N over the trace's references,\n"
        "                       at most 1)\n"
        "  --seed S             seed of the sampler and the simulator (default 1)\n"
        "  --window N           window length in instructions (references for traces\n"
        "                       without instruction records), 1000..1e12 (default %d)\n"
        "  --name NAME          the program's label in predictions\n"
        "  --no-probe           skip the probe readings (recorded as missing)\n"
        "  --strata N           per-stratum reuse: at most N groups of sets per phase,\n"
        "                       2..%d (default %d; sim backend)\n"
        "  --no-strata          no per-stratum reuse\n"
        "  --probe-rates R,R,R  probe accesses per set per simulated second, 2..8 rates\n"
        "                       each [10, 1e9] (default: 3 spanning 10x, the lowest with\n"
        "                       the hottest selected set's miss ratio near 0.08)\n"
        "  --probe-map-sets N   sets in each phase's map, 0 = all, 25..1e7 (default %u)\n"
        "  --probe-events E     mean foreign insertions per mapped set at which a phase's\n"
        "                       map stops, [1, 1e6] (default %g)\n"
        "  -q, --quiet          no progress line\n"
        "  -h, --help           this text\n\n"
        "exit status: 0 ok, 1 failure (bad trace or workload, failed run), 2 usage.\n",
        LLC_PROFILE_STRATA_MIN_CV, (unsigned long long)DEFAULT_INSTRUCTIONS, LLC_CORUN_DEFAULT_IPA,
        LLC_CORUN_DEFAULT_CPI, LLC_CORUN_DEFAULT_MLP, LLC_CORUN_DEFAULT_LAT_L2,
        LLC_CORUN_DEFAULT_LAT_LLC, LLC_CORUN_DEFAULT_LAT_MEM, DEFAULT_FREQ, DEFAULT_SAMPLES,
        LLC_REUSEFILE_WINDOW_DEFAULT, LLC_PROFILE_MAX_STRATA, LLC_PROFILE_STRATA_DEFAULT,
        LLC_PROFILE_PROBE_MAP_SETS, LLC_PROFILE_PROBE_MAP_EVENTS);
}

static int parse_latency(const char *arg, double lat[3])
{
    char extra;
    if (sscanf(arg, "%lf,%lf,%lf%c", &lat[0], &lat[1], &lat[2], &extra) != 3)
        return llc_cli_usage(CMD, "--latency: '%s' is not L2,LLC,MEM", arg);
    for (unsigned i = 0; i < 3; i++)
        if (!(lat[i] > 0) || lat[i] > 1e5)
            return llc_cli_usage(CMD, "--latency: %g is not in (0, 1e5]", lat[i]);
    return 0;
}

static int parse_rates(const char *arg, struct llc_profile_probe_config *pc)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", arg);
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == LLC_PROFILE_MAX_RATES)
            return llc_cli_usage(CMD, "--probe-rates: more than %d rates", LLC_PROFILE_MAX_RATES);
        const int rc = llc_opt_double(CMD, "probe-rates", w, 10, 1e9, &pc->rates[n++]);
        if (rc)
            return rc;
    }
    if (n < 2)
        return llc_cli_usage(CMD, "--probe-rates: '%s' is not 2..%d rates", arg,
                             LLC_PROFILE_MAX_RATES);
    pc->n_rates = n;
    return 0;
}

static enum llc_parse parse_args(int argc, char **argv, struct prof_opts *o)
{
    enum {
        O_BACKEND = 256,
        O_WORKLOAD,
        O_TRACE,
        O_INSTR,
        O_IPA,
        O_CPI,
        O_MLP,
        O_LAT,
        O_FREQ,
        O_RATE,
        O_SAMPLES,
        O_SEED,
        O_WINDOW,
        O_NAME,
        O_NOPROBE,
        O_STRATA,
        O_NOSTRATA,
        O_PRATES,
        O_PSETS,
        O_PEVENTS
    };
    static const struct option longopts[] = {
        {"backend", required_argument, 0, O_BACKEND},
        LLC_SIM_CMD_LONGOPTS,
        {"workload", required_argument, 0, O_WORKLOAD},
        {"trace", required_argument, 0, O_TRACE},
        {"instructions", required_argument, 0, O_INSTR},
        {"ipa", required_argument, 0, O_IPA},
        {"cpi", required_argument, 0, O_CPI},
        {"mlp", required_argument, 0, O_MLP},
        {"latency", required_argument, 0, O_LAT},
        {"freq", required_argument, 0, O_FREQ},
        {"rate", required_argument, 0, O_RATE},
        {"samples", required_argument, 0, O_SAMPLES},
        {"seed", required_argument, 0, O_SEED},
        {"window", required_argument, 0, O_WINDOW},
        {"name", required_argument, 0, O_NAME},
        {"no-probe", no_argument, 0, O_NOPROBE},
        {"strata", required_argument, 0, O_STRATA},
        {"no-strata", no_argument, 0, O_NOSTRATA},
        {"probe-rates", required_argument, 0, O_PRATES},
        {"probe-map-sets", required_argument, 0, O_PSETS},
        {"probe-events", required_argument, 0, O_PEVENTS},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (struct prof_opts){
        .instructions = DEFAULT_INSTRUCTIONS,
        .seed = 1,
        .strata = LLC_PROFILE_STRATA_DEFAULT,
        .window = LLC_REUSEFILE_WINDOW_DEFAULT,
        .ipa = LLC_CORUN_DEFAULT_IPA,
        .cpi = LLC_CORUN_DEFAULT_CPI,
        .mlp = LLC_CORUN_DEFAULT_MLP,
        .freq = DEFAULT_FREQ,
        .samples = DEFAULT_SAMPLES,
        .lat = {LLC_CORUN_DEFAULT_LAT_L2, LLC_CORUN_DEFAULT_LAT_LLC, LLC_CORUN_DEFAULT_LAT_MEM}};
    llc_profile_probe_config_default(&o->probe);
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    uint64_t u64;
    while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_BACKEND:
            o->backend = optarg;
            break;
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
        case O_INSTR:
            rc = llc_opt_u64(CMD, "instructions", optarg, 1, 1000000000000ULL, &o->instructions);
            break;
        case O_IPA:
            rc = llc_opt_double(CMD, "ipa", optarg, 1e-9, 1e6, &o->ipa);
            break;
        case O_CPI:
            rc = llc_opt_double(CMD, "cpi", optarg, 1e-9, 100, &o->cpi);
            break;
        case O_MLP:
            rc = llc_opt_double(CMD, "mlp", optarg, 1, 64, &o->mlp);
            break;
        case O_LAT:
            rc = parse_latency(optarg, o->lat);
            break;
        case O_FREQ:
            rc = llc_opt_double(CMD, "freq", optarg, 1e6, 1e11, &o->freq);
            break;
        case O_RATE:
            rc = llc_opt_double(CMD, "rate", optarg, 1e-9, 1, &o->rate);
            break;
        case O_SAMPLES:
            rc = llc_opt_u64(CMD, "samples", optarg, 100, 100000000, &o->samples);
            break;
        case O_SEED:
            rc = llc_opt_u64(CMD, "seed", optarg, 0, ((uint64_t)1 << 63) - 1, &o->seed);
            break;
        case O_WINDOW:
            rc = llc_opt_u64(CMD, "window", optarg, 1000, 1000000000000ULL, &o->window);
            break;
        case O_NAME:
            o->name = optarg;
            break;
        case O_NOPROBE:
            o->no_probe = true;
            break;
        case O_STRATA:
            rc = llc_opt_u64(CMD, "strata", optarg, 2, LLC_PROFILE_MAX_STRATA, &o->strata);
            break;
        case O_NOSTRATA:
            o->strata = 0;
            break;
        case O_PRATES:
            rc = parse_rates(optarg, &o->probe);
            break;
        case O_PSETS:
            rc = llc_opt_u64(CMD, "probe-map-sets", optarg, 0, 10000000, &u64);
            if (rc == 0 && u64 && u64 < 25)
                rc = llc_cli_usage(CMD, "--probe-map-sets: %llu is neither 0 nor 25..1e7",
                                   (unsigned long long)u64);
            o->probe.map_sets = (uint32_t)u64;
            break;
        case O_PEVENTS:
            rc = llc_opt_double(CMD, "probe-events", optarg, 1, 1e6, &o->probe.map_events);
            break;
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
            return llc_cli_usage(CMD, "%s needs a value", argv[optind - 1]);
        default:
            return llc_cli_usage(CMD, "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        o->argv = &argv[optind];
    const bool sim = o->backend && strcmp(o->backend, "sim") == 0;
    if (o->backend && !sim && strcmp(o->backend, "live") != 0)
        return llc_cli_usage(CMD, "--backend: '%s' is neither sim nor live", o->backend);
    if (sim) {
        if (!o->sim.preset)
            return llc_cli_usage(CMD, "--backend sim needs --preset");
        if (!o->workload == !o->trace)
            return llc_cli_usage(CMD, "--backend sim takes exactly one of --workload and --trace");
        if (o->argv)
            return llc_cli_usage(CMD,
                                 "--backend sim profiles a workload or a trace, not a program");
    } else {
        if (o->sim.preset || o->workload)
            return llc_cli_usage(CMD, "--preset and --workload go with --backend sim");
        if (o->trace)
            return llc_cli_usage(CMD, "a trace alone has no timing: give --backend sim --preset P "
                                      "to time it in the simulator, or profile the program live");
        if (!o->argv)
            return llc_cli_usage(CMD, "give --backend sim --preset P (--workload SPEC | --trace "
                                      "FILE) or -- PROGRAM [ARGS...]");
    }
    return LLC_PARSE_RUN;
}

static void print_summary(const struct llc_profile *p, const char *path)
{
    printf("%s: %zu windows of %llu %s, %zu phases\n", p->program.name, p->windows.count,
           (unsigned long long)p->windows.length, p->windows.unit, p->n_phases);
    printf("%6s %8s %14s %10s %8s %10s %10s %10s\n", "phase", "windows", "instructions",
           "refs/instr", "samples", "cpi", "llc-mr", "occ-lines");
    for (size_t j = 0; j < p->n_phases; j++) {
        const struct llc_profile_phase *ph = &p->phases[j];
        printf("%6d %8llu %14.0f %10.4f %8.0f %10.4f %10.4g %10.0f\n", ph->id,
               (unsigned long long)ph->windows, ph->instructions, ph->refs_per_instruction,
               ph->samples, ph->solo.cpi, ph->solo.llc_miss_ratio, ph->solo.occupancy_lines);
    }
    printf("probe: %s%s%s\n", p->probe.ok ? "ok" : "missing", p->probe.reason ? ": " : "",
           p->probe.reason ? p->probe.reason : "");
    for (size_t i = 0; i < p->probe.n_phases; i++) {
        const struct llc_profile_probe_phase *e = &p->probe.per_phase[i];
        printf("  phase %d: cv %.3f, phi_hat", e->phase, e->cv);
        for (size_t r = 0; r < e->n_rates; r++)
            printf(" %.4g@%.3g/s (q_max %.3f)", e->phi_hat[r], e->rates[r], e->q_max[r]);
        printf("%s%s\n", e->note ? "; " : "", e->note ? e->note : "");
    }
    printf("wrote %s\n", path);
}

int llc_cmd_profile(int argc, char **argv)
{
    struct prof_opts o;
    const enum llc_parse parsed = parse_args(argc, argv, &o);
    if (parsed != LLC_PARSE_RUN)
        return llc_parse_exit(parsed);
    int rc = 0;
    char err[LLC_ERRLEN];
    if (o.workload && llc_workload_check(o.workload, err, sizeof(err)) < 0)
        return llc_cli_fail(CMD, "--workload: %s", err);
    if (o.trace && access(o.trace, R_OK) != 0)
        return llc_cli_fail(CMD, "%s: %s", o.trace, strerror(errno));
    /* Fail before a long run rather than after it. */
    char path[4096];
    if (o.out) {
        snprintf(path, sizeof(path), "%s.profile.json", o.out);
        struct llc_afile *f = NULL;
        if (llc_afile_open(path, &f, err, sizeof(err)) < 0)
            return llc_cli_fail(CMD, "%s", err);
        llc_afile_abort(f);
    }
    struct llc_profile p;
    llc_profile_init(&p);
    struct llc_mrc_phase_run run;
    memset(&run, 0, sizeof(run));
    profile_set_timing_sampler(&p, &o);
    if (llc_profile_stamp(&p, err, sizeof(err)) < 0) {
        rc = llc_cli_fail(CMD, "%s", err);
        goto out;
    }
    rc = o.argv ? profile_run_live(&o, &p, &run, err, sizeof(err))
                : profile_run_sim(&o, &p, &run, err, sizeof(err));
    if (rc && llc_stop_requested()) {
        fprintf(stderr, "llcprobe: %s: stopped by signal %d; nothing was written\n", CMD,
                (int)llc_stop_signal);
        rc = llc_stop_exit_code();
    }
    if (rc)
        goto out;
    snprintf(path, sizeof(path), "%s.profile.json", o.out ? o.out : p.program.name);
    if (llc_profile_write(path, &p, err, sizeof(err)) < 0) {
        rc = llc_cli_fail(CMD, "%s", err);
        goto out;
    }
    print_summary(&p, path);
    rc = LLC_EXIT_OK;
out:
    llc_mrc_phase_run_free(&run);
    llc_profile_free(&p);
    return rc;
}
