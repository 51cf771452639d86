/* The program whose cache use is measured: launched (fork/exec) or attached.
 *
 * A launched target is held between fork and exec until llc_target_start(),
 * so the probe can be measuring before the target's first instruction:
 *
 *     llc_target_launch()  fork; the child pins itself, joins its own process
 *                          group, redirects output, drops root for the
 *                          invoking sudo user, then waits on a pipe.
 *                          Setup failures come back here as one line; a
 *                          program that cannot be executed is found before
 *                          the fork, so no child is created.
 *     llc_target_start()   releases the child into execve() and returns once
 *                          the exec happened (a CLOEXEC pipe reaches EOF) or
 *                          failed (the child sends errno, is reaped, and the
 *                          error is returned).
 *     llc_target_poll() / llc_target_wait()   running, exited, signalled;
 *                          with the runtime, to tell a target that exits at
 *                          once.
 *     llc_target_stop()    SIGTERM to the whole group, SIGKILL after a grace
 *                          period, reaps: no child or grandchild is left.
 *     llc_target_destroy() stops what still runs, frees.
 *
 * Signal handlers call llc_target_emergency_stop(), which is async-signal-
 * safe. The target's own process group keeps terminal Ctrl-C away from it:
 * llcprobe decides when the target stops (and a target reading the terminal
 * gets SIGTTIN; give it </dev/null input).
 */
#ifndef LLCPROBE_TARGET_H
#define LLCPROBE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LLC_TARGET_CPU_AUTO (-1) /* a core sharing the LLC with the caller's */
#define LLC_TARGET_CPU_NONE (-2) /* no pinning */

struct llc_target_options {
    int cpu; /* CPU number, LLC_TARGET_CPU_AUTO or _NONE */
    /* When root with SUDO_UID/SUDO_GID set, the target runs as that user
     * (with its groups) unless as_root. */
    bool as_root;
    /* NULL: stdout and stderr pass through. Else both go to this file,
     * created (0644, owned by the target's user) or truncated, or appended
     * to with output_append. */
    const char *output_path;
    bool output_append;
    /* Stay in the caller's process group (stop then signals the target
     * process alone, and terminal Ctrl-C reaches it). */
    bool share_pgroup;
    /* llc_target_stop() grace between SIGTERM and SIGKILL; 0 = 2000 ms. */
    unsigned grace_ms;
    /* Descriptors the program keeps across exec although close-on-exec
     * (a tracer's log pipe: valgrind --log-fd=N). */
    const int *inherit_fds;
    size_t n_inherit_fds;
    /* SIGKILL the target if the thread that launched it dies, so a killed
     * llcprobe leaves no target behind (PR_SET_PDEATHSIG, set after the
     * identity change that would clear it). Launch from a thread that lives
     * as long as the target, e.g. the main thread. */
    bool die_with_parent;
};

/* cpu = LLC_TARGET_CPU_AUTO, everything else zero. */
void llc_target_options_init(struct llc_target_options *opt);

enum llc_target_state {
    LLC_TARGET_READY = 0, /* launched, held before exec */
    LLC_TARGET_RUNNING,
    LLC_TARGET_EXITED,    /* exit_code valid (-1 for an attached process) */
    LLC_TARGET_SIGNALLED, /* signal valid */
};

struct llc_target_status {
    enum llc_target_state state;
    int exit_code;
    int signal;
    bool core_dumped;
    /* Seconds from the exec (or the attach) until the exit was seen: an
     * upper bound when only polled, exact to ~1 ms with llc_target_wait(). */
    double runtime_s;
};

#define LLC_TARGET_TEXT_LEN 320
struct llc_target_info {
    pid_t pid;
    pid_t pgid; /* == pid unless share_pgroup or attached */
    bool attached;
    char program[4096];                 /* resolved path that is executed */
    int cpu;                            /* pinned CPU, -1 = not pinned */
    char cpu_note[LLC_TARGET_TEXT_LEN]; /* why this CPU */
    uid_t uid;
    gid_t gid;
    bool dropped_root; /* runs as the sudo user */
    char user_note[LLC_TARGET_TEXT_LEN];
    bool may_ptrace; /* attached: /proc/<pid>/mem opens */
    char attach_note[LLC_TARGET_TEXT_LEN];
};

struct llc_target;

/* argv[0] is looked up in PATH unless it contains '/'. -ENOENT / -EACCES
 * (no child created), -EPERM, -EINVAL, ... with err filled. */
int llc_target_launch(char *const argv[], const struct llc_target_options *opt,
                      struct llc_target **out, char *err, size_t errlen);
int llc_target_start(struct llc_target *t, char *err, size_t errlen);

/* An existing process: checks it exists and that we may signal it
 * (kill(pid, 0)); notes whether we may also read its memory. With
 * opt->cpu not NONE, pins all its threads (sched_setaffinity of each task;
 * failure is an error). Only cpu and grace_ms of opt are used; stop() and
 * destroy() never signal an attached process. */
int llc_target_attach(pid_t pid, const struct llc_target_options *opt, struct llc_target **out,
                      char *err, size_t errlen);

/* Non-blocking. Once the target has ended the status stays final. */
int llc_target_poll(struct llc_target *t, struct llc_target_status *st, char *err, size_t errlen);
/* Blocks until the target ends or timeout_ms passes (-1 = no limit).
 * Returns 1 when it ended, 0 on timeout. */
int llc_target_wait(struct llc_target *t, int timeout_ms, struct llc_target_status *st, char *err,
                    size_t errlen);
/* Launched target: SIGTERM (+SIGCONT) to its group, SIGKILL to the group
 * after grace_ms or once the leader is gone and members linger, reaps the
 * leader. st (may be NULL) gets the final status. Attached: no signal. */
int llc_target_stop(struct llc_target *t, struct llc_target_status *st, char *err, size_t errlen);
/* Stops (as above) if still running, frees. Safe with NULL. */
void llc_target_destroy(struct llc_target *t);

const struct llc_target_info *llc_target_info(const struct llc_target *t);

/* Async-signal-safe: sends sig (SIGTERM, or SIGKILL before _exit) to the
 * process group of every launched target not yet reaped (to the process
 * alone with share_pgroup); SIGCONT follows so a stopped group acts on it. */
void llc_target_emergency_stop(int sig);

/* CPU to pin the target to: a PU of another core under the same LLC as
 * probe_cpu (-1 = the CPU the calling thread runs on), taken from the
 * process's allowed CPUs, via hwloc. note gets why; -ENODEV when no other
 * core shares the LLC (message says so). */
int llc_target_pick_cpu(int probe_cpu, int *cpu, char *note, size_t notelen, char *err,
                        size_t errlen);
/* Pins the calling thread to cpu. */
int llc_target_pin_thread(int cpu, char *err, size_t errlen);

const char *llc_target_state_name(enum llc_target_state s);

#endif
