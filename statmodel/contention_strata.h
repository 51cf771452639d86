/* Private to statmodel/contention*.c: the per-stratum equilibrium as the
 * phase-tuple solver calls it (docs/METHODS.md §12.6, per-stratum reuse). */
#ifndef LLC_STATMODEL_CONTENTION_STRATA_H
#define LLC_STATMODEL_CONTENTION_STRATA_H

#include "llcprobe/contention.h"

/* True when some phase of the tuple carries per-stratum reuse. */
bool sm_contention_has_strata(const struct llc_contention_phase *const *ph, size_t n);

/* llc_contention_strata_equilibrium for the tuple's parties p (built from
 * ph), strata and references taken from ph. */
int sm_contention_strata_shares(const struct llc_contention_phase *const *ph,
                                const struct llc_contention_party *p, size_t n, double capacity,
                                enum llc_contention_policy base, unsigned ways,
                                struct llc_contention_share *out, struct llc_contention_info *info,
                                char *err, size_t errlen);

#endif
