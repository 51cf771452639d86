/* Live sampling of a running program's code addresses for phase detection
 * (ScarPhase, docs/METHODS.md §10.2-§10.3), with perf_event_open.
 *
 * Sources, in order of preference; the first that opens is used and the
 * reason each better one was refused is kept:
 *   PEBS_BRANCHES  precise samples of retired conditional branches (Intel
 *                  BR_INST_RETIRED:CONDITIONAL via libpfm4, precise_ip 2/1)
 *   HW_IP          instruction pointers sampled by the hardware
 *                  `instructions` counter
 *   TICK           the user instruction pointer at the kernel's own timer
 *                  interrupt (tracepoint irq_vectors:local_timer_entry, else
 *                  timer:hrtimer_expire_entry, with the user registers): the
 *                  scheduler tick interrupts a running task HZ times a
 *                  second anyway, so a sample adds no interrupt, only perf's
 *                  handler. Needs tracepoint access (root or CAP_PERFMON)
 *                  and tracefs (mounted if absent and permitted, as perf
 *                  does); a self-test measures the tick rate on a busy task
 *                  and refuses if the tick does not run (nohz_full).
 *   CPU_CLOCK      instruction pointers sampled by the `cpu-clock` software
 *                  event (hrtimer): works without a PMU or privileges, but
 *                  every sample is a timer interrupt of its own
 * All sample user code: a tick that lands in a system call or page fault
 * samples the user address it was entered from, where cpu-clock drops it.
 *
 * Windows end after a fixed amount of retired user instructions when the
 * hardware `instructions` counter opens, else after a fixed amount of the
 * target's CPU time (`task-clock`). With cpu-clock the sample rate is
 * capped (max_rate_hz) and the default window is as long as its samples
 * take at that rate: each sample is a timer interrupt, which is what the
 * target pays for. With the tick the rate is the kernel's HZ and the
 * default window as long as its samples take at that rate.
 *
 * Sampled IPs are returned as position-independent keys, (hash of the
 * mapped file's name << 40) ^ offset in the file (ipsampling/maps.c), built
 * from the PERF_RECORD_MMAP2 / FORK / EXIT / exec records in the same rings
 * (or /proc/<pid>/maps for a process seen without them): the same code
 * gives the same signature in every process and run, whatever ASLR did.
 *
 * Every event follows the whole target: threads and forked children
 * (inherit) across exec, opened per CPU because the kernel refuses a ring
 * buffer on an inherited per-task event with cpu = -1. Samples stay in the
 * kernel's ring buffers (no wake-up, no signal per sample) and are drained
 * when a window ends. The window loop sleeps on the target's pidfd, so an
 * exit ends the last (partial) window at once.
 *
 * The sample rate (dynamic rate, docs/METHODS.md §10.8) is changed by switching between
 * events opened once per multiplier (1, 2, 4, ... max_multiplier, periods
 * base * multiplier, all writing into one ring per CPU): enabling and
 * disabling an event reaches every inherited copy, in threads and children
 * that already exist, while PERF_EVENT_IOC_PERIOD reaches only the task the
 * event was opened on. So a multi-task target gets the dynamic rate's
 * saving too. Samples carry their period; any sample taken at a shorter
 * period than the window's (an adapting hardware period a child inherited
 * earlier) is thinned to the window's rate in user space.
 */
#ifndef LLCPROBE_SAMPLING_H
#define LLCPROBE_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct llc_target; /* llcprobe/target.h */

enum llc_sampling_source {
    LLC_SAMPLING_PEBS_BRANCHES = 0,
    LLC_SAMPLING_HW_IP = 1,
    LLC_SAMPLING_TICK = 2,
    LLC_SAMPLING_CPU_CLOCK = 3,
    LLC_SAMPLING_SOURCES = 4,
};

enum llc_sampling_unit {
    LLC_SAMPLING_INSTRUCTIONS = 0, /* retired user instructions */
    LLC_SAMPLING_CPU_NS = 1,       /* target CPU time, nanoseconds */
};

