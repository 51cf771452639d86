/* Field access with messages naming the file and the field. */
#include "mapfile/jget.h"
#include "util/input.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int jget_fail(const struct jget *g, int code, const char *field, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return llc_errf(g->err, g->errlen, code, "%s: %s: %s", g->path, field, why);
}

int jget_load(struct jget *g, const char *format, int version, json_t **out)
{
    json_error_t je;
    *out = NULL;
    /* Read once (a pipe or <(command) works), a directory is named as one. */
    char *text = NULL;
    size_t len = 0;
    const int src = llc_input_slurp(g->path, LLC_JSON_MAX_BYTES, &text, &len, g->err, g->errlen);
    if (src < 0)
        return src;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!doc) {
        char why[160];
        llc_escape(je.text, strlen(je.text), why, sizeof(why));
        return llc_errf(g->err, g->errlen, -EINVAL, "%s: line %d column %d: not JSON: %s", g->path,
                        je.line, je.column, why);
    }
    int rc = 0;
    const char *fmt;
    uint64_t v;
    if (!json_is_object(doc))
        rc = llc_errf(g->err, g->errlen, -EINVAL, "%s: not a JSON object (expected %s)", g->path,
                      format);
    else if (!json_object_get(doc, "format"))
        /* Another tool's JSON, or an empty object. */
        rc = jget_fail(g, -EINVAL, "format", "missing: not an %s file", format);
    else if ((rc = jget_string(g, doc, "format", "format", &fmt)) == 0 && strcmp(fmt, format) != 0)
        rc = jget_fail(g, -EINVAL, "format", "'%s' is not %s",
                       llc_escape(fmt, strlen(fmt), (char[96]){0}, 96), format);
    else if (rc == 0 && (rc = jget_uint(g, doc, "version", "version", 0, INT32_MAX, &v)) == 0 &&
             v != (uint64_t)version)
        rc = jget_fail(g, -EINVAL, "version",
                       "%llu is not supported (this llcprobe reads version %d)",
                       (unsigned long long)v, version);
    if (rc < 0) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

static int get(const struct jget *g, const json_t *obj, const char *key, const char *field,
               json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return jget_fail(g, -EINVAL, field, "missing");
    return 0;
}

int jget_object(const struct jget *g, const json_t *obj, const char *key, const char *field,
                json_t **out)
{
    int rc = get(g, obj, key, field, out);
    if (rc == 0 && !json_is_object(*out))
        rc = jget_fail(g, -EINVAL, field, "not an object");
    return rc;
}

int jget_string(const struct jget *g, const json_t *obj, const char *key, const char *field,
                const char **out)
{
    json_t *v;
    int rc = get(g, obj, key, field, &v);
    if (rc == 0 && !json_is_string(v))
        rc = jget_fail(g, -EINVAL, field, "not a string");
    *out = rc == 0 ? json_string_value(v) : NULL;
    return rc;
}

int jget_uint(const struct jget *g, const json_t *obj, const char *key, const char *field,
              uint64_t lo, uint64_t hi, uint64_t *out)
{
    json_t *v;
    int rc = get(g, obj, key, field, &v);
    if (rc < 0)
        return rc;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return jget_fail(g, -EINVAL, field, "not a whole number");
    const uint64_t x = (uint64_t)json_integer_value(v);
    if (x < lo || x > hi)
        return jget_fail(g, -EINVAL, field, "%llu is outside %llu..%llu", (unsigned long long)x,
                         (unsigned long long)lo, (unsigned long long)hi);
    *out = x;
    return 0;
}

int jget_real(const struct jget *g, const json_t *obj, const char *key, const char *field,
              bool nullable, double *out)
{
    json_t *v;
    int rc = get(g, obj, key, field, &v);
    if (rc < 0)
        return rc;
    if (nullable && json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v))
        return jget_fail(g, -EINVAL, field, "not a number");
    *out = json_number_value(v);
    return 0;
}

int jget_bool(const struct jget *g, const json_t *obj, const char *key, const char *field,
              bool *out)
{
    json_t *v;
    int rc = get(g, obj, key, field, &v);
    if (rc == 0 && !json_is_boolean(v))
        rc = jget_fail(g, -EINVAL, field, "not true or false");
    if (rc == 0)
        *out = json_is_true(v);
    return rc;
}

int jget_reals(const struct jget *g, const json_t *arr, const char *field, size_t n, double *out)
{
    if (!json_is_array(arr))
        return jget_fail(g, -EINVAL, field, "not an array");
    if (json_array_size(arr) != n)
        return jget_fail(g, -EINVAL, field, "%zu entries, expected %zu", json_array_size(arr), n);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
            return jget_fail(g, -EINVAL, field, "entry %zu is not a non-negative number", i);
        out[i] = json_number_value(v);
    }
    return 0;
}
