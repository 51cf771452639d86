/* SHA-256 of a file (FIPS 180-4), for the program identity in profiles. */
#ifndef LLC_UTIL_SHA256_H
#define LLC_UTIL_SHA256_H

#include <stddef.h>

/* hex gets 64 lower-case hex digits and a NUL. 0, or a negative errno code
 * with err naming the file. */
int llc_sha256_file(const char *path, char hex[65], char *err, size_t errlen);

#endif
