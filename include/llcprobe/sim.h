/* LLC simulator core: a set-associative, sliced last-level cache with optional
 * private L2 caches (one per agent), several replacement policies, inclusive /
 * exclusive-victim / non-inclusive hierarchies, a seeded page allocator and an
 * optional latency model.
 *
 * It is the ground truth of the project: every accuracy test runs program
 * streams through it and compares estimates with the exact per-agent, per-set
 * counters kept here. Everything is deterministic given the config (incl. its
 * seed) and the order of calls.
 *
 * Vocabulary
 *   line     : physical address >> log2(line_size). Accesses are per line; an
 *              access spanning two lines is the caller's business.
 *   set      : the project's "set" = set unit id = slice * sets_per_slice +
 *              index, in [0, slices * sets_per_slice).
 *   agent    : who issues an access (a program, a probe thread), 0..agents-1.
 *              Each agent has its own private L2 (if configured) and its own
 *              virtual address space in the page allocator.
 *   owner    : every valid LLC line remembers the agent that filled it into
 *              the LLC; occupancy counts lines by owner. A hit by another
 *              agent does not change the owner.
 *
 * Hierarchy (per access by agent a to line x):
 *   L2 of a hit                       -> served by L2.
 *   else LLC lookup (counted as an LLC access of agent a in x's set):
 *     INCLUSIVE: hit -> fill a's L2. miss -> fill LLC (owner a) and a's L2;
 *                an LLC eviction back-invalidates the victim in every L2.
 *     EXCLUSIVE: (victim cache, needs an L2) hit -> line moves to a's L2 and
 *                leaves the LLC. miss -> DRAM fill into a's L2 only. Every L2
 *                eviction inserts the victim into the LLC (owner a) unless
 *                the LLC already holds it.
 *     NINE     : hit -> fill a's L2. miss -> fill LLC and a's L2. LLC
 *                evictions leave L2 copies alone; L2 victims are dropped.
 *   L2 hits do not touch the LLC's replacement state (as in hardware, which
 *   is what makes inclusive back-invalidation bite).
 *
 * Replacement (per level): invalid ways are always filled first (lowest way
 * index), then:
 *   LRU    true LRU.
 *   RANDOM uniformly random way from a seeded generator.
 *   PLRU   tree pseudo-LRU (ways must be a power of two). Node bit 0 means
 *          "the victim is on the left"; an access points the bits of its path
 *          away from the accessed way.
 *   SRRIP  2-bit RRPV (Jaleel et al. 2010): insert 2, hit -> 0, victim = first
 *          way (lowest index) with RRPV 3, ageing all ways until one exists.
 *   BRRIP  as SRRIP but insert 3, and 2 with probability 1/32 (seeded).
 *   DRRIP  set dueling between SRRIP and BRRIP: drrip_leaders leader sets per
 *          policy (default 32) by complement-select: the sets are cut into
 *          drrip_leaders equal constituencies of size C; in constituency r the
 *          set at offset r % C leads SRRIP and the set at offset
 *          (C - 1 - r) % C leads BRRIP (if both fall on one set, the BRRIP
 *          leader moves to the next offset). A miss in an SRRIP leader
 *          increments PSEL, a miss in a BRRIP leader decrements it (saturating,
 *          psel_bits wide, default 10, initial value 2^(bits-1) - 1). Follower
 *          sets insert like BRRIP when the MSB of PSEL is set, else like SRRIP.
 *
 * Performance: llc_sim_run() is the fast path (it prefetches the simulator's
 * metadata for accesses a few positions ahead); per-access calls cost more.
 *
 * Randomness: separate seeded streams (derived from config.seed) drive the
 * LLC's RANDOM/BRRIP choices, each L2's, the page allocator and the latency
 * noise, so turning the latency model on does not change cache behaviour.
 */
#ifndef LLCPROBE_SIM_H
#define LLCPROBE_SIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LLC_SIM_MAX_AGENTS 64
#define LLC_SIM_MAX_SLICE_BITS 6 /* XOR hash: up to 64 slices */
#define LLC_SIM_MAX_WAYS 64
/* Upper bound of physical address bits (x86-64). A given simulator accepts
 * addresses below 2^llc_sim_paddr_bits(sim), which can be less: tags are
 * 31 bits, so the limit is min(52, log2(line) + log2(sets of the level with
 * the fewest index bits) + 31); 46 bits or more for both presets. */
