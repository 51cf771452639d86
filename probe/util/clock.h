/* The one clock: monotonic seconds, for durations and deadlines. */
#ifndef LLC_UTIL_CLOCK_H
#define LLC_UTIL_CLOCK_H

/* CLOCK_MONOTONIC in seconds. */
double llc_now(void);

#endif
