/* Reader of llcprobe-fit files: the geometry and the set selection, rebuilt
 * as a struct llc_fit_selection so the estimators run on it unchanged. */
#include "llcprobe/mapfile.h"

#include "llcprobe/common.h"
#include "mapfile/jget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void llc_fitfile_free(struct llc_fitfile *f)
{
    if (!f)
        return;
    free(f->path);
    free(f->target);
    free(f->machine);
    free(f->page_size);
    llc_fit_selection_destroy(f->sel);
    free(f);
}

/* Inverse of the fit module's name functions: the enum whose name is s. */
static int enum_of(const char *(*name)(int), int count, const char *s)
{
    for (int i = 0; i < count; i++)
        if (strcmp(name(i), s) == 0)
            return i;
    return -1;
}
static const char *key_name(int k)
{
    return llc_fit_key_name((enum llc_fit_key)k);
}
static const char *mode_name(int k)
{
    return llc_fit_key_mode_name((enum llc_fit_key_mode)k);
}
static const char *estimator_name(int k)
{
    return llc_fit_estimator_name((enum llc_fit_estimator)k);
}
static const char *status_name(int k)
{
    return llc_fit_select_status_name((enum llc_fit_select_status)k);
}
static const char *binning_name(int k)
{
    return llc_fit_binning_name((enum llc_fit_binning)k);
}

static int read_enum(const struct jget *g, const json_t *obj, const char *key, const char *field,
                     const char *(*name)(int), int count, int *out)
{
    const char *s;
    int rc = jget_string(g, obj, key, field, &s);
    if (rc < 0)
        return rc;
    *out = enum_of(name, count, s);
    if (*out < 0)
        return jget_fail(g, -EINVAL, field, "'%s' is not a known value", s);
    return 0;
}

static int read_geometry(const struct jget *g, const json_t *doc, struct llc_fitfile *f)
{
    json_t *llc;
    uint64_t v[8];
    bool victim;
    static const char *const keys[] = {"line_size", "sets_per_slice", "slices", "ways",
                                       "l2_ways",   "l2_sets",        "bytes",  "sets"};
    int rc = jget_object(g, doc, "llc", "llc", &llc);
    for (size_t i = 0; rc == 0 && i < 8; i++) {
        char field[32];
        snprintf(field, sizeof(field), "llc.%s", keys[i]);
        rc = jget_uint(g, llc, keys[i], field, i == 4 || i == 5 ? 0 : 1,
                       i == 6 ? UINT64_MAX : 1u << 28, &v[i]);
    }
    if (rc == 0)
        rc = jget_bool(g, llc, "victim", "llc.victim", &victim);
    if (rc < 0)
        return rc;
    if (v[1] * v[2] != v[7])
        return jget_fail(g, -EINVAL, "llc.sets", "is not slices x sets_per_slice");
    f->geo = (struct llc_map_geometry){.line_size = (unsigned)v[0],
                                       .sets_per_slice = (unsigned)v[1],
                                       .slices = (unsigned)v[2],
                                       .llc_ways = (unsigned)v[3],
                                       .l2_ways = (unsigned)v[4],
                                       .l2_sets = (unsigned)v[5],
                                       .victim_llc = victim,
                                       .llc_bytes = v[6]};
    f->units = (uint32_t)v[7];
    return 0;
}

/* The strata as llc_fitp_strata builds them: increasing keys, boundaries
 * between neighbouring keys and +infinity (null) last, members adding up
 * to the usable sets and weights that are their shares. The stratified
 * estimator trusts all of it. */
