/* Private to probe/simrun: the driver's state. */
#ifndef LLC_SIMRUN_INTERNAL_H
#define LLC_SIMRUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/sim.h"
#include "llcprobe/simrun.h"

struct llc_workload;
struct llc_trace_reader;

/* Addresses buffered per agent: large enough that refills and batch
 * hand-offs to llc_sim_run are rare, small enough to stay in the host L1/L2. */
#define SIMRUN_BATCH 1024

/* Largest data access a trace record may make (a page; lackey and the
 * instrumented runtime record single loads and stores, <= 64 bytes);
 * beyond it the record is taken for corruption. */
#define SIMRUN_MAX_RECORD_BYTES ((uint64_t)4096)

/* Physical-mode agents' regions: agent i starts at region base + i * stride. */
#define SIMRUN_PHYS_STRIDE ((uint64_t)1 << 42)

struct simrun_agent {
    char name[64];
    enum llc_simrun_role role;
    enum llc_simrun_source source;
    bool counted;  /* accesses count towards the duration */
    bool physical; /* addresses given to the simulator are physical */
    bool ended;
    double rate;
    double period; /* ticks between accesses */
    /* Access k is issued at t0 + (k - k0) * period; both 0 until the rate
     * changes mid-run (llc_simrun_set_rate), so fixed-rate runs keep the
     * exact times k * period. */
    double t0;
    uint64_t k0;
    uint32_t page_size; /* as configured (0 = the simulator's) */
    char spec[512];     /* workload spec, for reports */
    uint64_t issued;
    uint64_t writes;
    uint64_t instructions, records;
    uint64_t phys_base;

    /* buffered streams (workload, trace) */
    struct llc_workload *workload;
    struct llc_trace_reader *trace;
    char trace_path[256];
    uint64_t trace_records; /* as the trailer counts them */
    bool translate;         /* driver-side translation (page size differs) */
    uint64_t *addrs;
    uint8_t *is_write;
    uint32_t pos, len;
    /* a trace record's remaining lines, when it did not fit the buffer */
    uint64_t pend_addr, pend_lines;
    bool pend_write;

    /* callback streams */
    llc_simrun_next_fn next;
    void *ctx;
    bool has_prev;
    struct llc_sim_result prev;
};

struct simrun_frame_store {
    struct llc_simrun_frame *frames;
    size_t n, cap;
};

struct llc_simrun {
    struct llc_sim *sim;
    unsigned nagents;
    struct simrun_agent *agent;
    uint32_t nsets;
    uint32_t line_size;
    /* allocator for agents whose page size is not the simulator's */
    struct llc_sim_pages *alt_pages;
    uint64_t alt_offset;

    uint64_t counted, total;
    double clock;
    bool any_target;
    uint64_t next_frame; /* counted value at which the next frame is due */
    uint64_t frame_interval;
    struct simrun_frame_store frames;
};

/* Refills an agent's buffer. Returns the number of addresses now buffered
 * (0 = the stream ended) or a negative code with err filled. */
int simrun_refill(struct llc_simrun *r, unsigned a, char *err, size_t errlen);

/* Reads a trace agent's remaining records without simulating them: <0 with
 * the reader's message if the rest of the file is damaged, else 0. */
int simrun_trace_drain(struct simrun_agent *a, char *err, size_t errlen);

#endif
