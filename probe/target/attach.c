/* Attaching to a process that already runs: checks, and pinning all its
 * threads. */
#include "target/target_internal.h"

#include "llcprobe/common.h"
#include "util/identity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Remembers tid's mask before the first change to it. */
static int save_affinity(struct llc_target *t, pid_t tid)
{
    for (size_t i = 0; i < t->n_saved; i++)
        if (t->saved_tids[i] == tid)
            return 0;
    cpu_set_t mask;
    if (sched_getaffinity(tid, sizeof(mask), &mask) != 0)
        return -errno;
    cpu_set_t *const m = realloc(t->saved_affinity, (t->n_saved + 1) * sizeof(*m));
    if (!m)
        return -ENOMEM;
    t->saved_affinity = m;
    pid_t *const ids = realloc(t->saved_tids, (t->n_saved + 1) * sizeof(*ids));
    if (!ids)
        return -ENOMEM;
    t->saved_tids = ids;
    m[t->n_saved] = mask;
    ids[t->n_saved++] = tid;
    return 0;
}

void llc_target_restore_affinity(struct llc_target *t)
{
    /* A thread that ended meanwhile (ESRCH) needs nothing. */
    for (size_t i = 0; i < t->n_saved; i++)
        sched_setaffinity(t->saved_tids[i], sizeof(t->saved_affinity[i]), &t->saved_affinity[i]);
    free(t->saved_affinity);
    free(t->saved_tids);
    t->saved_affinity = NULL;
    t->saved_tids = NULL;
    t->n_saved = 0;
}

int llc_target_pin_process(pid_t pid, int cpu, struct llc_target *t, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = 0, pinned = 0;
    const struct dirent *de;
    /* Threads started meanwhile inherit the affinity of the thread that
     * creates them, so one pass settles all but a race with a creator
     * pinned after its child was listed; a second pass closes it. */
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        rewinddir(dir);
        while ((de = readdir(dir)) != NULL) {
            char *end;
            const long tid = strtol(de->d_name, &end, 10);
            if (*end || tid <= 0)
                continue;
            const int saved = t ? save_affinity(t, (pid_t)tid) : 0;
            if (saved == -ESRCH)
                continue;
            if (saved < 0) {
                rc = llc_errf(err, errlen, saved,
                              "cannot read the CPU mask of thread %ld of process %d: %s", tid,
                              (int)pid, strerror(-saved));
                break;
            }
            if (sched_setaffinity((pid_t)tid, sizeof(set), &set) != 0 && errno != ESRCH) {
                rc = llc_errf(err, errlen, -errno,
                              "cannot pin thread %ld of process %d to CPU %d: %s", tid, (int)pid,
                              cpu, strerror(errno));
                break;
            }
            pinned += pass == 0;
        }
    }
    closedir(dir);
    return rc < 0 ? rc : pinned;
}

int llc_target_attach(pid_t pid, const struct llc_target_options *opt, struct llc_target **out,
                      char *err, size_t errlen)
{
    *out = NULL;
    if (pid <= 0)
        return llc_errf(err, errlen, -EINVAL, "%d is not a process id", (int)pid);
    if (kill(pid, 0) != 0) {
        if (errno == ESRCH)
            return llc_errf(err, errlen, -ESRCH, "no process with pid %d", (int)pid);
        return llc_errf(err, errlen, -errno,
                        "process %d belongs to another user: not permitted to signal it (%s)",
                        (int)pid, strerror(errno));
    }
    /* Under sudo, root's right to signal and re-pin anything is not the
     * invoking user's: only their own processes. */
    struct llc_invoker inv;
    int rc = llc_invoker_get(&inv, err, errlen);
    if (rc < 0)
        return rc;
    const int owns = llc_invoker_owns_pid(&inv, pid);
    if (owns == 0)
        return llc_errf(err, errlen, -EPERM,
                        "process %d does not belong to uid %lu, who ran sudo: refused", (int)pid,
                        (unsigned long)inv.uid);
    if (owns < 0)
        return llc_errf(err, errlen, owns, "process %d: cannot read its owner: %s", (int)pid,
                        strerror(-owns));
    struct llc_target *t = llc_target_alloc();
    if (!t)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    t->info.attached = true;
    t->info.pid = pid;
    t->info.pgid = getpgid(pid);
    t->grace_ms = opt && opt->grace_ms ? opt->grace_ms : 2000;
    clock_gettime(CLOCK_MONOTONIC, &t->t0);
    t->started = true;
    t->pidfd = llc_target_pidfd_open(pid);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    const ssize_t n = readlink(path, t->info.program, sizeof(t->info.program) - 1);
    t->info.program[n > 0 ? n : 0] = '\0';
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    const int mem = open(path, O_RDONLY | O_CLOEXEC);
    t->info.may_ptrace = mem >= 0;
    if (mem >= 0) {
        close(mem);
        snprintf(t->info.attach_note, sizeof(t->info.attach_note),
                 "attached to process %d; its memory is readable (ptrace access allowed)",
                 (int)pid);
    } else {
        snprintf(t->info.attach_note, sizeof(t->info.attach_note),
                 "attached to process %d; its memory is not readable (%s: ptrace access denied by "
                 "ownership or kernel.yama.ptrace_scope)",
                 (int)pid, strerror(errno));
    }
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        char line[256];
        unsigned long uid = 0, gid = 0;
        while (fgets(line, sizeof(line), f)) {
            sscanf(line, "Uid: %lu", &uid);
            sscanf(line, "Gid: %lu", &gid);
        }
        fclose(f);
        t->info.uid = (uid_t)uid;
        t->info.gid = (gid_t)gid;
    }
    snprintf(t->info.user_note, sizeof(t->info.user_note), "runs as uid %lu (attached)",
             (unsigned long)t->info.uid);
    const int cpu = opt ? opt->cpu : LLC_TARGET_CPU_AUTO;
    if (cpu == LLC_TARGET_CPU_NONE) {
        snprintf(t->info.cpu_note, sizeof(t->info.cpu_note), "not pinned (as asked)");
    } else {
        if (cpu == LLC_TARGET_CPU_AUTO) {
            rc = llc_target_pick_cpu(-1, &t->info.cpu, t->info.cpu_note, sizeof(t->info.cpu_note),
                                     err, errlen);
        } else if (cpu < 0 || cpu >= CPU_SETSIZE) {
            rc = llc_errf(err, errlen, -EINVAL, "CPU %d is out of range", cpu);
        } else {
            t->info.cpu = cpu;
            snprintf(t->info.cpu_note, sizeof(t->info.cpu_note), "CPU %d (as asked)", cpu);
        }
        if (rc == 0)
            rc = llc_target_pin_process(pid, t->info.cpu, t, err, errlen);
        if (rc < 0)
            goto out;
    }
    *out = t;
    t = NULL;
    rc = 0;
out:
    llc_target_destroy(t);
    return rc;
}