#define LLC_SAMPLING_DEFAULT_WINDOW_INSTR \
    100000000ULL /* docs/METHODS.md §10.1: 100M instructions */
/* CPU-time window of the hardware sources (no instruction counter). */
#define LLC_SAMPLING_DEFAULT_WINDOW_NS 50000000ULL /* 50 ms of CPU time */
/* cpu-clock: highest sample rate. Each sample is an hrtimer interrupt; on
 * the 2-vCPU guests we measured one costs the target ~47 us of CPU time (a
 * CPU-bound loop at 4 kHz, paired runs), so the rate alone sets the
 * overhead: 400 Hz costs ~1.9%, 200 Hz ~0.95%. The dynamic rate (down to
 * 1/8) only helps after a phase has been stable for 3-4 windows, which most
 * runs of a few seconds never reach, so the full rate is what the 2% budget
 * must hold, beside the fixed costs (events in every task, launcher). The
 * window stretches to 2 s of CPU time so that it still holds the method's 400
 * samples (docs/METHODS.md §10.3, EIPV). */
#define LLC_SAMPLING_DEFAULT_MAX_RATE_HZ 200u

struct llc_sampling_config {
    /* Best source allowed (sources better than this are not tried; their
     * refusal reads "not requested"). LLC_SAMPLING_PEBS_BRANCHES = auto. */
    enum llc_sampling_source best_source;
    bool force_cpu_time;   /* windows by CPU time even if instructions count */
    uint64_t window_instr; /* window length when counting instructions */
    /* Window length when counting CPU time; 0 = by source: cpu-clock
     * samples_per_window / max_rate_hz (2 s at the defaults), tick
     * samples_per_window / HZ (1.6 s at HZ 250), hardware sources
     * LLC_SAMPLING_DEFAULT_WINDOW_NS. */
    uint64_t window_ns;
    /* cpu-clock: the period never goes below 1/max_rate_hz seconds, so a
     * short window gets fewer samples rather than more overhead. (The tick
     * samples at most every tick; its rate is the kernel's.) */
    unsigned max_rate_hz;
    /* Samples per window at multiplier 1; 0 = 200 for branch samples, 400
     * for instruction pointers (docs/METHODS.md §10.3: EIPV needs twice the samples). */
    unsigned samples_per_window;
    unsigned ring_pages; /* data pages per CPU ring, a power of two (64) */
    /* Largest rate multiplier the caller will ask for (a power of two,
     * 1..64; default 8): one event per CPU is opened for each of 1, 2, ...
     * this. */
    unsigned max_multiplier;
    bool enable_on_exec; /* target held before exec (llc_target_launch) */
};

#define LLC_SAMPLING_NOTE_LEN 200

/* What was chosen and why. */
struct llc_sampling_choice {
    enum llc_sampling_source source;
    char event[96];      /* the event as opened: "cpu-clock", libpfm's string, ... */
    unsigned precise_ip; /* PEBS skid level, 0 otherwise */
    /* refused[s] for every s better than `source`: why it did not open. */
    char refused[LLC_SAMPLING_SOURCES][LLC_SAMPLING_NOTE_LEN];
    enum llc_sampling_unit unit;
    char unit_refused[LLC_SAMPLING_NOTE_LEN]; /* why not instructions ("" if instructions) */
    char unit_note[LLC_SAMPLING_NOTE_LEN];    /* CPU time: what it leaves out ("" if nothing) */
    uint64_t window;                          /* window length in `unit` */
    unsigned samples_per_window;
    unsigned ncpus; /* CPUs with a ring buffer */
    /* tick: timer interrupts per CPU second of a busy task as the
     * self-test measured them (the tick, plus other timers expiring while
     * it runs), and the kernel's HZ used for the window length (the tick
     * length the coarse clocks report); 0 for other sources. */
    double tick_hz_measured;
    unsigned tick_hz;
    char tick_note[LLC_SAMPLING_NOTE_LEN]; /* tick: tracefs mounted by us, ... ("" if none) */
};

