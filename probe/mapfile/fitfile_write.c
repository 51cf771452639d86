/* Writer of llcprobe-fit files: the fit report (histogram, every family,
 * dispersion verdict) and the set selection that `sample` reads back. */
#include "llcprobe/mapfile.h"

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static json_t *reals(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, llc_json_finite(v[i]));
    return a;
}

static json_t *histogram_json(const struct llc_fit_histogram *h)
{
    json_t *counts = json_array();
    for (size_t i = 0; counts && i < h->m; i++)
        json_array_append_new(counts, json_integer((json_int_t)h->counts[i]));
    return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o?, s:o, s:o, s:o, s:b}", "binning",
                     llc_fit_binning_name(h->binning), "n", (json_int_t)h->n, "bins",
                     (json_int_t)h->m, "a", llc_json_finite(h->a), "b", llc_json_finite(h->b),
                     "width", llc_json_finite(h->width), "edges", reals(h->edges, h->m + 1),
                     "centres", reals(h->centres, h->m), "counts", counts, "density",
                     reals(h->density, h->m), "degenerate", h->degenerate);
}

static json_t *families_json(const struct llc_fit_report *rep)
{
    json_t *fams = json_array();
    for (int f = 0; fams && f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *r = &rep->fit[f];
        json_t *params = json_object();
        for (size_t i = 0; params && i < r->nparams; i++)
            json_object_set_new(params, llc_fit_param_name(r->family, i),
                                llc_json_finite(r->param[i]));
        json_array_append_new(
            fams,
            json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:i, s:o}", "family",
                      llc_fit_family_name(r->family), "status", llc_fit_status_name(r->status),
                      "method", llc_fit_method_name(r->method), "n", (json_int_t)r->n, "params",
                      params ? params : json_null(), "loglik", llc_json_finite(r->loglik), "aic",
                      llc_json_finite(r->aic), "r", llc_json_finite(r->r), "r2",
                      llc_json_finite(r->r2), "iterations", (int)r->iterations, "model",
                      reals(rep->model[f], rep->hist->m)));
    }
    return fams;
}

static json_t *dispersion_json(const struct llc_fit_report *rep, double retest)
{
    const struct llc_fit_dispersion *d = &rep->dispersion;
    const enum llc_fit_verdict v = llc_fit_verdict(d, retest);
    return json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s}", "status",
                     llc_fit_status_name(d->status), "ways", (int)d->ways, "mean_events",
                     llc_json_finite(d->mean_events), "var_events", llc_json_finite(d->var_events),
                     "disp", llc_json_finite(d->disp), "cv_true", llc_json_finite(d->cv_true),
                     "structure_share", llc_json_finite(d->structure_share), "p_over",
                     llc_json_finite(d->p_over), "retest_r", llc_json_finite(retest), "verdict",
                     llc_fit_verdict_name(v), "text", llc_fit_verdict_text(v));
}

