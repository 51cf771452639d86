/* llcprobe fit: the per-set distribution of a map (histogram, Gaussian and
 * the other families, dispersion check) and the representative sets
 * chosen at its key points (docs/METHODS.md §2-§4). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/fit_cmd.h"
#include "cmd/fit_plot.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"
#include "util/cli.h"
#include "util/input.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: llcprobe fit [options] APP.map.json\n\n"
            "Fits the per-set probe misses of a map (written by 'llcprobe map') with a\n"
            "Gaussian (the seed's method) and with gamma, Poisson, beta, Student t and\n"
            "lognormal for comparison (binned R^2, log-likelihood, AIC); checks whether the\n"
            "set-to-set spread is more than counting noise; picks the representative sets\n"
            "at the key points mu, mu-sigma, mu+sigma, start, end.\n\n"
            "Writes PREFIX.fit.json (format llcprobe-fit v1: parameters, R^2 per family,\n"
            "best family, dispersion verdict, key values, selected sets with their labels,\n"
            "stratum weights), PREFIX.fit-hist.png (histogram with the fitted densities)\n"
            "and PREFIX.fit-map.png (per-set map, selected sets marked); prints a summary.\n\n"
            "options:\n"
            "  --mode M          key points: auto (default: sigma2 when the Gaussian is\n"
            "                    accepted, R^2 > 0.85, else quantile), sigma2 (start, end =\n"
            "                    mu -+ 2 sigma), range (paper-literal: min and max), quantile\n"
            "                    (empirical quantiles; for data that are not Gaussian; moved to\n"
            "                    distinct values where they coincide, sets labelled median,\n"
            "                    q15.9, q84.1, q2.3, q97.7)\n"
            "  --points N        key points used, K1..KN in the order mu, mu-sigma, mu+sigma,\n"
            "                    start, end (1..5, default 5)\n"
            "  --per-point C     sets per key point, 1 to 2^20 (default 5: 25 sets)\n"
            "  --seed S          seed of the selection's tie-break hash, 0 to 2^64-1\n"
            "                    (default 0x9E3779B97F4A7C15)\n"
            "  --estimator E     whole-cache estimator later runs report as their headline:\n"
            "                    stratified-ratio (default: per stratum, the profile's total\n"
            "                    times the chosen sets' ratio of new to profile values; gives\n"
            "                    back the profile's own total exactly), stratified (stratum\n"
            "                    means), ratio (one ratio over all chosen sets), scale-up (the\n"
            "                    paper's N/n times the sum)\n"
            "  --pick P          sets per key: mean (default: the sets of the key's stratum\n"
            "                    nearest the stratum's mean, typical of the stratum they stand\n"
            "                    for), key (the paper's: nearest the key value)\n"
            "  --bin-integrated  model each bin by the family's mass over it (not its density\n"
            "                    at the centre)\n"
            "  --include-excluded  keep the sets the map's exclusion mask names (its baseline\n"
            "                    sweep's: sets the probe misses in with no target, and\n"
            "                    set-dueling leader sets); by default they are left out of\n"
            "                    the histogram, the fit and the selection, and the summary\n"
            "                    says how many\n"
            "  --no-plots        skip the PNG plots\n"
            "  -o, --output P    output prefix (default: the map's name without .map.json)\n"
            "  -q, --quiet       only errors\n\n"
            "The statistic is the raw miss count per set when every set had the same dwell,\n"
            "else misses per second. exit status: 0 ok, 1 failure, 2 bad usage.\n");
}

/* ---- the shared fit stage --------------------------------------------------- */

