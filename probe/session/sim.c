/* A simulator session: the probe co-runs with a workload, a trace, or a
 * program traced first under valgrind, in the simulated hierarchy. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llcprobe/trace.h"
#include "session/session_internal.h"
#include "util/cli.h"

/* Target accesses per set per sweep that the default dwell aims at in
 * global mode: enough foreign traffic per set for its rank to be read. */
#define TARGET_ACCESSES_PER_SET 150.0
/* The probe rate unless given or chosen. */
#define DEFAULT_RATE 1e8

/* The program's stdout and stderr go to the target output file while it
 * is traced: opened here, after every check that can refuse, never through
 * a symlink, and created as the user the program runs as. */
static int redirect_output(const struct llc_session *s, int saved[2], char *err, size_t errlen)
{
    saved[0] = saved[1] = -1;
    if (!s->cfg.target_output)
        return 0;
    const int fd =
        open(s->cfg.target_output, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return llc_errf(err, errlen, -errno, "target output %s: %s", s->cfg.target_output,
                        strerror(errno));
    fflush(stdout);
    fflush(stderr);
    saved[0] = dup(STDOUT_FILENO);
    saved[1] = dup(STDERR_FILENO);
    if (saved[0] < 0 || saved[1] < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
        dup2(fd, STDERR_FILENO) < 0) {
        const int e = errno;
        close(fd);
        return llc_errf(err, errlen, -e, "target output %s: %s", s->cfg.target_output, strerror(e));
    }
    close(fd);
    return 0;
}

static void restore_output(int saved[2])
{
    fflush(stdout);
    fflush(stderr);
    if (saved[0] >= 0) {
        dup2(saved[0], STDOUT_FILENO);
        close(saved[0]);
    }
    if (saved[1] >= 0) {
        dup2(saved[1], STDERR_FILENO);
        close(saved[1]);
    }
}

static int trace_program(struct llc_session *s, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char *path = s->trace_path;
    snprintf(path, sizeof(s->trace_path), "%s/llcprobe-map-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0) {
        const int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        path[0] = '\0';
        return -e;
    }
    close(fd);
    const struct llc_trace_record_opts ro = {
        .output = path, .argv = s->cfg.argv, .keep_root = s->cfg.as_root, .stop = s->cfg.stop};
    struct llc_trace_record_stats st;
    char why[LLC_ERRLEN];
    llc_session_note(s, "tracing %s under valgrind for the simulator...", s->cfg.argv[0]);
    int saved[2];
    int rc = redirect_output(s, saved, err, errlen);
    if (rc < 0)
        return rc;
    rc = llc_trace_record_lackey(&ro, &st, why, sizeof(why));
    restore_output(saved);
    if (rc < 0)
        return llc_errf(err, errlen, llc_session_fail_code(rc), "tracing %s: %s", s->cfg.argv[0],
                        why);
    llc_session_note(s, "traced %llu loads, %llu stores in %.1f s (exit status %d)",
                     (unsigned long long)st.n_load, (unsigned long long)st.n_store, st.seconds,
                     st.exit_status);
    if (st.n_load + st.n_store + st.n_modify == 0)
        return llc_errf(err, errlen, -EIO, "%s made no memory accesses (exited at once?)",
                        s->cfg.argv[0]);
    return 0;
}

static int trace_accesses(const char *path, uint64_t *n)
{
    struct llc_trace_reader *r;
    char err[LLC_ERRLEN];
    if (llc_trace_reader_open(path, &r, err, sizeof(err)) < 0)
        return -1;
    const struct llc_trace_info *info = llc_trace_reader_info(r);
    *n = info->n_load + info->n_store + info->n_modify;
    llc_trace_reader_close(r);
    return *n ? 0 : -1;
}

/* One sweep of the map's plan with no target (noise still runs), giving
 * each unit's own miss rate and the exclusion mask, with the simulator's
 * leader sets added. */
static int measure_baseline(struct llc_session *s, char *err, size_t errlen)
{
    const struct llc_session_config *c = &s->cfg;
    struct llc_map_sim_options so = s->sim_opt;
    so.baseline = true;
    struct llc_map_backend *b = NULL;
    struct llc_map_result *r = NULL;
    bool *leaders = NULL;
    char why[LLC_ERRLEN];
    int rc = llc_map_backend_sim(&s->sim_cfg, &so, &b, why, sizeof(why));
    if (rc < 0)
        goto fail;
    const uint32_t units = llc_map_units(&b->geo);
    const struct llc_map_plan plan = {
        .mode = c->mode,
        .group = c->group ? c->group : (units + 7) / 8,
        .dwell_s = c->dwell_s,
        .sweeps = 1,
        .sets = c->sets,
        .n_sets = c->n_sets,
        .seed = c->seed,
        .stop = c->stop,
    };
    if ((rc = llc_map_run(b, &plan, &r, why, sizeof(why))) < 0)
        goto fail;
    if (c->stop && *c->stop) {
        rc = llc_errf(err, errlen, -EINTR, "interrupted during the baseline sweep, before the map");
        goto out;
    }
    leaders = malloc(units * sizeof(*leaders));
    if (!leaders || llc_map_sim_leaders(b, leaders) < 0) {
        rc = llc_errf(err, errlen, -EIO, "baseline: simulator leader sets unavailable");
        goto out;
    }
    if ((rc = llc_map_baseline_new(r, leaders, &s->baseline, why, sizeof(why))) < 0)
        goto fail;
    s->baseline->dwell_s = c->dwell_s;
    llc_session_note(
        s,
        "baseline sweep (no target): %u set%s over %.0f%% probe misses, %u leader set%s; %u excluded",
        s->baseline->n_baseline, s->baseline->n_baseline == 1 ? "" : "s",
        100 * LLC_MAP_BASELINE_MAX_Q, s->baseline->n_leader, s->baseline->n_leader == 1 ? "" : "s",
        s->baseline->n_excluded);
    rc = 0;
    goto out;
fail:
    rc = llc_errf(err, errlen, llc_session_fail_code(rc), "baseline sweep: %s", why);
out:
    free(leaders);
    llc_map_result_free(r);
    llc_map_backend_release(b);
    return rc;
}

int llc_session_open_sim(struct llc_session *s, char *err, size_t errlen)
{
    struct llc_session_config *c = &s->cfg;
    char why[LLC_ERRLEN];
    const char *preset = c->preset ? c->preset : "amd32";
    if (llc_sim_preset(preset, &s->sim_cfg, why, sizeof(why)) < 0)
        return llc_errf(err, errlen, LLC_SESSION_EUSAGE, "--preset: %s", why);
    if (c->policy) {
        const int p = llc_sim_policy_parse(c->policy, why, sizeof(why));
        if (p < 0)
            return llc_errf(err, errlen, LLC_SESSION_EUSAGE, "--policy: %s", why);
        s->sim_cfg.llc_policy = (enum llc_sim_policy)p;
    }
    s->sim_cfg.seed = c->seed;
    if (!c->mode_given)
        c->mode = LLC_MAP_GLOBAL;
    if (!(c->dwell_s > 0)) /* not given, or calibrate's "per k as parsed" */
        c->dwell_s = 0.002;
    if (c->rate_mode != LLC_SESSION_RATE_GIVEN || !(c->rate > 0))
        c->rate = DEFAULT_RATE; /* the linear search starts here */
    int rc;
    if (c->argv) {
        if ((rc = trace_program(s, err, errlen)) < 0)
            return rc;
        c->trace = s->trace_path;
    }
    struct llc_map_sim_options *so = &s->sim_opt;
    llc_map_sim_options_default(so);
    so->preset = preset;
    so->workload = c->workload;
    so->trace = c->trace;
    so->noise = c->noise;
    so->noise_rate = c->noise_rate;
    so->target_rate = c->target_rate;
    so->probe_rate = c->rate / 1e9;
    so->repeat = c->repeat;
    so->stop = c->stop;
    if (!c->dwell_given && c->mode == LLC_MAP_GLOBAL) {
        double accesses =
            TARGET_ACCESSES_PER_SET * s->sim_cfg.llc.sets_per_slice * s->sim_cfg.llc.slices;
        uint64_t in_trace;
        /* A trace ends: share it out over the sweeps, leaving a little at
         * the end (records spanning two lines make a few more accesses
         * than records, never fewer). */
        if (c->trace && !c->repeat && trace_accesses(c->trace, &in_trace) == 0)
            accesses = 0.98 * (double)in_trace / c->sweeps;
        c->dwell_s = accesses / (c->target_rate * 1e9);
    }
    snprintf(s->pf_why, sizeof(s->pf_why), "not applicable: the simulator models no prefetchers");
    s->info.prefetch = s->pf_why;
    if (c->purpose == LLC_SESSION_MAP && c->rate_mode != LLC_SESSION_RATE_GIVEN) {
        if ((rc = llc_session_select_rate(s, &s->sim_cfg, so, c->dwell_s, err, errlen)) < 0)
            return rc;
        so->probe_rate = c->rate / 1e9;
        s->info.rate_selection = &s->rate_sel;
    }
    if ((rc = llc_map_backend_sim(&s->sim_cfg, so, &s->b, why, sizeof(why))) < 0)
        return llc_errf(err, errlen, llc_session_fail_code(rc), "%s", why);
    /* The baseline belongs to the map; sample and calibrate measure their
     * sets their own way. */
    if (c->purpose == LLC_SESSION_MAP && !c->no_baseline &&
        (rc = measure_baseline(s, err, errlen)) < 0)
        return rc;
    s->info.policy = c->policy ? c->policy : "lru";
    snprintf(s->machine, sizeof(s->machine), "simulator preset %s, LLC %s", preset, s->info.policy);
    if (c->argv)
        llc_join_argv(c->argv, s->target, sizeof(s->target));
    else
        snprintf(s->target, sizeof(s->target), "%s%s", c->workload ? "workload " : "trace ",
                 c->workload ? c->workload : c->trace);
    llc_session_note(s, "%s; %s", s->b->walk_check, s->b->calibration);
    return 0;
}

void llc_session_close_sim(struct llc_session *s)
{
    if (s->b && s->cfg.repeat)
        llc_session_note(s, "the simulated target ran %u time%s", llc_map_sim_target_runs(s->b),
                         llc_map_sim_target_runs(s->b) == 1 ? "" : "s");
    if (s->trace_path[0])
        unlink(s->trace_path);
}
