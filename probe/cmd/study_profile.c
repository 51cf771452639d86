/* llcprobe study: programs without a profile are profiled first, each by
 * `llcprobe profile` in a child process (up to --jobs at once), into a
 * cache directory where a profile is found again by its key: the program
 * binary's SHA-256, the arguments and the machine. Profiles are written
 * atomically by the child, so an interrupted study keeps every finished
 * one and a rerun profiles only what is missing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/study.h"
#include "cmd/study_items.h"
#include "llcprobe/common.h"
#include "util/cli.h"
#include "util/identity.h"
#include "util/sha256.h"

static volatile sig_atomic_t interrupted;

int study_profile_signal(void)
{
    return (int)interrupted;
}

static void on_signal(int sig)
{
    interrupted = sig;
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* What identifies this machine for reuse: CPU model and cache size. */
static uint64_t machine_key(uint64_t h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    int seen = 0;
    while (f && seen < 2 && fgets(line, sizeof(line), f))
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "cache size", 10) == 0) {
            h = fnv(h, line, strlen(line));
            seen++;
        }
    if (f)
        fclose(f);
    return h;
}

/* PROGRAM resolved through PATH (as execvp would). */
static int resolve(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return access(out, X_OK) == 0 ? 0 : -errno;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const char *e = strchr(p, ':');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(out, len, "%.*s/%s", (int)n, p, prog);
        if (access(out, X_OK) == 0)
            return 0;
        p += n + (e != NULL);
    }
    return -ENOENT;
}

static void sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            *s = '_';
}

/* Name and cache key of one item. */
int study_item_init(struct study_item *j, const char *dir, char *err, size_t errlen)
{
    uint64_t h = machine_key(0xcbf29ce484222325ull);
    const char *name = NULL;
    for (size_t i = 0; i < j->argc; i++) {
        h = fnv(h, j->argv[i], strlen(j->argv[i]) + 1);
        if (j->options && i + 1 < j->argc &&
            (strcmp(j->argv[i], "--name") == 0 ||
             (!name && strcmp(j->argv[i], "--workload") == 0) ||
             (!name && strcmp(j->argv[i], "--trace") == 0)))
            name = j->argv[i + 1];
    }
    if (!j->options) {
        char bin[4096], hex[65];
        if (resolve(j->argv[0], bin, sizeof(bin)) < 0)
            return llc_errf(err, errlen, -ENOENT, "%s: not found or not executable", j->argv[0]);
        if (llc_sha256_file(bin, hex, err, errlen) < 0)
            return -EIO;
        h = fnv(h, hex, 64);
        name = strrchr(j->argv[0], '/') ? strrchr(j->argv[0], '/') + 1 : j->argv[0];
    }
    snprintf(j->name, sizeof(j->name), "%s", name ? name : "program");
    char *colon = strchr(j->name, ':'); /* workload SPEC "kind:params" */
    if (colon && j->options)
        *colon = 0;
    char base[64];
    snprintf(base, sizeof(base), "%s", j->name);
    sanitize(base);
    snprintf(j->prefix, sizeof(j->prefix), "%s/%s-%016llx", dir, base, (unsigned long long)h);
    snprintf(j->file, sizeof(j->file), "%s.profile.json", j->prefix);
    snprintf(j->log, sizeof(j->log), "%s.log", j->prefix);
    return 0;
}

size_t study_item_argv(const struct study_item *j, char **av)
{
    size_t n = 0;
    av[n++] = "profile";
    av[n++] = "-q";
    av[n++] = "-o";
    av[n++] = (char *)j->prefix;
    if (!j->options) {
        av[n++] = "--name";
        av[n++] = (char *)j->name;
        av[n++] = "--";
    }
    for (size_t i = 0; i < j->argc; i++)
        av[n++] = j->argv[i];
    av[n] = NULL;
    return n;
}

static pid_t start(const struct study_item *j, const char *exe, char *err, size_t errlen)
{
    char **av = calloc(j->argc + 10, sizeof(char *));
    if (!av)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    av[0] = "llcprobe";
    study_item_argv(j, av + 1);
    /* The log is the user's (under sudo), never opened through a symlink. */
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    const int open_errno = errno;
    llc_fs_restore(&id);
    errno = open_errno;
    if (fd < 0) {
        free(av);
        return llc_errf(err, errlen, -errno, "%s: %s", j->log, strerror(errno));
    }
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(exe, av);
        _exit(127);
    }
    const int e = errno;
    close(fd);
    free(av);
    if (pid < 0)
        return llc_errf(err, errlen, -e, "fork: %s", strerror(e));
    return pid;
}