static void print_summary(const struct llc_fit_report *rep, const struct llc_fit_selection *sel,
                          double retest, const struct fit_cmd_input *in,
                          enum llc_fit_key_mode asked)
{
    const struct llc_fit_family_result *g = &rep->fit[LLC_FIT_GAUSSIAN];
    printf("sets            %zu usable, statistic %s, %zu bins (%s)\n", rep->hist->n,
           in->raw_counts ? "misses" : "misses per second", rep->hist->m,
           llc_fit_binning_name(rep->hist->binning));
    if (in->masked == 0)
        printf("exclusion       none: the map has no excluded sets\n");
    else if (in->masked > 0)
        printf("exclusion       %ld set%s of the map's mask (baseline or leader sets) %s\n",
               in->masked, in->masked == 1 ? "" : "s",
               in->masked_kept ? "kept (--include-excluded)" : "left out");
    printf("gaussian        mu %.6g  sigma %.6g  R^2 %.4f  (%s)\n", g->param[0], g->param[1], g->r2,
           rep->gaussian_accepted ? "accepted: R^2 > 0.85" : "not accepted: R^2 <= 0.85");
    printf("families        ");
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *r = &rep->fit[f];
        /* An AIC of -inf or +inf (a density that is infinite or zero at
         * some set, e.g. gamma's at a set with 0 misses) ranks nothing. */
        if ((r->status == LLC_FIT_OK || r->status == LLC_FIT_DEGENERATE) && !isfinite(r->aic))
            printf("%s R^2 %.3f AIC not applicable (likelihood %s at some set); ",
                   llc_fit_family_name(r->family), r->r2, r->aic < 0 ? "infinite" : "zero");
        else if (r->status == LLC_FIT_OK || r->status == LLC_FIT_DEGENERATE)
            printf("%s R^2 %.3f AIC %.1f; ", llc_fit_family_name(r->family), r->r2, r->aic);
        else
            printf("%s %s; ", llc_fit_family_name(r->family), llc_fit_status_name(r->status));
    }
    printf("\nbest family     %s by AIC, %s by R^2\n",
           rep->best_aic >= 0 ? llc_fit_family_name(rep->best_aic) : "none",
           rep->best_r2 >= 0 ? llc_fit_family_name(rep->best_r2) : "none");
    const struct llc_fit_dispersion *d = &rep->dispersion;
    const enum llc_fit_verdict v = llc_fit_verdict(d, retest);
    if (d->status == LLC_FIT_OK)
        printf("dispersion      Disp %.3g, noise-corrected CV %.3g, test-retest r %.3f\n", d->disp,
               d->cv_true, retest);
    else
        printf("dispersion      %s, test-retest r %.3f\n", llc_fit_status_name(d->status), retest);
    printf("verdict         %s\n", llc_fit_verdict_text(v));
    printf("selection       %zu sets (%s; %s keys", sel->n, llc_fit_select_status_name(sel->status),
           llc_fit_key_mode_name(sel->mode));
    if (asked == LLC_FIT_KEYS_AUTO)
        printf(", by --mode auto: the Gaussian's R^2 %s %.2f",
               sel->mode == LLC_FIT_KEYS_QUANTILE ? "<=" : ">", LLC_FIT_R2_ACCEPT);
    printf("):");
    for (size_t i = 0; i < sel->nkeys; i++)
        printf(" K%zu=%.6g", i + 1, sel->key[i]);
    printf("\n");
    for (size_t i = 0; i < sel->n; i++)
        printf("%s%zu(%s)%s", i == 0 ? "sets            " : "", sel->unit[i],
               llc_fit_key_name(sel->label[i]), i + 1 == sel->n ? "\n" : " ");
    printf("strata weights ");
    for (size_t gi = 0; gi < sel->strata.count; gi++)
        printf(" %.4f", sel->strata.pi[gi]);
    printf("\n");
    /* Each estimator applied to the profile it was fitted from must give
     * back the profile's total; how far it misses is its bias here. */
    struct llc_fit_estimates e;
    char err[LLC_ERRLEN];
    if (llc_fit_estimate(sel, sel->profile, &e, err, sizeof(err)) == 0 && sel->profile_total > 0) {
        const double g = sel->profile_total;
        printf(
            "in-sample       estimate of this map's own total %.6g: %s (headline) %+.3f%%; stratified-ratio "
            "%+.3f%%, stratified %+.3f%%, ratio %+.3f%%, scale-up %+.3f%%\n",
            g, llc_fit_estimator_name(sel->estimator), 100 * (e.headline - g) / g,
            100 * (e.stratified_ratio - g) / g, 100 * (e.stratified - g) / g,
            100 * (e.ratio - g) / g, 100 * (e.scale_up - g) / g);
    }
}

