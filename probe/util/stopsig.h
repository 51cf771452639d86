/* SIGINT, SIGTERM and SIGHUP as a request to stop: the handler only records
 * the signal; long loops (the simulator, target waits) look at
 * llc_stop_requested() and unwind through their normal cleanup, so targets
 * are stopped, temporaries removed and settings restored on the way out.
 * The command then exits 128 + the signal (130, 143, 129) with one line. */
#ifndef LLC_UTIL_STOPSIG_H
#define LLC_UTIL_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

/* The signal that asked to stop, 0 if none. Written only by the handler. */
extern volatile sig_atomic_t llc_stop_signal;

struct llc_stop_saved {
    struct sigaction old[3];
};
/* Installs the recording handler (no SA_RESTART: blocking calls return
 * EINTR) and clears the flag. */
void llc_stop_install(struct llc_stop_saved *saved);
void llc_stop_restore(const struct llc_stop_saved *saved);

static inline bool llc_stop_requested(void)
{
    return llc_stop_signal != 0;
}

/* 128 + the signal. */
static inline int llc_stop_exit_code(void)
{
    return 128 + (int)llc_stop_signal;
}

#endif
