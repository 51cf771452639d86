/* llcprobe profile: the runs behind a profile, in the simulator (trace,
 * timed solo run, reuse and phases, probe readings, strata) or live. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/map_opts.h"
#include "cmd/profile_cmd.h"
#include "cmd/sim_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/phase.h"
#include "llcprobe/profile.h"
#include "llcprobe/sim.h"
#include "llcprobe/sysinfo.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"
#include "mrc/mrc.h"
#include "sysinfo/report.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"
#include "util/sha256.h"

/* --rate, or the rate that gives about --samples samples of the trace's
 * references (its header's loads, stores and modifies: a reference that
 * spans two lines counts once there, twice in the sampler). */
static int sampling_rate(const char *trace, const struct prof_opts *o, double *rate, char *err,
                         size_t errlen)
{
    if (o->rate > 0) {
        *rate = o->rate;
        return 0;
    }
    struct llc_trace_reader *r = NULL;
    const int rc = llc_trace_reader_open(trace, &r, err, errlen);
    if (rc < 0)
        return rc;
    const struct llc_trace_info *in = llc_trace_reader_info(r);
    const double refs = (double)in->n_load + (double)in->n_store + (double)in->n_modify;
    llc_trace_reader_close(r);
    *rate = refs > (double)o->samples ? (double)o->samples / refs : 1;
    if (!o->quiet)
        fprintf(stderr, "llcprobe: profile: rate %.3g for about %llu samples of %.0f references\n",
                *rate, (unsigned long long)o->samples, refs);
    return 0;
}

/* The phases and their reuse histograms; the rate it sampled at in *rate. */
static int sample_phases(const char *trace, const struct prof_opts *o, double *rate,
                         struct llc_mrc_phase_run *run, char *err, size_t errlen)
{
    const int rc = sampling_rate(trace, o, rate, err, errlen);
    if (rc < 0)
        return rc;
    struct llc_mrc_phase_config pc;
    llc_mrc_phase_config_default(&pc);
    pc.sampler.rate = *rate;
    pc.sampler.seed = o->seed;
    pc.window = o->window;
    pc.sampler.log_reuses = true; /* own distances */
    return llc_mrc_sample_trace_phases(trace, &pc, run, err, errlen);
}

static uint64_t trace_instructions(const char *path)
{
    char err[LLC_ERRLEN];
    struct llc_trace_reader *r = NULL;
    if (llc_trace_reader_open(path, &r, err, sizeof(err)) < 0)
        return 0;
    const uint64_t n = llc_trace_reader_info(r)->n_instr;
    llc_trace_reader_close(r);
    return n;
}

/* A run's failure line, except when a signal stopped it: then the one line
 * is the caller's "stopped by signal" (exit 128 + N). */
static int fail_unless_stopped(const char *err)
{
    return llc_stop_requested() ? LLC_EXIT_FAIL : llc_cli_fail(CMD, "%s", err);
}

/* The probe readings of every phase, the target paced window by window as
 * the timed solo run went. */
static int probe_sim(const struct prof_opts *o, const struct llc_sim_config *cfg,
                     const struct llc_corun_series *solo, struct llc_profile *p, char *err,
                     size_t errlen)
{
    const size_t n = solo->n < p->windows.count ? solo->n : p->windows.count;
    double *v = malloc((3 * n + 1) * sizeof(*v));
    if (!v)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const bool victim = cfg->inclusion == LLC_SIM_EXCLUSIVE;
    for (size_t k = 0; k < n; k++) {
        const struct llc_corun_window *w = &solo->w[k];
        v[k] = (double)w->accesses;
        v[n + k] = w->cycles / o->freq;
        v[2 * n + k] = (double)(victim ? w->llc_accesses : w->llc_misses);
    }
    const struct llc_profile_probe_run pr = {.workload = o->workload,
                                             .trace = o->workload ? NULL : o->trace,
                                             .n_windows = n,
                                             .accesses = v,
                                             .seconds = v + n,
                                             .insertions = v + 2 * n};
    struct llc_profile_probe_config pc = o->probe;
    pc.seed = o->seed;
    pc.stop = llc_map_cmd_signals();
    pc.log = o->quiet ? NULL : stderr;
    const int rc = llc_profile_probe_sim(cfg, &pr, &pc, p, err, errlen);
    free(v);
    return rc;
}

