/* What the sim command shares with its co-run mode and with profile. */
#ifndef LLC_CMD_SIM_CMD_H
#define LLC_CMD_SIM_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

struct llc_sim_config;

/* The simulator configuration of a preset with the sim command's
 * overrides (policy, inclusion name or "victim", no L2; NULL = the
 * preset's). 0, or the exit status after a one-line error. */
int llc_sim_cmd_config(const char *preset, const char *policy, const char *inclusion,
                       bool no_l2, uint32_t page_size, uint64_t seed, unsigned agents,
                       struct llc_sim_config *c);

/* OUT.json -> OUT.csv (a name not ending in .json gets .csv appended). */
void llc_sim_cmd_csv_path(const char *json, char *buf, size_t len);

/* llcprobe sim --corun ...: the timed co-run (cmd/sim_corun.c). */
int llc_cmd_sim_corun(int argc, char **argv);
/* Its part of `llcprobe sim --help`. */
void llc_sim_corun_usage(FILE *out);

#endif