int llc_fit_cmd_run(const char *cmd, const struct fit_cmd_opts *o, const struct fit_cmd_input *in,
                    struct llc_fit_selection **sel_out)
{
    char err[LLC_ERRLEN], path[4200];
    struct llc_fit_report *rep = NULL;
    struct llc_fit_selection *sel = NULL;
    int status = LLC_EXIT_FAIL;
    *sel_out = NULL;
    struct llc_fit_options fo;
    llc_fit_options_default(&fo);
    fo.bin_integrated = o->bin_integrated;
    /* Event counts need raw misses: with rates the dispersion is unchecked. */
    fo.ways = in->raw_counts ? in->geo->llc_ways : 0;
    if (llc_fit_report_create(in->x, in->n, in->excluded, &fo, &rep, err, sizeof(err)) < 0) {
        llc_cli_fail(cmd, "%s: %s", in->source, err);
        goto out;
    }
    struct llc_fit_select_config sc = o->select;
    sc.ways = fo.ways;
    if (llc_fit_select(in->x, in->n, in->excluded, &sc, &sel, err, sizeof(err)) < 0) {
        llc_cli_fail(cmd, "%s: %s", in->source, err);
        goto out;
    }
    const double retest = in->sweep1 && in->sweep2
                              ? llc_fit_test_retest(in->sweep1, in->sweep2, in->n, in->excluded)
                              : NAN;
    const struct llc_fitfile_meta meta = {.source = in->source,
                                          .target = in->target,
                                          .machine = in->machine,
                                          .geo = in->geo,
                                          .raw_counts = in->raw_counts,
                                          .retest_r = retest,
                                          .page_size = in->page_size,
                                          .masked = in->masked,
                                          .map_seed_known = true,
                                          .map_seed = in->map_seed,
                                          .masked_kept = in->masked_kept};
    snprintf(path, sizeof(path), "%s.fit.json", o->prefix);
    if (llc_fitfile_write(path, rep, sel, &meta, err, sizeof(err)) < 0) {
        llc_cli_fail(cmd, "%s", err);
        goto out;
    }
    if (!o->quiet)
        print_summary(rep, sel, retest, in, o->select.mode);
    char wrote[64] = "";
    if (o->plots) {
        char title[512];
        snprintf(title, sizeof(title), "%s: per-set probe misses", in->target);
        snprintf(path, sizeof(path), "%s.fit-hist.png", o->prefix);
        if (llc_fit_plot_histogram(path, rep, title, err, sizeof(err)) < 0)
            llc_cli_warn(o->quiet, "%s: no plot: %s", path, err);
        else
            strcat(wrote, ", .fit-hist.png");
        snprintf(path, sizeof(path), "%s.fit-map.png", o->prefix);
        if (llc_fit_plot_map(path, in->x, in->excluded, in->n, sel, title,
                             in->raw_counts ? "probe misses" : "probe misses per second", err,
                             sizeof(err)) < 0)
            llc_cli_warn(o->quiet, "%s: no plot: %s", path, err);
        else
            strcat(wrote, ", .fit-map.png");
    }
    if (!o->quiet)
        printf("wrote %s.fit.json%s\n", o->prefix, wrote);
    *sel_out = sel;
    sel = NULL;
    status = LLC_EXIT_OK;
out:
    llc_fit_selection_destroy(sel);
    llc_fit_report_destroy(rep);
    return status;
}

/* ---- the command ------------------------------------------------------------ */

enum {
    O_MODE = 256,
    O_POINTS,
    O_PER_POINT,
    O_SEED,
    O_BIN_INT,
    O_NO_PLOTS,
    O_INCLUDE,
    O_ESTIMATOR,
    O_PICK,
    O_HELP
};

