/* Memory traces: a compact, versioned binary format with streaming read and
 * write (never the whole trace in memory), and the recorder that produces it
 * from a program run under valgrind's lackey tool.
 *
 * A trace is a sequence of records in program order: instruction records
 * (the address of each executed instruction, giving instruction-count
 * progress and code addresses for phase detection) and data records (load,
 * store, modify = load+store of the same bytes). Recorders without
 * per-instruction records (the instrumented runtime of a later issue) set
 * `pc` on data records to the code address of the access instead.
 *
 * The file format itself is documented in probe/trace/FORMAT.md.
 */
#ifndef LLCPROBE_TRACE_H
#define LLCPROBE_TRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum llc_trace_kind {
    LLC_TRACE_INSTR = 0,
    LLC_TRACE_LOAD = 1,
    LLC_TRACE_STORE = 2,
    LLC_TRACE_MODIFY = 3,
};

struct llc_trace_rec {
    uint64_t addr; /* instruction address (INSTR) or data address */
    uint64_t pc;   /* data records: code address if the recorder knows it, else 0 */
    uint32_t size; /* bytes accessed (or instruction length) */
    uint8_t kind;  /* enum llc_trace_kind */
};

/* What the header says about a trace. Counts are final once the writer is
 * closed; a reader reports them from the file. */
struct llc_trace_info {
    char recorder[32];  /* "lackey", "llcprobe-rt", "synthetic", ... */
    char command[1024]; /* the traced command line, space separated */
    uint32_t page_size; /* page size of the traced process */
    uint64_t n_instr, n_load, n_store, n_modify;
    int exit_status; /* traced program's wait status as exit code, or -1 */
};

struct llc_trace_writer;
struct llc_trace_reader;

int llc_trace_writer_open(const char *path, const struct llc_trace_info *info,
                          struct llc_trace_writer **out, char *err, size_t errlen);
int llc_trace_writer_put(struct llc_trace_writer *w, const struct llc_trace_rec *rec);
/* Writes the final counts and exit status, closes, frees. */
int llc_trace_writer_close(struct llc_trace_writer *w, int exit_status, char *err, size_t errlen);
/* Removes an unfinished trace; frees. Safe with NULL. */
void llc_trace_writer_abort(struct llc_trace_writer *w);

int llc_trace_reader_open(const char *path, struct llc_trace_reader **out, char *err,
                          size_t errlen);
const struct llc_trace_info *llc_trace_reader_info(const struct llc_trace_reader *r);
/* 1 = a record, 0 = clean end of trace, negative = error (truncated,
 * corrupt) with err filled. */
int llc_trace_reader_next(struct llc_trace_reader *r, struct llc_trace_rec *rec, char *err,
                          size_t errlen);
void llc_trace_reader_close(struct llc_trace_reader *r);

/* Bytes of trace produced so far (the file is a little larger once closed). */
uint64_t llc_trace_writer_bytes(const struct llc_trace_writer *w);
/* The program version that wrote the trace ("llcprobe 0.1.0"). */
const char *llc_trace_reader_tool(const struct llc_trace_reader *r);

/* --- recording with valgrind's lackey ----------------------------------- */

struct llc_trace_record_stats {
    uint64_t n_instr, n_load, n_store, n_modify;
    uint64_t trace_bytes;    /* trace written (the final file size at the end) */
    uint64_t lackey_bytes;   /* lackey text parsed */
    uint64_t lackey_unknown; /* lines that were neither records nor valgrind's messages */
    char first_unknown[96];  /* the first of them */
    double seconds;          /* since valgrind started */
    int exit_status;         /* traced program's exit code; 128 + N if killed by signal N */
    int term_signal;         /* the signal that killed it, or 0 */
};

struct llc_trace_record_opts {
    const char *output;   /* trace file to write (atomically) */
    char *const *argv;    /* program and its arguments, NULL-terminated */
    const char *valgrind; /* valgrind executable; NULL = "valgrind" from PATH */
    bool keep_root;       /* run as root under sudo: do not drop to SUDO_UID/SUDO_GID */
    /* Polled while recording; set it (e.g. from a signal handler) to stop the
     * program's process group and remove the partial output. May be NULL. */
    volatile sig_atomic_t *stop;
    /* Called about twice a second with the figures so far. May be NULL. */
    void (*progress)(void *ctx, const struct llc_trace_record_stats *so_far);
    void *progress_ctx;
};

/* Runs argv under `valgrind --tool=lackey --trace-mem=yes`, the program's
 * stdin/stdout/stderr being the caller's, and streams lackey's output from
 * a pipe into the trace. Returns 0 once the trace is complete, whatever the
 * program's own exit status (in `stats`); -EINTR if stopped; other negative
 * codes for failures (valgrind or the program missing, output unwritable),
 * in which case no output file is left behind. */
int llc_trace_record_lackey(const struct llc_trace_record_opts *opts,
                            struct llc_trace_record_stats *stats, char *err, size_t errlen);

#endif