static int check_strata(const struct jget *g, const struct llc_fit_strata *st, size_t n_usable)
{
    size_t sum = 0;
    for (size_t k = 0; k < st->count; k++) {
        const bool last = k + 1 == st->count;
        if (!isfinite(st->key[k]) || (k > 0 && !(st->key[k] > st->key[k - 1])))
            return jget_fail(g, -EINVAL, "selection.strata.key",
                             "entry %zu is not finite and above the one before", k);
        if (last ? st->upper[k] != INFINITY
                 : !(st->upper[k] >= st->key[k] && st->upper[k] <= st->key[k + 1]))
            return jget_fail(g, -EINVAL, "selection.strata.upper",
                             last ? "entry %zu is not null (the last stratum is open)"
                                  : "entry %zu is not between key %zu and the next",
                             k, k);
        if (st->members[k] > n_usable)
            return jget_fail(g, -EINVAL, "selection.strata.members",
                             "entry %zu is more than the %zu usable sets", k, n_usable);
        sum += st->members[k];
        if (!(fabs(st->pi[k] - (double)st->members[k] / (double)n_usable) <= 1e-9))
            return jget_fail(g, -EINVAL, "selection.strata.pi",
                             "entry %zu is not members / usable sets (%zu / %zu)", k,
                             st->members[k], n_usable);
    }
    if (sum != n_usable)
        return jget_fail(g, -EINVAL, "selection.strata.members",
                         "add up to %zu, not to the %zu usable sets", sum, n_usable);
    return 0;
}

static int read_strata(const struct jget *g, const json_t *sel, size_t n_usable,
                       struct llc_fit_strata *st)
{
    json_t *o, *arr;
    uint64_t v;
    int rc = jget_object(g, sel, "strata", "selection.strata", &o);
    if (rc < 0)
        return rc;
    arr = json_object_get(o, "key");
    if (!json_is_array(arr) || json_array_size(arr) < 1 || json_array_size(arr) > LLC_FIT_MAX_KEYS)
        return jget_fail(g, -EINVAL, "selection.strata.key", "not an array of 1..%d numbers",
                         LLC_FIT_MAX_KEYS);
    st->count = json_array_size(arr);
    static const char *const names[] = {"key", "upper", "pi", "members"};
    for (size_t i = 0; i < 4; i++) {
        char field[48];
        snprintf(field, sizeof(field), "selection.strata.%s", names[i]);
        arr = json_object_get(o, names[i]);
        if (!json_is_array(arr) || json_array_size(arr) != st->count)
            return jget_fail(g, -EINVAL, field, "not an array of %zu entries", st->count);
        for (size_t k = 0; k < st->count; k++) {
            const json_t *e = json_array_get(arr, k);
            /* The last upper boundary is +infinity, written as null. */
            const double x = json_is_null(e) && i == 1 ? INFINITY : json_number_value(e);
            if (!(json_is_number(e) || (json_is_null(e) && i == 1)) || isnan(x))
                return jget_fail(g, -EINVAL, field, "entry %zu is not a number", k);
            if (i == 0)
                st->key[k] = x;
            else if (i == 1)
                st->upper[k] = x;
            else if (i == 2)
                st->pi[k] = x;
            else if (!json_is_integer(e) || json_integer_value(e) < 0)
                return jget_fail(g, -EINVAL, field, "entry %zu is not a whole number", k);
            else
                st->members[k] = (size_t)json_integer_value(e);
        }
    }
    /* Profile sums per stratum (for the stratified-ratio estimator): files
     * written before them have none, and that estimator is then NaN. */
    arr = json_object_get(o, "profile_sum");
    for (size_t k = 0; k < st->count; k++) {
        const json_t *e = arr ? json_array_get(arr, k) : NULL;
        st->profile_sum[k] = NAN;
        if (!arr)
            continue;
        if (!json_is_array(arr) || json_array_size(arr) != st->count || !json_is_number(e) ||
            !(json_number_value(e) >= 0))
            return jget_fail(g, -EINVAL, "selection.strata.profile_sum",
                             "not an array of %zu numbers >= 0", st->count);
        st->profile_sum[k] = json_number_value(e);
    }
    if ((rc = jget_uint(g, o, "centre", "selection.strata.centre", 0, st->count - 1, &v)) < 0)
        return rc;
    st->centre = (size_t)v;
    return check_strata(g, st, n_usable);
}

