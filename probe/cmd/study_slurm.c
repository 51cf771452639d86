/* llcprobe study --slurm: the profiling as a Slurm job array (one
 * node-exclusive task per program without a profile; each task runs
 * `llcprobe profile` on its NUL-separated argument file through xargs -0),
 * then the study as a job that depends on it (afterany: it runs with what
 * finished, --reuse-only). The real sbatch and squeue are used; the wait
 * polls squeue, a task failed when its profile is missing afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/study.h"
#include "cmd/study_items.h"
#include "llcprobe/common.h"
#include "util/cli.h"
#include "util/identity.h"

static volatile sig_atomic_t stop;

int study_slurm_signal(void)
{
    return (int)stop;
}

static void on_signal(int sig)
{
    stop = sig;
}

/* Runs av (PATH search), stdout into out (len > 0); returns the exit status
 * or a negative errno. */
static int run(char *const *av, char *out, size_t len)
{
    /* Slurm's commands are helper programs: under sudo they run as the
     * invoking user, so the jobs they submit are that user's. */
    struct llc_invoker inv;
    char why[LLC_ERRLEN];
    if (llc_invoker_get(&inv, why, sizeof(why)) < 0)
        return -EPERM;
    int fd[2];
    if (pipe(fd) < 0)
        return -errno;
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        if (llc_invoker_drop(&inv) < 0)
            _exit(126);
        execvp(av[0], av);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd[0], out + n, len - 1 - n)) > 0 || (r < 0 && errno == EINTR))
        n += r > 0 ? (size_t)r : 0;
    out[n] = 0;
    close(fd[0]);
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (pid < 0)
        return -EAGAIN;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A file of the study's Slurm directory, created as the invoking user
 * (under sudo), never through a symlink. */
static FILE *user_fopen(const char *path)
{
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    const int e = errno;
    llc_fs_restore(&id);
    if (fd < 0) {
        errno = e;
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f)
        close(fd);
    return f;
}

/* Writes n NUL-terminated strings to path. */
static int write_args(const char *path, char *const *av, size_t n, char *err, size_t errlen)
{
    FILE *f = user_fopen(path);
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    for (size_t i = 0; i < n; i++)
        fwrite(av[i], 1, strlen(av[i]) + 1, f);
    return fclose(f) == 0 ? 0 : llc_errf(err, errlen, -EIO, "%s: write failed", path);
}

static int write_script(const char *path, const char *exe, const char *args, char *err,
                        size_t errlen)
{
    FILE *f = user_fopen(path);
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    /* paths are written single-quoted; a quote inside would end the word */
    if (strchr(exe, '\'') || strchr(args, '\''))
        return fclose(f), llc_errf(err, errlen, -EINVAL, "%s: a path with a quote", path);
    fprintf(f, "#!/bin/sh\nexec xargs -0 -a '%s' '%s'\n", args, exe);
    if (fchmod(fileno(f), 0755) < 0 || fclose(f) != 0)
        return llc_errf(err, errlen, -EIO, "%s: write failed", path);
    return 0;
}

/* sbatch --parsable ... script: the job id into id. */
static int submit(char **extra, size_t n_extra, const char *script, char *id, size_t idlen,
                  char *err, size_t errlen)
{
    char *av[64], out[256];
    size_t n = 0;
    av[n++] = "sbatch";
    av[n++] = "--parsable";
    for (size_t i = 0; i < n_extra && n < 60; i++)
        av[n++] = extra[i];
    av[n++] = (char *)script;
    av[n] = NULL;
    const int st = run(av, out, sizeof(out));
    out[strcspn(out, ";\n")] = 0;
    if (st != 0 || !out[0])
        return llc_errf(err, errlen, -EIO, "sbatch %s: %s", script,
                        st == 127 ? "sbatch not found (is Slurm installed?)"
                                  : "submission refused (exit status above)");
    snprintf(id, idlen, "%.40s", out);
    return 0;
}

/* The study job's command line: this one without --slurm and its options,
 * with --reuse-only and the profile cache. */
