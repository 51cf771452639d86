/* Private to probe/target: the credentials the target will run with. */
#ifndef LLCPROBE_TARGET_USER_H
#define LLCPROBE_TARGET_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct llc_target_user {
    bool drop; /* switch to uid/gid/groups in the child */
    uid_t uid;
    gid_t gid;
    gid_t *groups; /* supplementary groups, malloc'd */
    size_t n_groups;
};

/* Decides from the real/effective ids, SUDO_UID/SUDO_GID and as_root; note
 * gets one sentence saying who the target runs as and why. */
int llc_target_user_plan(bool as_root, struct llc_target_user *u, char *note, size_t notelen,
                         char *err, size_t errlen);
void llc_target_user_free(struct llc_target_user *u);

#endif
