/* Which user the target runs as: under sudo, the user who ran sudo.
 * Everything is looked up before the fork, because name-service lookups are
 * not safe between fork and exec in a threaded program. */
#include "target/user.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_id(const char *name, const char *text, unsigned long *out, char *err,
                    size_t errlen)
{
    char *end;
    errno = 0;
    const unsigned long v = strtoul(text, &end, 10);
    if (errno || end == text || *end || v > (unsigned long)(uid_t)-1 - 1)
        return llc_errf(err, errlen, -EINVAL, "%s=%s is not a numeric id", name, text);
    *out = v;
    return 0;
}

int llc_target_user_plan(bool as_root, struct llc_target_user *u, char *note, size_t notelen,
                         char *err, size_t errlen)
{
    memset(u, 0, sizeof(*u));
    u->uid = getuid();
    u->gid = getgid();
    const char *sudo_uid = getenv("SUDO_UID");
    if (geteuid() != 0) {
        snprintf(note, notelen, "running as uid %lu (llcprobe's own user)", (unsigned long)u->uid);
        return 0;
    }
    if (!sudo_uid || !*sudo_uid) {
        snprintf(note, notelen, "running as root (llcprobe was not started through sudo)");
        return 0;
    }
    if (as_root) {
        snprintf(note, notelen, "running as root (as asked, although started by sudo for uid %s)",
                 sudo_uid);
        return 0;
    }
    unsigned long uid = 0, gid = 0; /* parse_id sets them on success; -O3 cannot see it */
    int rc = parse_id("SUDO_UID", sudo_uid, &uid, err, errlen);
    if (rc < 0)
        return rc;
    if (uid == 0) {
        snprintf(note, notelen, "running as root (sudo was run by root)");
        return 0;
    }
    long bufsize = sysconf(_SC_GETPW_R_SIZE_MAX);
    if (bufsize < 16384)
        bufsize = 16384;
    char *buf = malloc((size_t)bufsize);
    if (!buf)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    struct passwd pw, *found = NULL;
    getpwuid_r((uid_t)uid, &pw, buf, (size_t)bufsize, &found);
    const char *sudo_gid = getenv("SUDO_GID");
    if (sudo_gid && *sudo_gid) {
        rc = parse_id("SUDO_GID", sudo_gid, &gid, err, errlen);
        if (rc < 0)
            goto out;
    } else if (found) {
        gid = found->pw_gid;
    } else {
        rc = llc_errf(err, errlen, -EINVAL,
                      "SUDO_UID=%lu has no passwd entry and SUDO_GID is not set: cannot tell the "
                      "target's group (use --as-root to keep root)",
                      uid);
        goto out;
    }
    u->drop = true;
    u->uid = (uid_t)uid;
    u->gid = (gid_t)gid;
    int n = 0;
    if (found) {
        getgrouplist(found->pw_name, u->gid, NULL, &n);
        u->groups = malloc((size_t)(n > 0 ? n : 1) * sizeof(gid_t));
        if (!u->groups) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        if (getgrouplist(found->pw_name, u->gid, u->groups, &n) < 0)
            n = 0;
    }
    if (n == 0) {
        free(u->groups);
        u->groups = malloc(sizeof(gid_t));
        if (!u->groups) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        u->groups[0] = u->gid;
        n = 1;
    }
    u->n_groups = (size_t)n;
    snprintf(note, notelen, "running as uid %lu gid %lu (%s, who ran sudo; --as-root keeps root)",
             uid, gid, found ? found->pw_name : "no passwd entry");
    rc = 0;
out:
    free(buf);
    return rc;
}

void llc_target_user_free(struct llc_target_user *u)
{
    free(u->groups);
    u->groups = NULL;
}
