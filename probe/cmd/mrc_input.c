/* llcprobe mrc: the reuse samples, from a trace, a profile or a sampled run. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/mrc_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"

static int input_from_trace(const struct mrc_args *a, const char *path, struct mrc_input *in,
                            char *err, size_t errlen)
{
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = a->rate;
    cfg.seed = a->seed;
    if (!a->rate_given) {
        /* Rate by sample count: a first pass counts the references (it
         * samples almost nothing), the rate gives about --samples. */
        struct llc_mrc_trace_stats st;
        struct llc_statmodel_hist *h = NULL;
        cfg.rate = 1e-12;
        int rc = llc_statmodel_hist_create(&h, err, errlen);
        if (rc == 0)
            rc = llc_mrc_sample_trace(path, &cfg, h, &st, err, errlen);
        llc_statmodel_hist_destroy(h);
        if (rc < 0)
            return rc;
        cfg.rate = st.refs > a->samples ? (double)a->samples / (double)st.refs : 1;
        printf("mrc: rate %.3g chosen for about %" PRIu64 " samples of %" PRIu64 " references\n",
               cfg.rate, a->samples, st.refs);
    }
    in->rate = cfg.rate;
    in->seed = a->seed;
    if (a->phases) {
        /* One pass: the windows' samples, pooled, are the plain run's. */
        struct llc_mrc_phase_config pc;
        llc_mrc_phase_config_default(&pc);
        pc.sampler = cfg;
        pc.unit = a->phase_unit;
        pc.window = a->phase_window;
        pc.ip_seed = a->seed;
        const int prc = llc_mrc_sample_trace_phases(path, &pc, &in->phase_run, err, errlen);
        if (prc < 0)
            return prc;
        in->refs = in->phase_run.stats.refs;
        in->lines = in->phase_run.stats.sampler.lines;
        return llc_statmodel_hist_merge(in->hist, in->phase_run.pooled, err, errlen);
    }
    struct llc_mrc_trace_stats st;
    int rc = llc_mrc_sample_trace(path, &cfg, in->hist, &st, err, errlen);
    if (rc < 0)
        return rc;
    in->refs = st.refs;
    in->lines = st.sampler.lines;
    if (!a->time_slots)
        return 0;
    /* Second pass, same seed: the same samples (the sampler is deterministic
     * on the same stream), now grouped by slot of equal references. */
    in->slot_refs = (st.refs + a->time_slots - 1) / a->time_slots;
    if (in->slot_refs == 0)
        return llc_errf(err, errlen, -ENODATA, "%s: no references to split into time slots", path);
    cfg.slot_refs = in->slot_refs;
    rc = llc_statmodel_groups_create(&in->slots, err, errlen);
    if (rc < 0)
        return rc;
    return llc_mrc_sample_trace_groups(path, &cfg, in->slots, &st, err, errlen);
}

static int input_from_lackey(const struct mrc_args *a, struct mrc_input *in, char *err,
                             size_t errlen)
{
    char dir[4096], path[4200];
    int rc = llc_tempdir_create("llcprobe-mrc", dir, sizeof dir, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof path, "%s/run.trace", dir);
    const struct llc_trace_record_opts o = {
        .output = path, .argv = a->argv, .stop = &llc_stop_signal};
    struct llc_trace_record_stats s;
    rc = llc_trace_record_lackey(&o, &s, err, errlen);
    if (rc == 0) {
        if (s.exit_status != 0)
            llc_cli_warn(a->quiet, "%s exited with status %d", a->argv[0], s.exit_status);
        rc = input_from_trace(a, path, in, err, errlen);
    }
    unlink(path);
    rmdir(dir);
    return rc;
}

/* A profile's samples (already in in->hist), and with --phases its windows
 * classified and grouped as the trace path does. */
static int input_from_profile(const struct mrc_args *a, const char *name,
                              const struct llc_reusefile_info *info,
                              const struct llc_reusefile_windows *pw, struct mrc_input *in,
                              char *err, size_t errlen)
{
    in->refs = info->refs;
    in->lines = info->lines;
    in->rate = info->rate;
    in->seed = info->seed;
    if (!a->phases)
        return 0;
    struct llc_mrc_phase_config pc;
    llc_mrc_phase_config_default(&pc);
    pc.unit = a->phase_unit;
    pc.window = a->phase_window_given ? a->phase_window : 0;
    return llc_mrc_profile_phases(name, info, pw, &pc, &in->phase_run, err, errlen);
}

/* A program run by the runtime or the QEMU plugin: both write the profile. */
typedef int (*profile_run_fn)(char *const *argv, const struct llc_mrc_rt_config *cfg,
                              struct llc_statmodel_hist *h, struct llc_reusefile_info *info,
                              struct llc_reusefile_windows *w, int *exit_status, char *err,
                              size_t errlen);

/* The QEMU sampler's default rate: its samples cost little next to QEMU's
 * own per-access callback (bzip2 -9 on 4 MiB: +5% CPU from 1e-4 to 1e-3),
 * and at 1e-4 sampling noise was most of the error against cachegrind on
 * real programs (scripts/eval-mrc-real.sh: 15.8% at 1e-4, seeds 1-3; 12.4%
 * at 1e-3, seed 1; 10.9% -> 6.3% without sqlite3, whose error is the
 * model's, the same at 1e-2). */
