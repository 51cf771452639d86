/* Options of `llcprobe map`, parsed for map and for the commands built on
 * its options (sample, calibrate). */
#ifndef LLC_CMD_MAP_OPTS_H
#define LLC_CMD_MAP_OPTS_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "llcprobe/map.h"
#include "llcprobe/session.h"
#include "util/cli.h"

enum map_rate_mode { MAP_RATE_GIVEN = 0, MAP_RATE_AUTO, MAP_RATE_LINEAR };

struct map_opts {
    const char *cmd;     /* the command, for messages ("map", "sample") */
    const char *backend; /* auto pmu timing sim */
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
    char **argv;           /* the target command after -- */
    double search_cycle_s; /* sample --calibration, calibrate */
    enum map_rate_mode rate_mode;
    bool no_baseline; /* --no-baseline */
};

/* Extra options of a command built on map's (codes >= 512): on_extra
 * returns 0 or a usage exit status. */
struct map_cmd_extra {
    const struct option *longopts; /* terminated by a zero entry */
    int (*on_extra)(void *ctx, int code, const char *arg);
    void *ctx;
    void (*usage)(FILE *out);
    bool own_target; /* the command supplies its target (calibrate) */
};

/* Parses map's options (and extra ones) for command cmd. */
enum llc_parse llc_map_cmd_parse(const char *cmd, int argc, char **argv, struct map_opts *o,
                                 const struct map_cmd_extra *x);
/* SIGINT/SIGTERM set *stop (returned). */
volatile sig_atomic_t *llc_map_cmd_signals(void);
/* The session configuration of parsed options (sets: --sets parsed),
 * for a map; sample and calibrate change the purpose. */
void llc_map_cmd_config(const struct map_opts *o, const uint32_t *sets, size_t n_sets,
                        struct llc_session_config *c);

#endif
