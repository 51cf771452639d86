/* A target's life after launch: polling, waiting, stopping, and the
 * registry a signal handler uses to stop every target at once. */
#include "target/target_internal.h"

#include "llcprobe/common.h"
#include "util/identity.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define REGISTRY_SLOTS 32
/* 0 = free; else the kill() argument: -pgid or pid. */
static atomic_int registry[REGISTRY_SLOTS];

int llc_target_registry_add(pid_t kill_target)
{
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&registry[i], &expected, (int)kill_target))
            return i;
    }
    return -1;
}

void llc_target_registry_remove(int slot)
{
    if (slot >= 0)
        atomic_store(&registry[slot], 0);
}

void llc_target_emergency_stop(int sig)
{
    const int saved_errno = errno;
    for (int i = 0; i < REGISTRY_SLOTS; i++) {
        const int who = atomic_load(&registry[i]);
        if (who == 0)
            continue;
        kill(who, sig);
        kill(who, SIGCONT);
    }
    errno = saved_errno;
}

int llc_target_pidfd_open(pid_t pid)
{
    const long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
}

double llc_target_elapsed(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_nsec - since->tv_nsec) * 1e-9;
}

struct llc_target *llc_target_alloc(void)
{
    struct llc_target *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->go_fd = t->status_fd = t->pidfd = t->slot = -1;
    t->info.cpu = -1;
    return t;
}

void llc_target_record_status(struct llc_target *t, int wstatus)
{
    t->ended = true;
    t->final.state = WIFSIGNALED(wstatus) ? LLC_TARGET_SIGNALLED : LLC_TARGET_EXITED;
    t->final.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    t->final.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    t->final.core_dumped = WIFSIGNALED(wstatus) && WCOREDUMP(wstatus);
    t->final.runtime_s = t->started ? llc_target_elapsed(&t->t0) : 0.0;
    llc_target_registry_remove(t->slot);
    t->slot = -1;
}

int llc_target_reap(struct llc_target *t, bool block)
{
    /* Look without reaping first: while the zombie exists its pid (and
     * group id) cannot be reused, so the emergency registry never holds a
     * number that could name someone else's process. */
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)t->info.pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) == 0)
            break;
        if (errno != EINTR)
            return -errno;
    }
    if (si.si_pid == 0)
        return 0;
    llc_target_registry_remove(t->slot);
    t->slot = -1;
    int wstatus;
    while (waitpid(t->info.pid, &wstatus, 0) < 0)
        if (errno != EINTR)
            return -errno;
    llc_target_record_status(t, wstatus);
    return 1;
}

/* Not our child: gone when pidfd says so, kill() finds nothing, or it is a
 * zombie its parent has not reaped yet. */
