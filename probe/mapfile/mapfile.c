/* Reader of llcprobe-map files (probe/map/output.c writes them). */
#include "llcprobe/mapfile.h"

#include "llcprobe/common.h"
#include "mapfile/jget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void llc_mapfile_free(struct llc_mapfile *m)
{
    if (!m)
        return;
    free(m->path);
    free(m->machine);
    free(m->target);
    free(m->page_size);
    free(m->backend);
    free(m->policy);
    free(m->measured);
    free(m->misses);
    free(m->accesses);
    free(m->dwell_s);
    free(m->sweep_misses);
    free(m->truth_occupancy);
    free(m);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int read_llc(const struct jget *g, const json_t *doc, struct llc_mapfile *m)
{
    json_t *llc;
    uint64_t v[8];
    bool victim;
    int rc = jget_object(g, doc, "llc", "llc", &llc);
    if (rc == 0)
        rc = jget_uint(g, llc, "line_size", "llc.line_size", 1, 4096, &v[0]);
    if (rc == 0)
        rc = jget_uint(g, llc, "sets_per_slice", "llc.sets_per_slice", 1, 1u << 24, &v[1]);
    if (rc == 0)
        rc = jget_uint(g, llc, "slices", "llc.slices", 1, 1024, &v[2]);
    if (rc == 0)
        rc = jget_uint(g, llc, "ways", "llc.ways", 1, 1024, &v[3]);
    if (rc == 0)
        rc = jget_uint(g, llc, "l2_ways", "llc.l2_ways", 0, 1024, &v[4]);
    if (rc == 0)
        rc = jget_uint(g, llc, "l2_sets", "llc.l2_sets", 0, 1u << 24, &v[5]);
    if (rc == 0)
        rc = jget_uint(g, llc, "bytes", "llc.bytes", 1, UINT64_MAX, &v[6]);
    if (rc == 0)
        rc = jget_uint(g, llc, "sets", "llc.sets", 1, 1u << 28, &v[7]);
    if (rc == 0)
        rc = jget_bool(g, llc, "victim", "llc.victim", &victim);
    if (rc < 0)
        return rc;
    if (v[1] * v[2] != v[7])
        return jget_fail(g, -EINVAL, "llc.sets", "%llu is not slices x sets_per_slice (%llu)",
                         (unsigned long long)v[7], (unsigned long long)(v[1] * v[2]));
    m->geo = (struct llc_map_geometry){.line_size = (unsigned)v[0],
                                       .sets_per_slice = (unsigned)v[1],
                                       .slices = (unsigned)v[2],
                                       .llc_ways = (unsigned)v[3],
                                       .l2_ways = (unsigned)v[4],
                                       .l2_sets = (unsigned)v[5],
                                       .victim_llc = victim,
                                       .llc_bytes = v[6]};
    m->units = (uint32_t)v[7];
    const json_t *pol = json_object_get(llc, "policy");
    if (pol && !json_is_null(pol) && !json_is_string(pol))
        return jget_fail(g, -EINVAL, "llc.policy", "not a string");
    m->policy = dup_or_null(json_string_value(pol));
    return 0;
}

static int read_probe(const struct jget *g, const json_t *doc, struct llc_mapfile *m)
{
    json_t *probe, *backend;
    const char *s;
    uint64_t v;
    int rc = jget_object(g, doc, "probe", "probe", &probe);
    if (rc == 0)
        rc = jget_uint(g, probe, "walk", "probe.walk", 1, 4096, &v);
    if (rc == 0) {
        m->walk = (unsigned)v;
        rc = jget_real(g, probe, "rate", "probe.rate", false, &m->rate);
    }
    if (rc == 0 && !(m->rate > 0 && isfinite(m->rate)))
        rc = jget_fail(g, -EINVAL, "probe.rate", "%g is not a positive number", m->rate);
    if (rc == 0)
        rc = jget_string(g, probe, "mode", "probe.mode", &s);
    if (rc == 0 && strcmp(s, "sweep") && strcmp(s, "global") && strcmp(s, "sets"))
        rc = jget_fail(g, -EINVAL, "probe.mode", "'%s' is not sweep, global or sets", s);
    if (rc == 0) {
        snprintf(m->mode, sizeof(m->mode), "%s", s);
        rc = jget_uint(g, probe, "seed", "probe.seed", 0, UINT64_MAX, &m->seed);
    }
    if (rc == 0)
        rc = jget_object(g, doc, "backend", "backend", &backend);
    if (rc == 0)
        rc = jget_string(g, backend, "name", "backend.name", &s);
    if (rc == 0 && !(m->backend = strdup(s)))
        rc = llc_errf(g->err, g->errlen, -ENOMEM, "out of memory");
    return rc;
}

static int read_sets(const struct jget *g, const json_t *doc, struct llc_mapfile *m)
{
    json_t *sets, *arr;
    uint64_t sweeps;
    const uint32_t n = m->units;
    int rc = jget_object(g, doc, "sets", "sets", &sets);
    if (rc == 0)
        rc = jget_uint(g, doc, "sweeps", "sweeps", 0, LLC_MAP_MAX_SWEEPS, &sweeps);
    if (rc < 0)
        return rc;
    m->sweeps = (unsigned)sweeps;
    /* The sizes come from the header: allocate only once the file holds
     * that much (a few bytes claiming 2^28 sets asked for gigabytes). */
    arr = json_object_get(sets, "measured");
    if (!arr)
        return jget_fail(g, -EINVAL, "sets.measured", "missing");
    if (!json_is_array(arr) || json_array_size(arr) != n)
        return jget_fail(g, -EINVAL, "sets.measured", "not an array of %u booleans", n);
    const json_t *sweep_arr = json_object_get(sets, "sweep_misses");
    if (!sweep_arr)
        return jget_fail(g, -EINVAL, "sets.sweep_misses", "missing");
    if (!json_is_array(sweep_arr) || json_array_size(sweep_arr) != sweeps)
        return jget_fail(g, -EINVAL, "sets.sweep_misses", "not an array of %llu sweeps",
                         (unsigned long long)sweeps);
    char field[48];
    for (size_t s = 0; s < sweeps; s++) {
        const json_t *sweep = json_array_get(sweep_arr, s);
        snprintf(field, sizeof(field), "sets.sweep_misses[%zu]", s);
        if (!json_is_array(sweep) || json_array_size(sweep) != n)
            return jget_fail(g, -EINVAL, field, "not an array of %u numbers", n);
    }
    m->measured = calloc(n, sizeof(*m->measured));
    m->misses = malloc(n * sizeof(double));
    m->accesses = malloc(n * sizeof(double));
    m->dwell_s = malloc(n * sizeof(double));
    m->sweep_misses = malloc((sweeps ? sweeps : 1) * n * sizeof(double));
    if (!m->measured || !m->misses || !m->accesses || !m->dwell_s || !m->sweep_misses)
        return llc_errf(g->err, g->errlen, -ENOMEM, "out of memory for %u sets", n);
    for (uint32_t u = 0; u < n; u++) {
        const json_t *v = json_array_get(arr, u);
        if (!json_is_boolean(v))
            return jget_fail(g, -EINVAL, "sets.measured", "entry %u is not true or false", u);
        m->measured[u] = json_is_true(v);
    }
    static const char *const names[] = {"misses", "accesses", "dwell_s"};
    double *const dst[] = {m->misses, m->accesses, m->dwell_s};
    for (size_t i = 0; i < 3; i++) {
        snprintf(field, sizeof(field), "sets.%s", names[i]);
        arr = json_object_get(sets, names[i]);
        if (!arr)
            return jget_fail(g, -EINVAL, field, "missing");
        if ((rc = jget_reals(g, arr, field, n, dst[i])) < 0)
            return rc;
    }
    for (size_t s = 0; s < sweeps; s++) {
        snprintf(field, sizeof(field), "sets.sweep_misses[%zu]", s);
        if ((rc = jget_reals(g, json_array_get(sweep_arr, s), field, n, m->sweep_misses + s * n)) <
            0)
            return rc;
    }
    for (uint32_t u = 0; u < n; u++) {
        if (!m->measured[u] && m->misses[u] > 0)
            return jget_fail(g, -EINVAL, "sets.misses", "set %u has misses but is not measured", u);
        /* Counter readings: whole numbers a double holds exactly (a value
         * like 1e300 would overflow the fit's moments). */
        for (size_t i = 0; i < 2; i++)
            if (dst[i][u] > 0x1p53 || dst[i][u] != nearbyint(dst[i][u]))
                return jget_fail(g, -EINVAL, i ? "sets.accesses" : "sets.misses",
                                 "entry %u (%g) is not a count (a whole number up to 2^53)", u,
                                 dst[i][u]);
    }
    return 0;
}

static int read_truth(const struct jget *g, const json_t *doc, struct llc_mapfile *m)
{
    const json_t *truth = json_object_get(doc, "truth");
    if (!truth || json_is_null(truth))
        return 0;
    if (!json_is_object(truth))
        return jget_fail(g, -EINVAL, "truth", "not an object");
    const json_t *occ = json_object_get(truth, "occupancy");
    if (!occ)
        return jget_fail(g, -EINVAL, "truth.occupancy", "missing");
    m->truth_occupancy = malloc(m->units * sizeof(double));
    if (!m->truth_occupancy)
        return llc_errf(g->err, g->errlen, -ENOMEM, "out of memory");
    return jget_reals(g, occ, "truth.occupancy", m->units, m->truth_occupancy);
}

int llc_mapfile_read(const char *path, struct llc_mapfile **out, char *err, size_t errlen)
{
    *out = NULL;
    struct jget g = {.path = path, .err = err, .errlen = errlen};
    json_t *doc = NULL;
    const char *s;
    struct llc_mapfile *m = calloc(1, sizeof(*m));
    if (!m)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = jget_load(&g, LLC_MAPFILE_FORMAT, LLC_MAPFILE_VERSION, &doc);
    if (rc < 0)
        goto out;
    if (!(m->path = strdup(path))) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = jget_string(&g, doc, "machine", "machine", &s)) < 0 || !(m->machine = strdup(s)) ||
        (rc = jget_string(&g, doc, "target", "target", &s)) < 0 || !(m->target = strdup(s))) {
        rc = rc < 0 ? rc : llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* Maps written before the field existed: unknown. */
    const json_t *pages = json_object_get(doc, "target_page_size");
    if (pages && !json_is_string(pages)) {
        rc = jget_fail(&g, -EINVAL, "target_page_size", "not a string");
        goto out;
    }
    if (!(m->page_size = strdup(pages ? json_string_value(pages) : "unknown"))) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = jget_bool(&g, doc, "complete", "complete", &m->complete)) < 0 ||
        (rc = read_llc(&g, doc, m)) < 0 || (rc = read_probe(&g, doc, m)) < 0 ||
        (rc = read_sets(&g, doc, m)) < 0 || (rc = read_truth(&g, doc, m)) < 0)
        goto out;
    *out = m;
    m = NULL;
out:
    json_decref(doc);
    llc_mapfile_free(m);
    return rc;
}

bool llc_mapfile_statistic(const struct llc_mapfile *m, double *x, uint8_t *excluded)
{
    double dwell = NAN;
    bool same = true;
    for (uint32_t u = 0; u < m->units; u++) {
        excluded[u] = !m->measured[u];
        if (!m->measured[u])
            continue;
        if (isnan(dwell))
            dwell = m->dwell_s[u];
        else if (fabs(m->dwell_s[u] - dwell) > 1e-9 * dwell)
            same = false;
    }
    for (uint32_t u = 0; u < m->units; u++) {
        if (excluded[u])
            x[u] = 0;
        else
            x[u] = same || !(m->dwell_s[u] > 0) ? m->misses[u] : m->misses[u] / m->dwell_s[u];
    }
    return same;
}
