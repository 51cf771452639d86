/* Reading input files safely: bounded lines, inputs read once (so pipes,
 * FIFOs and <(command) work), a directory called one, and input text
 * escaped before it is echoed in a message. */
#ifndef LLC_UTIL_INPUT_H
#define LLC_UTIL_INPUT_H

#include <stddef.h>
#include <stdio.h>

/* Opens path for reading; a directory is refused as "PATH: is a directory". */
FILE *llc_input_fopen(const char *path, char *err, size_t errlen);

/* Lines of at most max_len bytes (newline excluded). */
struct llc_lines {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap, max_len;
    size_t lineno; /* of the line last returned, from 1 */
};
int llc_lines_open(struct llc_lines *r, const char *path, size_t max_len, char *err, size_t errlen);
/* 1 with *line (NUL-terminated, newline stripped), 0 at the end, negative
 * with err "PATH: line N: longer than MAX bytes" or a read error. */
int llc_lines_next(struct llc_lines *r, char **line, char *err, size_t errlen);
void llc_lines_close(struct llc_lines *r);

/* The whole file in memory (NUL-terminated; *len without it), at most
 * max_bytes ("PATH: larger than MAX bytes"). A file that is not regular
 * (pipe, FIFO, <(command)) is read once per process: a second call for the
 * same path returns a copy of the same bytes instead of waiting on a pipe
 * that has already been drained. */
#define LLC_JSON_MAX_BYTES ((size_t)1 << 30) /* JSON inputs (maps, fits, profiles) */
int llc_input_slurp(const char *path, size_t max_bytes, char **out, size_t *len, char *err,
                    size_t errlen);

/* Copies at most n bytes of s to out, printable ASCII as is and every
 * other byte as \xNN, truncated with "..." to fit outlen. Returns out. */
const char *llc_escape(const char *s, size_t n, char *out, size_t outlen);

#endif
