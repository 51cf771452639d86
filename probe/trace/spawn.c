/* Starting valgrind for the recorder. Everything that can be checked before
 * the fork is checked here, so that a user gets one clear line instead of
 * valgrind's own diagnostics after a slow start. */
#include "trace/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llcprobe/common.h"

/* 0 if `path` is an executable regular file, else -errno with a reason. */
static int check_executable(const char *path, const char **why)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        *why = strerror(errno);
        return -errno;
    }
    if (S_ISDIR(st.st_mode)) {
        *why = "is a directory";
        return -EISDIR;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return -EACCES;
    }
    if (access(path, X_OK) < 0) {
        *why = "not executable";
        return -EACCES;
    }
    return 0;
}

int llc_spawn_find_executable(const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
    const char *why = NULL;
    if (strchr(name, '/')) {
        const int rc = check_executable(name, &why);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "%s: %s", name, why);
        if (snprintf(out, outlen, "%s", name) >= (int)outlen)
            return llc_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int found_unusable = 0;
    for (const char *dir = path; dir;) {
        const char *colon = strchr(dir, ':');
        const int dlen = colon ? (int)(colon - dir) : (int)strlen(dir);
        /* An empty PATH entry means the current directory. */
        const int n = dlen ? snprintf(out, outlen, "%.*s/%s", dlen, dir, name)
                           : snprintf(out, outlen, "./%s", name);
        if (n > 0 && (size_t)n < outlen) {
            const int rc = check_executable(out, &why);
            if (rc == 0)
                return 0;
            if (rc != -ENOENT && rc != -ENOTDIR)
                found_unusable = rc;
        }
        dir = colon ? colon + 1 : NULL;
    }
    if (found_unusable)
        return llc_errf(err, errlen, found_unusable, "%s: found in PATH but not executable", name);
    return llc_errf(err, errlen, -ENOENT, "%s: command not found in PATH", name);
}

static int parse_id(const char *s, unsigned long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    *out = strtoul(s, &end, 10);
    return errno || *end || *out > 0x7fffffffUL ? -1 : 0;
}

int llc_spawn_identity(bool keep_root, struct llc_spawn_identity *id, char *err, size_t errlen)
{
    memset(id, 0, sizeof(*id));
    const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
    if (keep_root || geteuid() != 0 || !su || !sg)
        return 0;
    unsigned long uid, gid;
    if (parse_id(su, &uid) < 0 || parse_id(sg, &gid) < 0)
        return llc_errf(err, errlen, -EINVAL, "SUDO_UID/SUDO_GID are not numeric ids");
    if (uid == 0)
        return 0;
    id->drop = true;
    id->uid = (uid_t)uid;
    id->gid = (gid_t)gid;
    id->groups[0] = id->gid;
    id->n_groups = 1;
    const struct passwd *pw = getpwuid(id->uid);
    if (pw) {
        int n = (int)LLC_ARRAY_LEN(id->groups);
        if (getgrouplist(pw->pw_name, id->gid, id->groups, &n) >= 0)
            id->n_groups = n;
        else
            id->groups[0] = id->gid; /* too many groups: the primary one only */
    }
    return 0;
}

/* What the child reports through the status pipe when it cannot exec. */
struct child_failure {
    int stage; /* 0 identity, 1 exec */
    int error;
};

static void child(const char *valgrind, char *const *vargv, const struct llc_spawn_identity *id,
                  int log_fd, int status_fd, pid_t parent)
{
    struct child_failure f = {0, 0};
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    if (id->drop && (setgroups((size_t)id->n_groups, id->groups) < 0 || setgid(id->gid) < 0 ||
                     setuid(id->uid) < 0)) {
        f.error = errno;
        goto fail;
    }
    /* After the identity change, which would clear it: the trace is useless
     * without its reader, so the program dies with llcprobe. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    f.stage = 1;
    if (fcntl(log_fd, F_SETFD, 0) < 0) {
        f.error = errno;
        goto fail;
    }
    execv(valgrind, vargv);
    f.error = errno;
fail:
    (void)!write(status_fd, &f, sizeof(f));
    _exit(127);
}

int llc_spawn_lackey(const char *valgrind, const char *program, char *const *argv,
                     const struct llc_spawn_identity *id, struct llc_spawned *out, char *err,
                     size_t errlen)
{
    int logp[2] = {-1, -1}, statp[2] = {-1, -1};
    char log_opt[32];
    char **vargv = NULL;
    int rc = 0;
    out->pid = -1;
    out->log_fd = -1;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    vargv = calloc(argc + 7, sizeof(*vargv));
    if (!vargv || pipe2(logp, O_CLOEXEC) < 0 || pipe2(statp, O_CLOEXEC) < 0) {
        rc = llc_errf(err, errlen, -errno, "cannot set up valgrind's pipe: %s", strerror(errno));
        goto out;
    }
    /* Lackey writes a line at a time; a large pipe lets it run ahead of
     * the parser instead of blocking on every few kilobytes. */
    if (fcntl(logp[0], F_SETPIPE_SZ, 1 << 20) < 0)
        (void)fcntl(logp[0], F_SETPIPE_SZ, 1 << 18);
    snprintf(log_opt, sizeof(log_opt), "--log-fd=%d", logp[1]);
    size_t k = 0;
    vargv[k++] = (char *)valgrind;
    vargv[k++] = "--tool=lackey";
    vargv[k++] = "--trace-mem=yes";
    /* No gdbserver: its FIFOs in $TMPDIR would outlive a valgrind that is
     * stopped with SIGKILL. */
    vargv[k++] = "--vgdb=no";
    vargv[k++] = log_opt;
    vargv[k++] = (char *)program;
    for (size_t i = 1; i < argc; i++)
        vargv[k++] = argv[i];
    vargv[k] = NULL;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        rc = llc_errf(err, errlen, -errno, "cannot fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        child(valgrind, vargv, id, logp[1], statp[1], parent);
    /* Both sides set the group, so a signal to it right after fork works. */
    setpgid(pid, pid);
    close(logp[1]);
    close(statp[1]);
    logp[1] = statp[1] = -1;
    struct child_failure f;
    ssize_t n;
    do
        n = read(statp[0], &f, sizeof(f));
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(f)) {
        waitpid(pid, NULL, 0);
        if (f.stage == 0)
            rc = llc_errf(err, errlen, -f.error, "cannot switch to uid %d gid %d: %s", (int)id->uid,
                          (int)id->gid, strerror(f.error));
        else
            rc = llc_errf(err, errlen, -f.error, "cannot run %s: %s", valgrind, strerror(f.error));
        goto out;
    }
    out->pid = pid;
    out->log_fd = logp[0];
    logp[0] = -1;
out:
    for (int i = 0; i < 2; i++) {
        if (logp[i] >= 0)
            close(logp[i]);
        if (statp[i] >= 0)
            close(statp[i]);
    }
    free(vargv);
    return rc;
}
