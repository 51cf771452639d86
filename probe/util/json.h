/* JSON helpers the file writers share. */
#ifndef LLC_UTIL_JSON_H
#define LLC_UTIL_JSON_H

#include <jansson.h>
#include <stddef.h>

/* A finite number as a JSON real; NaN and infinities (quantities that are
 * undefined or were not measured) as null, which every reader accepts. */
json_t *llc_json_finite(double v);

/* Writes `doc` (which must carry "format" and "version") atomically as
 * indented JSON. */
int llc_json_write_atomic(const char *path, const json_t *doc, char *err, size_t errlen);

/* A new JSON object with the project's header fields: format, version,
 * tool version. Returns NULL only on allocation failure. */
json_t *llc_json_doc_new(const char *format, int version);

#endif
