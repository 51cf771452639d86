/* Options of `llcprobe map`, shared by its option parser, its simulator
 * path and its hardware path. */
#ifndef LLC_CMD_MAP_OPTS_H
#define LLC_CMD_MAP_OPTS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/map.h"

struct map_opts {
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
};

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
