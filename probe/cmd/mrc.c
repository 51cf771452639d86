/* llcprobe mrc: miss-ratio curves (working-set graphs) from sampled reuse
 * distances: StatCache for random replacement, StatStack for LRU. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/mrc_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe mrc (--trace FILE | --profile FILE | [--sampler S] -- PROGRAM [ARGS...])\n"
        "                    [--rate R] [--seed N] [--sizes LIST] [--model M] [--cold C]\n"
        "                    [--ways W] [--band] [--replicates N] [--time-slots N]\n"
        "                    [--phases [--phase-window N] [--phase-unit U]] [-o PREFIX] [--quiet]\n\n"
        "Samples reuse distances (one random reference in 1/R, exponential gaps) and\n"
        "solves the miss ratio of a fully associative cache of every size: StatCache\n"
        "(random replacement) and StatStack (LRU). Prints the miss ratio at this\n"
        "machine's L1d, L2 and LLC sizes; with -o writes PREFIX.mrc.json, PREFIX.mrc.csv\n"
        "and PREFIX.mrc.png (gnuplot, log size axis).\n\n"
        "  --trace FILE      sample a trace file (llcprobe trace, or the runtime's trace mode)\n"
        "  --profile FILE    a histogram written by libllcprobe-rt (LLCPROBE_RT_OUTPUT)\n"
        "  --sampler S       for -- PROGRAM: auto (default: rt if PROGRAM is linked with\n"
        "                    libllcprobe-rt, else qemu if qemu-x86_64 and the plugin are\n"
        "                    there and no --time-slots, else trace), rt, trace (valgrind\n"
        "                    lackey, about 4000x slower: runs of tens of milliseconds), pmu\n"
        "                    (precise memory samples and watchpoints; needs a hardware\n"
        "                    PMU), qemu (any x86-64 program under qemu-x86_64 with\n"
        "                    llcprobe's plugin, which samples as the runtime does; each\n"
        "                    thread on its own)\n"
        "  --rate R          sampling rate in (0, 1] (default: chosen for --samples;\n"
        "                    1e-4 for pmu, and for rt with --phases; 1e-3 for qemu)\n"
        "  --samples N       without --rate: aim at N samples, 100 to 100000000 (default\n"
        "                    20000): traces are counted in a first pass, the runtime\n"
        "                    halves its rate as samples pile up; adds --band\n"
        "  --seed N          random seed, 0 to 2^64-1 (default 1)\n"
        "  --sizes LIST      comma-separated cache sizes (bytes, K/M/G suffixes; 64 to\n"
        "                    2^50); default 8 per octave from 1 KiB to 256 MiB plus this\n"
        "                    machine's cache sizes\n"
        "  --model M         statcache, statstack or both (default both)\n"
        "  --cold C          StatCache cold misses: count (default) or ignore (the paper's)\n"
        "  --ways W          StatStack associativity correction for W-way caches, 1 to\n"
        "                    2^20 (default: fully associative)\n"
        "  --band            bootstrap 5-95%% band of the miss ratio\n"
        "  --replicates N    bootstrap replicates, 2 to 100000 (default 200)\n"
        "  --time-slots N    also split the run into N (2 to 100000) slots of equal\n"
        "                    references, one histogram and curve per slot, and their\n"
        "                    mean (the burst mode of StatCache); trace sampler only\n"
        "                    (--trace or --sampler trace); with -o writes PREFIX.slots.csv\n"
        "  --phases          per-phase curves (phase-guided StatCache): cut the run into\n"
        "                    windows, classify them into phases with ScarPhase (as\n"
        "                    'llcprobe phase --trace --no-dynamic-rate' does), give each\n"
        "                    phase the samples taken in its windows, and report the\n"
        "                    phases' reference-weighted mixture as the curve (the pooled\n"
        "                    curve beside it). A reuse that ends in a later window\n"
        "                    belongs to the window where it was sampled; StatStack\n"
        "                    counts the lines it sees with the footprints of the phases\n"
        "                    of the windows it spans; unclassified windows are modelled\n"
        "                    with all samples. Trace, rt and qemu\n"
        "                    samplers and profiles (the runtime records windows of references and\n"
        "                    signatures of 400 sampled code addresses per window); with\n"
        "                    -o writes PREFIX.phases.csv; not with --band or --time-slots\n"
        "  --phase-window N  window length, 1000 to 2^50 (default 100000; a profile's is\n"
        "                    the one it was recorded with, LLCPROBE_RT_WINDOW)\n"
        "  --phase-unit U    auto (default: instructions if the trace has instruction\n"
        "                    records, as lackey's do, else references), instructions\n"
        "                    (signature: sampled instruction addresses, phase --trace's)\n"
        "                    or references (signature: the code address of every load\n"
        "                    and store, as the runtime's traces record them)\n"
        "  -o, --output PREFIX  write PREFIX.mrc.json, .csv and .png\n"
        "      --gnuplot PATH   gnuplot executable (default gnuplot)\n"
        "  -q, --quiet       no warnings\n"
        "  -h, --help        this text\n\n"
        "SIGINT, SIGTERM or SIGHUP stops PROGRAM's process group, removes the\n"
        "temporaries and writes nothing.\n\n"
        "exit status: 0 ok, 1 failure (a bad trace or profile, a failed run), 2 usage,\n"
        "128 + N when stopped by signal N.\n");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_sizes(const char *list, struct mrc_args *a)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    a->sizes = calloc(cap, sizeof *a->sizes);
    char *copy = strdup(list);
    int rc = 0;
    if (!a->sizes || !copy) {
        rc = llc_cli_fail("mrc", "out of memory");
        goto out;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t bytes;
        if (llc_parse_size(tok, &bytes) < 0 || bytes < 64 || bytes > (UINT64_C(1) << 50)) {
            rc = llc_cli_usage("mrc", "--sizes wants byte sizes from 64 B to 1 PiB, not '%s'", tok);
            goto out;
        }
        a->sizes[a->n_sizes++] = round((double)bytes / 64.0);
    }
    if (!a->n_sizes) {
        rc = llc_cli_usage("mrc", "--sizes is empty");
        goto out;
    }
    qsort(a->sizes, a->n_sizes, sizeof *a->sizes, cmp_double);
    size_t m = 1;
    for (size_t i = 1; i < a->n_sizes; i++)
        if (a->sizes[i] != a->sizes[m - 1])
            a->sizes[m++] = a->sizes[i];
    a->n_sizes = m;
out:
    free(copy);
    return rc;
}

/* Index of s in names (in the order of the enum they name), or -1. */
static int name_index(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

static enum llc_parse parse_args(int argc, char **argv, struct mrc_args *a)
{
    enum {
        OPT_TRACE = 256,
        OPT_PROFILE,
        OPT_SAMPLER,
        OPT_RATE,
        OPT_SAMPLES,
        OPT_SEED,
        OPT_SIZES,
        OPT_MODEL,
        OPT_COLD,
        OPT_WAYS,
        OPT_BAND,
        OPT_REPLICATES,
        OPT_GNUPLOT,
        OPT_TIME_SLOTS,
        OPT_PHASES,
        OPT_PHASE_WINDOW,
        OPT_PHASE_UNIT
    };
    static const struct option longopts[] = {
        {"trace", required_argument, NULL, OPT_TRACE},
        {"profile", required_argument, NULL, OPT_PROFILE},
        {"sampler", required_argument, NULL, OPT_SAMPLER},
        {"rate", required_argument, NULL, OPT_RATE},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"seed", required_argument, NULL, OPT_SEED},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"model", required_argument, NULL, OPT_MODEL},
        {"cold", required_argument, NULL, OPT_COLD},
        {"ways", required_argument, NULL, OPT_WAYS},
        {"band", no_argument, NULL, OPT_BAND},
        {"replicates", required_argument, NULL, OPT_REPLICATES},
        {"output", required_argument, NULL, 'o'},
        {"gnuplot", required_argument, NULL, OPT_GNUPLOT},
        {"time-slots", required_argument, NULL, OPT_TIME_SLOTS},
        {"phases", no_argument, NULL, OPT_PHASES},
        {"phase-window", required_argument, NULL, OPT_PHASE_WINDOW},
        {"phase-unit", required_argument, NULL, OPT_PHASE_UNIT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (struct mrc_args){.rate = 1e-4,
                           .samples = 20000,
                           .seed = 1,
                           .statcache = true,
                           .statstack = true,
                           .replicates = 200,
                           .gnuplot = "gnuplot",
                           .phase_window = LLC_REUSEFILE_WINDOW_DEFAULT};
    bool phase_opts = false;
    bool sampler_given = false;
    optind = 1;
    opterr = 0;
    int ch;
    uint64_t u;
    /* '+': options end at the program's name, whose own options are its own. */
    while ((ch = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_TRACE:
            a->trace = optarg;
            break;
        case OPT_PROFILE:
            a->profile = optarg;
            break;
        case OPT_SAMPLER: {
            static const char *const names[] = {"auto", "rt", "trace", "pmu", "qemu"};
            const int k = name_index(optarg, names, LLC_ARRAY_LEN(names));
            if (k < 0)
                return llc_cli_usage("mrc", "--sampler is auto, rt, trace, pmu or qemu, not '%s'",
                                     optarg);
            sampler_given = true;
            a->sampler = (enum sampler)k;
            break;
        }
        case OPT_RATE:
            if (llc_parse_double(optarg, &a->rate) < 0 || !(a->rate > 0 && a->rate <= 1))
                return llc_cli_usage("mrc", "--rate wants a number in (0, 1], not '%s'", optarg);
            a->rate_given = true;
            break;
        case OPT_SAMPLES:
            if (llc_parse_u64_range(optarg, 100, 100000000, &a->samples) < 0)
                return llc_cli_usage("mrc", "--samples wants 100 to 100000000, not '%s'", optarg);
            break;
        case OPT_SEED:
            if (llc_parse_u64(optarg, &a->seed) < 0)
                return llc_cli_usage("mrc", "--seed wants a whole number, not '%s'", optarg);
            break;
        case OPT_SIZES: {
            if (a->sizes)
                return llc_cli_usage("mrc", "--sizes given twice");
            const int rc = parse_sizes(optarg, a);
            if (rc)
                return rc;
            break;
        }
        case OPT_MODEL:
            a->statcache = strcmp(optarg, "statcache") == 0 || strcmp(optarg, "both") == 0;
            a->statstack = strcmp(optarg, "statstack") == 0 || strcmp(optarg, "both") == 0;
            if (!a->statcache && !a->statstack)
                return llc_cli_usage("mrc", "--model is statcache, statstack or both, not '%s'",
                                     optarg);
            break;
        case OPT_COLD:
            if (strcmp(optarg, "count") == 0)
                a->cold = LLC_STATMODEL_COLD_COUNT;
            else if (strcmp(optarg, "ignore") == 0)
                a->cold = LLC_STATMODEL_COLD_IGNORE;
            else
                return llc_cli_usage("mrc", "--cold is count or ignore, not '%s'", optarg);
            break;
        case OPT_WAYS:
            if (llc_parse_u64_range(optarg, 1, 1u << 20, &u) < 0)
                return llc_cli_usage("mrc", "--ways wants a whole number from 1, not '%s'", optarg);
            a->ways = (unsigned)u;
            break;
        case OPT_BAND:
            a->band = true;
            break;
        case OPT_REPLICATES:
            if (llc_parse_u64_range(optarg, 2, 100000, &u) < 0)
                return llc_cli_usage("mrc", "--replicates wants 2 to 100000, not '%s'", optarg);
            a->replicates = (unsigned)u;
            break;
        case OPT_TIME_SLOTS:
            if (llc_parse_u64_range(optarg, 2, 100000, &u) < 0)
                return llc_cli_usage("mrc", "--time-slots wants 2 to 100000, not '%s'", optarg);
            a->time_slots = (unsigned)u;
            break;
        case OPT_PHASES:
            a->phases = true;
            break;
        case OPT_PHASE_WINDOW:
            phase_opts = true;
            if (llc_parse_u64_range(optarg, 1000, UINT64_C(1) << 50, &u) < 0)
                return llc_cli_usage("mrc",
                                     "--phase-window wants a whole number from 1000, not "
                                     "'%s'",
                                     optarg);
            a->phase_window = u;
            a->phase_window_given = true;
            break;
        case OPT_PHASE_UNIT: {
            static const char *const names[] = {"auto", "instructions", "references"};
            const int k = name_index(optarg, names, LLC_ARRAY_LEN(names));
            if (k < 0)
                return llc_cli_usage("mrc",
                                     "--phase-unit is auto, instructions or references, "
                                     "not '%s'",
                                     optarg);
            phase_opts = true;
            a->phase_unit = (enum llc_mrc_window_unit)k;
            break;
        }
        case 'o':
            a->prefix = optarg;
            break;
        case OPT_GNUPLOT:
            a->gnuplot = optarg;
            break;
        case 'q':
            a->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_PARSE_HELP;
        default:
            return llc_cli_usage("mrc", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        a->argv = argv + optind;
    const int inputs = (a->trace != NULL) + (a->profile != NULL) + (a->argv != NULL);
    if (inputs != 1)
        return llc_cli_usage("mrc",
                             "give exactly one of --trace FILE, --profile FILE or -- PROGRAM");
    if (sampler_given && !a->argv)
        return llc_cli_usage("mrc", "--sampler goes with -- PROGRAM");
    if (a->time_slots && (a->profile || (a->argv && sampler_given && a->sampler != SAMPLER_TRACE)))
        return llc_cli_usage("mrc", "--time-slots needs the trace sampler (--trace FILE, or "
                                    "--sampler trace -- PROGRAM): profiles and the runtime keep "
                                    "one histogram per run");
    if (a->phases && a->argv && sampler_given && a->sampler == SAMPLER_PMU)
        return llc_cli_usage("mrc", "--phases needs the trace, rt or qemu sampler, or a profile");
    if (phase_opts && !a->phases)
        return llc_cli_usage("mrc", "--phase-window and --phase-unit go with --phases");
    if (a->phases && a->time_slots)
        return llc_cli_usage("mrc", "give --phases or --time-slots, not both");
    if (a->phases && a->band)
        return llc_cli_usage("mrc", "--band bootstraps one histogram; it does not go with "
                                    "--phases");
    if (a->prefix && !*a->prefix)
        return llc_cli_usage("mrc", "-o wants a non-empty prefix");
    /* A rate chosen by sample count comes with its band (not for profiles,
     * whose rate was chosen when they were written, nor with --phases). */
    if (!a->rate_given && !a->profile && !a->phases)
        a->band = true;
    return LLC_PARSE_RUN;
}

/* Index of `lines` in the grid, or r->n if --sizes left it out. */
static size_t grid_index(const struct llc_mrc_result *r, double lines)
{
    for (size_t k = 0; k < r->n; k++)
        if (r->lines[k] == round(lines))
            return k;
    return r->n;
}

static void print_slots(const struct llc_mrc_result *r, const struct llc_mrc_cache *caches,
                        size_t n_caches)
{
    size_t with = 0;
    for (size_t j = 0; j < r->slots.n; j++)
        with += r->slots.groups[j].points[0] != NULL;
    printf("time slots: %zu of %" PRIu64 " references, %zu with samples (%zu skipped)\n",
           r->slots.n, r->slot_refs, with, r->slots.skipped);
    for (size_t c = 0; c < n_caches; c++) {
        const size_t k = grid_index(r, (double)caches[c].bytes / 64.0);
        if (k == r->n)
            continue;
        printf("%-4s slot mean:", caches[c].name);
        for (unsigned i = 0; i < r->n_series; i++)
            printf(" %s %.4f", llc_mrc_method_name(r->series[i].method),
                   r->slots.mean[i][k].r_total);
        putchar('\n');
    }
}

static void print_phases(const struct llc_mrc_result *r)
{
    const struct llc_mrc_phase_run *pr = r->phase_run;
    printf("phases: %zu windows of %" PRIu64 " %s, %zu phases, %" PRIu64
           " unclassified and %" PRIu64 " transition windows\n",
           pr->n_windows, r->phase_window,
           pr->unit == LLC_MRC_WINDOW_INSTRUCTIONS ? "instructions" : "references",
           pr->summary.phases, pr->summary.unclassified, pr->summary.transition);
    for (size_t j = 0; j < r->phases.n; j++) {
        const struct llc_mrc_group *g = &r->phases.groups[j];
        printf("  phase %d: %zu windows, %.0f references (%.1f%%), %.0f samples%s\n", g->id,
               g->windows, g->refs, 100.0 * g->refs / (double)(r->refs ? r->refs : 1),
               g->pooled ? 0 : g->samples, g->pooled ? " (modelled with all samples)" : "");
    }
}

/* The miss ratio at each of the machine's caches: pooled, or with phases
 * their mixture (the pooled beside it). */
static void print_machine(const struct mrc_args *a, uint64_t distinct, double span,
                          const struct llc_statmodel_model *model,
                          const struct llc_statmodel_groups *phases,
                          const struct llc_statmodel_timeline *tl,
                          const struct llc_mrc_cache *caches, size_t n_caches)
{
    for (size_t i = 0; i < n_caches; i++) {
        char size[32];
        printf("%-4s %-9s:", caches[i].name, llc_format_size(caches[i].bytes, size, sizeof size));
        const double lines = (double)caches[i].bytes / 64.0;
        const enum llc_statmodel_method methods[] = {LLC_STATMODEL_STATCACHE,
                                                     LLC_STATMODEL_STATSTACK};
        const bool want[] = {a->statcache, a->statstack};
        for (size_t k = 0; k < LLC_ARRAY_LEN(methods); k++) {
            if (!want[k])
                continue;
            struct llc_statmodel_options o;
            mrc_series_options(a, distinct, methods[k], &o);
            o.splice = phases && !tl ? model : NULL;
            o.splice_span = span;
            struct llc_statmodel_point p, pooled;
            char err[LLC_ERRLEN];
            int rc = llc_statmodel_curve(model, &o, &lines, 1, &pooled, err, sizeof err);
            p = pooled;
            if (rc >= 0 && phases && tl && o.method == LLC_STATMODEL_STATSTACK)
                rc = llc_statmodel_timeline_curve(tl, &o, &lines, 1, &p, NULL, err, sizeof err);
            else if (rc >= 0 && phases)
                rc = llc_statmodel_groups_curve(phases, LLC_STATMODEL_WEIGHT_REFS, &o, &lines, 1,
                                                &p, NULL, err, sizeof err);
            if (rc < 0)
                printf(" %s ?(%s)", llc_mrc_method_name(methods[k]), err);
            else if (phases)
                printf(" %s %.4f (pooled %.4f)", llc_mrc_method_name(methods[k]), p.r_total,
                       pooled.r_total);
            else
                printf(" %s %.4f (no cold %.4f)", llc_mrc_method_name(methods[k]), p.r_total,
                       p.r_capacity);
        }
        putchar('\n');
    }
}

static void free_result(struct llc_mrc_result *r)
{
    for (unsigned i = 0; i < r->n_series; i++) {
        free(r->series[i].points);
        free(r->pooled[i]);
        free(r->series[i].band_lo);
        free(r->series[i].band_hi);
    }
}

int llc_cmd_mrc(int argc, char **argv)
{
    struct mrc_args a;
    const enum llc_parse p = parse_args(argc, argv, &a);
    if (p != LLC_PARSE_RUN) {
        free(a.sizes);
        return llc_parse_exit(p);
    }
    int status = LLC_EXIT_OK;
    char err[LLC_ERRLEN];
    struct mrc_input in = {0};
    struct llc_statmodel_model *model = NULL;
    struct llc_statmodel_timeline *timeline = NULL;
    struct llc_mrc_result r = {0};
    double *lines = NULL;
    const char *what = a.trace ? a.trace : a.profile ? a.profile : a.argv[0];
    /* A stop request unwinds through gather's cleanup (the program's group
     * stopped, temporaries removed); no output is half written. */
    struct llc_stop_saved saved_signals;
    llc_stop_install(&saved_signals);
    if (llc_statmodel_hist_create(&in.hist, err, sizeof err) < 0 ||
        mrc_gather(&a, &in, err, sizeof err) < 0 || llc_stop_requested()) {
        if (llc_stop_requested()) {
            fprintf(stderr, "llcprobe: mrc: stopped by signal %d; nothing was written\n",
                    (int)llc_stop_signal);
            status = llc_stop_exit_code();
            goto out;
        }
        /* "llcprobe: mrc: <input>: <why>", the input named once */
        if (strncmp(err, what, strlen(what)) == 0)
            status = llc_cli_fail("mrc", "%s", err);
        else
            status = llc_cli_fail("mrc", "%s: %s", what, err);
        goto out;
    }
    const double total = llc_statmodel_hist_total(in.hist);
    const double dangling = llc_statmodel_hist_dangling(in.hist);
    printf("mrc: %s from %s: %" PRIu64 " references, %.0f samples (%.0f never reused), rate %g, "
           "seed %" PRIu64 "\n",
           in.source, in.input, in.refs, total, dangling, in.rate, in.seed);
    /* Exact cold misses: the pooled curve's large-cache end is distinct
     * lines / references, and so is the phase mixture's (each phase's
     * dangling samples scaled by one factor); time slots keep their
     * sampled n_inf. */
    if (in.lines && a.cold == LLC_STATMODEL_COLD_COUNT && !a.time_slots) {
        int crc = llc_statmodel_hist_set_cold(in.hist, in.lines, in.refs, err, sizeof err);
        if (crc == 0 && a.phases)
            crc = llc_statmodel_groups_set_cold(in.phase_run.phases, in.lines, in.refs, err,
                                                sizeof err);
        if (crc == 0) {
            r.distinct_lines = in.lines;
            printf("mrc: cold misses exact: %" PRIu64 " distinct lines, %.4g of the references\n",
                   in.lines, (double)in.lines / (double)in.refs);
        } else
            llc_cli_warn(a.quiet, "cold misses from the samples: %s", err);
    }
    if (total < 1) {
        status = llc_cli_fail("mrc",
                              "%s: no reuse samples: %" PRIu64
                              " references are too few at rate %g (raise --rate)",
                              what, in.refs, in.rate);
        goto out;
    }
    if (total < 1000)
        llc_cli_warn(a.quiet, "only %.0f samples: the curve is rough (raise --rate or run longer)",
                     total);
    struct llc_mrc_cache caches[3];
    const int n_caches = llc_mrc_machine_caches(caches, 3, err, sizeof err);
    if (n_caches < 0)
        llc_cli_warn(a.quiet, "this machine's cache sizes are unknown: %s", err);
    if (llc_statmodel_prepare(in.hist, &model, err, sizeof err) < 0 ||
        mrc_size_grid(&a, caches, n_caches > 0 ? (size_t)n_caches : 0, &lines, &r.n, err,
                      sizeof err) < 0) {
        status = llc_cli_fail("mrc", "%s", err);
        goto out;
    }
    r.lines = lines;
    r.source = in.source;
    r.input = in.input;
    r.rate = in.rate;
    r.seed = in.seed;
    r.refs = in.refs;
    r.samples = total;
    r.dangling = dangling;
    r.cold = a.cold;
    r.band_replicates = a.band ? a.replicates : 0;
    if (mrc_solve(&a, in.hist, model, &r, err, sizeof err) < 0) {
        status = llc_cli_fail("mrc", "%s", err);
        goto out;
    }
    if (in.slots) {
        r.slot_refs = in.slot_refs;
        if (mrc_solve_groups(&a, in.slots, NULL, 0, NULL, &r, &r.slots, err, sizeof err) < 0) {
            status = llc_cli_fail("mrc", "time slots: %s", err);
            goto out;
        }
    }
    if (a.phases && (mrc_phase_timeline(&in, &timeline, err, sizeof err) < 0 ||
                     mrc_solve_phases(&a, &in, model, timeline, &r, err, sizeof err) < 0)) {
        status = llc_cli_fail("mrc", "phases: %s", err);
        goto out;
    }
    if (a.phases)
        print_phases(&r);
    if (n_caches > 0)
        print_machine(&a, r.distinct_lines, mrc_phase_span(&in), model,
                      a.phases ? in.phase_run.phases : NULL, timeline, caches, (size_t)n_caches);
    if (in.slots)
        print_slots(&r, caches, n_caches > 0 ? (size_t)n_caches : 0);
    if (llc_stop_requested()) {
        fprintf(stderr, "llcprobe: mrc: stopped by signal %d; nothing was written\n",
                (int)llc_stop_signal);
        status = llc_stop_exit_code();
        goto out;
    }
    llc_mrc_print_bands(&r);
    if (a.prefix) {
        if (llc_mrc_write_outputs(a.prefix, &r, err, sizeof err) < 0) {
            status = llc_cli_fail("mrc", "%s", err);
            goto out;
        }
        const char *extra = in.slots ? ".slots.csv" : a.phases ? ".phases.csv" : NULL;
        printf("wrote %s.mrc.json, %s.mrc.csv%s%s%s\n", a.prefix, a.prefix, extra ? ", " : "",
               extra ? a.prefix : "", extra ? extra : "");
        const int rc = llc_mrc_plot(a.prefix, &r, a.gnuplot, err, sizeof err);
        if (rc == -ENOENT)
            llc_cli_warn(a.quiet, "no PNG: %s", err);
        else if (rc < 0) {
            status = llc_cli_fail("mrc", "%s", err);
            goto out;
        } else
            printf("wrote %s.mrc.png\n", a.prefix);
    }
    if (llc_stop_requested()) {
        fprintf(stderr, "llcprobe: mrc: stopped by signal %d after the outputs were complete\n",
                (int)llc_stop_signal);
        status = llc_stop_exit_code();
    }
out:
    llc_stop_restore(&saved_signals);
    mrc_free_groups(&r.slots);
    mrc_free_groups(&r.phases);
    free_result(&r);
    llc_statmodel_groups_destroy(in.slots);
    llc_mrc_phase_run_free(&in.phase_run);
    free(lines);
    llc_statmodel_release(model);
    llc_statmodel_timeline_destroy(timeline);
    llc_statmodel_hist_destroy(in.hist);
    free(a.sizes);
    return status;
}
