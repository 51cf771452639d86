/* llcprobe predict: programs profiled alone (llcprobe-profile files), run
 * together on one shared LLC: miss ratio, occupancy and slowdown per
 * program, per phase tuple and over time (statmodel/contention). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/predict.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "util/cli.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe predict A.profile.json B.profile.json ... [--preset P | --machine INFO.json]\n"
        "                        [--policy P] [--no-coupling] [--no-probe] [--anchored]\n"
        "                        [--no-strata] [--no-first-touches] [--stationary] [--fully-associative]\n"
        "                        [--no-exclusive | --exclusive-lru] [--phase-local] [--censored]\n"
        "                        [--own-distances] [--force]\n"
        "                        [-o PREFIX [--no-plot] [--gnuplot PATH]] [--quiet]\n\n"
        "Predicts what happens when 1 to 8 programs, each profiled alone with\n"
        "'llcprobe profile', share one last-level cache: per program the LLC miss\n"
        "ratio, miss rate, occupancy and CPI and slowdown against running alone, per\n"
        "phase tuple and over time, with the FOA and SDC baselines (Chandra et al.,\n"
        "HPCA 2005) beside. Model: each program's StatStack footprint from its\n"
        "per-phase reuse histogram; LRU shares the cache by one characteristic time\n"
        "(StatCC, Eklov et al., HiPEAC 2011), random replacement by the StatCache\n"
        "eviction rate; CPI and access rates solved together; phases co-simulated\n"
        "on instruction progress. Where a profile has the stress probe's readings,\n"
        "each phase's uneven set usage (per-set CV) is modelled over 5 strata and\n"
        "the probe's footprint gives an anchor gamma per phase (flagged when outside\n"
        "[0.8, 1.25]). Summary on stdout; with -o writes\n"
        "PREFIX.prediction.json (format llcprobe-prediction v1), PREFIX.prediction.csv\n"
        "(per co-run segment and program), PREFIX.tuples.csv (per phase tuple) and\n"
        "PREFIX.occupancy.png, PREFIX.missratio.png, PREFIX.slowdown.png (gnuplot).\n\n"
        "  --preset P        predict for simulator preset P (intel8, amd32); default: the\n"
        "                    machine the profiles were made on\n"
        "  --machine FILE    predict for the host 'llcprobe info --json' describes\n"
        "  --policy P        lru, random, plru, srrip, brrip or drrip (default: the\n"
        "                    machine's). plru, srrip, brrip and drrip are predicted with\n"
        "                    the LRU equilibrium (srrip and drrip in an inclusive LLC\n"
        "                    with srrip's scan resistance), and the output says so\n"
        "  --no-coupling     keep each program at its solo access rate (no CPI feedback)\n"
        "  --no-probe        ignore probe readings: no anchor, no skew from the probe's\n"
        "                    CV (random keeps the layout's own spread over the sets)\n"
        "  --anchored        also predict the 'anchored' variant: every phase's rate in\n"
        "                    its footprint scaled by its anchor gamma (a second timeline)\n"
        "  --no-strata       ignore the profiles' per-stratum reuse (phases[].strata:\n"
        "                    sets grouped by how often the phase uses them, solved per\n"
        "                    group, in place of the probe's CV skew)\n"
        "  --no-first-touches  start every phase's first run from an empty cache, as if\n"
        "                    its data were its own. By default a phase starts at the age\n"
        "                    at which the model makes the first touches its profile\n"
        "                    counted (sim profiles count them): data earlier phases\n"
        "                    touched is not cold again (docs/RESULTS.md 10.8)\n"
        "  --first-touches   the default, kept for older command lines\n"
        "  --stationary      no cold start: spread each phase's first touches over its\n"
        "                    run instead of starting with an empty cache (the\n"
        "                    histograms then as recorded, as with --censored)\n"
        "  --fully-associative  one cache without sets: LRU one threshold instead of\n"
        "                    lines spread over W-way sets at random, random none\n"
        "                    of what sets make of it (the layout's skew, the\n"
        "                    co-runners' lines varying with it, a line's own misses)\n"
        "  --no-exclusive    an exclusive (victim) LLC modelled as inclusive: a program's\n"
        "                    lines in its private L2 counted in the LLC. By default the\n"
        "                    models see a line only once the L2 evicts it, and LRU in\n"
        "                    W-way sets counts against a waiting line every line that\n"
        "                    entered the LLC meanwhile (an upper bound)\n"
        "  --exclusive-lru   LRU counts only the lines still in the LLC at the reuse\n"
        "                    (exact in a fully associative victim cache; in W-way sets\n"
        "                    it misses less than the simulator, docs/METHODS.md 12.2)\n"
        "  --phase-local     each phase on its own. By default (LRU and the policies\n"
        "                    predicted with it), where T* is at least a program's\n"
        "                    current phase run, its co-runners see its whole-program\n"
        "                    footprint (their lines wait across its phase changes), and\n"
        "                    a phase's reuses that span its program's other phases\n"
        "                    count the lines those touched; under random replacement\n"
        "                    the misses those make beyond its own (docs/METHODS.md 12.7)\n"
        "  --censored        take the reuse histograms as recorded: reuses the profiled\n"
        "                    run's end cut off stay dangling (by default each sample is\n"
        "                    weighted by how likely its distance was to fit in the run)\n"
        "  --own-distances   each phase's whole model on its reuse distances in its own\n"
        "                    references, its reuses across its program's other phases\n"
        "                    priced with the lines and misses those add, as the profile\n"
        "                    measured them (phases with rdhist_own and cross_spans); by\n"
        "                    default the phases' distances count all of the program's\n"
        "                    references and neither field is read (docs/METHODS.md 12.7)\n"
        "  --force           predict profiles from different machines or presets together\n"
        "                    (or for another machine); the output records what was forced\n"
        "  -o, --output PREFIX  write the files above\n"
        "      --no-plot     with -o: no PNGs\n"
        "      --gnuplot PATH   gnuplot executable (default gnuplot)\n"
        "  -q, --quiet       no warnings on stderr\n"
        "  -h, --help        this text\n\n"
        "Refused (one line naming the file and the field, exit 1): a damaged profile, a\n"
        "phase without references, instructions or reuse samples, profiles of different\n"
        "machines without --force.\n"
        "exit status: 0 ok, 1 failure, 2 usage.\n");
}

struct args {
    const char *preset, *machine_file;
    char **files;
    size_t n;
    struct pred_opts o;
};

static enum llc_parse parse_args(int argc, char **argv, struct args *a)
{
    enum {
        O_PRESET = 256,
        O_MACHINE,
        O_POLICY,
        O_NO_COUPLING,
        O_NO_PROBE,
        O_ANCHORED,
        O_FIRST_TOUCHES,
        O_NO_FIRST_TOUCHES,
        O_NO_EXCLUSIVE,
        O_EXCLUSIVE_LRU,
        O_STATIONARY,
        O_FULLY_ASSOC,
        O_NO_STRATA,
        O_CENSORED,
        O_PHASE_LOCAL,
        O_OWN_DISTANCES,
        O_FORCE,
        O_NO_PLOT,
        O_GNUPLOT
    };
    static const struct option longopts[] = {
        {"preset", required_argument, NULL, O_PRESET},
        {"machine", required_argument, NULL, O_MACHINE},
        {"policy", required_argument, NULL, O_POLICY},
        {"no-coupling", no_argument, NULL, O_NO_COUPLING},
        {"no-probe", no_argument, NULL, O_NO_PROBE},
        {"anchored", no_argument, NULL, O_ANCHORED},
        {"first-touches", no_argument, NULL, O_FIRST_TOUCHES},
        {"no-first-touches", no_argument, NULL, O_NO_FIRST_TOUCHES},
        {"no-exclusive", no_argument, NULL, O_NO_EXCLUSIVE},
        {"exclusive-lru", no_argument, NULL, O_EXCLUSIVE_LRU},
        {"stationary", no_argument, NULL, O_STATIONARY},
        {"fully-associative", no_argument, NULL, O_FULLY_ASSOC},
        {"no-strata", no_argument, NULL, O_NO_STRATA},
        {"phase-local", no_argument, NULL, O_PHASE_LOCAL},
        {"own-distances", no_argument, NULL, O_OWN_DISTANCES},
        {"censored", no_argument, NULL, O_CENSORED},
        {"force", no_argument, NULL, O_FORCE},
        {"output", required_argument, NULL, 'o'},
        {"no-plot", no_argument, NULL, O_NO_PLOT},
        {"gnuplot", required_argument, NULL, O_GNUPLOT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (struct args){.o = {.gnuplot = "gnuplot",
                             .coupling = true,
                             .probe = true,
                             .cold = true,
                             .assoc = true,
                             .exclusive = true,
                             .strata = true,
                             .uncensor = true,
                             .first_touches = true,
                             .plot = true}};
    bool no_plot = false, gnuplot = false, first_touches_given = false;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_PRESET:
            a->preset = optarg;
            break;
        case O_MACHINE:
            a->machine_file = optarg;
            break;
        case O_POLICY: {
            const int p = llc_contention_policy_parse(optarg);
            if (p < 0)
                return llc_cli_usage("predict",
                                     "--policy is lru, random, plru, srrip, brrip or drrip, "
                                     "not '%s'",
                                     optarg);
            a->o.policy = (enum llc_contention_policy)p;
            a->o.policy_given = true;
            break;
        }
        case O_NO_COUPLING:
            a->o.coupling = false;
            break;
        case O_NO_PROBE:
            a->o.probe = false;
            break;
        case O_ANCHORED:
            a->o.anchored = true;
            break;
        case O_FIRST_TOUCHES:
            a->o.first_touches = true;
            first_touches_given = true;
            break;
        case O_NO_FIRST_TOUCHES:
            a->o.first_touches = false;
            first_touches_given = false;
            break;
        case O_STATIONARY:
            a->o.cold = false;
            break;
        case O_FULLY_ASSOC:
            a->o.assoc = false;
            break;
        case O_NO_EXCLUSIVE:
            a->o.exclusive = false;
            break;
        case O_EXCLUSIVE_LRU:
            a->o.exclusive_lru = true;
            break;
        case O_NO_STRATA:
            a->o.strata = false;
            break;
        case O_CENSORED:
            a->o.uncensor = false;
            break;
        case O_PHASE_LOCAL:
            a->o.phase_local = true;
            break;
        case O_OWN_DISTANCES:
            a->o.own_distances = true;
            break;
        case O_FORCE:
            a->o.force = true;
            break;
        case 'o':
            a->o.prefix = optarg;
            break;
        case O_NO_PLOT:
            no_plot = true;
            break;
        case O_GNUPLOT:
            a->o.gnuplot = optarg;
            gnuplot = true;
            break;
        case 'q':
            a->o.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_PARSE_HELP;
        default:
            return llc_cli_usage("predict", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    a->files = argv + optind;
    a->n = (size_t)(argc - optind);
    if (a->n < 1 || a->n > PRED_MAX_PROGRAMS)
        return llc_cli_usage("predict", "give 1 to %d profile files, not %zu", PRED_MAX_PROGRAMS,
                             a->n);
    if (a->preset && a->machine_file)
        return llc_cli_usage("predict", "give --preset or --machine, not both");
    if (a->o.prefix && !*a->o.prefix)
        return llc_cli_usage("predict", "-o wants a non-empty prefix");
    if (!a->o.exclusive && a->o.exclusive_lru)
        return llc_cli_usage("predict", "--exclusive-lru and --no-exclusive contradict each other");
    if (first_touches_given && !a->o.cold)
        return llc_cli_usage("predict",
                             "--first-touches places a cold start; --stationary has none");
    a->o.first_touches = a->o.first_touches && a->o.cold;
    /* Without a cold start a run's first touches are its never-reused
     * samples, spread over it: the histograms as recorded (uncensored ones
     * describe a run without end, where every line comes back). */
    a->o.uncensor = a->o.uncensor && a->o.cold;
    if (a->o.anchored && !a->o.probe)
        return llc_cli_usage("predict", "--anchored needs the probe readings --no-probe ignores");
    if ((no_plot || gnuplot) && !a->o.prefix)
        return llc_cli_usage("predict", "--no-plot and --gnuplot go with -o");
    a->o.plot = !no_plot;
    return LLC_PARSE_RUN;
}

