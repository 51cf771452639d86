#include "util/lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "util/cli.h"

/* The pid /proc/locks gives for a lock on this file, 0 if none. */
static long lock_holder(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    char line[256];
    long holder = 0;
    while (!holder && fgets(line, sizeof(line), f)) {
        long pid;
        unsigned maj, min;
        unsigned long ino;
        /* "1: FLOCK  ADVISORY  WRITE 1234 00:19:567 0 EOF"; blocked
         * waiters ("1: -> FLOCK ...") do not match the pattern. */
        if (sscanf(line, "%*d: FLOCK %*s %*s %ld %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
            maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino)
            holder = pid;
    }
    fclose(f);
    return holder;
}

static void process_name(long pid, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
    out[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

int llc_lockfile_acquire(const char *path, double timeout_s, char *err, size_t errlen)
{
    const int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == ELOOP)
            return llc_errf(err, errlen, -ELOOP, "lock %s is a symlink: refused", path);
        return llc_errf(err, errlen, -errno, "lock %s: %s", path, strerror(errno));
    }
    const double give_up = llc_now() + timeout_s;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int e = errno;
            close(fd);
            return llc_errf(err, errlen, -e, "lock %s: %s", path, strerror(e));
        }
        if (llc_now() >= give_up)
            break;
        const struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    const long holder = lock_holder(fd);
    close(fd);
    if (!holder)
        return llc_errf(err, errlen, -ETIMEDOUT, "lock %s still held after %.0f s", path,
                        timeout_s);
    /* /proc/locks names the process that took the lock; it may have
     * passed the descriptor on (flock(1) to its command) and exited. */
    char name[64];
    process_name(holder, name, sizeof(name));
    if (!name[0])
        snprintf(name, sizeof(name), "exited; a process it started holds the lock");
    return llc_errf(err, errlen, -ETIMEDOUT,
                    "lock %s held by process %ld (%s) for more than %.0f s", path, holder, name,
                    timeout_s);
}
