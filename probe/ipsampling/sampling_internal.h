/* Private to probe/ipsampling: the ring-buffer reader, the sample sink and the
 * event opening helpers shared by the files of this module. */
#ifndef LLC_SAMPLING_INTERNAL_H
#define LLC_SAMPLING_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "llcprobe/sampling.h"

/* Distinct ids remembered per window; beyond that the counts saturate. */
#define LLC_SAMPLING_MAX_IDS 256

/* One sample as drained: raw IP, kernel time, the period it was taken at
 * (events since the task's previous sample), the process it ran in. */
struct llc_sampling_sample {
    uint64_t ip, time, period;
    uint32_t pid;
};

/* Side-band records that change what an address means in a process. */
enum llc_sampling_side_kind {
    LLC_SAMPLING_SIDE_MMAP = 0, /* pid maps [addr, addr+len) of file key at pgoff */
    LLC_SAMPLING_SIDE_EXEC = 1, /* pid exec'd: its old mappings are gone */
    LLC_SAMPLING_SIDE_FORK = 2, /* pid is a new process forked from ppid */
    LLC_SAMPLING_SIDE_EXIT = 3, /* process pid ended */
};

struct llc_sampling_side {
    uint64_t time;
    enum llc_sampling_side_kind kind;
    uint32_t pid, ppid;
    uint64_t addr, len, pgoff, file_key;
};

/* Where drained records go: samples, side-band records, and what else a
 * window reports. */
struct llc_sampling_sink {
    uint64_t *ips; /* the window's code addresses (keys, live) */
    size_t n, cap;
    struct llc_sampling_sample *samples; /* live: raw samples from the rings */
    size_t nsamples, capsamples;
    struct llc_sampling_side *side;
    size_t nside, capside;
    uint64_t lost;
    /* Samples carry the user registers (tick source): their IP is the
     * user instruction pointer in them, not the kernel's PERF_SAMPLE_IP. */
    bool ip_from_user_regs;
    /* Samples have no PERF_SAMPLE_PERIOD (tick source: with it, the kernel
     * samples every tracepoint hit and ignores the period); their period
     * reads 0. */
    bool no_period;
    uint32_t tids[LLC_SAMPLING_MAX_IDS], pids[LLC_SAMPLING_MAX_IDS];
    unsigned ntids, npids;
};

/* Empties the sink for a new window (keeps its memory). */
void llc_sampling_sink_reset(struct llc_sampling_sink *k);
void llc_sampling_sink_free(struct llc_sampling_sink *k);

/* sample_type of every sampling event, and the sample_id_all trailer the
 * reader expects on side-band records. */
#define LLC_SAMPLING_SAMPLE_TYPE \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

/* Reads every record between data_tail and data_head of one ring (data:
 * the `size`-byte data area, a power of two) into the sink, then releases
 * them to the kernel. Records must be laid out for LLC_SAMPLING_SAMPLE_TYPE
 * (without PERF_SAMPLE_PERIOD when the sink's no_period is set, plus
 * PERF_SAMPLE_REGS_USER with one register, the IP, when its
 * ip_from_user_regs is set) with sample_id_all. -ENOMEM, or -EPROTO for a record that cannot be
 * (size 0 or larger than the ring). */
int llc_sampling_ring_drain(struct perf_event_mmap_page *meta, const unsigned char *data,
                            uint64_t size, struct llc_sampling_sink *k);

/* Executable mappings per process (maps.c), to turn IPs into stable keys. */
struct llc_sampling_mapping {
    uint32_t pid;
    uint64_t start, end, pgoff, file_key;
};
struct llc_sampling_maps {
    struct llc_sampling_mapping *v;
    size_t n, cap;
};
/* FNV-1a 64 of a file name: the file part of a key. */
uint64_t llc_sampling_file_key(const char *name);
int llc_sampling_maps_add(struct llc_sampling_maps *m, uint32_t pid, uint64_t start, uint64_t len,
                          uint64_t pgoff, uint64_t file_key);
void llc_sampling_maps_forget(struct llc_sampling_maps *m, uint32_t pid);
int llc_sampling_maps_fork(struct llc_sampling_maps *m, uint32_t parent, uint32_t child);
bool llc_sampling_maps_has(const struct llc_sampling_maps *m, uint32_t pid);
/* Stable key of ip in pid: (file_key << 40) ^ file offset; the raw ip (and
 * false) if no mapping covers it. */
bool llc_sampling_maps_key(const struct llc_sampling_maps *m, uint32_t pid, uint64_t ip,
                           uint64_t *key);
/* Adds pid's executable file mappings from /proc/<pid>/maps; -errno. */
int llc_sampling_maps_read_proc(struct llc_sampling_maps *m, uint32_t pid);
void llc_sampling_maps_free(struct llc_sampling_maps *m);
/* Applies the sink's side-band records and turns its samples into keys
 * (k->ips[i] for k->samples[i], k->n), in kernel time order across all
 * rings. A process with no
 * known mapping is looked up in /proc once (it existed before sampling
 * began, or its records were lost). */
int llc_sampling_resolve(struct llc_sampling_sink *k, struct llc_sampling_maps *m);

/* perf_event_open(2); -errno on failure. */
int llc_sampling_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu);

/* Fills attr for one source (sampling, user mode, inherit, disabled until
 * exec or enable). -errno-style code and a reason if the source cannot even
 * be described here (no PMU known to libpfm4, no branch event). */
int llc_sampling_source_attr(enum llc_sampling_source src, struct perf_event_attr *attr,
                             char *event, size_t eventlen, char *note, size_t notelen, char *why,
                             size_t whylen);
/* The tick source (tick.c): the tracepoint of the kernel's timer interrupt
 * with the user IP register sampled; note says what was done to get it
 * (tracefs mounted). Then the self-test: timer interrupts per CPU second of
 * a busy thread (measured), and the kernel's HZ (the resolution of
 * CLOCK_MONOTONIC_COARSE, else the measured rate snapped to one); a
 * refusal with the measured rate if the tick does not run. */
int llc_sampling_tick_attr(struct perf_event_attr *attr, char *event, size_t eventlen, char *note,
                           size_t notelen, char *why, size_t whylen);
int llc_sampling_tick_selftest(const struct perf_event_attr *proto, double *measured, unsigned *hz,
                               char *why, size_t whylen);
/* The kernel HZ (100, 250, 300, 1000) nearest a measured rate if within
 * 20% of it, else the rate rounded. */
unsigned llc_sampling_tick_snap(double measured);

/* One line for an open() failure of a source, from its errno. */
void llc_sampling_explain_errno(int code, char *why, size_t whylen);

#endif