/* ---- machines ----------------------------------------------------------- */

void pred_machine_of_profile(const struct llc_profile *p, struct pred_machine *m)
{
    const struct llc_profile_machine *pm = &p->machine;
    memset(m, 0, sizeof(*m));
    snprintf(m->kind, sizeof(m->kind), "%s", pm->kind);
    snprintf(m->preset, sizeof(m->preset), "%s", pm->preset ? pm->preset : "");
    m->bytes = pm->llc.bytes;
    m->lines = pm->llc.lines;
    m->sets = pm->llc.sets;
    m->ways = pm->llc.ways;
    snprintf(m->policy, sizeof(m->policy), "%s", pm->llc.policy);
    snprintf(m->inclusion, sizeof(m->inclusion), "%s", pm->llc.inclusion);
    /* a preset's private L2, in front of its LLC when that is exclusive */
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    if (strcmp(m->kind, "preset") == 0 && strcmp(m->inclusion, "exclusive") == 0 &&
        llc_sim_preset(m->preset, &c, err, sizeof(err)) == 0)
        m->private_lines = (double)c.l2_sets * c.l2_ways;
    char cpu[96] = "";
    json_t *info = pm->info_json ? json_loads(pm->info_json, 0, NULL) : NULL;
    const char *brand = json_string_value(json_object_get(json_object_get(info, "cpu"), "brand"));
    snprintf(cpu, sizeof(cpu), "%s", brand ? brand : "unknown CPU");
    json_decref(info);
    if (strcmp(m->kind, "preset") == 0)
        snprintf(m->label, sizeof(m->label), "preset %s", m->preset);
    else
        snprintf(m->label, sizeof(m->label), "host %s", cpu);
}