int llc_fit_parse_key_mode(const char *s, enum llc_fit_key_mode *out)
{
    if (strcmp(s, "sigma2") == 0)
        *out = LLC_FIT_KEYS_SIGMA2;
    else if (strcmp(s, "range") == 0)
        *out = LLC_FIT_KEYS_RANGE;
    else if (strcmp(s, "quantile") == 0)
        *out = LLC_FIT_KEYS_QUANTILE;
    else if (strcmp(s, "auto") == 0)
        *out = LLC_FIT_KEYS_AUTO;
    else
        return -1;
    return 0;
}

static enum llc_parse parse(int argc, char **argv, struct fit_cmd_opts *o, bool *include,
                            const char **map)
{
    static const struct option longopts[] = {{"mode", required_argument, 0, O_MODE},
                                             {"points", required_argument, 0, O_POINTS},
                                             {"per-point", required_argument, 0, O_PER_POINT},
                                             {"seed", required_argument, 0, O_SEED},
                                             {"bin-integrated", no_argument, 0, O_BIN_INT},
                                             {"no-plots", no_argument, 0, O_NO_PLOTS},
                                             {"output", required_argument, 0, 'o'},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"include-excluded", no_argument, 0, O_INCLUDE},
                                             {"help", no_argument, 0, O_HELP},
                                             {"estimator", required_argument, 0, O_ESTIMATOR},
                                             {"pick", required_argument, 0, O_PICK},
                                             {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    *include = false;
    llc_fit_select_config_default(&o->select);
    o->plots = true;
    uint64_t v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_MODE:
            if (llc_fit_parse_key_mode(optarg, &o->select.mode) < 0)
                return llc_cli_usage("fit", "--mode: '%s' is not auto, sigma2, range or quantile",
                                     optarg);
            break;
        case O_POINTS:
            if (llc_parse_u64_range(optarg, 1, LLC_FIT_MAX_KEYS, &v) < 0)
                return llc_cli_usage("fit", "--points: '%s' is not a whole number in 1..5", optarg);
            o->select.points = (size_t)v;
            break;
        case O_PER_POINT:
            if (llc_parse_u64_range(optarg, 1, 1u << 20, &v) < 0)
                return llc_cli_usage("fit", "--per-point: '%s' is not a positive whole number",
                                     optarg);
            o->select.per_point = (size_t)v;
            break;
        case O_SEED:
            if (llc_parse_u64(optarg, &o->select.seed) < 0)
                return llc_cli_usage("fit", "--seed: '%s' is not a whole number", optarg);
            break;
        case O_ESTIMATOR:
            if (llc_fit_estimator_parse(optarg, &o->select.estimator) < 0)
                return llc_cli_usage(
                    "fit",
                    "--estimator: '%s' is not stratified-ratio, stratified, ratio or scale-up",
                    optarg);
            break;
        case O_PICK:
            if (strcmp(optarg, "key") && strcmp(optarg, "mean"))
                return llc_cli_usage("fit", "--pick: '%s' is not key or mean", optarg);
            o->select.pick_mean = !strcmp(optarg, "mean");
            break;
        case O_BIN_INT:
            o->bin_integrated = true;
            break;
        case O_NO_PLOTS:
            o->plots = false;
            break;
        case O_INCLUDE:
            *include = true;
            break;
        case 'o':
            o->prefix = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return LLC_PARSE_HELP;
        default:
            return llc_cli_usage("fit", "unknown option");
        }
    }
    if (optind + 1 != argc)
        return llc_cli_usage("fit", optind == argc ? "no map file given" : "one map file, please");
    *map = argv[optind];
    return LLC_PARSE_RUN;
}

/* The map's exclusion mask (written by its baseline sweep, docs/METHODS.md §1.2; the
 * map reader leaves it out): marks each named set in mask and sets *n to
 * how many the map names (0 without a mask). */
