/* llcprobe study: which of N programs should share an LLC of K cores, and
 * what does a bad choice cost. Profiles in, every group of K predicted,
 * co-schedules searched, study.json + CSVs + report.html out. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/study.h"
#include "llcprobe/common.h"
#include "util/cli.h"
#include "util/identity.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe study --cores K --profiles DIR -o DIR [--metric M] [--force]\n"
            "                      [--budget N] [--stationary] [--no-strata] [--phase-local]\n"
            "                      [--quiet]\n"
            "       llcprobe study --cores K -o DIR [--profiles CACHE] [--jobs J] [options]\n"
            "                      -- PROGRAM [ARGS] ';;' PROGRAM [ARGS] ';;' ...\n\n"
            "Which programs should share a last-level cache, and what a bad choice costs.\n"
            "Every program of DIR (its *.profile.json files, written by 'llcprobe profile')\n"
            "is predicted with every group of K-1 others, as 'llcprobe predict' predicts\n"
            "them (phases co-simulated over time; each phase tuple of a group solved once),\n"
            "then the programs are split into groups of K (co-schedules; with N not a\n"
            "multiple of K one group has N mod K) for the metric:\n"
            "  throughput  weighted speedup, sum of 1/slowdown (higher is better; default)\n"
            "  worst       the largest slowdown of any program\n"
            "  fairness    largest over smallest slowdown\n"
            "  misses      total LLC misses (memory traffic)\n"
            "Up to 1,000,000 co-schedules are enumerated and ranked; above, branch and bound\n"
            "over the groups' predictions (bound: every unplaced program at its best\n"
            "slowdown in any group) from a local-search incumbent, the worst co-schedule by\n"
            "the same search reversed, the median from 20,000 uniformly drawn co-schedules;\n"
            "when the node budget runs out the optimality gap against the bound is reported.\n"
            "Writes in the output directory: study.json (format llcprobe-study v1),\n"
            "groups.csv (every group: programs, slowdowns, misses), coschedules.csv (best,\n"
            "runners-up, median, worst), timeline.csv (the best co-schedule's occupancy and\n"
            "miss ratio over time) and report.html (self-contained: pairwise slowdown\n"
            "heatmap, ranked co-schedules, occupancy and miss ratio over time, machine,\n"
            "version, the model's assumptions).\n\n"
            "With programs after '--' (separated by ';;'), each is first profiled alone by\n"
            "'llcprobe profile' (--jobs at once, progress on a terminal) into CACHE (default\n"
            "DIR/profiles) as NAME-KEY.profile.json with its log beside; KEY is the binary's\n"
            "SHA-256, the arguments and this machine's CPU, so a profile is reused when all\n"
            "three match. An item starting with '-' is passed to 'llcprobe profile' as its\n"
            "options (e.g. --backend sim --preset intel8 --workload SPEC). Only these\n"
            "programs are studied. A failed profiling is reported and left out; on SIGINT the\n"
            "finished profiles are kept and the same command continues from them.\n\n"
            "With --slurm the profiling runs as a Slurm job array (sbatch, one node-exclusive\n"
            "task per program still without a profile; CACHE must be on a file system the\n"
            "nodes share), then a dependent job runs the study with --reuse-only; llcprobe\n"
            "waits (squeue) with progress, names every failed task's program and log, and\n"
            "prints the study. A rerun submits only what is missing. 'llcprobe merge' joins\n"
            "profile directories made elsewhere.\n\n"
            "  -k, --cores K     programs per shared LLC, 2 to %d\n"
            "  --profiles DIR    directory of *.profile.json files (2 to %d programs); with\n"
            "                    programs after '--': where their profiles are kept\n"
            "  -j, --jobs J      profiles made at once, 1 to 64 (default: the number of cores)\n"
            "  --reuse-only      profile nothing: a program without a profile is left out\n"
            "  --slurm           profile as a Slurm job array and study in a dependent job\n"
            "  --partition P     with --slurm: the partition of both jobs\n"
            "  --sbatch-args S   with --slurm: more sbatch options (split at spaces)\n"
            "  -o, --output DIR  output directory (created)\n"
            "  --metric M        throughput, worst, fairness or misses (default throughput)\n"
            "  --budget N        branch-and-bound nodes per search, 1000 to 1e12 (default 2e7)\n"
            "  --force           study profiles of different machines together\n"
            "  --stationary      no cold start: programs predicted warm from the first\n"
            "                    instruction (faster; as predict --stationary)\n"
            "  --no-strata       ignore the profiles' per-stratum reuse (as predict --no-strata)\n"
            "  --phase-local     each phase on its own: co-runners see a program's current\n"
            "                    phase only, its reuses its phase's lines (as predict\n"
            "                    --phase-local)\n"
            "  -q, --quiet       no progress or warnings on stderr\n"
            "  -h, --help        this text\n\n"
            "A profile that cannot be read or predicted is left out and reported (stderr,\n"
            "study.json \"failed\"); the study goes on with the others. Fewer readable\n"
            "programs than K, or profiles of different machines without --force: one-line\n"
            "error, exit 1. A program given twice is studied as two instances (NAME#2).\n"
            "exit status: 0 ok, 1 failure, 2 usage.\n",
            STUDY_MAX_K, STUDY_MAX_PROGRAMS);
}

struct args {
    uint64_t k, budget, jobs;
    bool reuse_only, slurm;
    const char *partition, *sbatch_args;
    char **cmds;
    size_t n_cmds;
    enum study_metric metric;
    const char *profiles, *out;
    bool force, quiet, stationary, no_strata, phase_local;
};

static enum llc_parse parse_args(int argc, char **argv, struct args *a)
{
    enum {
        O_PROFILES = 256,
        O_METRIC,
        O_BUDGET,
        O_FORCE,
        O_REUSE,
        O_SLURM,
        O_PARTITION,
        O_SBATCH,
        O_STATIONARY,
        O_NO_STRATA,
        O_PHASE_LOCAL
    };
    static const struct option longopts[] = {
        {"cores", required_argument, NULL, 'k'},
        {"profiles", required_argument, NULL, O_PROFILES},
        {"output", required_argument, NULL, 'o'},
        {"metric", required_argument, NULL, O_METRIC},
        {"budget", required_argument, NULL, O_BUDGET},
        {"force", no_argument, NULL, O_FORCE},
        {"stationary", no_argument, NULL, O_STATIONARY},
        {"no-strata", no_argument, NULL, O_NO_STRATA},
        {"phase-local", no_argument, NULL, O_PHASE_LOCAL},
        {"jobs", required_argument, NULL, 'j'},
        {"reuse-only", no_argument, NULL, O_REUSE},
        {"slurm", no_argument, NULL, O_SLURM},
        {"partition", required_argument, NULL, O_PARTITION},
        {"sbatch-args", required_argument, NULL, O_SBATCH},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *a = (struct args){.budget = 20000000, .jobs = cores > 0 ? (uint64_t)cores : 1};
    optind = 1;
    opterr = 0;
    int ch, rc;
    while ((ch = getopt_long(argc, argv, "k:o:j:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'k':
            if ((rc = llc_opt_u64("study", "cores", optarg, 2, STUDY_MAX_K, &a->k)))
                return rc;
            break;
        case O_PROFILES:
            a->profiles = optarg;
            break;
        case 'o':
            a->out = optarg;
            break;
        case O_METRIC: {
            const int m = study_metric_parse(optarg);
            if (m < 0)
                return llc_cli_usage(
                    "study", "--metric is throughput, worst, fairness or misses, not '%s'", optarg);
            a->metric = (enum study_metric)m;
            break;
        }
        case O_BUDGET:
            if ((rc = llc_opt_u64("study", "budget", optarg, 1000, 1000000000000ull, &a->budget)))
                return rc;
            break;
        case O_FORCE:
            a->force = true;
            break;
        case O_STATIONARY:
            a->stationary = true;
            break;
        case O_NO_STRATA:
            a->no_strata = true;
            break;
        case O_PHASE_LOCAL:
            a->phase_local = true;
            break;
        case O_REUSE:
            a->reuse_only = true;
            break;
        case O_SLURM:
            a->slurm = true;
            break;
        case O_PARTITION:
            a->partition = optarg;
            break;
        case O_SBATCH:
            a->sbatch_args = optarg;
            break;
        case 'j':
            if ((rc = llc_opt_u64("study", "jobs", optarg, 1, 64, &a->jobs)))
                return rc;
            break;
        case 'q':
            a->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return LLC_PARSE_HELP;
        default:
            return llc_cli_usage("study", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    const bool dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    if (optind < argc && !dashdash)
        return llc_cli_usage("study", "unexpected argument '%s' (programs go after '--')",
                             argv[optind]);
    a->cmds = argv + optind;
    a->n_cmds = (size_t)(argc - optind);
    if (!a->k)
        return llc_cli_usage("study", "--cores K is required");
    if (!a->profiles && !a->n_cmds)
        return llc_cli_usage("study", "give --profiles DIR, or programs after '--'");
    if (!a->out || !*a->out)
        return llc_cli_usage("study", "-o DIR is required");
    if ((a->slurm || a->reuse_only) && !a->n_cmds)
        return llc_cli_usage("study", "--slurm and --reuse-only go with programs after '--'");
    if ((a->partition || a->sbatch_args) && !a->slurm)
        return llc_cli_usage("study", "--partition and --sbatch-args go with --slurm");
    return LLC_PARSE_RUN;
}

/* ---- inputs ---------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.profile.json files of dir, sorted. */
int study_list_profiles(const char *dir, char ***out, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return llc_errf(err, errlen, -errno, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    *n = 0;
    *out = NULL;
    while (rc == 0 && (e = readdir(d))) {
        const size_t len = strlen(e->d_name), sl = strlen(".profile.json");
        if (len <= sl || strcmp(e->d_name + len - sl, ".profile.json") != 0)
            continue;
        char **nv = realloc(*out, (*n + 1) * sizeof(char *));
        char *path = malloc(strlen(dir) + len + 2);
        if (!nv || !path) {
            free(path);
            if (nv)
                *out = nv;
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            break;
        }
        *out = nv;
        sprintf(path, "%s/%s", dir, e->d_name);
        (*out)[(*n)++] = path;
    }
    closedir(d);
    if (rc == 0)
        qsort(*out, *n, sizeof(char *), by_name);
    return rc;
}

/* Why two profiles' machines differ, "" if they are the same. */
void study_machine_differs(const struct llc_profile *a, const struct llc_profile *b, char *why,
                           size_t len)
{
    const struct llc_profile_machine *x = &a->machine, *y = &b->machine;
    why[0] = 0;
    if (strcmp(x->kind, y->kind) != 0)
        snprintf(why, len, "machine kind %s, not %s", x->kind, y->kind);
    else if (x->preset && y->preset && strcmp(x->preset, y->preset) != 0)
        snprintf(why, len, "preset %s, not %s", x->preset, y->preset);
    else if (x->llc.bytes != y->llc.bytes || x->llc.sets != y->llc.sets ||
             x->llc.ways != y->llc.ways)
        snprintf(why, len, "LLC %llu sets x %u ways, not %llu x %u",
                 (unsigned long long)x->llc.sets, x->llc.ways, (unsigned long long)y->llc.sets,
                 y->llc.ways);
    else if (strcmp(x->kind, "host") == 0 && (x->info_json || y->info_json) &&
             (!x->info_json || !y->info_json || strcmp(x->info_json, y->info_json) != 0))
        snprintf(why, len, "another host");
}

/* Names made unique: the second instance of NAME is NAME#2. */
static int unique_names(struct study *s, bool quiet)
{
    for (size_t i = 1; i < s->n; i++) {
        struct llc_profile_program *p = &s->progs[i].prof.program;
        unsigned copies = 1;
        for (size_t j = 0; j < i; j++) {
            const char *o = s->progs[j].prof.program.name;
            const size_t l = strlen(p->name);
            if (strncmp(o, p->name, l) == 0 && (o[l] == 0 || o[l] == '#'))
                copies++;
        }
        if (copies == 1)
            continue;
        char *nn = malloc(strlen(p->name) + 16);
        if (!nn)
            return -ENOMEM;
        sprintf(nn, "%s#%u", p->name, copies);
        llc_cli_warn(
            quiet,
            "study: %s: program '%s' given more than once: studied as another instance, '%s'",
            s->progs[i].file, p->name, nn);
        free(p->name);
        p->name = nn;
    }
    return 0;
}

static int machine_of(struct study *s, char *err, size_t errlen)
{
    struct pred_machine *m = &s->machine;
    pred_machine_of_profile(&s->progs[0].prof, m);
    llc_contention_config_default(&s->cfg);
    s->cfg.capacity = (double)m->lines;
    s->cfg.ways = m->ways;
    const int p = llc_contention_policy_parse(m->policy);
    s->cfg.policy = p < 0 ? LLC_CONTENTION_LRU : (enum llc_contention_policy)p;
    s->cfg.coupling = true;
    s->cfg.skew = true;
    s->cfg.anchor = false;
    /* As predict models a co-run (cold start, set-associative LRU), but over
     * each program's whole first pass with finished programs started again
     * (cfg.together off): a co-schedule keeps its cores busy, which is what
     * `sim --corun --restart` simulates (docs/METHODS.md §14). */
    s->cfg.assoc = true;
    s->cfg.private_lines = m->private_lines;
    s->cfg.exclusive_entered = true;
    /* a ranking hardly moves with how young windows are priced (tau the
     * same to 0.003 on scripts/eval-study.sh), and cutting them at every
     * age class made a study of 32 programs 6x slower */
    s->cfg.first_touch_tol = INFINITY;
    s->cfg.guess_warm = true; /* no tuple is compared with a fresh solve */
    /* The random model's R tabulated per phase and the set-associative
     * grid's hit probability, as predict does, shared by every group (the
     * models stay in place until study_free). */
    return llc_contention_tables_create(&s->cfg.tables, err, errlen);
}

/* Reads every profile of files (taking them); unreadable ones go to
 * s->failed. where names the profiles in messages. */
static int load(struct study *s, const struct args *a, char **files, size_t nf, const char *where,
                char *err, size_t errlen)
{
    s->phase_local = a->phase_local;
    int rc = 0;
    if (nf > STUDY_MAX_PROGRAMS)
        rc = llc_errf(err, errlen, -E2BIG, "%s: %zu profiles, at most %d", where, nf,
                      STUDY_MAX_PROGRAMS);
    if (rc == 0 && !(s->progs = calloc(nf ? nf : 1, sizeof(*s->progs))))
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        struct pred_prog *p = &s->progs[s->n];
        char why[LLC_ERRLEN], diff[256];
        const char *file = files[i];
        files[i] = NULL;
        if (pred_prog_load(p, file, why, sizeof(why)) < 0 ||
            pred_prog_build(p, true, !a->stationary, !a->stationary, why, sizeof(why)) < 0) {
            llc_cli_warn(a->quiet, "study: left out: %s", why);
            rc = study_add_failed(s, "%s", why);
            pred_prog_free(p);
            free((char *)p->file);
            p->file = NULL;
            continue;
        }
        pred_strata_use(p, !a->no_strata);
        pred_first_touches_use(p, false);
        p->phase_local = a->phase_local;
        pred_cross_phase_use(p, !a->phase_local);
        s->strata_phases += pred_strata_phases(p);
        if (s->n > 0) {
            study_machine_differs(&p->prof, &s->progs[0].prof, diff, sizeof(diff));
            if (diff[0] && !a->force) {
                rc = llc_errf(err, errlen, -EINVAL,
                              "%s: machine: %s in %s (--force studies them together)", p->file,
                              diff, s->progs[0].file);
                s->n++;
                break;
            }
            if (diff[0]) {
                const size_t used = strlen(s->forced);
                snprintf(s->forced + used, sizeof(s->forced) - used, "%s%s: %s", used ? "; " : "",
                         p->file, diff);
            }
        }
        s->n++;
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    if (rc == 0 && s->n < a->k)
        rc = llc_errf(err, errlen, -EINVAL, "%s: %zu readable profile%s, fewer than --cores %llu",
                      where, s->n, s->n == 1 ? "" : "s", (unsigned long long)a->k);
    if (rc == 0)
        rc = unique_names(s, a->quiet);
    if (rc == 0)
        rc = machine_of(s, err, errlen);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        pred_prog_layout_cv(&s->progs[i], &s->cfg, (double)s->machine.sets);
        /* each phase's other phases' misses alone, in every group: a
         * second timeline per group would double the study */
        rc = pred_cross_phase_misses(&s->progs[i], 0, &s->cfg, NULL, err, errlen);
    }
    return rc;
}

