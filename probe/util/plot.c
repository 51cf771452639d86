/* gnuplot is spawned without a shell, so file names and the executable's
 * path need no shell quoting, and a missing gnuplot is told apart from a
 * failing script. */
#include "util/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llcprobe/common.h"

extern char **environ;

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

int llc_plot_png(const char *gnuplot, const char *png, int width, int height,
                 void (*emit)(void *ctx, FILE *gp), void *ctx, char *err, size_t errlen)
{
    const char *const prog = gnuplot ? gnuplot : "gnuplot";
    const size_t tlen = strlen(png) + 8;
    char *const tmp = malloc(tlen);
    int pfd[2] = {-1, -1};
    int rc = 0;
    if (!tmp)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    snprintf(tmp, tlen, "%s.tmp", png);
    if (pipe(pfd) < 0) {
        rc = llc_errf(err, errlen, -errno, "pipe: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *const argv[] = {(char *)prog, NULL};
    pid_t pid;
    const int src = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[0]);
    if (src != 0) {
        close(pfd[1]);
        rc = src == ENOENT ? llc_errf(err, errlen, -ENOENT, "gnuplot ('%s') is not installed", prog)
                           : llc_errf(err, errlen, -src, "cannot run %s: %s", prog, strerror(src));
        goto out;
    }
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    FILE *const gp = fdopen(pfd[1], "w");
    int werr = 1;
    if (gp) {
        fprintf(gp, "set terminal pngcairo size %d,%d noenhanced font ',10'\nset output ", width, height);
        llc_plot_quote(gp, tmp);
        fputc('\n', gp);
        emit(ctx, gp);
        fprintf(gp, "\nset output\n");
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
        unlink(tmp);
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            rc = llc_errf(err, errlen, -EIO, "gnuplot failed drawing %s (exit %d)", png, WEXITSTATUS(status));
        else if (!WIFEXITED(status))
            rc = llc_errf(err, errlen, -EIO, "gnuplot killed by signal %d drawing %s", WTERMSIG(status), png);
        else
            rc = llc_errf(err, errlen, -EIO, "gnuplot: writing the script for %s failed", png);
        goto out;
    }
    if (rename(tmp, png) != 0) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", png, strerror(errno));
        unlink(tmp);
    }
out:
    free(tmp);
    return rc;
}
