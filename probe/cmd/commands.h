/* The llcprobe subcommands. Each lives in probe/cmd/<name>.c, parses its own
 * options (getopt_long, --help on every command) and returns the process
 * exit status: 0 ok, 1 failure, 2 usage error. */
#ifndef LLC_CMD_COMMANDS_H
#define LLC_CMD_COMMANDS_H

int llc_cmd_info(int argc, char **argv);
int llc_cmd_trace(int argc, char **argv);
int llc_cmd_sim(int argc, char **argv);
int llc_cmd_map(int argc, char **argv);
int llc_cmd_fit(int argc, char **argv);
int llc_cmd_sample(int argc, char **argv);
int llc_cmd_calibrate(int argc, char **argv);
int llc_cmd_mrc(int argc, char **argv);
int llc_cmd_phase(int argc, char **argv);
int llc_cmd_predict(int argc, char **argv);
int llc_cmd_profile(int argc, char **argv);

#endif
