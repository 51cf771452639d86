/* Launching a target: fork, set the child up, hold it before exec until
 * llc_target_start(). The child runs only async-signal-safe calls. */
#include "target/target_internal.h"
#include "target/user.h"
#include "util/identity.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

void llc_target_options_init(struct llc_target_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->cpu = LLC_TARGET_CPU_AUTO;
}

static int check_executable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return llc_errf(err, errlen, -EACCES, "%s: is a directory, not a program", path);
    if (access(path, X_OK) != 0)
        return llc_errf(err, errlen, -errno, "%s: %s (not executable)", path, strerror(errno));
    return 0;
}

/* execvp's lookup, done in the parent so that "no such program" is known
 * before any child exists. */
static int resolve_program(const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
    if (!*name)
        return llc_errf(err, errlen, -EINVAL, "empty program name");
    if (strchr(name, '/')) {
        if ((size_t)snprintf(out, outlen, "%s", name) >= outlen)
            return llc_errf(err, errlen, -ENAMETOOLONG, "program path too long");
        return check_executable(out, err, errlen);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int first_error = 0;
    char why[LLC_ERRLEN] = "";
    for (const char *dir = path; dir;) {
        const char *colon = strchr(dir, ':');
        const int len = colon ? (int)(colon - dir) : (int)strlen(dir);
        if ((size_t)snprintf(out, outlen, "%.*s/%s", len, len ? dir : ".", name) < outlen) {
            struct stat st;
            /* Directories we cannot search hold nothing we could run. */
            const int rc = stat(out, &st) == 0 ? check_executable(out, why, sizeof(why)) : -ENOENT;
            if (rc == 0)
                return 0;
            /* A match that is not executable beats "not found". */
            if (rc != -ENOENT && !first_error) {
                first_error = rc;
                llc_errf(err, errlen, rc, "%s", why);
            }
        }
        dir = colon ? colon + 1 : NULL;
    }
    if (first_error)
        return first_error;
    return llc_errf(err, errlen, -ENOENT, "%s: no such program (not found in PATH)", name);
}

/* Opened as the invoking user (so the file is theirs and only a file they
 * could write is written), never through a symlink, and not truncated here:
 * the child truncates it once released into exec, so a run refused before
 * llc_target_start() leaves an existing file as it was (and removes one it
 * created). */
static int open_output(const struct llc_target_options *opt, struct llc_target *t, char *err,
                       size_t errlen)
{
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | (opt->output_append ? O_APPEND : 0);
    int fd = open(opt->output_path, flags | O_CREAT | O_EXCL, 0644);
    if (fd >= 0)
        t->output_created = strdup(opt->output_path);
    else if (errno == EEXIST)
        fd = open(opt->output_path, flags);
    const int e = errno;
    llc_fs_restore(&id);
    if (fd < 0 && e == ELOOP)
        return llc_errf(err, errlen, -ELOOP, "target output %s: is a symlink: refused",
                        opt->output_path);
    if (fd < 0)
        return llc_errf(err, errlen, -e, "target output %s: %s", opt->output_path, strerror(e));
    return fd;
}

static void child_fail(int status_fd, int stage)
{
    const struct llc_child_msg m = {stage, errno};
    (void)!write(status_fd, &m, sizeof(m));
    _exit(127);
}

/* Between fork and exec: raw system calls only. */
static void child_main(char *const argv[], const char *program, int go_fd, int status_fd,
                       int out_fd, int cpu, const struct llc_target_options *opt,
                       const struct llc_target_user *u, pid_t parent)
{
    /* The probe may block or ignore these; the target must not inherit it. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    static const int reset[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD};
    for (size_t i = 0; i < LLC_ARRAY_LEN(reset); i++)
        signal(reset[i], SIG_DFL);
    if (!opt->share_pgroup && setpgid(0, 0) != 0)
        child_fail(status_fd, LLC_CHILD_PGROUP);
    if (out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0))
        child_fail(status_fd, LLC_CHILD_OUTPUT);
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0)
            child_fail(status_fd, LLC_CHILD_PIN);
    }
    if (u->drop) {
        if (setgroups(u->n_groups, u->groups) != 0)
            child_fail(status_fd, LLC_CHILD_GROUPS);
        if (setgid(u->gid) != 0)
            child_fail(status_fd, LLC_CHILD_GID);
        if (setuid(u->uid) != 0)
            child_fail(status_fd, LLC_CHILD_UID);
        if (setuid(0) == 0) {
            errno = EPERM;
            child_fail(status_fd, LLC_CHILD_STILL_ROOT);
        }
    }
    for (size_t i = 0; i < opt->n_inherit_fds; i++)
        if (fcntl(opt->inherit_fds[i], F_SETFD, 0) != 0)
            child_fail(status_fd, LLC_CHILD_INHERIT);
    if (opt->die_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            errno = ESRCH;
            child_fail(status_fd, LLC_CHILD_PARENT_GONE);
        }
    }
    const struct llc_child_msg ready = {LLC_CHILD_READY, 0};
    if (write(status_fd, &ready, sizeof(ready)) != (ssize_t)sizeof(ready))
        _exit(127);
    char go;
    ssize_t got;
    while ((got = read(go_fd, &go, 1)) < 0 && errno == EINTR)
        ;
    if (got != 1)
        _exit(127); /* the launcher went away or cancelled */
    /* Truncated only now (see open_output); a pipe or device has no size. */
    if (out_fd >= 0 && !opt->output_append)
        (void)!ftruncate(STDOUT_FILENO, 0);
    execv(program, argv);
    child_fail(status_fd, LLC_CHILD_EXEC);
}

/* 1 = a message, 0 = EOF (exec happened), negative = read error. */
static int read_msg(int fd, struct llc_child_msg *m)
{
    size_t done = 0;
    while (done < sizeof(*m)) {
        const ssize_t got = read(fd, (char *)m + done, sizeof(*m) - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            return done == 0 ? 0 : -EIO;
        done += (size_t)got;
    }
    return 1;
}

static const char *stage_text(int stage)
{
    switch (stage) {
    case LLC_CHILD_PGROUP:
        return "creating its process group";
    case LLC_CHILD_OUTPUT:
        return "redirecting its output";
    case LLC_CHILD_PIN:
        return "pinning it to its CPU";
    case LLC_CHILD_GROUPS:
        return "setting its supplementary groups";
    case LLC_CHILD_GID:
        return "setting its group id";
    case LLC_CHILD_UID:
        return "setting its user id";
    case LLC_CHILD_STILL_ROOT:
        return "dropping root (setuid(0) still worked)";
    case LLC_CHILD_INHERIT:
        return "passing it an inherited descriptor";
    case LLC_CHILD_PARENT_GONE:
        return "tying it to llcprobe's life (llcprobe's thread is gone)";
    case LLC_CHILD_EXEC:
        return "executing it";
    }
    return "setting it up";
}

static int child_failed(struct llc_target *t, int rc, const struct llc_child_msg *m, char *err,
                        size_t errlen)
{
    /* The child _exit()s right after reporting. */
    llc_target_reap(t, true);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "target %s: lost contact with the child: %s",
                        t->info.program, strerror(-rc));
    if (rc == 0)
        return llc_errf(err, errlen, -ECHILD, "target %s: the child died while being set up",
                        t->info.program);
    const int e = m->error ? m->error : EIO;
    if (m->stage == LLC_CHILD_PIN)
        return llc_errf(err, errlen, -e, "target %s: pinning it to CPU %d failed: %s",
                        t->info.program, t->info.cpu, strerror(e));
    return llc_errf(err, errlen, -e, "target %s: %s failed: %s", t->info.program,
                    stage_text(m->stage), strerror(e));
}

static int choose_cpu(const struct llc_target_options *opt, struct llc_target *t, char *err,
                      size_t errlen)
{
    t->info.cpu = -1;
    const size_t n = sizeof(t->info.cpu_note);
    if (opt->cpu == LLC_TARGET_CPU_NONE) {
        snprintf(t->info.cpu_note, n, "not pinned (as asked)");
        return 0;
    }
    if (opt->cpu == LLC_TARGET_CPU_AUTO)
        return llc_target_pick_cpu(-1, &t->info.cpu, t->info.cpu_note, n, err, errlen);
    if (opt->cpu < 0 || opt->cpu >= CPU_SETSIZE)
        return llc_errf(err, errlen, -EINVAL, "CPU %d is out of range", opt->cpu);
    t->info.cpu = opt->cpu;
    snprintf(t->info.cpu_note, n, "CPU %d (as asked)", opt->cpu);
    return 0;
}

int llc_target_launch(char *const argv[], const struct llc_target_options *opt,
                      struct llc_target **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_target_options defaults;
    if (!opt) {
        llc_target_options_init(&defaults);
        opt = &defaults;
    }
    if (!argv || !argv[0])
        return llc_errf(err, errlen, -EINVAL, "no program given");
    struct llc_target_user user = {0};
    int go[2] = {-1, -1}, status[2] = {-1, -1}, out_fd = -1;
    struct llc_target *t = llc_target_alloc();
    if (!t)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    t->grace_ms = opt->grace_ms ? opt->grace_ms : 2000;
    t->share_pgroup = opt->share_pgroup;
    int rc = resolve_program(argv[0], t->info.program, sizeof(t->info.program), err, errlen);
    if (rc == 0)
        rc = choose_cpu(opt, t, err, errlen);
    if (rc == 0)
        rc = llc_target_user_plan(opt->as_root, &user, t->info.user_note, sizeof(t->info.user_note),
                                  err, errlen);
    if (rc < 0)
        goto out;
    t->info.uid = user.uid;
    t->info.gid = user.gid;
    t->info.dropped_root = user.drop;
    if (opt->output_path) {
        out_fd = rc = open_output(opt, t, err, errlen);
        if (rc < 0)
            goto out;
    }
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
        rc = llc_errf(err, errlen, -errno, "pipe: %s", strerror(errno));
        goto out;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        rc = llc_errf(err, errlen, -errno, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        close(go[1]);
        close(status[0]);
        child_main(argv, t->info.program, go[0], status[1], out_fd, t->info.cpu, opt, &user,
                   parent);
    }
    /* Both sides set the group, so it exists whichever runs first. */
    if (!opt->share_pgroup)
        setpgid(pid, pid);
    t->info.pid = pid;
    t->info.pgid = opt->share_pgroup ? getpgrp() : pid;
    t->slot = llc_target_registry_add(opt->share_pgroup ? pid : -pid);
    t->pidfd = llc_target_pidfd_open(pid);
    close(go[0]);
    close(status[1]);
    go[0] = status[1] = -1;
    t->go_fd = go[1];
    t->status_fd = status[0];
    go[1] = status[0] = -1;
    struct llc_child_msg m;
    rc = read_msg(t->status_fd, &m);
    if (rc != 1 || m.stage != LLC_CHILD_READY) {
        rc = child_failed(t, rc, &m, err, errlen);
        goto out;
    }
    *out = t;
    t = NULL;
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        if (go[i] >= 0)
            close(go[i]);
        if (status[i] >= 0)
            close(status[i]);
    }
    if (out_fd >= 0)
        close(out_fd);
    llc_target_user_free(&user);
    llc_target_destroy(t);
    return rc;
}

/* A write to a pipe whose reader died (the child was killed while held)
 * must fail with EPIPE, not kill the probe with SIGPIPE. */
static ssize_t write_quietly(int fd, const void *buf, size_t n)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    const ssize_t w = write(fd, buf, n);
    const int e = errno;
    if (w < 0 && e == EPIPE && !sigismember(&old, SIGPIPE)) {
        const struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
}

int llc_target_start(struct llc_target *t, char *err, size_t errlen)
{
    if (t->info.attached || t->started || t->ended)
        return llc_errf(err, errlen, -EINVAL, "target %d is not waiting to be started",
                        (int)t->info.pid);
    clock_gettime(CLOCK_MONOTONIC, &t->t0);
    const char go = 1;
    const ssize_t w = write_quietly(t->go_fd, &go, 1);
    close(t->go_fd);
    t->go_fd = -1;
    t->started = true;
    free(t->output_created);
    t->output_created = NULL;
    struct llc_child_msg m;
    const int rc = w == 1 ? read_msg(t->status_fd, &m) : -errno;
    close(t->status_fd);
    t->status_fd = -1;
    if (rc == 0)
        return 0;
    return child_failed(t, rc, &m, err, errlen);
}
