/* Streaming parser of valgrind lackey's --trace-mem=yes text:
 *   "I  0401ab70,3"    instruction at 0x401ab70, 3 bytes long
 *   " L 1fff000708,8"  load (S store, M modify) of 8 bytes
 * Valgrind's own lines ("==pid== ...", "--pid-- ...", "**pid** ...") are
 * counted and skipped. Text arrives in arbitrary chunks (pipe reads); lines
 * split between chunks are carried over. */
#ifndef LLC_TRACE_LACKEY_H
#define LLC_TRACE_LACKEY_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/trace.h"

/* Receives each record; a negative return stops the parse and is returned
 * by llc_lackey_feed. */
typedef int (*llc_lackey_emit_fn)(void *ctx, const struct llc_trace_rec *rec);

struct llc_lackey_parser {
    llc_lackey_emit_fn emit;
    void *ctx;
    uint64_t last_pc; /* data records get the address of their instruction */
    uint64_t bytes, lines, records, valgrind_lines, other_lines;
    char first_other[96]; /* the first unrecognized line, for diagnostics */
    char carry[512];      /* an incomplete line from the previous chunk */
    size_t carry_len;
    int carry_overflow; /* the carried line was longer than `carry`: skip it */
};

void llc_lackey_init(struct llc_lackey_parser *p, llc_lackey_emit_fn emit, void *ctx);
int llc_lackey_feed(struct llc_lackey_parser *p, const char *buf, size_t len);
/* Parses a final line without a newline. */
int llc_lackey_finish(struct llc_lackey_parser *p);

#endif
