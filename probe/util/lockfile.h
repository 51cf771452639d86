/* Advisory lock files that cannot be planted or held forever: created
 * O_NOFOLLOW (a symlink is refused, never followed), waited for with a
 * timeout, and a wait that times out names the process holding the lock. */
#ifndef LLC_UTIL_LOCKFILE_H
#define LLC_UTIL_LOCKFILE_H

#include <stddef.h>

/* The hugepage reservation lock: under /run, where only root may create
 * files (only root changes nr_hugepages). */
#define LLC_HUGEPAGE_LOCK_PATH "/run/llcprobe-hugepages.lock"
#define LLC_LOCK_TIMEOUT_S 5.0

/* Opens (creating 0600) and exclusively flock()s path, waiting at most
 * timeout_s seconds. Returns the descriptor (close it to release) or a
 * negative errno with err: -ELOOP "is a symlink", -ETIMEDOUT "held by
 * process N (cmd)" when known. */
int llc_lockfile_acquire(const char *path, double timeout_s, char *err, size_t errlen);

#endif
