/* Helpers every command shares: number parsing, the one-line error format,
 * progress on a terminal. */
#ifndef LLC_UTIL_CLI_H
#define LLC_UTIL_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of the program. */
enum { LLC_EXIT_OK = 0, LLC_EXIT_FAIL = 1, LLC_EXIT_USAGE = 2 };

/* Prints `llcprobe: <what>: <why>` on stderr; returns LLC_EXIT_FAIL. */
int llc_cli_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints `llcprobe: <cmd>: <why> (see 'llcprobe <cmd> --help')`; returns LLC_EXIT_USAGE. */
int llc_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a warning line `llcprobe: warning: ...` unless quiet. */
void llc_cli_warn(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whole numbers: decimal, 0x hex, or scientific with an integral value
 * (1e6). Rejects signs, garbage and overflow. */
int llc_parse_u64(const char *s, uint64_t *out);
/* Like llc_parse_u64 with bounds (inclusive). */
int llc_parse_u64_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Finite real numbers. */
int llc_parse_double(const char *s, double *out);
/* Byte sizes: a number with an optional suffix K/M/G/T or KiB/MiB/GiB/TiB
 * (both binary: 1K = 1024), or B. */
int llc_parse_size(const char *s, uint64_t *out);
/* Option parsers with the one CLI convention: on a bad value they print
 * `llcprobe: <cmd>: --<opt>: <why> (see 'llcprobe <cmd> --help')` and return
 * LLC_EXIT_USAGE; 0 on success. Bounds are inclusive and part of the
 * option's documented range (--help states them). */
int llc_opt_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                uint64_t *out);
int llc_opt_double(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                   double *out);
int llc_opt_size(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                 uint64_t *out);
/* Formats a byte count as "32 MiB", "1.5 KiB", "100 B". */
const char *llc_format_size(uint64_t bytes, char *buf, size_t len);

/* Progress line with ETA on stderr, drawn only when stderr is a terminal
 * and not quiet. */
struct llc_progress {
    bool active;
    double start;
    double last_draw;
    const char *label;
};
void llc_progress_begin(struct llc_progress *p, const char *label, bool quiet);
void llc_progress_update(struct llc_progress *p, double fraction);
void llc_progress_end(struct llc_progress *p);

/* Monotonic seconds. */
double llc_now(void);

#endif
