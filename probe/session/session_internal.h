/* The session's state, shared by its set-up (sim.c, hw.c), its rate
 * search (rate.c) and its measurements. */
#ifndef LLC_SESSION_INTERNAL_H
#define LLC_SESSION_INTERNAL_H

#include <stdarg.h>

#include "llcprobe/common.h"

#include "llcprobe/session.h"
#include "llcprobe/sim.h"
#include "llcprobe/sysinfo.h"
#include "llcprobe/target.h"

/* The hardware target as the map sees it: one run, restarted when it ends
 * with repeat, or a fresh run per group with per_set_runs. */
struct session_target {
    struct llc_target *t;
    char **argv;
    struct llc_target_options opt;
    bool repeat, attached;
    unsigned runs;
    char note[LLC_ERRLEN]; /* why a restart failed */
};

struct llc_session {
    struct llc_session_config cfg; /* defaults resolved */
    struct llc_session_info info;
    struct llc_map_backend *b;
    char machine[256], target[4200], prefix[256];
    /* simulator: the configuration and options every backend of the
     * session is built from (calibrate rebuilds one per k) */
    struct llc_sim_config sim_cfg;
    struct llc_map_sim_options sim_opt;
    char trace_path[4096]; /* a traced program's temporary trace */
    struct llc_map_rate_selection rate_sel;
    struct llc_map_baseline *baseline;
    /* hardware */
    struct llc_sysinfo *si;
    struct session_target h;
    struct llc_map_prefetch_saved pf_saved;
    char pf_why[LLC_MAP_TEXT_LEN];
};

/* A note on the session's log: `llcprobe: <cmd>: ...`. */
void llc_session_note(const struct llc_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A warning on the session's log: `llcprobe: warning: ...`. */
void llc_session_warn(const struct llc_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A failure code that cannot be read as a usage error. */
int llc_session_fail_code(int rc);

/* The two set-ups, filling s->b, s->machine, s->target and the info. */
int llc_session_open_sim(struct llc_session *s, char *err, size_t errlen);
int llc_session_open_hw(struct llc_session *s, char *err, size_t errlen);
void llc_session_close_sim(struct llc_session *s);
void llc_session_close_hw(struct llc_session *s);

/* Chooses the probe rate of a simulator map (auto or linear, as
 * s->cfg.rate_mode says) with trials on fresh simulators built from cfg and
 * base, before the map; dwell is the map's. Sets s->cfg.rate and
 * s->rate_sel. (The linear-regime search may replace this body.) */
int llc_session_select_rate(struct llc_session *s, const struct llc_sim_config *cfg,
                            const struct llc_map_sim_options *base, double dwell, char *err,
                            size_t errlen);

int llc_session_restart_target(void *ctx, char *err, size_t errlen);

#endif