static int machine_of_preset(const char *name, struct pred_machine *m)
{
    struct llc_sim_config c;
    char err[LLC_ERRLEN];
    if (llc_sim_preset(name, &c, err, sizeof(err)) < 0)
        return llc_cli_usage("predict", "--preset: %s", err);
    memset(m, 0, sizeof(*m));
    snprintf(m->kind, sizeof(m->kind), "preset");
    snprintf(m->preset, sizeof(m->preset), "%s", name);
    snprintf(m->label, sizeof(m->label), "preset %s", name);
    m->sets = (unsigned long long)c.llc.sets_per_slice * c.llc.slices;
    m->ways = c.llc.ways;
    m->lines = m->sets * m->ways;
    m->bytes = m->lines * 64;
    snprintf(m->policy, sizeof(m->policy), "%s", llc_sim_policy_name(c.llc_policy));
    snprintf(m->inclusion, sizeof(m->inclusion), "%s", llc_sim_inclusion_name(c.inclusion));
    if (c.inclusion == LLC_SIM_EXCLUSIVE)
        m->private_lines = (double)c.l2_sets * c.l2_ways;
    return 0;
}

/* The host's LLC from `llcprobe info --json`: the unified cache of the
 * highest level. */
static int machine_of_info(const char *path, struct pred_machine *m)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    int rc = 0;
    if (!doc)
        return llc_cli_fail("predict", "%s: %s", path, je.text);
    const char *fmt = json_string_value(json_object_get(doc, "format"));
    const json_t *caches = json_object_get(doc, "caches"), *best = NULL;
    if (!fmt || strcmp(fmt, "llcprobe-info") != 0) {
        rc = llc_cli_fail("predict",
                          "%s: format: not an llcprobe-info file ('llcprobe info --json')", path);
        goto out;
    }
    for (size_t i = 0; i < json_array_size(caches); i++) {
        const json_t *c = json_array_get(caches, i);
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && strcmp(type, "unified") == 0 &&
            (!best || json_integer_value(json_object_get(c, "level")) >
                          json_integer_value(json_object_get(best, "level"))))
            best = c;
    }
    const json_int_t size = json_integer_value(json_object_get(best, "size"));
    const json_int_t ways = json_integer_value(json_object_get(best, "ways"));
    const json_int_t sets = json_integer_value(json_object_get(best, "sets"));
    if (!best || size < 64 || ways < 1 || sets < 1 || (json_int_t)(sets * ways * 64) != size) {
        rc = llc_cli_fail("predict", "%s: caches: no unified cache with size = sets x ways x 64",
                          path);
        goto out;
    }
    memset(m, 0, sizeof(*m));
    snprintf(m->kind, sizeof(m->kind), "host");
    const char *brand = json_string_value(json_object_get(json_object_get(doc, "cpu"), "brand"));
    snprintf(m->label, sizeof(m->label), "host %s", brand ? brand : "unknown CPU");
    m->bytes = (unsigned long long)size;
    m->lines = m->bytes / 64;
    m->sets = (unsigned long long)sets;
    m->ways = (unsigned)ways;
    snprintf(m->policy, sizeof(m->policy), "lru");
    snprintf(m->inclusion, sizeof(m->inclusion), "inclusive");