int study_add_failed(struct study *s, const char *fmt, ...)
{
    char buf[LLC_ERRLEN + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **nv = realloc(s->failed, (s->n_failed + 1) * sizeof(char *));
    if (!nv)
        return -ENOMEM;
    s->failed = nv;
    if (!(nv[s->n_failed] = strdup(buf)))
        return -ENOMEM;
    s->n_failed++;
    return 0;
}

/* Splits argv at ";;" into jobs. */
int study_items_split(char **argv, size_t argc, struct study_item **out, size_t *n, char *err,
                      size_t errlen)
{
    *out = calloc(argc + 1, sizeof(**out));
    *n = 0;
    if (!*out)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    size_t i = 0;
    while (i <= argc) {
        size_t e = i;
        while (e < argc && strcmp(argv[e], ";;") != 0)
            e++;
        if (e == i)
            return llc_errf(err, errlen, -EINVAL, "an empty program between ';;'");
        struct study_item *j = &(*out)[(*n)++];
        j->argv = argv + i;
        j->argc = e - i;
        j->options = argv[i][0] == '-';
        if (j->options && strcmp(argv[i], "--") == 0) { /* "-- PROGRAM" spelled out */
            j->argv++;
            j->argc--;
            j->options = false;
            if (!j->argc)
                return llc_errf(err, errlen, -EINVAL, "'--' without a program");
        }
        i = e + 1;
    }
    return 0;
}

int study_profile_all(char **argv, size_t argc, const char *dir, size_t jobs, bool no_run,
                      bool quiet, struct study *s, char ***files, size_t *n_files, char *err,
                      size_t errlen)
{
    struct study_item *j = NULL;
    size_t nj = 0, next = 0, running = 0, done = 0, reused = 0;
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    int rc = study_items_split(argv, argc, &j, &nj, err, errlen);
    *files = NULL;
    *n_files = 0;
    if (rc == 0 && llc_mkdir_as_invoker(dir, 0777) < 0 && errno != EEXIST)
        rc = llc_errf(err, errlen, -errno, "%s: %s", dir, strerror(errno));
    if (rc == 0 && !(*files = calloc(nj, sizeof(char *))))
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc < 0)
        goto out_nosig;
    /* this program, by its path (under valgrind /proc/self/exe is valgrind) */
    char exe[PATH_MAX];
    const ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (el <= 0) {
        rc = llc_errf(err, errlen, -errno, "/proc/self/exe: %s", strerror(errno));
        goto out_nosig;
    }
    exe[el] = 0;
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bool *ok = calloc(nj, sizeof(bool));
    if (!ok) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* Keys and reuse first: what is already there is not run again. */
    for (size_t i = 0; rc == 0 && i < nj; i++) {
        char why[LLC_ERRLEN];
        j[i].pid = -1;
        if (study_item_init(&j[i], dir, why, sizeof(why)) < 0) {
            llc_cli_warn(quiet, "study: left out: %s", why);
            rc = study_add_failed(s, "%s", why);
            j[i].pid = 0; /* settled */
            done++;
            continue;
        }
        for (size_t k = 0; k < i && !j[i].same; k++)
            if (j[k].name[0] && strcmp(j[k].file, j[i].file) == 0)
                j[i].same = k + 1; /* the same program twice: profiled once */
        if (j[i].same) {
            j[i].pid = 0;
            done++;
            continue;
        }
        struct llc_profile p;
        if (access(j[i].file, R_OK) == 0 &&
            llc_profile_read(j[i].file, &p, why, sizeof(why)) == 0) {
            llc_profile_free(&p);
            ok[i] = true;
            j[i].pid = 0;
            done++;
            reused++;
        } else if (no_run) {
            llc_cli_warn(quiet, "study: %s: no profile (not profiled, or its profiling failed)",
                         j[i].name);
            rc = study_add_failed(s, "%s: no profile (not profiled, or its profiling failed)",
                                  j[i].name);
            j[i].pid = 0;
            done++;
        }
    }
    if (!quiet && reused)
        fprintf(stderr, "llcprobe: study: %zu of %zu profiles reused from %s\n", reused, nj, dir);
    struct llc_progress pr;
    llc_progress_begin(&pr, "study: profiling", quiet);
    while (rc == 0 && done < nj && !interrupted) {
        while (running < jobs && next < nj) {
            struct study_item *x = &j[next++];
            if (x->pid == 0)
                continue;
            char why[LLC_ERRLEN];
            if ((x->pid = start(x, exe, why, sizeof(why))) < 0) {
                rc = llc_errf(err, errlen, x->pid, "%s", why);
                x->pid = 0;
                break;
            }
            running++;
        }
        if (rc < 0 || running == 0)
            break;
        int st;
        const pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0)
            continue; /* EINTR: the loop condition sees the signal */
        for (size_t i = 0; i < nj; i++) {
            if (j[i].pid != pid)
                continue;
            running--;
            done++;
            j[i].pid = 0;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && access(j[i].file, R_OK) == 0) {
                ok[i] = true;
            } else {
                char how[64];
                if (WIFSIGNALED(st))
                    snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(st));
                else
                    snprintf(how, sizeof(how), "exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
                llc_cli_warn(quiet, "study: %s: profiling failed (%s); log %s", j[i].name, how,
                             j[i].log);
                rc = study_add_failed(s, "%s: profiling failed (%s); log %s", j[i].name, how,
                                      j[i].log);
            }
        }
        llc_progress_update(&pr, (double)done / (double)nj);
    }
    llc_progress_end(&pr);
    /* Interrupted or failed: stop the children still running (ours, by pid). */
    size_t kept = 0;
    for (size_t i = 0; i < nj; i++) {
        if (j[i].pid > 0) {
            kill(j[i].pid, SIGTERM);
            waitpid(j[i].pid, NULL, 0);
        }
        kept += ok[i];
    }
    if (interrupted && rc == 0) {
        rc = llc_errf(err, errlen, -EINTR,
                      "interrupted: %zu of %zu profiles finished and kept in %s; "
                      "the same command continues from there",
                      kept, nj, dir);
    }
    for (size_t i = 0; i < nj; i++)
        if (j[i].same)
            ok[i] = ok[j[i].same - 1];
    for (size_t i = 0; rc == 0 && i < nj; i++)
        if (ok[i] && !((*files)[(*n_files)++] = strdup(j[i].file)))
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    free(ok);
out:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out_nosig:
    /* On failure the caller gets no list (and frees none). */
    if (rc < 0 && *files) {
        for (size_t i = 0; i < *n_files; i++)
            free((*files)[i]);
        free(*files);
        *files = NULL;
        *n_files = 0;
    }
    free(j);
    return rc;
}
