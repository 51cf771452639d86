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

struct llc_profile;
struct llc_profile_phase;
/* A phase's cross_spans: freed; checked (phases[i]). */
void prof_spans_free(struct llc_profile_phase *ph);
int prof_spans_check(const struct llc_profile *p, size_t i, const char *name, char *err,
                     size_t errlen);

#endif
