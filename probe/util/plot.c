/* gnuplot is spawned without a shell, so file names and the executable's
 * path need no shell quoting, and a missing gnuplot is told apart from a
 * failing script. */
#include "util/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/identity.h"

void llc_plot_quote(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* gnuplot dying mid-script must not kill us with SIGPIPE: block it in this
 * thread while writing and swallow the one it may have raised. */
static void drain_sigpipe(const sigset_t *pipe_set)
{
    const struct timespec zero = {0, 0};
    while (sigtimedwait(pipe_set, NULL, &zero) > 0) {
    }
}

/* gnuplot runs as the invoking user (under sudo) and writes the PNG to its
 * standard output, which is a temporary created O_EXCL beside png: it
 * never opens a file by name, so a planted symlink cannot redirect it. */
static pid_t spawn_gnuplot(const char *prog, int script_fd, int close_fd, int png_fd,
                           const struct llc_invoker *inv, int *err_no)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *err_no = errno;
        return -1;
    }
    const pid_t pid = fork();
    if (pid < 0) {
        *err_no = errno;
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        close(report[0]);
        close(close_fd);
        const int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        int e = 0;
        if (dup2(script_fd, STDIN_FILENO) < 0 || dup2(png_fd, STDOUT_FILENO) < 0 ||
            (devnull >= 0 && dup2(devnull, STDERR_FILENO) < 0))
            e = errno;
        if (!e)
            e = -llc_invoker_drop(inv);
        if (!e) {
            char *const argv[] = {(char *)prog, NULL};
            execvp(prog, argv);
            e = errno;
        }
        (void)!write(report[1], &e, sizeof(e));
        _exit(127);
    }
    close(report[1]);
    int e = 0;
    ssize_t got;
    while ((got = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR) {
    }
    close(report[0]);
    if (got == (ssize_t)sizeof(e) && e) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        *err_no = e;
        return -1;
    }
    return pid;
}

int llc_plot_png(const char *gnuplot, const char *png, int width, int height,
                 void (*emit)(void *ctx, FILE *gp), void *ctx, char *err, size_t errlen)
{
    const char *const prog = gnuplot ? gnuplot : "gnuplot";
    char tmp[PATH_MAX];
    int pfd[2] = {-1, -1};
    struct llc_invoker inv;
    int rc = llc_invoker_get(&inv, err, errlen);
    if (rc < 0)
        return rc;
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int png_fd = llc_afile_temp(png, ".png.tmp", tmp, sizeof(tmp), err, errlen);
    llc_fs_restore(&id);
    if (png_fd < 0)
        return png_fd;
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        rc = llc_errf(err, errlen, -errno, "pipe: %s", strerror(errno));
        goto out;
    }
    int spawn_errno = 0;
    const pid_t pid = spawn_gnuplot(prog, pfd[0], pfd[1], png_fd, &inv, &spawn_errno);
    close(pfd[0]);
    if (pid < 0) {
        close(pfd[1]);
        rc = spawn_errno == ENOENT
                 ? llc_errf(err, errlen, -ENOENT, "gnuplot ('%s') is not installed", prog)
                 : llc_errf(err, errlen, -spawn_errno, "cannot run %s: %s", prog,
                            strerror(spawn_errno));
        goto out;
    }
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    FILE *const gp = fdopen(pfd[1], "w");
    int werr = 1;
    if (gp) {
        fprintf(gp, "set terminal pngcairo size %d,%d noenhanced font ',10'\nset output\n", width,
                height);
        emit(ctx, gp);
        fprintf(gp, "\nunset output\n");
        werr = ferror(gp);
        werr |= fclose(gp) != 0;
    } else {
        close(pfd[1]);
    }
    drain_sigpipe(&pipe_set);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (werr || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            rc = llc_errf(err, errlen, -EIO, "gnuplot failed drawing %s (exit %d)", png,
                          WEXITSTATUS(status));
        else if (!WIFEXITED(status))
            rc = llc_errf(err, errlen, -EIO, "gnuplot killed by signal %d drawing %s",
                          WTERMSIG(status), png);
        else
            rc = llc_errf(err, errlen, -EIO, "gnuplot: writing the script for %s failed", png);
        goto out;
    }
    if (fsync(png_fd) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", png, strerror(errno));
        goto out;
    }
    rc = llc_afile_rename(tmp, png, err, errlen);
out:
    close(png_fd);
    if (rc < 0)
        unlink(tmp);
    return rc;
}
