/* Whom llcprobe acts for. Started through sudo (euid 0, SUDO_UID a non-root
 * uid), only the measurement keeps root: programs it runs (the target,
 * gnuplot, valgrind) run as the invoking user, and every file it writes is
 * created with that user's permissions and owned by them. */
#ifndef LLC_UTIL_IDENTITY_H
#define LLC_UTIL_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LLC_INVOKER_MAX_GROUPS 64

struct llc_invoker {
    bool sudo; /* root acting for uid/gid below */
    uid_t uid;
    gid_t gid;
    gid_t groups[LLC_INVOKER_MAX_GROUPS];
    size_t n_groups; /* at least 1 (gid) when sudo */
};

/* From the effective uid and SUDO_UID/SUDO_GID (SUDO_GID missing: the
 * passwd entry's group). sudo false when not root, not through sudo, or
 * sudo run by root. -EINVAL with err when the variables are malformed. */
int llc_invoker_get(struct llc_invoker *inv, char *err, size_t errlen);

/* The calling thread's file-system identity (setfsuid/setfsgid and the
 * thread's supplementary groups): between llc_fs_as_invoker and
 * llc_fs_restore, opens, creates and renames are checked against the
 * invoking user's permissions (root's overrides are off) and new files are
 * theirs. Per thread, so the rest of a threaded process keeps root. No-op
 * unless under sudo. */
struct llc_fs_id {
    bool switched;
    gid_t saved_groups[LLC_INVOKER_MAX_GROUPS];
    int n_saved;
};
void llc_fs_as_invoker(struct llc_fs_id *save);
void llc_fs_restore(const struct llc_fs_id *save);
/* mkdir(path, mode) with the invoking user's permissions (theirs under
 * sudo, so an output directory is never root's in the user's place).
 * 0, or -1 with errno as mkdir left it. */
int llc_mkdir_as_invoker(const char *path, mode_t mode);

/* In a freshly forked child (one thread): become the invoking user for
 * good (groups, gid, uid) and check that root cannot be regained. Only
 * async-signal-safe calls. 0 or -errno; no-op unless inv->sudo. */
int llc_invoker_drop(const struct llc_invoker *inv);

/* Under sudo, whether the invoking user owns process pid (its real or
 * effective uid). 1 yes, 0 no, -errno when it cannot be read. Always 1
 * when not under sudo (the kernel's own checks then apply). */
int llc_invoker_owns_pid(const struct llc_invoker *inv, pid_t pid);

#endif
