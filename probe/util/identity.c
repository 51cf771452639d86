#include "util/identity.h"

#include <errno.h>
#include <sys/stat.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llcprobe/common.h"

static int parse_id(const char *name, const char *text, unsigned long *out, char *err,
                    size_t errlen)
{
    char *end;
    errno = 0;
    const unsigned long v = strtoul(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v > (unsigned long)(uid_t)-1 - 1)
        return llc_errf(err, errlen, -EINVAL, "%s=%s is not a numeric id", name, text);
    *out = v;
    return 0;
}

int llc_invoker_get(struct llc_invoker *inv, char *err, size_t errlen)
{
    memset(inv, 0, sizeof(*inv));
    inv->uid = geteuid();
    inv->gid = getegid();
    const char *sudo_uid = getenv("SUDO_UID");
    if (inv->uid != 0 || !sudo_uid || !*sudo_uid)
        return 0;
    unsigned long uid = 0, gid = 0;
    int rc = parse_id("SUDO_UID", sudo_uid, &uid, err, errlen);
    if (rc < 0 || uid == 0)
        return rc;
    char buf[16384];
    struct passwd pw, *found = NULL;
    getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found);
    const char *sudo_gid = getenv("SUDO_GID");
    if (sudo_gid && *sudo_gid) {
        rc = parse_id("SUDO_GID", sudo_gid, &gid, err, errlen);
        if (rc < 0)
            return rc;
    } else if (found) {
        gid = found->pw_gid;
    } else {
        return llc_errf(err, errlen, -EINVAL,
                        "SUDO_UID=%lu has no passwd entry and SUDO_GID is not set", uid);
    }
    inv->sudo = true;
    inv->uid = (uid_t)uid;
    inv->gid = (gid_t)gid;
    int n = LLC_INVOKER_MAX_GROUPS;
    if (!found || getgrouplist(found->pw_name, inv->gid, inv->groups, &n) < 0) {
        inv->groups[0] = inv->gid;
        n = 1;
    }
    inv->n_groups = (size_t)n;
    return 0;
}

/* glibc's setgroups() changes every thread; the raw call only this one. */
static int thread_setgroups(size_t n, const gid_t *groups)
{
    return (int)syscall(SYS_setgroups, n, groups);
}

void llc_fs_as_invoker(struct llc_fs_id *save)
{
    memset(save, 0, sizeof(*save));
    struct llc_invoker inv;
    char err[LLC_ERRLEN];
    if (llc_invoker_get(&inv, err, sizeof(err)) < 0 || !inv.sudo)
        return;
    save->n_saved = getgroups(LLC_INVOKER_MAX_GROUPS, save->saved_groups);
    if (save->n_saved < 0)
        save->n_saved = 0;
    thread_setgroups(inv.n_groups, inv.groups);
    setfsgid(inv.gid);
    setfsuid(inv.uid);
    save->switched = true;
}

void llc_fs_restore(const struct llc_fs_id *save)
{
    if (!save->switched)
        return;
    /* Back to fsuid 0 first: that returns the capabilities setgroups needs. */
    setfsuid(0);
    setfsgid(getegid());
    thread_setgroups((size_t)save->n_saved, save->saved_groups);
}

int llc_mkdir_as_invoker(const char *path, mode_t mode)
{
    struct llc_fs_id id;
    llc_fs_as_invoker(&id);
    const int rc = mkdir(path, mode);
    const int e = errno;
    llc_fs_restore(&id);
    errno = e;
    return rc;
}

int llc_invoker_drop(const struct llc_invoker *inv)
{
    if (!inv->sudo)
        return 0;
    if (setgroups(inv->n_groups, inv->groups) != 0 || setgid(inv->gid) != 0 ||
        setuid(inv->uid) != 0)
        return -errno;
    if (setuid(0) == 0)
        return -EPERM;
    return 0;
}

int llc_invoker_owns_pid(const struct llc_invoker *inv, pid_t pid)
{
    if (!inv->sudo)
        return 1;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    unsigned long ruid = 0, euid = 0;
    int found = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Uid: %lu %lu", &ruid, &euid) == 2) {
            found = 1;
            break;
        }
    fclose(f);
    if (!found)
        return -EIO;
    return ruid == inv->uid && euid == inv->uid;
}
