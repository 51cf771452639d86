/* Calibration files: probe misses per set against lines held (calibrate). */
#include "llcprobe/mapfile.h"

#include "llcprobe/common.h"
#include "mapfile/jget.h"
#include "util/atomic_file.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int llc_calib_write(const char *path, const struct llc_calib *c, char *err, size_t errlen)
{
    json_t *doc = llc_json_doc_new(LLC_CALIBFILE_FORMAT, LLC_CALIBFILE_VERSION);
    json_t *curve = json_array();
    for (size_t k = 0; curve && k < c->nk; k++)
        json_array_append_new(curve, json_real(c->misses_per_set_s[k]));
    if (!doc || !curve || json_object_update_new(doc, json_pack("{s:s, s:i, s:i, s:I, s:f, s:I, s:f, s:o}",
                                                                "machine", c->machine, "ways", (int)c->ways,
                                                                "line_size", (int)c->line_size, "sets",
                                                                (json_int_t)c->units, "rate", c->rate, "probed",
                                                                (json_int_t)c->probed, "touch_rate", c->touch_rate,
                                                                "misses_per_set_s", curve)) < 0) {
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
    uint64_t v[4];
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
    if (rc == 0)
        rc = jget_real(&g, doc, "rate", "rate", false, &c->rate);
    if (rc == 0)
        rc = jget_real(&g, doc, "touch_rate", "touch_rate", false, &c->touch_rate);
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
    json_decref(doc);
    return rc;
}

double llc_calib_lines(const struct llc_calib *c, double m)
{
    /* The running maximum makes the curve monotone, so the inverse is
     * defined; flat stretches map to their first k. */
    double prev = c->misses_per_set_s[0];
    if (!(m > prev))
        return 0;
    for (size_t k = 1; k < c->nk; k++) {
        const double cur = fmax(prev, c->misses_per_set_s[k]);
        if (m <= cur)
            return cur > prev ? (double)(k - 1) + (m - prev) / (cur - prev) : (double)k;
        prev = cur;
    }
    return (double)(c->nk - 1);
}