int llc_cmd_study(int argc, char **argv)
{
    struct args a;
    const enum llc_parse parsed = parse_args(argc, argv, &a);
    if (parsed != LLC_PARSE_RUN)
        return llc_parse_exit(parsed);
    int rc = 0;
    char err[LLC_ERRLEN];
    struct study s = {.k = a.k, .metric = a.metric};
    if (llc_mkdir_as_invoker(a.out, 0777) < 0 && errno != EEXIST) {
        rc = llc_cli_fail("study", "%s: %s", a.out, strerror(errno));
        goto out;
    }
    char **files = NULL, cache[4096];
    size_t nf = 0;
    if (a.n_cmds) {
        snprintf(cache, sizeof(cache), "%s/profiles", a.out);
        if (a.slurm) {
            rc = study_slurm(argc, argv, a.cmds, a.n_cmds, a.profiles ? a.profiles : cache, a.out,
                             a.partition, a.sbatch_args, a.quiet, err, sizeof(err));
            if (rc < 0)
                rc = rc == -EINTR && study_slurm_signal()
                         ? (llc_cli_fail("study", "%s", err), 128 + study_slurm_signal())
                         : llc_cli_fail("study", "%s", err);
            goto out;
        }
        rc = study_profile_all(a.cmds, a.n_cmds, a.profiles ? a.profiles : cache, a.jobs,
                               a.reuse_only, a.quiet, &s, &files, &nf, err, sizeof(err));
    } else {
        rc = study_list_profiles(a.profiles, &files, &nf, err, sizeof(err));
    }
    if (rc < 0) {
        const bool stopped = rc == -EINTR && study_profile_signal();
        rc = llc_cli_fail("study", "%s", err);
        if (stopped)
            rc = 128 + study_profile_signal();
        goto out;
    }
    if (load(&s, &a, files, nf, a.n_cmds ? "programs" : a.profiles, err, sizeof(err)) < 0 ||
        study_predict_groups(&s, a.quiet, err, sizeof(err)) < 0 ||
        study_optimise(&s, a.budget, err, sizeof(err)) < 0 ||
        study_best_runs(&s, err, sizeof(err)) < 0 || study_write(a.out, &s, err, sizeof(err)) < 0 ||
        study_report(a.out, &s, err, sizeof(err)) < 0) {
        rc = llc_cli_fail("study", "%s", err);
        goto out;
    }
    if (s.warn_groups)
        llc_cli_warn(
            a.quiet,
            "study: %zu of %zu groups: cache equilibrium slower than a phase (see predict)",
            s.warn_groups, s.n_groups);
    study_print(&s);
out:
    study_free(&s);
    return rc;
}
