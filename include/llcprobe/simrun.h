/* The simulation driver: agents (targets, background noise, probes) issuing
 * access streams at configured rates on a shared clock, through one
 * simulated cache hierarchy (llcprobe/sim.h), with per-agent per-set ground
 * truth on demand and as a time series.
 *
 * Clock. Agent a issues its k-th access (k = 0, 1, ...) at time k / rate_a
 * ticks. The driver always issues the earliest pending access; equal times go
 * to the lower agent index. So two agents at rates 1 and 2 issue exactly 1:2
 * accesses over any whole number of ticks, and a run is deterministic given
 * the configuration (seed included). Consecutive accesses of one agent are
 * handed to the simulator in batches (llc_sim_run), so the driver's cost per
 * access is small next to the simulator's.
 *
 * Streams.
 *   WORKLOAD : a synthetic generator (llcprobe/workload.h) from a spec string,
 *              seeded from the run's seed and the agent index.
 *   TRACE    : a trace file (llcprobe/trace.h) replayed record by record:
 *              instruction records advance nothing; load = one read, store =
 *              one write, modify = one write access; a record whose bytes
 *              span several lines accesses each of them in order. The stream
 *              ends with the trace; a corrupt or truncated trace aborts the
 *              run with the reader's message. Because the file's checksum is
 *              only checked at its end, damage can first decode as plausible
 *              records: the driver also refuses a data record of more than
 *              4 KiB and more records than the trailer counts, and when the
 *              simulator runs out of memory on a trace it reads the rest of
 *              the file to blame the damage rather than the simulator.
 *   CALLBACK : the caller produces each address when the agent's turn comes,
 *              seeing the full outcome (level, latency, set, victim) of its
 *              previous access first: the stress probe's interface.
 *
 * Address spaces. Virtual streams go through the simulator's page allocator
 * (frames drawn from [0, phys_mem_bytes)). An agent whose page size differs
 * from the simulator's is translated by the driver with its own allocator,
 * whose frames lie in [phys_mem_bytes, 2 * phys_mem_bytes), so the two page
 * sizes never share a frame. Physical-mode streams (set-shaped workloads,
 * callbacks that ask for it) get a private region starting at
 * llc_simrun_phys_base(), above both, so they never alias anyone's frames.
 *
 * Duration counts the accesses of TARGET agents (of all agents if there is
 * no target). Noise and probe agents run alongside for as long as the
 * targets do.
 */
#ifndef LLCPROBE_SIMRUN_H
#define LLCPROBE_SIMRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llc_sim; /* llcprobe/sim.h */
struct llc_sim_config;
struct llc_sim_result;
struct llc_sim_set_stats;

enum llc_simrun_role { LLC_SIMRUN_TARGET = 0, LLC_SIMRUN_NOISE, LLC_SIMRUN_PROBE };
enum llc_simrun_source { LLC_SIMRUN_WORKLOAD = 0, LLC_SIMRUN_TRACE, LLC_SIMRUN_CALLBACK };

/* Produces a callback agent's next access. prev is the outcome of this
 * agent's previous access (NULL before its first). Returns 1 with *addr and
 * *is_write set, 0 to end the stream, or a negative code (with err filled) to
 * abort the run. */
typedef int (*llc_simrun_next_fn)(void *ctx, const struct llc_sim_result *prev, uint64_t *addr,
                                  bool *is_write, char *err, size_t errlen);

struct llc_simrun_agent {
    const char *name; /* label in outputs; NULL = role name + index */
    enum llc_simrun_role role;
    enum llc_simrun_source source;
    const char *spec;        /* WORKLOAD */
    const char *trace_path;  /* TRACE */
    llc_simrun_next_fn next; /* CALLBACK */
    void *ctx;
    bool physical;      /* CALLBACK: addresses are physical */
    double rate;        /* accesses per tick, > 0 */
    uint32_t page_size; /* 0 = the simulator's; else 4096 or 2 MiB */
};

struct llc_simrun;

/* Creates the simulator from cfg (cfg->agents is replaced by n) and the
 * agents' streams. Fails with a message naming the agent for a bad spec,
 * an unreadable trace, a bad rate or page size, or a bad configuration. */
int llc_simrun_create(const struct llc_sim_config *cfg, const struct llc_simrun_agent *agents,
                      unsigned n, struct llc_simrun **out, char *err, size_t errlen);
void llc_simrun_destroy(struct llc_simrun *r);

