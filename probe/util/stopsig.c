#include "util/stopsig.h"

#include <stddef.h>

volatile sig_atomic_t llc_stop_signal;

static const int stop_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop(int sig)
{
    /* The first one decides the exit code. */
    if (!llc_stop_signal)
        llc_stop_signal = sig;
}

void llc_stop_install(struct llc_stop_saved *saved)
{
    llc_stop_signal = 0;
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; i++)
        sigaction(stop_signals[i], &sa, &saved->old[i]);
}

void llc_stop_restore(const struct llc_stop_saved *saved)
{
    for (size_t i = 0; i < 3; i++)
        sigaction(stop_signals[i], &saved->old[i], NULL);
}