#define QEMU_RATE 1e-3

static int input_from_run(const struct mrc_args *a, profile_run_fn run, struct mrc_input *in,
                          char *err, size_t errlen)
{
    struct llc_reusefile_info info;
    struct llc_reusefile_windows pw = {0};
    int status = 0;
    const struct llc_mrc_rt_config cfg = {
        .rate = run == llc_mrc_run_qemu && !a->rate_given ? QEMU_RATE : a->rate,
        .seed = a->seed,
        .window = a->phases ? a->phase_window : 0,
        .stop = &llc_stop_signal,
        .samples = run != llc_mrc_run_rt || a->rate_given || a->phases ? 0 : a->samples};
    int rc = run(a->argv, &cfg, in->hist, &info, &pw, &status, err, errlen);
    if (rc < 0)
        return rc;
    if (status != 0)
        llc_cli_warn(a->quiet, "%s exited with status %d", a->argv[0], status);
    rc = input_from_profile(a, a->argv[0], &info, &pw, in, err, errlen);
    llc_reusefile_windows_free(&pw);
    return rc;
}

static int input_from_rt(const struct mrc_args *a, struct mrc_input *in, char *err, size_t errlen)
{
    return input_from_run(a, llc_mrc_run_rt, in, err, errlen);
}

static int input_from_qemu(const struct mrc_args *a, struct mrc_input *in, char *err, size_t errlen)
{
    return input_from_run(a, llc_mrc_run_qemu, in, err, errlen);
}

static int input_from_pmu(const struct mrc_args *a, struct mrc_input *in, char *err, size_t errlen)
{
    struct llc_mrc_pmu_stats st;
    const int rc = llc_mrc_sample_pmu(a->argv, a->rate, a->seed, in->hist, &st, err, errlen);
    if (rc < 0)
        return rc;
    if (st.exit_status != 0)
        llc_cli_warn(a->quiet, "%s exited with status %d", a->argv[0], st.exit_status);
    if (st.dropped || st.lost)
        llc_cli_warn(a->quiet,
                     "pmu: %" PRIu64 " samples dropped (all watchpoints busy), %" PRIu64 " lost",
                     st.dropped, st.lost);
    in->refs = st.refs;
    in->rate = a->rate;
    in->seed = a->seed;
    return 0;
}

int mrc_gather(const struct mrc_args *a, struct mrc_input *in, char *err, size_t errlen)
{
    if (a->trace) {
        in->source = "trace";
        snprintf(in->input, sizeof in->input, "%s", a->trace);
        return input_from_trace(a, a->trace, in, err, errlen);
    }
    if (a->profile) {
        struct llc_reusefile_info info;
        struct llc_reusefile_windows pw = {0};
        int rc =
            llc_reusefile_read(a->profile, &info, in->hist, a->phases ? &pw : NULL, err, errlen);
        if (rc < 0)
            return rc;
        in->source = "profile";
        snprintf(in->input, sizeof in->input, "%s", info.command[0] ? info.command : a->profile);
        rc = input_from_profile(a, a->profile, &info, &pw, in, err, errlen);
        llc_reusefile_windows_free(&pw);
        return rc;
    }
    llc_join_argv(a->argv, in->input, sizeof in->input);
    enum sampler s = a->sampler;
    if (s == SAMPLER_AUTO) {
        const int has = llc_mrc_has_runtime(a->argv[0], err, errlen);
        if (has < 0)
            return has;
        if (has && a->time_slots)
            return llc_errf(err, errlen, -EINVAL,
                            "--time-slots needs the trace sampler, and the program is linked "
                            "with libllcprobe-rt (add --sampler trace to trace it under lackey)");
        char qemu[4096], plugin[4096], why[LLC_ERRLEN];
        const bool qemu_ok =
            !has && !a->time_slots &&
            llc_mrc_qemu_find(qemu, sizeof qemu, plugin, sizeof plugin, why, sizeof why) == 0;
        s = has ? SAMPLER_RT : qemu_ok ? SAMPLER_QEMU : SAMPLER_TRACE;
        llc_cli_warn(a->quiet, "sampler: %s (%s)",
                     has       ? "rt"
                     : qemu_ok ? "qemu"
                               : "trace",
                     has       ? "the program is linked with libllcprobe-rt"
                     : qemu_ok ? "the program is not linked with libllcprobe-rt; running it "
                                 "under qemu-x86_64 with llcprobe's plugin"
                               : "the program is not linked with libllcprobe-rt; tracing it with "
                                 "valgrind's lackey, about 4000x slower than native");
    }
    switch (s) {
    case SAMPLER_RT:
        in->source = "rt";
        return input_from_rt(a, in, err, errlen);
    case SAMPLER_PMU:
        in->source = "pmu";
        return input_from_pmu(a, in, err, errlen);
    case SAMPLER_QEMU:
        in->source = "qemu";
        return input_from_qemu(a, in, err, errlen);
    default:
        in->source = "lackey";
        return input_from_lackey(a, in, err, errlen);
    }
}
