/* JSON helpers the file writers share. */
#ifndef LLC_UTIL_JSON_H
#define LLC_UTIL_JSON_H

#include <jansson.h>

/* A finite number as a JSON real; NaN and infinities (quantities that are
 * undefined or were not measured) as null, which every reader accepts. */
json_t *llc_json_finite(double v);

#endif