out:
    json_decref(doc);
    return rc;
}

/* Why two machines differ, "" if they are the same one. */
static void machine_diff(const struct pred_machine *a, const struct pred_machine *b, char *why,
                         size_t len)
{
    why[0] = 0;
    if (strcmp(a->kind, b->kind) != 0)
        snprintf(why, len, "%s, not %s", a->label, b->label);
    else if (strcmp(a->kind, "preset") == 0 && strcmp(a->preset, b->preset) != 0)
        snprintf(why, len, "preset %s, not %s", a->preset, b->preset);
    else if (a->bytes != b->bytes || a->sets != b->sets || a->ways != b->ways)
        snprintf(why, len, "LLC %llu sets x %u ways, not %llu x %u", a->sets, a->ways, b->sets,
                 b->ways);
    else if (strcmp(a->label, b->label) != 0)
        snprintf(why, len, "%s, not %s", a->label, b->label);
}

/* The machine predicted for, and every profile checked against it. */
static int choose_machine(const struct args *a, struct pred_prog *progs, struct pred_machine *m,
                          struct pred_opts *o)
{
    int rc = 0;
    if (a->preset)
        rc = machine_of_preset(a->preset, m);
    else if (a->machine_file)
        rc = machine_of_info(a->machine_file, m);
    else
        pred_machine_of_profile(&progs[0].prof, m);
    if (rc)
        return rc;
    for (size_t i = 0; i < a->n; i++) {
        struct pred_machine pm;
        char why[320];
        pred_machine_of_profile(&progs[i].prof, &pm);
        machine_diff(&pm, m, why, sizeof(why));
        if (!why[0])
            continue;
        const char *against =
            a->preset || a->machine_file ? "the machine predicted for" : progs[0].file;
        if (!o->force)
            return llc_cli_fail("predict", "%s: machine: %s in %s (--force predicts anyway)",
                                progs[i].file, why, against);
        const size_t used = strlen(o->forced);
        snprintf(o->forced + used, sizeof(o->forced) - used, "%s%s: %s in %s", used ? "; " : "",
                 progs[i].file, why, against);
    }
    if (!o->policy_given) {
        const int p = llc_contention_policy_parse(m->policy);
        o->policy = p < 0 ? LLC_CONTENTION_LRU : (enum llc_contention_policy)p;
    }
    return 0;
}

