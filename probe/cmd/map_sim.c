/* llcprobe map --backend sim: the probe co-runs with a workload, a trace,
 * or a program traced first under valgrind, in the simulated hierarchy. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/map_opts.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/trace.h"
#include "util/cli.h"

/* Target accesses per set per sweep that the default dwell aims at in
 * global mode: enough foreign traffic per set for its rank to be read. */
#define TARGET_ACCESSES_PER_SET 150.0

static int trace_program(const struct map_opts *o, volatile sig_atomic_t *stop, char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/llcprobe-map-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const int fd = mkstemp(path);
    if (fd < 0)
        return llc_cli_fail(o->cmd, "%s: %s", path, strerror(errno));
    close(fd);
    const struct llc_trace_record_opts ro = {.output = path, .argv = o->argv, .keep_root = o->as_root, .stop = stop};
    struct llc_trace_record_stats st;
    char err[LLC_ERRLEN];
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: tracing %s under valgrind for the simulator...\n", o->cmd, o->argv[0]);
    const int rc = llc_trace_record_lackey(&ro, &st, err, sizeof(err));
    if (rc < 0) {
        unlink(path);
        return llc_cli_fail(o->cmd, "tracing %s: %s", o->argv[0], err);
    }
    if (!o->quiet)
        fprintf(stderr, "llcprobe: %s: traced %llu loads, %llu stores in %.1f s (exit status %d)\n",
                o->cmd, (unsigned long long)st.n_load, (unsigned long long)st.n_store, st.seconds, st.exit_status);
    if (st.n_load + st.n_store + st.n_modify == 0) {
        unlink(path);
        return llc_cli_fail(o->cmd, "%s made no memory accesses (exited at once?)", o->argv[0]);
    }
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

static const char *default_prefix(const struct map_opts *o, char *buf, size_t len)
{
    const char *src = o->argv ? o->argv[0] : o->trace ? o->trace : NULL;
    if (!src) {
        /* A workload spec: its kind ("gaussian:size=..." -> "gaussian"). */
        snprintf(buf, len, "%s", o->workload);
        buf[strcspn(buf, ":")] = '\0';
        return buf;
    }
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", src);
    snprintf(buf, len, "%s", basename(copy));
    char *dot = strstr(buf, ".trace");
    if (dot && dot != buf)
        *dot = '\0';
    return buf;
}

int llc_map_cmd_sim(const struct map_opts *in, volatile sig_atomic_t *stop)
{
    struct map_opts o = *in;
    char err[LLC_ERRLEN], trace_path[4096] = "", prefix[256], machine[128], target[4200];
    struct llc_map_backend *b = NULL;
    int status = LLC_EXIT_FAIL;
    struct llc_sim_config cfg;
    const char *preset = o.preset ? o.preset : "amd32";
    if (llc_sim_preset(preset, &cfg, err, sizeof(err)) < 0)
        return llc_cli_usage(o.cmd, "--preset: %s", err);
    if (o.policy) {
        const int p = llc_sim_policy_parse(o.policy, err, sizeof(err));
        if (p < 0)
            return llc_cli_usage(o.cmd, "--policy: %s", err);
        cfg.llc_policy = (enum llc_sim_policy)p;
    }
    cfg.seed = o.seed;
    if (!o.mode_given)
        o.mode = LLC_MAP_GLOBAL;
    if (!o.out_prefix)
        o.out_prefix = default_prefix(&o, prefix, sizeof(prefix));
    if (o.argv) {
        if (trace_program(&o, stop, trace_path, sizeof(trace_path)) != 0)
            return LLC_EXIT_FAIL;
        o.trace = trace_path;
    }
    struct llc_map_sim_options so;
    llc_map_sim_options_default(&so);
    so.preset = preset;
    so.workload = o.workload;
    so.trace = o.trace;
    so.noise = o.noise;
    so.noise_rate = o.noise_rate;
    so.target_rate = o.target_rate;
    so.probe_rate = o.rate / 1e9;
    so.calib_lines = o.calib_lines;
    so.calib_rate = o.calib_rate;
    if (llc_map_backend_sim(&cfg, &so, &b, err, sizeof(err)) < 0) {
        llc_cli_fail(o.cmd, "%s", err);
        goto out;
    }
    if (!o.dwell_given && o.mode == LLC_MAP_GLOBAL) {
        double accesses = TARGET_ACCESSES_PER_SET * llc_map_units(&b->geo);
        uint64_t in_trace;
        /* A trace ends: share it out over the sweeps, leaving a little at
         * the end (records spanning two lines make a few more accesses
         * than records, never fewer). */
        if (o.trace && trace_accesses(o.trace, &in_trace) == 0)
            accesses = 0.98 * (double)in_trace / o.sweeps;
        o.dwell_s = accesses / (o.target_rate * 1e9);
    }
    snprintf(machine, sizeof(machine), "simulator preset %s, LLC %s", preset, o.policy ? o.policy : "lru");
    if (o.argv) {
        size_t at = (size_t)snprintf(target, sizeof(target), "%s", o.argv[0]);
        for (char **a = o.argv + 1; *a && at < sizeof(target); a++)
            at += (size_t)snprintf(target + at, sizeof(target) - at, " %s", *a);
    } else {
        snprintf(target, sizeof(target), "%s%s", o.workload ? "workload " : "trace ",
                 o.workload ? o.workload : o.trace);
    }
    if (!o.quiet)
        fprintf(stderr, "llcprobe: %s: %s; %s\n", o.cmd, b->walk_check, b->calibration);
    status = (o.stage ? o.stage : llc_map_cmd_finish)(&o, b, machine, target, o.rate, stop, true, NULL, NULL);
out:
    llc_map_backend_release(b);
    if (trace_path[0])
        unlink(trace_path);
    return status;
}
