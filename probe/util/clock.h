/* Clocks: monotonic seconds for durations and deadlines, and the calling
 * thread's CPU time for the cost of a computation. */
#ifndef LLC_UTIL_CLOCK_H
#define LLC_UTIL_CLOCK_H

/* CLOCK_MONOTONIC in seconds. */
double llc_now(void);
/* CPU time of the calling thread, seconds: what a single-threaded step
 * costs whatever else the machine runs (llc_now is wall time). */
double llc_thread_cpu_now(void);

#endif