static int read_exclusion(const char *path, uint32_t units, uint8_t *mask, long *n, char *err,
                          size_t errlen)
{
    json_error_t je;
    char *text = NULL;
    size_t len = 0;
    int rc = llc_input_slurp(path, LLC_JSON_MAX_BYTES, &text, &len, err, errlen);
    *n = 0;
    if (rc < 0)
        return rc;
    json_t *doc = json_loadb(text, len, 0, &je);
    free(text);
    if (!doc)
        return llc_errf(err, errlen, -EINVAL, "%s: line %d: not JSON", path, je.line);
    const json_t *ex = json_object_get(doc, "exclusion");
    const json_t *sets = ex && !json_is_null(ex) ? json_object_get(ex, "sets") : NULL;
    if (ex && !json_is_null(ex) && !json_is_array(sets)) {
        rc = llc_errf(err, errlen, -EINVAL, "%s: exclusion.sets: missing or not an array", path);
        goto out;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(sets, i, e)
    {
        const json_t *set = json_object_get(e, "set");
        const json_int_t u = json_is_integer(set) ? json_integer_value(set) : -1;
        if (u < 0 || u >= (json_int_t)units) {
            rc = llc_errf(err, errlen, -EINVAL,
                          "%s: exclusion.sets[%zu].set: not a set of this map (0..%u)", path, i,
                          units - 1);
            goto out;
        }
        *n += !mask[u];
        mask[u] = 1;
    }
out:
    json_decref(doc);
    return rc;
}

int llc_cmd_fit(int argc, char **argv)
{
    struct fit_cmd_opts o;
    const char *path = NULL;
    bool include = false;
    const enum llc_parse prc = parse(argc, argv, &o, &include, &path);
    if (prc != LLC_PARSE_RUN)
        return llc_parse_exit(prc);
    char err[LLC_ERRLEN], prefix[4200];
    struct llc_mapfile *m = NULL;
    struct llc_fit_selection *sel = NULL;
    double *x = NULL;
    uint8_t *excl = NULL, *mask = NULL;
    int status = LLC_EXIT_FAIL;
    if (llc_mapfile_read(path, &m, err, sizeof(err)) < 0) {
        llc_cli_fail("fit", "%s", err);
        goto out;
    }
    if (!o.prefix) {
        snprintf(prefix, sizeof(prefix), "%s", path);
        char *dot = strstr(prefix, ".map.json");
        if (!dot)
            dot = strstr(prefix, ".json");
        if (dot)
            *dot = '\0';
        o.prefix = prefix;
    }
    x = malloc(m->units * sizeof(*x));
    excl = malloc(m->units);
    mask = calloc(m->units, 1);
    if (!x || !excl || !mask) {
        llc_cli_fail("fit", "out of memory");
        goto out;
    }
    const bool raw = llc_mapfile_statistic(m, x, excl);
    long masked;
    if (read_exclusion(path, m->units, mask, &masked, err, sizeof(err)) < 0) {
        llc_cli_fail("fit", "%s", err);
        goto out;
    }
    for (uint32_t u = 0; !include && u < m->units; u++)
        excl[u] |= mask[u];
    if (!m->complete)
        llc_cli_warn(o.quiet,
                     "%s: the map is incomplete (\"complete\": false); fitting the sets it has",
                     path);
    const struct fit_cmd_input in = {.x = x,
                                     .excluded = excl,
                                     .masked = masked,
                                     .masked_kept = include,
                                     .n = m->units,
                                     .sweep1 = m->sweeps >= 2 ? m->sweep_misses : NULL,
                                     .sweep2 = m->sweeps >= 2 ? m->sweep_misses + m->units : NULL,
                                     .raw_counts = raw,
                                     .geo = &m->geo,
                                     .source = path,
                                     .target = m->target,
                                     .machine = m->machine,
                                     .page_size = m->page_size,
                                     .map_seed = m->seed};
    status = llc_fit_cmd_run("fit", &o, &in, &sel);
out:
    llc_fit_selection_destroy(sel);
    llc_mapfile_free(m);
    free(x);
    free(excl);
    free(mask);
    return status;
}