/* One window, as drained. */
struct llc_sampling_window {
    uint64_t index;
    double t_start, t_end; /* seconds since llc_sampling_start() */
    uint64_t cpu_ns;       /* target CPU time in the window (all threads) */
    uint64_t instructions; /* retired user instructions, if instructions_known */
    bool instructions_known;
    /* Trace windows: instruction records counted as valgrind's exp-bbv
     * counts instructions: a run of records at one address (the iterations
     * of a rep-prefixed instruction, which lackey records one by one) is
     * one. 0 live. */
    uint64_t instructions_bbv;
    uint64_t progress;     /* the window's length in the window unit */
    unsigned multiplier;   /* period multiplier the window was sampled with */
    uint64_t period;       /* effective sample period (events per kept sample) */
    size_t n_ips;          /* samples: llc_sampling_ips() */
    size_t kernel_samples; /* samples the kernel took (n_ips before thinning) */
    uint64_t lost;         /* samples the kernel dropped (ring full) */
    unsigned tasks;        /* distinct thread ids among the samples */
    unsigned processes;    /* distinct process ids among the samples */
    bool last;             /* the target ended during this window */
};

struct llc_sampling;

void llc_sampling_config_default(struct llc_sampling_config *cfg);
/* Opens the events on pid (every CPU). With enable_on_exec they start
 * counting when pid execs, else at once. -ENODEV if no source opens (err
 * lists every reason), other negative codes for bad configurations. */
int llc_sampling_open(pid_t pid, const struct llc_sampling_config *cfg, struct llc_sampling **out,
                      char *err, size_t errlen);
void llc_sampling_close(struct llc_sampling *s);
const struct llc_sampling_choice *llc_sampling_choice(const struct llc_sampling *s);
const char *llc_sampling_source_name(enum llc_sampling_source src);
const char *llc_sampling_unit_name(enum llc_sampling_unit unit);

/* Marks time zero of the first window; call right after the target starts. */
void llc_sampling_start(struct llc_sampling *s);
/* Sampling rate of the next window: period = base period * multiplier
 * (a power of two, 1..max_multiplier). */
int llc_sampling_set_multiplier(struct llc_sampling *s, unsigned multiplier, char *err,
                                size_t errlen);
/* Sleeps until the current window is complete or the target ends, then
 * drains the samples. Returns 1 for a complete window, 0 for the last one
 * (target ended; w->last set; the window may hold no samples), negative on
 * error. Do not call again after 0. */
int llc_sampling_next_window(struct llc_sampling *s, struct llc_target *t,
                             struct llc_sampling_window *w, char *err, size_t errlen);
/* The window's samples as position-independent code keys (see the top of
 * this file); valid until the next window. */
const uint64_t *llc_sampling_ips(const struct llc_sampling *s, size_t *n);

/* --- pieces exposed for tests ------------------------------------------ */

/* Base period for the next window (docs/METHODS.md §10.3 (ours)): `events` counted in the
 * last window (samples * period) spread over `samples` wanted per window,
 * moved at most 2x from `prev`, never below `floor`. */
uint64_t llc_sampling_adapt_period(uint64_t prev, uint64_t events, unsigned samples,
                                   uint64_t floor);

/* --- offline: the same windows from a recorded trace ------------------- */

/* Windows of `window_instr` instruction records of a trace (llcprobe/trace.h);
 * in each, instruction addresses are sampled like the live sampler would:
 * samples_per_window / multiplier of them, at random gaps (seeded) whose
 * mean spreads them over the window, so loops cannot alias with the rate.
 * By references instead (a trace without instruction records, such as the
 * clang runtime's): windows of `window_instr` data records, the sampled
 * addresses being the code addresses of data records (their pc, else the
 * last instruction record's address; records with neither are counted but
 * never sampled). */
