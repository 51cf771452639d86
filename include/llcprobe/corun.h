/* Timed co-runs in the simulator: the ground truth for contention
 * prediction.
 *
 * Each agent is one program on its own core: its private L2 (as the preset
 * says; the presets model no L1), the LLC shared with the others, and its
 * own clock in core cycles. Access i of an agent advances its clock by
 *
 *     instr_i * cpi + latency(level that served it) / mlp
 *
 * where instr_i counts the instructions since the agent's previous access
 * (trace instruction records; ipa per access for workloads, arrays, and
 * traces without instruction records, as the instrumented runtime's),
 * cpi is the agent's base CPI and latency() is the machine's (l2, llc,
 * mem). The driver always advances the agent with the earliest clock (ties
 * to the lower index), so an agent that misses more falls behind and
 * issues fewer accesses per cycle: contention slows it down.
 *
 * Each agent runs until its stream ends or its instruction budget is
 * spent; then it leaves (its lines stay in the LLC) and the others go on.
 * Figures are recorded per window of `window` instructions of each agent
 * (the last window may be shorter); a window closes at the first access
 * that brings the agent's instructions to the window's end. Every agent is
 * also run alone (same stream, same seed, a fresh simulator with one
 * agent) for the solo figures, and since the instruction stream is the
 * same, the windows line up: slowdown = co-run cycles / solo cycles.
 *
 * Deterministic given the configuration and its seed. */
#ifndef LLCPROBE_CORUN_H
#define LLCPROBE_CORUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llc_sim_config;

/* Defaults of the timing model (cycles; per agent unless noted). */
#define LLC_CORUN_DEFAULT_CPI 1.0
#define LLC_CORUN_DEFAULT_MLP 2.0
#define LLC_CORUN_DEFAULT_IPA 3.0     /* instructions per access, workloads */
#define LLC_CORUN_DEFAULT_LAT_L2 14.0 /* machine */
#define LLC_CORUN_DEFAULT_LAT_LLC 40.0
#define LLC_CORUN_DEFAULT_LAT_MEM 200.0
#define LLC_CORUN_DEFAULT_WINDOW 1000000ULL
#define LLC_CORUN_MAX_AGENTS 8

enum llc_corun_source { LLC_CORUN_WORKLOAD = 0, LLC_CORUN_TRACE, LLC_CORUN_ARRAY };

struct llc_corun_agent {
    const char *name; /* label; NULL = "agent<i>" */
    enum llc_corun_source source;
    const char *spec;       /* WORKLOAD */
    const char *trace_path; /* TRACE */
    /* ARRAY: n virtual addresses (physical if phys), instr[i] instructions
     * before access i (NULL: ipa per access). Replayed once. */
    const uint64_t *addrs;
    const uint32_t *instr;
    size_t n;
    bool phys;
    double cpi, mlp, ipa;  /* > 0 each */
    uint64_t instructions; /* budget; 0 = until the stream ends */
};

struct llc_corun_params {
    double lat_l2, lat_llc, lat_mem; /* cycles, > 0 */
    uint64_t window;                 /* instructions per window, >= 1 */
    bool solo;                       /* also run each agent alone */
    /* An agent that ends its first pass starts again from the beginning
     * (same addresses, so it finds what it left in the cache) and keeps
     * loading the cache until every agent has ended its first pass; each
     * agent's figures are its first pass. Without it, an agent that ends
     * first leaves the others alone in the cache. */
    bool restart;
    volatile sig_atomic_t *stop; /* if set (signal), the run ends with -EINTR */
    /* Called now and then with accesses done and expected (0 if unknown). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};

/* Fills the defaults above (solo on, no stop flag, no progress). */
void llc_corun_params_default(struct llc_corun_params *p);
/* Fills an agent's timing defaults (cpi, mlp, ipa). */
void llc_corun_agent_default(struct llc_corun_agent *a);

/* One window of one agent. Counters are for the window; occupancy is the
 * agent's LLC lines at the window's end. */
struct llc_corun_window {
    uint64_t instructions, accesses, llc_accesses, llc_misses, occupancy;
    double cycles;
};

struct llc_corun_series {
    struct llc_corun_window *w;
    size_t n;
    /* totals over the run */
    uint64_t instructions, accesses, llc_accesses, llc_misses;
    uint64_t levels[3]; /* accesses served by L2, LLC, memory */
    double cycles;
    uint64_t occupancy_end;
};

struct llc_corun_result {
    unsigned n;
    char name[LLC_CORUN_MAX_AGENTS][64];
    struct llc_corun_series corun[LLC_CORUN_MAX_AGENTS];
    struct llc_corun_series solo[LLC_CORUN_MAX_AGENTS]; /* if params.solo */
    bool has_solo;
    uint64_t total_accesses; /* co-run, all agents */
    double wall_corun_s, wall_solo_s;
    double cpu_corun_s; /* thread CPU time of the co-run (no solo runs) */
};

/* Runs agents[0..n) (1..LLC_CORUN_MAX_AGENTS) together on cfg (cfg->agents
 * is replaced by n), then each alone if p->solo. Workload i is seeded from
 * cfg->seed and i in both runs. A synthetic workload needs a budget. 0, or
 * a negative code with a message naming the agent (bad spec or trace,
 * damaged trace, -EINTR when *p->stop was set). */
int llc_corun_run(const struct llc_sim_config *cfg, const struct llc_corun_agent *agents,
                  unsigned n, const struct llc_corun_params *p, struct llc_corun_result **out,
                  char *err, size_t errlen);
void llc_corun_free(struct llc_corun_result *r);

/* The seed workload i of a run with seed `seed` is built with, and the
 * instructions before access k of a stream of ipa instructions per access
 * (whole numbers adding up to floor(k * ipa)): to reproduce a co-run
 * agent's stream outside it. */
uint64_t llc_corun_stream_seed(uint64_t seed, unsigned i);
uint32_t llc_corun_ipa_instr(double ipa, uint64_t k);

struct llc_corun_report_meta {
    const char *preset;
    const char *const *targets; /* as given, one per agent */
    const struct llc_corun_agent *agents;
};

/* Writes format "llcprobe-corun" v1 JSON, atomically:
 *   seed, config {preset, llc {...}, policy, inclusion, l2 | null},
 *   timing {latency_cycles {l2, llc, mem}, window},
 *   agents [{name, target, source, cpi, mlp, ipa, budget,
 *            corun {totals}, solo {totals} | null, slowdown | null,
 *            windows [{instructions, corun {cycles, llc_accesses, llc_misses,
 *                      occupancy}, solo {...} | null, slowdown | null}]}]
 * and a CSV beside it: one row per agent and window. */
int llc_corun_write_json(const struct llc_corun_result *r, const struct llc_sim_config *cfg,
                         const struct llc_corun_params *p, const struct llc_corun_report_meta *m,
                         const char *path, char *err, size_t errlen);
int llc_corun_write_csv(const struct llc_corun_result *r, const char *path, char *err,
                        size_t errlen);

#endif