static int read_units(const struct jget *g, const json_t *sel, uint32_t units,
                      struct llc_fit_selection *s)
{
    const json_t *arr = json_object_get(sel, "units");
    if (!arr)
        return jget_fail(g, -EINVAL, "selection.units", "missing");
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return jget_fail(g, -EINVAL, "selection.units", "not a non-empty array");
    s->n = json_array_size(arr);
    s->unit = malloc(s->n * sizeof(*s->unit));
    s->label = malloc(s->n * sizeof(*s->label));
    s->profile = malloc(s->n * sizeof(*s->profile));
    s->stratum = malloc(s->n * sizeof(*s->stratum));
    if (!s->unit || !s->label || !s->profile || !s->stratum)
        return llc_errf(g->err, g->errlen, -ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n; i++) {
        const json_t *e = json_array_get(arr, i);
        char field[64];
        uint64_t v;
        int label, rc;
        snprintf(field, sizeof(field), "selection.units[%zu]", i);
        if (!json_is_object(e))
            return jget_fail(g, -EINVAL, field, "not an object");
        snprintf(field, sizeof(field), "selection.units[%zu].unit", i);
        if ((rc = jget_uint(g, e, "unit", field, 0, units - 1, &v)) < 0)
            return rc;
        s->unit[i] = (size_t)v;
        for (size_t j = 0; j < i; j++)
            if (s->unit[j] == s->unit[i])
                return jget_fail(g, -EINVAL, field, "set %zu is listed twice", s->unit[i]);
        snprintf(field, sizeof(field), "selection.units[%zu].label", i);
        if ((rc = read_enum(g, e, "label", field, key_name, LLC_FIT_KEY_COUNT, &label)) < 0)
            return rc;
        s->label[i] = (enum llc_fit_key)label;
        snprintf(field, sizeof(field), "selection.units[%zu].profile", i);
        if ((rc = jget_real(g, e, "profile", field, false, &s->profile[i])) < 0)
            return rc;
        if (!(s->profile[i] >= 0 && isfinite(s->profile[i])))
            return jget_fail(g, -EINVAL, field, "%g is not a non-negative number", s->profile[i]);
        snprintf(field, sizeof(field), "selection.units[%zu].stratum", i);
        if ((rc = jget_uint(g, e, "stratum", field, 0, s->strata.count - 1, &v)) < 0)
            return rc;
        s->stratum[i] = (size_t)v;
    }
    return 0;
}

/* The tie-break seed, written as a hex string: a JSON integer cannot hold
 * every 64-bit value. */
static int read_seed(const struct jget *g, const json_t *sel, uint64_t *seed)
{
    const char *s;
    int rc = jget_string(g, sel, "seed", "selection.seed", &s);
    if (rc < 0)
        return rc;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 16);
    if (strncmp(s, "0x", 2) != 0 || end == s + 2 || *end || errno)
        return jget_fail(g, -EINVAL, "selection.seed",
                         "'%s' is not a 64-bit hex number like 0x9e3779b97f4a7c15", s);
    *seed = v;
    return 0;
}

