/* Starting valgrind for the recorder: finding executables, the identity the
 * program runs as, fork/exec with lackey's log on a pipe. */
#ifndef LLC_TRACE_SPAWN_H
#define LLC_TRACE_SPAWN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Resolves `name` like execvp does (PATH search unless it has a '/') to an
 * executable regular file. Fails with one line naming the problem. */
int llc_spawn_find_executable(const char *name, char *out, size_t outlen, char *err, size_t errlen);

/* Who the child becomes before exec. */
struct llc_spawn_identity {
    bool drop; /* root under sudo: become the invoking user */
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int n_groups;
};

/* Under sudo (euid 0, SUDO_UID and SUDO_GID set) and unless keep_root, the
 * invoking user's identity with their supplementary groups. */
int llc_spawn_identity(bool keep_root, struct llc_spawn_identity *id, char *err, size_t errlen);

struct llc_spawned {
    pid_t pid;  /* also the process group id */
    int log_fd; /* read end of lackey's log pipe */
};

/* Forks; the child enters its own process group, takes identity `id`, and
 * execs `valgrind --tool=lackey --trace-mem=yes --log-fd=N program args...`.
 * Returns after the exec succeeded or with the reason it failed. */
int llc_spawn_lackey(const char *valgrind, const char *program, char *const *argv,
                     const struct llc_spawn_identity *id, struct llc_spawned *out, char *err,
                     size_t errlen);

#endif
