/* The lackey recorder: valgrind's log arrives on a pipe and is parsed and
 * coded as it comes, so neither lackey's text nor the trace is ever whole in
 * memory, and nothing of lackey's gigabytes touches the disk. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "trace/lackey.h"
#include "trace/spawn.h"
#include "util/cli.h"

#define PIPE_READ_SIZE (1u << 20)
#define PIPE_BATCH_BYTES (256u << 10)
#define PIPE_BATCH_WAIT_NS (2 * 1000 * 1000)
#define PROGRESS_INTERVAL 0.5
#define STOP_GRACE_SECONDS 2.0

static void fill_stats(struct llc_trace_record_stats *s, const struct llc_lackey_parser *p,
                       const struct llc_trace_writer *w, double start)
{
    s->lackey_bytes = p->bytes;
    s->lackey_unknown = p->other_lines;
    snprintf(s->first_unknown, sizeof(s->first_unknown), "%s", p->first_other);
    s->trace_bytes = llc_trace_writer_bytes(w);
    s->seconds = llc_now() - start;
}

/* Stops the program's whole process group: politely, then for sure. The
 * leader (valgrind) is reaped last: until then its pid, and so the group
 * id, cannot be reused, and the final SIGKILL hits only what we started. */
static void stop_child(pid_t pid)
{
    kill(-pid, SIGTERM);
    const double give_up = llc_now() + STOP_GRACE_SECONDS;
    while (llc_now() < give_up) {
        siginfo_t si = {0};
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            break;
        const struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Counting kinds on the way to the writer keeps the figures available for
 * progress without asking the writer. */
struct sink {
    struct llc_trace_writer *w;
    struct llc_trace_record_stats *stats;
};

static int emit_counted(void *ctx, const struct llc_trace_rec *rec)
{
    struct sink *const s = ctx;
    uint64_t *const counts[] = {&s->stats->n_instr, &s->stats->n_load, &s->stats->n_store,
                                &s->stats->n_modify};
    (*counts[rec->kind])++;
    return llc_trace_writer_put(s->w, rec);
}

/* Reads lackey's log until valgrind closes it or a stop is requested.
 * Returns 0, -EINTR (stopped) or a write/read error. */
static int pump(const struct llc_trace_record_opts *o, int fd, struct llc_lackey_parser *parser,
                struct sink *sink, double start, char *err, size_t errlen)
{
    char *const buf = malloc(PIPE_READ_SIZE);
    if (!buf)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    double last_report = start;
    for (;;) {
        if (o->stop && *o->stop) {
            rc = llc_errf(err, errlen, -EINTR, "interrupted");
            goto out;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        const int ready = poll(&pfd, 1, 250);
        if (ready < 0 && errno != EINTR) {
            rc = llc_errf(err, errlen, -errno, "poll: %s", strerror(errno));
            goto out;
        }
        if (ready > 0) {
            const ssize_t n = read(fd, buf, PIPE_READ_SIZE);
            if (n == 0)
                break;
            if (n < 0 && errno != EINTR) {
                rc = llc_errf(err, errlen, -errno, "reading lackey's output: %s", strerror(errno));
                goto out;
            }
            if (n > 0 && (rc = llc_lackey_feed(parser, buf, (size_t)n)) < 0) {
                rc = llc_errf(err, errlen, rc, "%s: write failed: %s", o->output, strerror(-rc));
                goto out;
            }
            /* Lackey writes a line or so per write(); reading each as it
             * comes would wake this process for every one of them. Letting
             * the pipe fill up for a moment halves the run time. */
            if (n > 0 && (size_t)n < PIPE_BATCH_BYTES) {
                const struct timespec ts = {0, PIPE_BATCH_WAIT_NS};
                nanosleep(&ts, NULL);
            }
        }
        const double now = llc_now();
        if (o->progress && now - last_report >= PROGRESS_INTERVAL) {
            fill_stats(sink->stats, parser, sink->w, start);
            o->progress(o->progress_ctx, sink->stats);
            last_report = now;
        }
    }
    rc = llc_lackey_finish(parser);
    if (rc < 0)
        rc = llc_errf(err, errlen, rc, "%s: write failed: %s", o->output, strerror(-rc));
out:
    free(buf);
    return rc;
}

static int wait_status(pid_t pid, struct llc_trace_record_stats *s, char *err, size_t errlen)
{
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (r < 0)
        return llc_errf(err, errlen, -errno, "waiting for valgrind: %s", strerror(errno));
    if (WIFSIGNALED(status)) {
        s->term_signal = WTERMSIG(status);
        s->exit_status = 128 + s->term_signal;
    } else {
        s->exit_status = WEXITSTATUS(status);
    }
    return 0;
}

int llc_trace_record_lackey(const struct llc_trace_record_opts *o,
                            struct llc_trace_record_stats *stats, char *err, size_t errlen)
{
    memset(stats, 0, sizeof(*stats));
    stats->exit_status = -1;
    char program[PATH_MAX], valgrind[PATH_MAX];
    struct llc_spawn_identity id;
    struct llc_trace_writer *w = NULL;
    struct llc_trace_info *info = NULL;
    struct llc_spawned child = {.pid = -1, .log_fd = -1};
    int rc = llc_spawn_find_executable(o->argv[0], program, sizeof(program), err, errlen);
    if (rc < 0)
        return rc;
    char why[LLC_ERRLEN];
    if (o->valgrind) {
        rc = llc_spawn_find_executable(o->valgrind, valgrind, sizeof(valgrind), why, sizeof(why));
        if (rc < 0)
            llc_errf(err, errlen, rc, "valgrind %s", why);
    } else if (llc_spawn_find_executable("valgrind", valgrind, sizeof(valgrind), NULL, 0) < 0) {
        rc = llc_errf(err, errlen, -ENOENT,
                      "valgrind not found in PATH (install valgrind to record traces)");
    }
    if (rc < 0)
        return rc;
    rc = llc_spawn_identity(o->keep_root, &id, err, errlen);
    if (rc < 0)
        return rc;
    info = calloc(1, sizeof(*info));
    if (!info)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    snprintf(info->recorder, sizeof(info->recorder), "lackey");
    llc_join_argv(o->argv, info->command, sizeof(info->command));
    info->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
    info->exit_status = -1;
    rc = llc_trace_writer_open(o->output, info, &w, err, errlen);
    if (rc < 0)
        goto out;
    const double start = llc_now();
    rc = llc_spawn_lackey(valgrind, program, o->argv, &id, &child, err, errlen);
    if (rc < 0)
        goto out;
    struct sink sink = {w, stats};
    struct llc_lackey_parser parser;
    llc_lackey_init(&parser, emit_counted, &sink);
    rc = pump(o, child.log_fd, &parser, &sink, start, err, errlen);
    fill_stats(stats, &parser, w, start);
    if (rc < 0) {
        stop_child(child.pid);
        goto out;
    }
    rc = wait_status(child.pid, stats, err, errlen);
    stats->seconds = llc_now() - start;
    if (rc < 0)
        goto out;
    if (stats->n_instr == 0) {
        rc = llc_errf(err, errlen, -ECHILD,
                      "valgrind exited with status %d without tracing any instruction",
                      stats->exit_status);
        goto out;
    }
    rc = llc_trace_writer_close(w, stats->exit_status, err, errlen);
    w = NULL;
    if (rc < 0)
        goto out;
    struct stat st;
    if (stat(o->output, &st) == 0)
        stats->trace_bytes = (uint64_t)st.st_size;
    /* The invoking user owns what they asked for, not root. */
    if (id.drop && chown(o->output, id.uid, id.gid) < 0)
        rc = llc_errf(err, errlen, -errno, "%s: cannot give it to uid %d: %s", o->output,
                      (int)id.uid, strerror(errno));
out:
    if (child.log_fd >= 0)
        close(child.log_fd);
    llc_trace_writer_abort(w);
    free(info);
    return rc;
}