#define LLC_SIM_MAX_PADDR_BITS 52
/* Pass as agent to the statistics functions to sum over all agents. */
#define LLC_SIM_ALL_AGENTS (-1)

enum llc_sim_policy {
    LLC_SIM_LRU = 0,
    LLC_SIM_RANDOM,
    LLC_SIM_PLRU,
    LLC_SIM_SRRIP,
    LLC_SIM_BRRIP,
    LLC_SIM_DRRIP,
};

enum llc_sim_inclusion {
    LLC_SIM_INCLUSIVE = 0,
    LLC_SIM_EXCLUSIVE, /* LLC is a victim cache of the L2s */
    LLC_SIM_NINE,      /* non-inclusive, non-exclusive */
};

enum llc_sim_hash {
    /* slice = (line >> index_bits) % slices: consecutive "index pages" of
     * memory go round-robin over the slices. */
    LLC_SIM_HASH_MODULO = 0,
    /* slice bit b = parity(paddr & slice_masks[b]) for b < log2(slices)
     * (Intel-style complex addressing; slices must be a power of two). */
    LLC_SIM_HASH_XOR,
};

/* Which level served an access (also the access functions' return value). */
enum llc_sim_level {
    LLC_SIM_HIT_L2 = 0,
    LLC_SIM_HIT_LLC = 1,
    LLC_SIM_HIT_DRAM = 2,
};

/* --- geometry ----------------------------------------------------------- */

struct llc_sim_geometry {
    uint32_t line_size;      /* bytes, power of two (64) */
    uint32_t sets_per_slice; /* power of two */
    uint32_t slices;         /* >= 1; power of two for LLC_SIM_HASH_XOR */
    uint32_t ways;           /* 1..LLC_SIM_MAX_WAYS */
    enum llc_sim_hash hash;
    uint64_t slice_masks[LLC_SIM_MAX_SLICE_BITS]; /* XOR hash only */
};

/* Where a physical address lives in a cache. */
struct llc_sim_loc {
    uint32_t slice;
    uint32_t index; /* set index within the slice */
    uint32_t set;   /* set unit id = slice * sets_per_slice + index */
    uint64_t tag;   /* line >> log2(sets_per_slice): unique within a set */
};

/* Checks a geometry; 0 or -EINVAL with a message. */
int llc_sim_geometry_check(const struct llc_sim_geometry *g, char *err, size_t errlen);
/* Total set units (slices * sets_per_slice) and capacity in bytes. */
uint32_t llc_sim_geometry_sets(const struct llc_sim_geometry *g);
uint64_t llc_sim_geometry_bytes(const struct llc_sim_geometry *g);
/* Locates paddr in a (checked) geometry. */
void llc_sim_geometry_locate(const struct llc_sim_geometry *g, uint64_t paddr,
                             struct llc_sim_loc *out);
/* Replaces g's hash by a seeded random linear XOR hash: log2(slices)
 * linearly independent masks, each bit of [lo_bit, hi_bit) set with
 * probability 1/2. A "hidden" hash for testing slice-agnostic algorithms
 * (eviction-set finders); take lo_bit = log2(line_size) to make the slice
 * depend on page-offset bits too, as on Intel parts. slices must be a power
 * of two >= 2; lo_bit >= log2(line_size); hi_bit <= 52. */
int llc_sim_geometry_random_hash(struct llc_sim_geometry *g, uint64_t seed, unsigned lo_bit,
                                 unsigned hi_bit, char *err, size_t errlen);

/* --- configuration ------------------------------------------------------ */

/* Latency model: latency = mean of the serving level + noise with the given
 * standard deviation (seeded, approximately Gaussian: a scaled sum of four
 * uniforms, bounded at +-3.46 sd), plus, with probability outlier_prob, an
 * extra outlier_cycles (interrupts, TLB walks). Clamped to >= 1. Units are
 * "timed ticks" as seen by an rdtscp-bracketed load. */