static json_t *selection_json(const struct llc_fit_selection *s)
{
    json_t *keys = json_array(), *units = json_array();
    for (size_t i = 0; keys && i < s->nkeys; i++)
        json_array_append_new(keys, json_pack("{s:s, s:o, s:o}", "label",
                                              llc_fit_key_name(llc_fit_key_label(s->mode, i)),
                                              "value", llc_json_finite(s->key[i]), "p",
                                              llc_json_finite(s->key_p[i])));
    for (size_t i = 0; units && i < s->n; i++)
        json_array_append_new(
            units, json_pack("{s:I, s:s, s:o, s:I}", "unit", (json_int_t)s->unit[i], "label",
                             llc_fit_key_name(s->label[i]), "profile",
                             llc_json_finite(s->profile[i]), "stratum", (json_int_t)s->stratum[i]));
    const struct llc_fit_strata *st = &s->strata;
    json_t *members = json_array();
    for (size_t g = 0; members && g < st->count; g++)
        json_array_append_new(members, json_integer((json_int_t)st->members[g]));
    json_t *strata = json_pack("{s:o, s:o, s:o, s:o, s:o, s:I}", "key", reals(st->key, st->count),
                               "upper", reals(st->upper, st->count), "pi", reals(st->pi, st->count),
                               "members", members, "profile_sum", reals(st->profile_sum, st->count),
                               "centre", (json_int_t)st->centre);
    char seed[24];
    snprintf(seed, sizeof(seed), "0x%016llx", (unsigned long long)s->seed);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, "
        "s:o, s:o, s:o}",
        "status", llc_fit_select_status_name(s->status), "mode", llc_fit_key_mode_name(s->mode),
        "estimator", llc_fit_estimator_name(s->estimator), "pick", s->pick_mean ? "mean" : "key",
        "binning", llc_fit_binning_name(s->binning), "seed", seed, "points", (json_int_t)s->points,
        "per_point", (json_int_t)s->per_point, "n_units", (json_int_t)s->n_units, "n_usable",
        (json_int_t)s->n_usable, "mu", llc_json_finite(s->mu), "sigma", llc_json_finite(s->sigma),
        "a", llc_json_finite(s->a), "b", llc_json_finite(s->b), "profile_total",
        llc_json_finite(s->profile_total), "r2", llc_json_finite(s->r2), "disp",
        llc_json_finite(s->disp), "bins", (json_int_t)s->bins, "keys", keys, "units", units,
        "strata", strata);
}

int llc_fitfile_write(const char *path, const struct llc_fit_report *rep,
                      const struct llc_fit_selection *sel, const struct llc_fitfile_meta *meta,
                      char *err, size_t errlen)
{
    const struct llc_map_geometry *g = meta->geo;
    json_t *doc = llc_json_doc_new(LLC_FITFILE_FORMAT, LLC_FITFILE_VERSION);
    if (!doc)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const int best_aic = rep->best_aic, best_r2 = rep->best_r2;
    int bad = json_object_set_new(doc, "source", json_string(meta->source ? meta->source : "")) |
              json_object_set_new(doc, "target", json_string(meta->target ? meta->target : "")) |
              json_object_set_new(doc, "machine", json_string(meta->machine ? meta->machine : "")) |
              json_object_set_new(doc, "page_size",
                                  json_string(meta->page_size ? meta->page_size : "unknown")) |
              json_object_set_new(doc, "map_seed",
                                  meta->map_seed_known ? json_integer((json_int_t)meta->map_seed)
                                                       : json_null()) |
              json_object_set_new(
                  doc, "llc",
                  json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:I, s:i}", "line_size",
                            (int)g->line_size, "sets_per_slice", (int)g->sets_per_slice, "slices",
                            (int)g->slices, "ways", (int)g->llc_ways, "l2_ways", (int)g->l2_ways,
                            "l2_sets", (int)g->l2_sets, "victim", g->victim_llc, "bytes",
                            (json_int_t)g->llc_bytes, "sets", (int)llc_map_units(g))) |
              json_object_set_new(doc, "statistic",
                                  json_string(meta->raw_counts ? "misses" : "misses_per_s")) |
              json_object_set_new(doc, "exclusion",
                                  meta->masked < 0 ? json_null()
                                                   : json_pack("{s:I, s:b}", "masked_sets",
                                                               (json_int_t)meta->masked, "kept",
                                                               meta->masked_kept)) |
              json_object_set_new(doc, "histogram", histogram_json(rep->hist)) |
              json_object_set_new(doc, "families", families_json(rep)) |
              json_object_set_new(doc, "best_aic",
                                  best_aic >= 0 ? json_string(llc_fit_family_name(best_aic))
                                                : json_null()) |
              json_object_set_new(doc, "best_r2",
                                  best_r2 >= 0 ? json_string(llc_fit_family_name(best_r2))
                                               : json_null()) |
              json_object_set_new(doc, "gaussian_accepted", json_boolean(rep->gaussian_accepted)) |
              json_object_set_new(doc, "dispersion", dispersion_json(rep, meta->retest_r)) |
              json_object_set_new(doc, "selection", selection_json(sel));
    int rc = bad ? llc_errf(err, errlen, -ENOMEM, "out of memory building %s", path)
                 : llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}