static bool attached_gone(const struct llc_target *t)
{
    if (t->pidfd >= 0) {
        struct pollfd p = {.fd = t->pidfd, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
    }
    if (kill(t->info.pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->info.pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return true;
    const bool got = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    const char *paren = got ? strrchr(buf, ')') : NULL;
    return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

int llc_target_poll(struct llc_target *t, struct llc_target_status *st, char *err, size_t errlen)
{
    if (!t->ended) {
        if (t->info.attached) {
            if (attached_gone(t)) {
                t->ended = true;
                t->final = (struct llc_target_status){.state = LLC_TARGET_EXITED,
                                                      .exit_code = -1,
                                                      .runtime_s = llc_target_elapsed(&t->t0)};
            }
        } else {
            const int rc = llc_target_reap(t, false);
            if (rc < 0)
                return llc_errf(err, errlen, rc, "waiting for target %d: %s", (int)t->info.pid,
                                strerror(-rc));
        }
    }
    if (t->ended) {
        *st = t->final;
    } else {
        memset(st, 0, sizeof(*st));
        st->state = t->started || t->info.attached ? LLC_TARGET_RUNNING : LLC_TARGET_READY;
        st->runtime_s = t->started || t->info.attached ? llc_target_elapsed(&t->t0) : 0.0;
    }
    return 0;
}

int llc_target_wait(struct llc_target *t, int timeout_ms, struct llc_target_status *st, char *err,
                    size_t errlen)
{
    if (!t->started && !t->info.attached && !t->ended)
        return llc_errf(err, errlen, -EINVAL, "target %d was launched but never started",
                        (int)t->info.pid);
    struct timespec begun;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    for (;;) {
        const int rc = llc_target_poll(t, st, err, errlen);
        if (rc < 0)
            return rc;
        if (t->ended)
            return 1;
        int slice = -1;
        if (timeout_ms >= 0) {
            const int left = timeout_ms - (int)(llc_target_elapsed(&begun) * 1000.0);
            if (left <= 0)
                return 0;
            slice = left;
        }
        if (t->pidfd >= 0) {
            struct pollfd p = {.fd = t->pidfd, .events = POLLIN};
            poll(&p, 1, slice);
        } else {
            const int ms = slice >= 0 && slice < 2 ? slice : 2;
            const struct timespec nap = {0, (long)ms * 1000000L};
            nanosleep(&nap, NULL);
        }
    }
}

static void nap_ms(long ms)
{
    const struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

int llc_target_stop(struct llc_target *t, struct llc_target_status *st, char *err, size_t errlen)
{
    struct llc_target_status local;
    if (!st)
        st = &local;
    if (t->info.attached || t->ended)
        return llc_target_poll(t, st, err, errlen);
    const pid_t pid = t->info.pid;
    if (!t->started) {
        /* Still our own code waiting on the go pipe: nothing to let finish. */
        kill(pid, SIGKILL);
        const int rc = llc_target_reap(t, true);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "waiting for target %d: %s", (int)pid, strerror(-rc));
        *st = t->final;
        return 0;
    }
    const pid_t who = t->share_pgroup ? pid : -t->info.pgid;
    kill(who, SIGTERM);
    kill(who, SIGCONT);
    struct timespec begun;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    int rc = llc_target_wait(t, (int)t->grace_ms, st, err, errlen);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        kill(who, SIGKILL);
        rc = llc_target_wait(t, -1, st, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (t->share_pgroup)
        return 0;
    /* The leader is reaped; members of its group may linger (a grandchild
     * ignoring SIGTERM). The group id cannot be reused while any remain. */
    while (kill(who, 0) == 0 && llc_target_elapsed(&begun) * 1000.0 < t->grace_ms)
        nap_ms(5);
    if (kill(who, 0) == 0) {
        kill(who, SIGKILL);
        for (int i = 0; i < 200 && kill(who, 0) == 0; i++)
            nap_ms(5);
    }
    return 0;
}

void llc_target_destroy(struct llc_target *t)
{
    if (!t)
        return;
    if (t->info.pid > 0 && !t->info.attached && !t->ended) {
        char ignored[LLC_ERRLEN];
        struct llc_target_status st;
        llc_target_stop(t, &st, ignored, sizeof(ignored));
    }
    llc_target_registry_remove(t->slot);
    if (t->output_created) {
        struct llc_fs_id id;
        llc_fs_as_invoker(&id);
        unlink(t->output_created);
        llc_fs_restore(&id);
        free(t->output_created);
    }
    llc_target_restore_affinity(t);
    if (t->go_fd >= 0)
        close(t->go_fd);
    if (t->status_fd >= 0)
        close(t->status_fd);
    if (t->pidfd >= 0)
        close(t->pidfd);
    free(t);
}

const struct llc_target_info *llc_target_info(const struct llc_target *t)
{
    return &t->info;
}

const char *llc_target_state_name(enum llc_target_state s)
{
    switch (s) {
    case LLC_TARGET_READY:
        return "ready";
    case LLC_TARGET_RUNNING:
        return "running";
    case LLC_TARGET_EXITED:
        return "exited";
    case LLC_TARGET_SIGNALLED:
        return "signalled";
    }
    return "?";
}