int pred_prog_load(struct pred_prog *p, const char *file, char *err, size_t errlen)
{
    p->file = file;
    const int rc = llc_profile_read(file, &p->prof, err, errlen);
    return rc < 0 ? rc : llc_profile_check_predictable(&p->prof, file, err, errlen);
}

/* ---- the command ---------------------------------------------------------- */

int llc_cmd_predict(int argc, char **argv)
{
    struct args a;
    const enum llc_parse parsed = parse_args(argc, argv, &a);
    if (parsed != LLC_PARSE_RUN)
        return llc_parse_exit(parsed);
    int rc = 0;
    char err[LLC_ERRLEN];
    struct pred_prog progs[PRED_MAX_PROGRAMS];
    struct pred_result r = {0};
    struct pred_machine m;
    size_t loaded = 0;
    memset(progs, 0, sizeof(progs));
    for (; loaded < a.n; loaded++) {
        if (pred_prog_load(&progs[loaded], a.files[loaded], err, sizeof(err)) < 0) {
            rc = llc_cli_fail("predict", "%s", err);
            loaded++;
            goto out;
        }
    }
    if ((rc = choose_machine(&a, progs, &m, &a.o)) != 0)
        goto out;
    /* The prediction's time: the models built from the profiles' histograms
     * and probe readings, and every solve; not reading the files or
     * writing the results. */
    const double t0 = llc_now(), c0 = llc_thread_cpu_now();
    for (size_t i = 0; i < a.n; i++) {
        progs[i].own_distances = a.o.own_distances;
        if (pred_prog_build(&progs[i], a.o.probe, a.o.cold, a.o.uncensor, err, sizeof(err)) < 0) {
            rc = llc_cli_fail("predict", "%s", err);
            goto out;
        }
        progs[i].phase_local = a.o.phase_local;
        pred_cross_phase_use(&progs[i], !a.o.phase_local);
    }
    if (pred_run(progs, a.n, &m, &a.o, &r, err, sizeof(err)) < 0) {
        rc = llc_cli_fail("predict", "%s", err);
        goto out;
    }
    r.seconds = llc_now() - t0;
    r.cpu_seconds = llc_thread_cpu_now() - c0;
    pred_print(stdout, progs, a.n, &m, &a.o, &r);
    char **flags = NULL;
    const size_t nf = pred_flags(progs, a.n, &m, &a.o, &r, &flags);
    for (size_t k = 0; k < nf; k++) {
        llc_cli_warn(a.o.quiet, "%s", flags[k]);
        free(flags[k]);
    }
    free(flags);
    if (a.o.prefix && pred_write(a.o.prefix, progs, a.n, &m, &a.o, &r, err, sizeof(err)) < 0) {
        rc = llc_cli_fail("predict", "%s", err);
        goto out;
    }
    if (a.o.prefix && a.o.plot &&
        pred_plot(a.o.prefix, progs, a.n, &m, &a.o, &r, err, sizeof(err)) < 0)
        llc_cli_warn(a.o.quiet, "predict: no plots: %s", err);
out:
    pred_result_free(&r);
    for (size_t i = 0; i < loaded; i++)
        pred_prog_free(&progs[i]);
    return rc;
}
