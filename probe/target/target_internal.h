/* Private to probe/target: the target handle and its pieces. */
#ifndef LLCPROBE_TARGET_INTERNAL_H
#define LLCPROBE_TARGET_INTERNAL_H

#include "llcprobe/target.h"

#include <sched.h>
#include <stdbool.h>
#include <time.h>

struct llc_target {
    struct llc_target_info info;
    unsigned grace_ms;
    bool share_pgroup;
    int go_fd;          /* write end of the go pipe; -1 once started */
    int status_fd;      /* read end of the child's CLOEXEC status pipe */
    int pidfd;          /* -1 when pidfd_open is unavailable */
    int slot;           /* emergency registry slot, -1 if none */
    struct timespec t0; /* exec (or attach) time */
    bool started, ended;
    struct llc_target_status final;
    char *output_created;      /* target output this launch created, until started */
    cpu_set_t *saved_affinity; /* attached: each pinned thread's mask before */
    pid_t *saved_tids;
    size_t n_saved;
};

/* What the child sends on the status pipe: a stage and its errno. */
enum llc_child_stage {
    LLC_CHILD_READY = 0, /* set up, waiting for the go byte */
    LLC_CHILD_PGROUP,
    LLC_CHILD_OUTPUT,
    LLC_CHILD_PIN,
    LLC_CHILD_GROUPS,
    LLC_CHILD_GID,
    LLC_CHILD_UID,
    LLC_CHILD_STILL_ROOT,  /* setuid(0) succeeded after dropping */
    LLC_CHILD_INHERIT,     /* clearing close-on-exec of an inherited fd */
    LLC_CHILD_PARENT_GONE, /* die_with_parent, and the parent already died */
    LLC_CHILD_EXEC,
};
struct llc_child_msg {
    int stage;
    int error;
};

/* Emergency registry: `kill_target` is -pgid (a group) or pid. */
int llc_target_registry_add(pid_t kill_target);
void llc_target_registry_remove(int slot);

int llc_target_pidfd_open(pid_t pid);
double llc_target_elapsed(const struct timespec *since);
struct llc_target *llc_target_alloc(void);
/* Reaps the launched child if it has ended (or, with block, once it
 * does): 1 reaped, 0 still running, negative errno. */
int llc_target_reap(struct llc_target *t, bool block);
/* Records a wait status as the final status; unregisters the target. */
void llc_target_record_status(struct llc_target *t, int wstatus);

/* Pins every thread of pid to cpu; with t, remembers each thread's mask
 * first (llc_target_restore_affinity puts them back). */
int llc_target_pin_process(pid_t pid, int cpu, struct llc_target *t, char *err, size_t errlen);
void llc_target_restore_affinity(struct llc_target *t);

#endif
