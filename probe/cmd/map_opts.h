/* Options of `llcprobe map`, shared by its option parser, its simulator
 * path and its hardware path. */
#ifndef LLC_CMD_MAP_OPTS_H
#define LLC_CMD_MAP_OPTS_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/map.h"

struct map_opts;

/* What runs once the backend is ready: llc_map_cmd_finish for `map`;
 * `sample` and `calibrate` put their own stage here (arguments as
 * llc_map_cmd_finish). */
typedef int (*map_stage_fn)(const struct map_opts *o, struct llc_map_backend *b, const char *machine,
                            const char *target, double rate, volatile sig_atomic_t *stop, bool want_truth,
                            int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx);

/* How the probe rate is set: given, chosen against a planted pattern, or
 * by the spec's linear-regime rule (§1.3). */
enum map_rate_mode { MAP_RATE_GIVEN = 0, MAP_RATE_AUTO, MAP_RATE_LINEAR };

struct map_opts {
    const char *cmd;              /* the command, for messages ("map", "sample") */
    const char *backend;          /* auto pmu timing sim */
    const char *preset, *policy, *workload, *trace, *noise;
    double target_rate, noise_rate;
    const char *out_prefix;
    const char *sets_list, *event, *target_output;
    unsigned llc_ways, llc_sets_per_slice, llc_slices; /* --llc override, 0 = detect */
    enum llc_map_mode mode;
    bool mode_given;
    uint32_t group;
    double dwell_s, rate;
    bool dwell_given, rate_given;
    unsigned sweeps, delay_nops;
    uint32_t reserve;
    uint64_t seed;
    int attach_pid;
    bool as_root, repeat, per_set_runs, quiet, small_pages_ok;
    char **argv;                  /* the target command after -- */
    map_stage_fn stage;           /* NULL = llc_map_cmd_finish */
    void *stage_ctx;
    /* sample --calibration, calibrate: the occupancy search's cycle; a
     * hardware backend checks a slow idle walk at that pace before the
     * target starts (llc_map_hw_options). 0 = no search. */
    double search_cycle_s;
    unsigned calib_lines;         /* sim: calibration co-runner (llc_map_sim_options) */
    double calib_rate;
    enum map_rate_mode rate_mode;
    /* Set by the path that chose the rate, for the output; NULL = given. */
    const struct llc_map_rate_selection *rate_selection;
    /* Set by the path that measured a baseline sweep (spec §1.2); NULL = none. */
    const struct llc_map_baseline *baseline;
    bool no_baseline;             /* --no-baseline */
    const char *prefetch;         /* set by the path: what was done about prefetchers */
};

/* Extra options of a command built on map's (codes >= 512): on_extra
 * returns 0, 1 for --help handled, or an exit status. */
struct map_cmd_extra {
    const struct option *longopts; /* terminated by a zero entry */
    int (*on_extra)(void *ctx, int code, const char *arg);
    void *ctx;
    void (*usage)(FILE *out);
};

/* Parses map's options (and extra ones) for command cmd. Returns 0, 1 when
 * --help was printed, or the usage exit status. */
int llc_map_cmd_parse(const char *cmd, int argc, char **argv, struct map_opts *o, const struct map_cmd_extra *x);
/* SIGINT/SIGTERM set *stop (returned). */
volatile sig_atomic_t *llc_map_cmd_signals(void);
/* Runs the command's stage on the backend its options describe. */
int llc_map_cmd_dispatch(const struct map_opts *o);

/* The two paths; each returns the exit status. stop is set by signals. */
int llc_map_cmd_sim(const struct map_opts *o, volatile sig_atomic_t *stop);
int llc_map_cmd_hw(const struct map_opts *o, volatile sig_atomic_t *stop);

/* Shared by both paths: runs the plan on a ready backend, writes
 * PREFIX.map.json and PREFIX.map.csv, prints the summary. truth may be NULL. */
int llc_map_cmd_finish(const struct map_opts *o, struct llc_map_backend *b, const char *machine,
                       const char *target, double rate, volatile sig_atomic_t *stop,
                       bool want_truth, int (*restart)(void *ctx, char *err, size_t errlen),
                       void *restart_ctx);

#endif
