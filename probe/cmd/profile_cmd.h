/* Private to `llcprobe profile` (cmd/profile*.c). */
#ifndef LLC_CMD_PROFILE_CMD_H
#define LLC_CMD_PROFILE_CMD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct llc_sim_config;

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

#endif
