/* Calibration files: probe misses per set against lines held (calibrate). */
#include "llcprobe/mapfile.h"

#include "llcprobe/common.h"
#include "mapfile/jget.h"
#include "util/atomic_file.h"
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int llc_calib_write(const char *path, const struct llc_calib *c, char *err, size_t errlen)
{
    json_t *doc = llc_json_doc_new(LLC_CALIBFILE_FORMAT, LLC_CALIBFILE_VERSION);
    json_t *curve = json_array(), *est = json_array();
    for (size_t k = 0; curve && est && k < c->nk; k++) {
        json_array_append_new(curve, json_real(c->misses_per_set_s[k]));
        json_array_append_new(est, json_real(c->search_estimate[k]));
    }
    json_t *search = est ? json_pack("{s:s, s:f, s:i, s:f, s:o}", "estimator", "walk-length search",
                                     "cycle_s", c->search_cycle_s, "cycles", (int)c->search_cycles,
                                     "threshold", c->search_threshold, "estimate", est)
                         : NULL;
    if (!doc || !curve || !search ||
        json_object_update_new(doc, json_pack("{s:s, s:i, s:i, s:I, s:f, s:I, s:f, s:o, s:o}",
                                              "machine", c->machine, "ways", (int)c->ways,
                                              "line_size", (int)c->line_size, "sets",
                                              (json_int_t)c->units, "rate", c->rate, "probed",
                                              (json_int_t)c->probed, "touch_rate", c->touch_rate,
                                              "misses_per_set_s", curve, "search", search)) < 0) {
        json_decref(doc);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    const int rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

int llc_calib_read(const char *path, struct llc_calib *c, char *err, size_t errlen)
{
    struct jget g = {.path = path, .err = err, .errlen = errlen};
    json_t *doc = NULL;
    const char *s;
    uint64_t v[5];
    memset(c, 0, sizeof(*c));
    int rc = jget_load(&g, LLC_CALIBFILE_FORMAT, LLC_CALIBFILE_VERSION, &doc);
    if (rc == 0 && (rc = jget_string(&g, doc, "machine", "machine", &s)) == 0)
        snprintf(c->machine, sizeof(c->machine), "%s", s);
    if (rc == 0)
        rc = jget_uint(&g, doc, "ways", "ways", 1, LLC_CALIB_MAX_K - 1, &v[0]);
    if (rc == 0)
        rc = jget_uint(&g, doc, "line_size", "line_size", 1, 4096, &v[1]);
    if (rc == 0)
        rc = jget_uint(&g, doc, "sets", "sets", 1, 1u << 28, &v[2]);
    if (rc == 0)
        rc = jget_uint(&g, doc, "probed", "probed", 1, v[2], &v[3]);
    static const char *const rates[] = {"rate", "touch_rate"};
    double *const rate_dst[] = {&c->rate, &c->touch_rate};
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        rc = jget_real(&g, doc, rates[i], rates[i], false, rate_dst[i]);
        if (rc == 0 && !(*rate_dst[i] > 0 && isfinite(*rate_dst[i])))
            rc = jget_fail(&g, -EINVAL, rates[i], "%g is not a positive number", *rate_dst[i]);
    }
    if (rc == 0) {
        c->ways = (unsigned)v[0];
        c->line_size = (unsigned)v[1];
        c->units = (uint32_t)v[2];
        c->probed = (uint32_t)v[3];
        c->nk = c->ways + 1;
        const json_t *curve = json_object_get(doc, "misses_per_set_s");
        rc = curve ? jget_reals(&g, curve, "misses_per_set_s", c->nk, c->misses_per_set_s)
                   : jget_fail(&g, -EINVAL, "misses_per_set_s", "missing");
    }
    const json_t *search = doc ? json_object_get(doc, "search") : NULL;
    if (rc == 0 && !json_is_object(search))
        rc = jget_fail(&g, -EINVAL, "search", "missing or not an object");
    if (rc == 0)
        rc = jget_real(&g, search, "cycle_s", "search.cycle_s", false, &c->search_cycle_s);
    if (rc == 0 && !(c->search_cycle_s > 0))
        rc = jget_fail(&g, -EINVAL, "search.cycle_s", "not positive");
    if (rc == 0 && (rc = jget_uint(&g, search, "cycles", "search.cycles", 1, 1000, &v[4])) == 0)
        c->search_cycles = (unsigned)v[4];
    if (rc == 0)
        rc = jget_real(&g, search, "threshold", "search.threshold", false, &c->search_threshold);
    if (rc == 0 && !(c->search_threshold > 0 && c->search_threshold < 1))
        rc = jget_fail(&g, -EINVAL, "search.threshold", "not in (0, 1)");
    if (rc == 0) {
        const json_t *est = json_object_get(search, "estimate");
        rc = est ? jget_reals(&g, est, "search.estimate", c->nk, c->search_estimate)
                 : jget_fail(&g, -EINVAL, "search.estimate", "missing");
    }
    json_decref(doc);
    return rc;
}

double llc_calib_lines(const struct llc_calib *c, double m)
{
    /* The running maximum makes the curve monotone, so the inverse is
     * defined; flat stretches map to their first k. */
    double prev = c->search_estimate[0];
    if (!(m > prev))
        return 0;
    for (size_t k = 1; k < c->nk; k++) {
        const double cur = fmax(prev, c->search_estimate[k]);
        if (m <= cur)
            return cur > prev ? (double)(k - 1) + (m - prev) / (cur - prev) : (double)k;
        prev = cur;
    }
    return (double)(c->nk - 1);
}