static int read_selection(const struct jget *g, const json_t *doc, uint32_t units,
                          struct llc_fit_selection *s)
{
    json_t *sel;
    uint64_t v;
    int e, rc = jget_object(g, doc, "selection", "selection", &sel);
    if (rc == 0 && (rc = read_enum(g, sel, "status", "selection.status", status_name,
                                   LLC_FIT_SELECT_ALL + 1, &e)) == 0)
        s->status = (enum llc_fit_select_status)e;
    if (rc == 0 && (rc = read_enum(g, sel, "mode", "selection.mode", mode_name,
                                   LLC_FIT_KEYS_QUANTILE + 1, &e)) == 0)
        s->mode = (enum llc_fit_key_mode)e;
    /* The estimator: files written before it was recorded used the
     * stratum means. */
    s->estimator = LLC_FIT_EST_STRATIFIED;
    if (rc == 0 && json_object_get(sel, "estimator") &&
        (rc = read_enum(g, sel, "estimator", "selection.estimator", estimator_name,
                        LLC_FIT_EST_COUNT, &e)) == 0)
        s->estimator = (enum llc_fit_estimator)e;
    const json_t *pick = json_object_get(sel, "pick");
    s->pick_mean = json_is_string(pick) && !strcmp(json_string_value(pick), "mean");
    if (rc == 0 && (rc = read_enum(g, sel, "binning", "selection.binning", binning_name,
                                   LLC_FIT_BINS_AUTO + 1, &e)) == 0)
        s->binning = (enum llc_fit_binning)e;
    if (rc == 0 && (rc = jget_uint(g, sel, "n_units", "selection.n_units", units, units, &v)) == 0)
        s->n_units = (size_t)v;
    if (rc == 0 && (rc = jget_uint(g, sel, "n_usable", "selection.n_usable", 1, units, &v)) == 0)
        s->n_usable = (size_t)v;
    if (rc == 0 &&
        (rc = jget_uint(g, sel, "points", "selection.points", 1, LLC_FIT_MAX_KEYS, &v)) == 0)
        s->points = (size_t)v;
    if (rc == 0 && (rc = jget_uint(g, sel, "per_point", "selection.per_point", 1, units, &v)) == 0)
        s->per_point = (size_t)v;
    if (rc == 0)
        rc = read_seed(g, sel, &s->seed);
    /* Moments and sums of non-negative profile values; R^2 and Disp may be
     * undefined (null). */
    static const char *const reals[] = {"mu", "sigma", "profile_total", "r2", "disp"};
    double *const dst[] = {&s->mu, &s->sigma, &s->profile_total, &s->r2, &s->disp};
    for (size_t i = 0; rc == 0 && i < 5; i++) {
        char field[32];
        snprintf(field, sizeof(field), "selection.%s", reals[i]);
        const bool nullable = i >= 3;
        rc = jget_real(g, sel, reals[i], field, nullable, dst[i]);
        const double x = *dst[i];
        if (rc == 0 && !(nullable && isnan(x)) && !(x >= 0 && isfinite(x) && (i != 3 || x <= 1)))
            rc = jget_fail(g, -EINVAL, field, "%g is not a number in %s", x,
                           i == 3 ? "[0, 1]" : "[0, inf)");
    }
    if (rc == 0)
        rc = read_strata(g, sel, s->n_usable, &s->strata);
    if (rc == 0)
        rc = read_units(g, sel, units, s);
    if (rc == 0 && s->n > s->n_usable)
        rc = jget_fail(g, -EINVAL, "selection.units", "%zu sets selected from %zu usable", s->n,
                       s->n_usable);
    return rc;
}

int llc_fitfile_read(const char *path, struct llc_fitfile **out, char *err, size_t errlen)
{
    *out = NULL;
    struct jget g = {.path = path, .err = err, .errlen = errlen};
    json_t *doc = NULL;
    const char *s;
    struct llc_fitfile *f = calloc(1, sizeof(*f));
    int rc = f ? 0 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = jget_load(&g, LLC_FITFILE_FORMAT, LLC_FITFILE_VERSION, &doc);
    if (rc < 0)
        goto out;
    f->sel = calloc(1, sizeof(*f->sel));
    f->path = strdup(path);
    if (!f->sel || !f->path) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    static const char *const strs[] = {"target", "machine", "page_size"};
    char **const dst[] = {&f->target, &f->machine, &f->page_size};
    for (size_t i = 0; i < 3; i++) {
        if ((rc = jget_string(&g, doc, strs[i], strs[i], &s)) < 0)
            goto out;
        if (!(*dst[i] = strdup(s))) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
    }
    /* The profile map's seed: absent in files written before it was. */
    const json_t *seed = json_object_get(doc, "map_seed");
    f->map_seed_known = json_is_integer(seed) && json_integer_value(seed) >= 0;
    f->map_seed = f->map_seed_known ? (uint64_t)json_integer_value(seed) : 0;
    if ((rc = jget_string(&g, doc, "statistic", "statistic", &s)) < 0)
        goto out;
    if (strcmp(s, "misses") && strcmp(s, "misses_per_s")) {
        rc = jget_fail(&g, -EINVAL, "statistic", "'%s' is not misses or misses_per_s", s);
        goto out;
    }
    f->raw_counts = strcmp(s, "misses") == 0;
    if ((rc = read_geometry(&g, doc, f)) < 0 ||
        (rc = read_selection(&g, doc, f->units, f->sel)) < 0)
        goto out;
    *out = f;
    f = NULL;
out:
    json_decref(doc);
    llc_fitfile_free(f);
    return rc;
}
