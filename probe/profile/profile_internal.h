/* Private to probe/profile/: what the checker, reader and writer share. */
#ifndef LLC_PROFILE_INTERNAL_H
#define LLC_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Fails with "<name>: <field>: <why>". */
int prof_fail(const char *name, char *err, size_t errlen, int code, const char *field,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* s is one of the NULL-terminated names (false for s = NULL). */
bool prof_one_of(const char *s, const char *const *names);

#endif