struct llc_sim_latency {
    bool enabled;
    double l2_mean, l2_sd;     /* default 40, 3 */
    double llc_mean, llc_sd;   /* default 100, 8 */
    double dram_mean, dram_sd; /* default 420, 40 */
    double outlier_prob;       /* default 1e-4 */
    double outlier_cycles;     /* default 2000 */
};

struct llc_sim_config {
    struct llc_sim_geometry llc;
    enum llc_sim_policy llc_policy;
    enum llc_sim_inclusion inclusion;
    /* Private L2 per agent: l2_sets = 0 means no L2. Unsliced; index =
     * line & (l2_sets - 1). l2_sets power of two. */
    uint32_t l2_sets, l2_ways;
    enum llc_sim_policy l2_policy;
    uint32_t drrip_leaders; /* leader sets per policy, default 32 */
    uint32_t psel_bits;     /* default 10 */
    uint32_t agents;        /* 1..LLC_SIM_MAX_AGENTS */
    uint64_t seed;
    /* Page allocator for virtual accesses: page size 4096 or 2 MiB; frames
     * are drawn without replacement, pseudo-randomly, from
     * [0, phys_mem_bytes); phys_mem_bytes <= 2^llc_sim_paddr_bits. */
    uint32_t page_size;
    uint64_t phys_mem_bytes;
    struct llc_sim_latency latency;
    /* Looked at every few million accesses: when *stop is non-zero (a
     * signal handler set it), llc_sim_access* and llc_sim_run return
     * -EINTR, so a long simulation unwinds through its caller's cleanup.
     * NULL (the default): the simulation is never cut short. */
    volatile sig_atomic_t *stop;
};

/* Fills *c with defaults: no LLC geometry (set one or use a preset), LRU,
 * inclusive, no L2, 1 agent, seed 1, 4 KiB pages, 16 GiB physical memory,
 * DRRIP 32 leaders / 10-bit PSEL, latency model off with the defaults above. */
void llc_sim_config_default(struct llc_sim_config *c);

/* Presets (geometry + inclusion + L2; policies LRU, latency off, other
 * fields as llc_sim_config_default):
 *   "intel8": 8 MiB 16-way inclusive LLC, 4 slices x 2048 sets, Sandy Bridge
 *             4-slice XOR hash (Maurice et al. 2015; masks 0x1b5f575440,
 *             0x2eb5faa880), private L2 256 KiB 8-way (512 sets) per agent,
 *             as the i7-2600.
 *   "amd32" : 32 MiB 16-way exclusive victim L3, 8 slices x 4096 sets,
 *             private L2 1 MiB 16-way (1024 sets) per agent. AMD's slice
 *             hash is not public; ours is linear XOR, slice bit b
 *             (b = 0, 1, 2) = parity of address bits {6+b} and
 *             {12+b, 15+b, 18+b, ..., <= 40}. Bits 6-8 spread the lines of
 *             one page over slices; the rest mix index and frame bits.
 * Returns 0, or -ENOENT with a message listing the valid names. */
int llc_sim_preset(const char *name, struct llc_sim_config *out, char *err, size_t errlen);
/* NULL-terminated list of preset names. */
const char *const *llc_sim_preset_names(void);

/* Names <-> enums for CLIs: "lru", "random", "plru", "srrip", "brrip",
 * "drrip"; "inclusive", "exclusive", "nine". Parsing returns the enum value
 * (>= 0) or -EINVAL with a message listing valid names. */
const char *llc_sim_policy_name(enum llc_sim_policy p);
int llc_sim_policy_parse(const char *s, char *err, size_t errlen);
const char *llc_sim_inclusion_name(enum llc_sim_inclusion i);
int llc_sim_inclusion_parse(const char *s, char *err, size_t errlen);

/* Validates a whole config (geometry, policies vs ways, exclusive needs an
 * L2, agents, page size, memory size). 0 or -EINVAL with a message. */
int llc_sim_config_check(const struct llc_sim_config *c, char *err, size_t errlen);

/* --- the simulator ------------------------------------------------------ */

struct llc_sim;

int llc_sim_create(const struct llc_sim_config *c, struct llc_sim **out, char *err, size_t errlen);
void llc_sim_destroy(struct llc_sim *sim);
const struct llc_sim_config *llc_sim_config_of(const struct llc_sim *sim);
/* Number of LLC set units. */
uint32_t llc_sim_sets(const struct llc_sim *sim);
/* Physical addresses accepted by this simulator are < 2^llc_sim_paddr_bits. */
unsigned llc_sim_paddr_bits(const struct llc_sim *sim);