enum llc_sampling_trace_unit {
    LLC_SAMPLING_TRACE_AUTO = 0, /* instructions if the trace has instruction records */
    LLC_SAMPLING_TRACE_INSTRUCTIONS,
    LLC_SAMPLING_TRACE_REFERENCES,
};
struct llc_sampling_trace_config {
    uint64_t window_instr;       /* > 0: records of the unit per window */
    unsigned samples_per_window; /* at multiplier 1, > 0 */
    uint64_t seed;
    enum llc_sampling_trace_unit unit;
};

struct llc_sampling_trace;

int llc_sampling_trace_open(const char *path, const struct llc_sampling_trace_config *cfg,
                            struct llc_sampling_trace **out, char *err, size_t errlen);
void llc_sampling_trace_close(struct llc_sampling_trace *t);
/* Reads the next window sampled at `multiplier` (a power of two, 1..64).
 * Returns 1 for a full window, 0 at the end of the trace (w holds the
 * partial last window, w->progress records of the unit, possibly 0),
 * negative on a damaged trace. w->instructions counts the window's
 * instruction records, instructions_known if the trace has any; time fields
 * are 0. */
int llc_sampling_trace_next(struct llc_sampling_trace *t, unsigned multiplier,
                            struct llc_sampling_window *w, char *err, size_t errlen);
const uint64_t *llc_sampling_trace_ips(const struct llc_sampling_trace *t, size_t *n);
/* The traced command line, as recorded in the trace header. */
const char *llc_sampling_trace_command(const struct llc_sampling_trace *t);
/* The window unit in use (AUTO resolved at open: a trace whose header
 * counts no instruction record but some data records, or a stream written
 * by the runtime "llcprobe-rt", goes by references). */
enum llc_sampling_trace_unit llc_sampling_trace_unit(const struct llc_sampling_trace *t);
/* The recorder named in the trace header ("lackey", "qemu", "llcprobe-rt"). */
const char *llc_sampling_trace_recorder(const struct llc_sampling_trace *t);

/* --- references for evaluating phases (scripts/eval-phase.sh) ---------- */

/* Reads valgrind exp-bbv output ("T:id:count :id:count ..." per interval)
 * as dense rows: rows[w * dim + (id - 1)], dim = largest block id. */
#define LLC_SAMPLING_BBV_MAX_ID (1u << 24)           /* largest block id */
#define LLC_SAMPLING_BBV_MAX_CELLS ((size_t)1 << 27) /* windows x dim: 1 GiB of rows */
struct llc_sampling_bbv {
    double *rows;
    size_t windows, dim;
    uint64_t *addr; /* dim entries: block id - 1 -> start address; NULL until read */
};
int llc_sampling_bbv_read(const char *path, struct llc_sampling_bbv *out, char *err, size_t errlen);
/* Reads the block start addresses of the same run from exp-bbv's
 * --pc-out-file ("F:id:hexaddress:function" per block) into b->addr. A
 * block the file does not name keeps address 0 and is refused (-EPROTO):
 * it could not be hashed like the sampled addresses. */
int llc_sampling_bbv_read_pcs(const char *path, struct llc_sampling_bbv *b, char *err,
                              size_t errlen);
void llc_sampling_bbv_free(struct llc_sampling_bbv *b);

/* Replays a trace in the simulator (cache preset, optionally co-run with a
 * synthetic noise workload at the same access rate) and cuts it into windows
 * of window_instr instructions (by_refs: data records): per window the
 * target's data accesses and LLC misses. Boundaries are exact to within
 * `step` accesses. */
struct llc_sampling_simwin {
    uint64_t *accesses, *misses;
    size_t windows;
};
int llc_sampling_sim_windows(const char *trace, const char *preset, const char *noise,
                             uint64_t window_instr, bool by_refs, uint64_t seed,
                             struct llc_sampling_simwin *out, char *err, size_t errlen);
void llc_sampling_simwin_free(struct llc_sampling_simwin *w);

#endif
