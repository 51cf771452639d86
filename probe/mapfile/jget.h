/* Field access for the readers: every getter names the file and the field
 * in its error ("a.map.json: llc.ways: missing"). */
#ifndef LLC_MAPFILE_JGET_H
#define LLC_MAPFILE_JGET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jget {
    const char *path; /* the file, for messages */
    char *err;
    size_t errlen;
};

/* Loads path and checks "format" and "version". */
int jget_load(struct jget *g, const char *format, int version, json_t **out);
/* obj[key] of the given kind; field is the dotted name for messages. */
int jget_object(const struct jget *g, const json_t *obj, const char *key, const char *field,
                json_t **out);
int jget_string(const struct jget *g, const json_t *obj, const char *key, const char *field,
                const char **out);
int jget_uint(const struct jget *g, const json_t *obj, const char *key, const char *field,
              uint64_t lo, uint64_t hi, uint64_t *out);
/* A number; null reads as NaN when nullable. */
int jget_real(const struct jget *g, const json_t *obj, const char *key, const char *field,
              bool nullable, double *out);
int jget_bool(const struct jget *g, const json_t *obj, const char *key, const char *field,
              bool *out);
/* An array of exactly n non-negative finite numbers. */
int jget_reals(const struct jget *g, const json_t *arr, const char *field, size_t n, double *out);
/* Fails with "<file>: <field>: <why>". */
int jget_fail(const struct jget *g, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