/* What one access did. */
struct llc_sim_result {
    uint8_t level;    /* enum llc_sim_level */
    uint32_t latency; /* ticks if the latency model is on, else 0 */
    uint32_t set;     /* LLC set unit of the line */
    uint64_t paddr;   /* physical address accessed */
    /* Physical line address (byte address of the line) evicted from the LLC
     * by this access, UINT64_MAX if none. In EXCLUSIVE mode this is the LLC
     * victim of the L2 victim's insertion. */
    uint64_t llc_victim;
};

/* One access by agent to a virtual address (translated by the agent's page
 * table; the first touch of a page allocates a frame) or to a physical
 * address. res may be NULL. Returns the enum llc_sim_level that served it,
 * or -EINVAL (bad agent), -ERANGE (paddr too large) or -ENOMEM (physical
 * memory exhausted) with nothing changed. */
int llc_sim_access(struct llc_sim *sim, unsigned agent, uint64_t vaddr, struct llc_sim_result *res);
int llc_sim_access_phys(struct llc_sim *sim, unsigned agent, uint64_t paddr,
                        struct llc_sim_result *res);

/* Runs n accesses by one agent (virtual addresses, or physical ones if phys)
 * with the same effect as n single calls, faster (it prefetches the
 * simulator's metadata ahead). levels (may be NULL) receives each access's
 * enum llc_sim_level. Returns 0 or a negative code; on error the accesses
 * before the failing one have been done. */
int llc_sim_run(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n, bool phys,
                uint8_t *levels);

/* Translates vaddr of agent (allocating the page on first touch). */
int llc_sim_translate(struct llc_sim *sim, unsigned agent, uint64_t vaddr, uint64_t *paddr);

/* Where a physical line currently is, without changing any state:
 * bit 0 = in agent's L2, bit 1 = in the LLC. If owner is non-NULL and the
 * line is in the LLC, *owner receives its owner agent. */
unsigned llc_sim_where(const struct llc_sim *sim, unsigned agent, uint64_t paddr, unsigned *owner);

/* clflush: removes the line from the LLC and every L2 (no counters change
 * except occupancy). */
void llc_sim_flush_line(struct llc_sim *sim, uint64_t paddr);
/* Empties every cache (occupancy drops to 0; counters are kept). */
void llc_sim_flush_all(struct llc_sim *sim);

/* --- ground truth ------------------------------------------------------- */

struct llc_sim_agent_stats {
    uint64_t accesses; /* all accesses issued */
    uint64_t l2_hits, l2_misses;
    uint64_t llc_hits, llc_misses; /* lookups reaching the LLC (= L2 misses,
                                      or all accesses without an L2) */
    uint64_t llc_fills;            /* lines this agent put into the LLC */
    uint64_t llc_evicted;          /* lines owned by this agent evicted from the LLC */
    uint64_t back_invals;          /* lines removed from this agent's L2 by inclusion */
    uint64_t llc_occupancy;        /* lines owned now */
    uint64_t l2_occupancy;         /* valid lines in this agent's L2 now */
};

struct llc_sim_set_stats {
    uint64_t hits, misses; /* LLC lookups in this set (accesses = sum) */
    uint32_t occupancy;    /* valid lines owned now */
};

/* Per-agent totals (agent = LLC_SIM_ALL_AGENTS sums all agents). 0 or -EINVAL. */
int llc_sim_agent_stats(const struct llc_sim *sim, int agent, struct llc_sim_agent_stats *out);
/* Snapshot copy of the per-set counters of one agent (or the sum over all
 * agents): out[s] for s < n; n must equal llc_sim_sets(). 0 or -EINVAL. */
int llc_sim_set_stats(const struct llc_sim *sim, int agent, struct llc_sim_set_stats *out,
                      size_t n);
/* Zeroes hit/miss/fill/eviction counters of every agent and set; cache
 * contents and occupancy stay. */
void llc_sim_reset_counters(struct llc_sim *sim);
/* Current DRRIP PSEL value (0 if the LLC is not DRRIP). */
uint32_t llc_sim_psel(const struct llc_sim *sim);

