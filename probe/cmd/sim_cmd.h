/* What the sim command shares with its co-run mode and with profile. */
#ifndef LLC_CMD_SIM_CMD_H
#define LLC_CMD_SIM_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

struct llc_sim_config;

/* The cache options of sim, sim --corun and profile: --preset, --policy,
 * --inclusion (a name or "victim") and --no-l2; NULL = the preset's. */
struct llc_sim_cmd_opts {
    const char *preset, *policy, *inclusion;
    bool no_l2;
};
/* Their getopt_long codes and entries (one line of a command's table). */
enum { LLC_SIM_OPT_PRESET = 0x1000, LLC_SIM_OPT_POLICY, LLC_SIM_OPT_INCL, LLC_SIM_OPT_NOL2 };
#define LLC_SIM_CMD_LONGOPTS                                   \
    {"preset", required_argument, 0, LLC_SIM_OPT_PRESET},      \
        {"policy", required_argument, 0, LLC_SIM_OPT_POLICY},  \
        {"inclusion", required_argument, 0, LLC_SIM_OPT_INCL}, \
    {                                                          \
        "no-l2", no_argument, 0, LLC_SIM_OPT_NOL2              \
    }
/* Stores getopt_long's code c with its argument; false if c is not one of
 * LLC_SIM_OPT_*. */
bool llc_sim_cmd_opt(int c, const char *arg, struct llc_sim_cmd_opts *o);

/* The simulator configuration of o's preset with o's overrides. 0, or the
 * exit status after a one-line error. */
int llc_sim_cmd_config(const struct llc_sim_cmd_opts *o, uint32_t page_size, uint64_t seed,
                       unsigned agents, struct llc_sim_config *c);

/* OUT.json -> OUT.csv (a name not ending in .json gets .csv appended). */
void llc_sim_cmd_csv_path(const char *json, char *buf, size_t len);

/* llcprobe sim --corun ...: the timed co-run (cmd/sim_corun.c). */
int llc_cmd_sim_corun(int argc, char **argv);
/* Its part of `llcprobe sim --help`. */
void llc_sim_corun_usage(FILE *out);

#endif
