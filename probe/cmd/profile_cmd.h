/* Private to `llcprobe profile` (cmd/profile*.c). */
#ifndef LLC_CMD_PROFILE_CMD_H
#define LLC_CMD_PROFILE_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd/sim_cmd.h"
#include "llcprobe/corun.h"
#include "llcprobe/profile.h"
#include "mrc/mrc.h"

struct llc_sim_config;

#define CMD "profile"

/* A new empty temporary file named <TMPDIR>/llcprobe-profile-XXXXXX<suffix>. */
int llc_profile_tmp_path(const char *suffix, char *buf, size_t len, char *err, size_t errlen);
/* Writes `instructions` instructions of workload spec (seeded as the timed
 * run's agent 0, ipa instructions per access) as a trace: instruction
 * records at code addresses of the workload's phase, then the access with
 * that code address. Checks *stop (if set) every 256 accesses. */
int llc_profile_workload_trace(const struct llc_sim_config *cfg, const char *spec, double ipa,
                               uint64_t instructions, const char *path, volatile sig_atomic_t *stop,
                               char *err, size_t errlen);
/* Runs argv natively; *cpu_s = its user + system CPU time. */
int llc_profile_time_native(char *const *argv, double *cpu_s, int *status, char *err,
                            size_t errlen);

/* ---- the command's pieces (cmd/profile.c, profile_fill.c, profile_run.c) ---- */

/* The options profile parsed. */
struct prof_opts {
    struct llc_sim_cmd_opts sim;
    const char *out, *backend, *workload, *trace, *name;
    const char *latency;
    bool no_probe, quiet;
    uint64_t strata; /* 0 = none */
    uint64_t instructions, seed, window;
    double ipa, cpi, mlp, freq;
    double rate;      /* 0 = chosen for `samples` (profile_choose_rate) */
    uint64_t samples; /* reuse samples to aim at without --rate */
    double lat[3];
    struct llc_profile_probe_config probe;
    char **argv;
};

/* What the timed run (or the live timing) says about the windows. */
struct solo_windows {
    const struct llc_corun_series *sim; /* NULL: live */
    double live_cpi;                    /* live: one CPI for all */
};

/* The program part: command, binary and its SHA-256, name, workload or trace. */
int profile_set_program(struct llc_profile *p, const struct prof_opts *o, const char *trace_cmd,
                        char *err, size_t errlen);
/* The machine part of a simulator profile: the preset's geometry. */
void profile_set_machine_preset(struct llc_profile *p, const char *preset,
                                const struct llc_sim_config *c);
/* This host's LLC and `info` summary; *backend_reason gets why the probe
 * backends can or cannot run here. */
int profile_set_machine_host(struct llc_profile *p, char *backend_reason, size_t len, char *err,
                             size_t errlen);
/* Fills windows[] and phases[] of p from the phase run and the solo
 * windows. A run whose windows all stay unclassified (too short for
 * ScarPhase) becomes one phase 0 with every sample. */
int profile_fill_phases(struct llc_profile *p, const struct llc_mrc_phase_run *run,
                        const struct solo_windows *sw, const struct prof_opts *o, char *err,
                        size_t errlen);
/* Records the timing model (simulator) or the live timing and the sampler. */
void profile_set_timing_sampler(struct llc_profile *p, const struct prof_opts *o);
/* Records why the probe readings are missing (--no-probe, or the backend's reason). */
void profile_set_probe_missing(struct llc_profile *p, const struct prof_opts *o,
                               const char *backend_reason);
/* The simulator profile: trace, timed solo run, phases, reuse, probe, strata. */
int profile_run_sim(const struct prof_opts *o, struct llc_profile *p, struct llc_mrc_phase_run *run,
                    char *err, size_t errlen);
/* The live profile: the program run natively and under the reuse sampler. */
int profile_run_live(const struct prof_opts *o, struct llc_profile *p,
                     struct llc_mrc_phase_run *run, char *err, size_t errlen);

#endif