static size_t study_argv(int argc, char **argv, const char *cache, char **av)
{
    size_t n = 0;
    bool cmds = false, has_profiles = false;
    av[n++] = "study";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!cmds && strcmp(a, "--") == 0) {
            cmds = true;
            av[n++] = "--reuse-only";
            if (!has_profiles) {
                av[n++] = "--profiles";
                av[n++] = (char *)cache;
            }
        } else if (!cmds) {
            if (strcmp(a, "--slurm") == 0 || strncmp(a, "--partition=", 12) == 0 ||
                strncmp(a, "--sbatch-args=", 14) == 0)
                continue;
            if (strcmp(a, "--partition") == 0 || strcmp(a, "--sbatch-args") == 0) {
                i++;
                continue;
            }
            has_profiles |= strcmp(a, "--profiles") == 0 || strncmp(a, "--profiles=", 11) == 0;
        }
        av[n++] = (char *)a;
    }
    av[n] = NULL;
    return n;
}

int study_slurm(int argc, char **argv, char **items, size_t n_items, const char *cache,
                const char *out, const char *partition, const char *sbatch_args, bool quiet,
                char *err, size_t errlen)
{
    struct study_item *it = NULL;
    size_t n = 0, todo = 0;
    char dir[4096], exe[PATH_MAX], array_id[64] = "", study_id[64], buf[8192];
    char *extra[40], *sargs = sbatch_args ? strdup(sbatch_args) : NULL;
    char **av = NULL;
    size_t *task_of = NULL;
    int rc = study_items_split(items, n_items, &it, &n, err, errlen);
    const ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (rc == 0 && el <= 0)
        rc = llc_errf(err, errlen, -errno, "/proc/self/exe: %s", strerror(errno));
    if (rc < 0)
        goto out;
    exe[el] = 0;
    snprintf(dir, sizeof(dir), "%s/slurm", out);
    if ((llc_mkdir_as_invoker(cache, 0777) < 0 && errno != EEXIST) ||
        (llc_mkdir_as_invoker(dir, 0777) < 0 && errno != EEXIST)) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", dir, strerror(errno));
        goto out;
    }
    if (!(av = calloc(n_items + argc + 16, sizeof(char *))) ||
        !(task_of = calloc(n, sizeof(size_t)))) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* One task per program still without a profile (each key once). */
    for (size_t i = 0; i < n; i++) {
        char why[LLC_ERRLEN];
        task_of[i] = SIZE_MAX;
        if (study_item_init(&it[i], cache, why, sizeof(why)) < 0) {
            llc_cli_warn(quiet, "study: left out: %s", why);
            continue;
        }
        bool again = false;
        for (size_t k = 0; k < i; k++)
            again |= it[k].name[0] && strcmp(it[k].file, it[i].file) == 0;
        if (again || access(it[i].file, R_OK) == 0)
            continue;
        char path[4300];
        snprintf(path, sizeof(path), "%s/task-%zu.args", dir, todo);
        const size_t na = study_item_argv(&it[i], av);
        if ((rc = write_args(path, av, na, err, errlen)) < 0)
            goto out;
        snprintf(it[i].log, sizeof(it[i].log), "%s/task-%zu.log", dir, todo);
        task_of[i] = todo++;
    }
    /* sbatch options of both jobs */
    size_t ne = 0;
    char part[300], dep[128], arr[64], olog[4200], slog[4200], pscript[4200], sscript[4200],
        sfile[4200];
    if (partition) {
        snprintf(part, sizeof(part), "--partition=%s", partition);
        extra[ne++] = part;
    }
    for (char *t = sargs ? strtok(sargs, " \t") : NULL; t && ne < 30; t = strtok(NULL, " \t"))
        extra[ne++] = t;
    snprintf(pscript, sizeof(pscript), "%s/profile.sh", dir);
    snprintf(sscript, sizeof(sscript), "%s/study.sh", dir);
    snprintf(sfile, sizeof(sfile), "%s/study.args", dir);
    snprintf(olog, sizeof(olog), "--output=%s/task-%%a.log", dir);
    snprintf(slog, sizeof(slog), "--output=%s/study.log", dir);
    /* xargs reads the file the shell names: the task's own argument file */
    {
        FILE *f = user_fopen(pscript);
        if (!f ||
            fprintf(f, "#!/bin/sh\nexec xargs -0 -a \"%s/task-$SLURM_ARRAY_TASK_ID.args\" '%s'\n",
                    dir, exe) < 0 ||
            fchmod(fileno(f), 0755) < 0 || fclose(f) != 0) {
            rc = llc_errf(err, errlen, -EIO, "%s: write failed", pscript);
            goto out;
        }
    }
    const size_t ns = study_argv(argc, argv, cache, av);
    if ((rc = write_args(sfile, av, ns, err, errlen)) < 0 ||
        (rc = write_script(sscript, exe, sfile, err, errlen)) < 0)
        goto out;
    /* the study job's output decides success: an old one must not */
    snprintf(buf, sizeof(buf), "%s/study.json", out);
    unlink(buf);
    if (todo) {
        snprintf(arr, sizeof(arr), "--array=0-%zu", todo - 1);
        extra[ne] = arr;
        extra[ne + 1] = "--exclusive";
        extra[ne + 2] = "--job-name=llcprobe-profile";
        extra[ne + 3] = olog;
        if ((rc = submit(extra, ne + 4, pscript, array_id, sizeof(array_id), err, errlen)) < 0)
            goto out;
    }
    size_t me = ne;
    if (todo) {
        snprintf(dep, sizeof(dep), "--dependency=afterany:%s", array_id);
        extra[me++] = dep;
    }
    extra[me++] = "--job-name=llcprobe-study";
    extra[me++] = slog;
    if ((rc = submit(extra, me, sscript, study_id, sizeof(study_id), err, errlen)) < 0)
        goto out;
    if (!quiet)
        fprintf(stderr,
                "llcprobe: study: submitted %zu profiling task%s%s%s and the study as job %s\n",
                todo, todo == 1 ? "" : "s", todo ? " as job " : "", array_id, study_id);
    /* Wait: squeue until neither job is listed. */
    struct sigaction sa = {.sa_handler = on_signal}, old_int;
    stop = 0;
    sigaction(SIGINT, &sa, &old_int);
    struct llc_progress pr;
    llc_progress_begin(&pr, "study: Slurm jobs", quiet);
    char jobs[160];
    snprintf(jobs, sizeof(jobs), "%s%s%s", todo ? array_id : "", todo ? "," : "", study_id);
    for (;;) {
        char *q[] = {"squeue", "-h", "-o", "%i %t", "-j", jobs, NULL};
        const int st = run(q, buf, sizeof(buf));
        if (stop || (st != 0 && st != 1) || !buf[0])
            break;
        size_t have = 0;
        for (size_t i = 0; i < n; i++)
            have += task_of[i] != SIZE_MAX && access(it[i].file, R_OK) == 0;
        llc_progress_update(&pr, todo ? 0.9 * (double)have / (double)todo : 0.5);
        sleep(1);
    }
    llc_progress_end(&pr);
    sigaction(SIGINT, &old_int, NULL);
    if (stop) {
        rc = llc_errf(err, errlen, -EINTR,
                      "interrupted while waiting: jobs %s keep running (scancel %s stops "
                      "them; the same command later submits only what is missing)",
                      jobs, jobs);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (task_of[i] != SIZE_MAX && access(it[i].file, R_OK) != 0)
            llc_cli_warn(quiet, "study: %s: Slurm task %s_%zu failed; log %s", it[i].name, array_id,
                         task_of[i], it[i].log);
    char sjson[4200], slogp[4200];
    snprintf(slogp, sizeof(slogp), "%s/study.log", dir);
    FILE *f = fopen(slogp, "r");
    size_t got;
    while (f && (got = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, got, stdout);
    if (f)
        fclose(f);
    snprintf(sjson, sizeof(sjson), "%s/study.json", out);
    struct stat sb;
    if (stat(sjson, &sb) < 0)
        rc = llc_errf(err, errlen, -EIO, "the study job %s wrote no %s; log %s", study_id, sjson,
                      slogp);
out:
    free(it);
    free(av);
    free(task_of);
    free(sargs);
    return rc;
}