struct llc_simrun_limits {
    /* Stop after this many more counted (target) accesses; 0 = until every
     * counted stream has ended (an error if one of them is a synthetic
     * workload, which never ends). */
    uint64_t duration;
    /* Capture a frame every `interval` counted accesses (0 = never). The
     * phase of the grid carries over between calls to llc_simrun_run. */
    uint64_t interval;
    /* Called now and then with counted accesses done in this call and the
     * duration (0 if unknown). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};

/* Runs (or continues) the simulation. Returns 0 when the duration was
 * reached, 1 when the counted streams ended first, or a negative code with a
 * message (trace error, callback error, simulator out of physical memory). */
int llc_simrun_run(struct llc_simrun *r, const struct llc_simrun_limits *lim, char *err,
                   size_t errlen);

/* The simulator, for ground truth now (llc_sim_agent_stats,
 * llc_sim_set_stats) and its configuration. */
struct llc_sim *llc_simrun_sim(struct llc_simrun *r);
const struct llc_sim *llc_simrun_sim_const(const struct llc_simrun *r);
unsigned llc_simrun_agents(const struct llc_simrun *r);
const char *llc_simrun_agent_name(const struct llc_simrun *r, unsigned agent);
const char *llc_simrun_role_name(enum llc_simrun_role role);
/* Start of an agent's private physical region (for physical-mode streams). */
uint64_t llc_simrun_phys_base(const struct llc_simrun *r, unsigned agent);

/* What the driver knows about an agent beyond the simulator's counters. */
struct llc_simrun_agent_state {
    enum llc_simrun_role role;
    uint64_t accesses;     /* issued */
    uint64_t writes;       /* of which writes (stores, modifies, write=) */
    uint64_t instructions; /* trace instruction records passed over */
    uint64_t records;      /* trace records read (all kinds) */
    bool physical;         /* accesses reach the simulator as physical */
    bool ended;
};
int llc_simrun_agent_state(const struct llc_simrun *r, unsigned agent,
                           struct llc_simrun_agent_state *out);

/* Changes an agent's rate from now on (accesses per tick, > 0): its next
 * access is issued one new period after the shared clock, the following
 * ones a period apart. -EINVAL for a bad agent or rate. */
int llc_simrun_set_rate(struct llc_simrun *r, unsigned agent, double rate);

/* Counted (target) accesses, all accesses, and the shared clock in ticks
 * (time of the latest access issued). */
uint64_t llc_simrun_counted(const struct llc_simrun *r);
uint64_t llc_simrun_total(const struct llc_simrun *r);
double llc_simrun_clock(const struct llc_simrun *r);

/* Time series of per-set ground truth. */
struct llc_simrun_frame {
    uint64_t counted; /* counted accesses when captured */
    uint64_t total;   /* all accesses */
    double clock;
    /* Cumulative per-set counters: sets[agent * nsets + set]. */
    const struct llc_sim_set_stats *sets;
    uint32_t nsets;
};
/* Appends a frame of the current per-set counters of every agent. */
int llc_simrun_capture(struct llc_simrun *r, char *err, size_t errlen);
size_t llc_simrun_frame_count(const struct llc_simrun *r);
const struct llc_simrun_frame *llc_simrun_frame_at(const struct llc_simrun *r, size_t i);

/* --- reports ----------------------------------------------------------- */

struct llc_simrun_report_meta {
    const char *preset; /* recorded as given; may be NULL */
    uint64_t duration;  /* as requested (0 = until the streams end) */
    uint64_t interval;
    bool ended_early; /* llc_simrun_run returned 1 */
};

/* Writes the run as JSON, atomically: format "llcprobe-sim", version 1.
 *   seed, config {preset, llc {line_size, sets_per_slice, slices, ways, sets,
 *     bytes, hash, policy}, inclusion, l2 {sets, ways, policy, bytes} | null,
 *     page_size, phys_mem_bytes, duration, interval},
 *   run {target_accesses, total_accesses, clock_ticks, ended_early},
 *   agents [{name, role, source, spec | trace, rate, page_size, physical,
 *     totals {accesses, writes, instructions, l2_hits, l2_misses,
 *     llc_accesses, llc_hits, llc_misses, llc_miss_ratio, llc_fills,
 *     llc_evicted, back_invals, llc_occupancy_lines, llc_occupancy_bytes,
 *     llc_occupancy_fraction, l2_occupancy_lines}}],
 *   per_set [{agent, accesses[], hits[], misses[], occupancy[]}] (one per
 *     agent, arrays indexed by set = slice * sets_per_slice + index; LLC
 *     lookups, so they sum to the agent's llc_* totals),
 *   time_series (only with frames) {interval, frames [{target_accesses,
 *     total_accesses, clock_ticks, agents [{accesses[], misses[],
 *     occupancy[]}]}]} with cumulative counters.
 * Nothing time- or host-dependent is recorded: equal seeds give equal files. */
int llc_simrun_write_json(const struct llc_simrun *r, const struct llc_simrun_report_meta *m,
                          const char *path, char *err, size_t errlen);
/* Writes the per-set ground truth as CSV, atomically: set, slice, index,
 * then <agent>_accesses, _hits, _misses, _occupancy for each agent. */
int llc_simrun_write_csv(const struct llc_simrun *r, const char *path, char *err, size_t errlen);

#endif