/* --- timed agents (the co-run kernel) ---------------------------------- */

/* One agent of a timed co-run: each agent has its own clock (cycles), and
 * each access advances it by instr[i] * cpi + cost[level] (the caller puts
 * the latency of the level that served it, divided by the memory-level
 * parallelism, in cost[]). The caller owns the buffer: physical addresses,
 * their LLC sets (llc_sim_geometry_locate) and the instructions executed
 * since the agent's previous access. */
struct llc_sim_timed_agent {
    const uint64_t *paddr;
    const uint32_t *set;
    const uint32_t *instr;
    uint32_t pos, len;     /* next access to issue; accesses buffered */
    double clock;          /* cycles */
    double cpi;            /* base cycles per instruction */
    double cost[3];        /* cycles by enum llc_sim_level */
    uint64_t instructions; /* executed, through the last access issued */
    uint64_t stop_at;      /* hand back once instructions reach this */
    uint64_t levels[3];    /* accesses served by each level */
    bool done;             /* not scheduled any more */
    /* The private level's work done ahead (llc_sim_timed_prepare), or NULL. */
    struct llc_sim_timed_prep *prep;
};

/* Scratch for llc_sim_timed_prepare, for buffers of up to cap accesses. */
struct llc_sim_timed_prep;
int llc_sim_timed_prep_create(uint32_t cap, struct llc_sim_timed_prep **out);
void llc_sim_timed_prep_destroy(struct llc_sim_timed_prep *prep);
/* In a hierarchy without inclusion an agent's L2 never depends on the LLC
 * or on the other agents, so the L2 half of the buffered accesses
 * paddr[pos..len) can be done at once, ahead of the clock order (as
 * llc_sim_run does); the kernel then only takes the L2 misses to the LLC.
 * Call after every refill with ag->prep set. Returns 1 if done (the
 * accesses must then all be issued before the next prepare), 0 if the
 * hierarchy is inclusive (the kernel does each access whole), or a
 * negative code (-ERANGE, -ENOMEM as llc_sim_access_phys). */
int llc_sim_timed_prepare(struct llc_sim *sim, unsigned agent, struct llc_sim_timed_agent *ag);

/* Runs the agents in clock order: always the agent with the earliest clock
 * (ties to the lower index) issues its next access. Returns the index of
 * the agent that needs the caller -- it has just issued the last buffered
 * access, or reached stop_at, or was picked with nothing buffered -- or n
 * when every agent is done, or a negative code (-ERANGE, -ENOMEM as
 * llc_sim_access_phys) with the failing access not issued. Agent i is the
 * simulator's agent i; n <= the configured agents. A prepared agent's L2
 * hits, which touch nothing shared, may be issued ahead of the clock
 * order: when the kernel hands back agent k, the others' clocks and
 * counters may be past k's (their shared-cache accesses are not). */
int llc_sim_run_timed(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n);
/* Translates (unless phys) and locates addrs[0..n) of agent as
 * llc_sim_translate would, one by one in order, into paddr[] and their LLC
 * sets set[]; 0 or the first error (-ERANGE, -ENOMEM, -EINVAL). */
int llc_sim_locate_batch(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                         bool phys, uint64_t *paddr, uint32_t *set);

/* --- standalone page allocator ------------------------------------------ */

/* The allocator inside llc_sim, usable alone: per agent, virtual pages map to
 * physical frames drawn pseudo-randomly without replacement (a seeded
 * bijection over the frame numbers, so frames are unique across agents and
 * the allocation sequence is reproducible from the seed). */
struct llc_sim_pages;

int llc_sim_pages_create(uint64_t phys_mem_bytes, uint32_t page_size, unsigned agents,
                         uint64_t seed, struct llc_sim_pages **out, char *err, size_t errlen);
void llc_sim_pages_destroy(struct llc_sim_pages *p);
/* 0 and *paddr, or -EINVAL (agent) / -ENOMEM (no frame left). */
int llc_sim_pages_translate(struct llc_sim_pages *p, unsigned agent, uint64_t vaddr,
                            uint64_t *paddr);
/* Frames handed out so far (all agents). */
uint64_t llc_sim_pages_used(const struct llc_sim_pages *p);

#endif
