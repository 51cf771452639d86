/* Helpers every command shares: number parsing, the one-line error format,
 * progress on a terminal. */
#ifndef LLC_UTIL_CLI_H
#define LLC_UTIL_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "parse/parse.h"
#include "util/clock.h"

/* Exit codes of the program. */
enum { LLC_EXIT_OK = 0, LLC_EXIT_FAIL = 1, LLC_EXIT_USAGE = 2 };

/* What every command's argument parser returns: run the command, the help
 * was printed (exit 0), or a usage error was printed (exit 2). A parser may
 * return llc_cli_usage()'s value directly: it is LLC_PARSE_USAGE. */
enum llc_parse { LLC_PARSE_RUN = 0, LLC_PARSE_HELP = 1, LLC_PARSE_USAGE = LLC_EXIT_USAGE };

/* The exit status for a parse that does not run the command. */
static inline int llc_parse_exit(enum llc_parse p)
{
    return p == LLC_PARSE_HELP ? LLC_EXIT_OK : LLC_EXIT_USAGE;
}

/* Prints `llcprobe: <what>: <why>` on stderr; returns LLC_EXIT_FAIL. */
int llc_cli_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints `llcprobe: <cmd>: <why> (see 'llcprobe <cmd> --help')`; returns LLC_EXIT_USAGE. */
int llc_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a warning line `llcprobe: warning: ...` unless quiet. */
void llc_cli_warn(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* The command line argv[0] argv[1] ... joined by single spaces into out
 * (cap bytes with the NUL; a longer line is cut short), as files record
 * what was run. */
void llc_join_argv(char *const *argv, char *out, size_t cap);

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

#endif
