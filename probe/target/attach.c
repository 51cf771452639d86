/* Attaching to a process that already runs: checks, and pinning all its
 * threads. */
#include "target/target_internal.h"

#include "llcprobe/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int llc_target_pin_process(pid_t pid, int cpu, char *err, size_t errlen)
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
            if (sched_setaffinity((pid_t)tid, sizeof(set), &set) != 0 && errno != ESRCH) {
                rc = llc_errf(err, errlen, -errno, "cannot pin thread %ld of process %d to CPU %d: %s",
                              tid, (int)pid, cpu, strerror(errno));
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
    struct llc_target *t = llc_target_alloc();
    if (!t)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
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
                 "attached to process %d; its memory is readable (ptrace access allowed)", (int)pid);
    } else {
        snprintf(t->info.attach_note, sizeof(t->info.attach_note),
                 "attached to process %d; its memory is not readable (%s: ptrace access denied by "
                 "ownership or kernel.yama.ptrace_scope)", (int)pid, strerror(errno));
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
            rc = llc_target_pick_cpu(-1, &t->info.cpu, t->info.cpu_note,
                                     sizeof(t->info.cpu_note), err, errlen);
        } else if (cpu < 0 || cpu >= CPU_SETSIZE) {
            rc = llc_errf(err, errlen, -EINVAL, "CPU %d is out of range", cpu);
        } else {
            t->info.cpu = cpu;
            snprintf(t->info.cpu_note, sizeof(t->info.cpu_note), "CPU %d (as asked)", cpu);
        }
        if (rc == 0)
            rc = llc_target_pin_process(pid, t->info.cpu, err, errlen);
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