int profile_run_sim(const struct prof_opts *o, struct llc_profile *p, struct llc_mrc_phase_run *run,
                    char *err, size_t errlen)
{
    struct llc_sim_config cfg;
    int rc = llc_sim_cmd_config(&o->sim, 4096, o->seed, 1, &cfg);
    if (rc)
        return rc;
    char tmp[4096] = "";
    const char *trace = o->trace;
    struct llc_corun_result *res = NULL;
    char trace_cmd[1024] = "";
    if (o->workload) {
        if ((rc = llc_profile_tmp_path(".trace", tmp, sizeof(tmp), err, errlen)) < 0 ||
            (rc = llc_profile_workload_trace(&cfg, o->workload, o->ipa, o->instructions, tmp,
                                             llc_map_cmd_signals(), err, errlen)) < 0)
            goto fail;
        trace = tmp;
    } else {
        struct llc_trace_reader *r = NULL;
        if ((rc = llc_trace_reader_open(trace, &r, err, errlen)) < 0)
            goto fail;
        snprintf(trace_cmd, sizeof(trace_cmd), "%s", llc_trace_reader_info(r)->command);
        llc_trace_reader_close(r);
    }
    double rate;
    if ((rc = sample_phases(trace, o, &rate, run, err, errlen)) < 0)
        goto fail;
    /* The timed solo run: the workload itself (set shapes kept), or the trace. */
    struct llc_corun_agent ag = {.name = "solo",
                                 .source = o->workload ? LLC_CORUN_WORKLOAD : LLC_CORUN_TRACE,
                                 .spec = o->workload,
                                 .trace_path = o->trace,
                                 .cpi = o->cpi,
                                 .mlp = o->mlp,
                                 .ipa = o->ipa,
                                 .instructions = o->workload ? o->instructions : 0};
    struct llc_corun_params cp;
    llc_corun_params_default(&cp);
    cp.lat_l2 = o->lat[0];
    cp.lat_llc = o->lat[1];
    cp.lat_mem = o->lat[2];
    cp.solo = false;
    cp.stop = llc_map_cmd_signals();
    /* Windows of references (traces without instruction records) are
     * ipa instructions per reference in the timed run. */
    cp.window = run->unit == LLC_MRC_WINDOW_REFERENCES
                    ? (uint64_t)llround((double)run->window * o->ipa)
                    : run->window;
    if ((rc = llc_corun_run(&cfg, &ag, 1, &cp, &res, err, errlen)) < 0)
        goto fail;
    const struct solo_windows sw = {.sim = &res->corun[0]};
    if ((rc = profile_set_program(p, o, trace_cmd, err, errlen)) < 0 ||
        (rc = profile_fill_phases(p, run, &sw, o, err, errlen)) < 0)
        goto fail;
    p->sampler.rate = rate; /* the strata sample at it too */
    profile_set_machine_preset(p, o->sim.preset, &cfg);
    /* The strata (unless --no-strata) and the windows' first touches. */
    struct llc_profile_strata_config sc;
    llc_profile_strata_config_default(&sc);
    sc.max_strata = (size_t)o->strata;
    if ((rc = llc_profile_strata_sim(&cfg, trace, o->workload, &sc, p, err, errlen)) < 0)
        goto fail;
    if (o->no_probe)
        profile_set_probe_missing(p, o, NULL);
    else if ((rc = probe_sim(o, &cfg, &res->corun[0], p, err, errlen)) < 0)
        goto fail;
    rc = 0;
fail:
    if (tmp[0])
        unlink(tmp);
    llc_corun_free(res);
    return rc < 0 ? fail_unless_stopped(err) : rc;
}

int profile_run_live(const struct prof_opts *o, struct llc_profile *p,
                     struct llc_mrc_phase_run *run, char *err, size_t errlen)
{
    char tmp[4096] = "", reason[1024] = "";
    int rc = llc_profile_tmp_path(".trace", tmp, sizeof(tmp), err, errlen);
    if (rc < 0)
        goto fail;
    struct llc_trace_record_stats st;
    const struct llc_trace_record_opts ro = {
        .output = tmp, .argv = o->argv, .stop = llc_map_cmd_signals()};
    if (!o->quiet)
        fprintf(stderr, "llcprobe: profile: tracing %s under valgrind lackey\n", o->argv[0]);
    if ((rc = llc_trace_record_lackey(&ro, &st, err, errlen)) < 0)
        goto fail;
    double rate;
    if ((rc = sample_phases(tmp, o, &rate, run, err, errlen)) < 0)
        goto fail;
    double cpu = 0;
    int status = 0;
    if ((rc = llc_profile_time_native(o->argv, &cpu, &status, err, errlen)) < 0)
        goto fail;
    const uint64_t instr = trace_instructions(tmp);
    /* A CPU time below the clock's resolution still gives a positive CPI. */
    const double live_cpi = instr ? fmax(cpu, 1e-6) * o->freq / (double)instr : o->cpi;
    const struct solo_windows sw = {.live_cpi = live_cpi};
    if ((rc = profile_set_program(p, o, NULL, err, errlen)) < 0 ||
        (rc = profile_fill_phases(p, run, &sw, o, err, errlen)) < 0 ||
        (rc = profile_set_machine_host(p, reason, sizeof(reason), err, errlen)) < 0)
        goto fail;
    p->sampler.rate = rate;
    profile_set_probe_missing(p, o, reason);
    rc = 0;
fail:
    if (tmp[0])
        unlink(tmp);
    return rc < 0 ? fail_unless_stopped(err) : rc;
}