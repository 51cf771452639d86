/* Private to probe/sampling: the ring-buffer reader, the sample sink and the
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

/* Where drained samples go: code addresses, and what else a window reports. */
struct llc_sampling_sink {
    uint64_t *ips;
    size_t n, cap;
    uint64_t lost;
    uint32_t tids[LLC_SAMPLING_MAX_IDS], pids[LLC_SAMPLING_MAX_IDS];
    unsigned ntids, npids;
};

/* Empties the sink for a new window (keeps its memory). */
void llc_sampling_sink_reset(struct llc_sampling_sink *k);
void llc_sampling_sink_free(struct llc_sampling_sink *k);

/* Reads every record between data_tail and data_head of one ring (data:
 * the `size`-byte data area, a power of two) into the sink, then releases
 * them to the kernel. PERF_RECORD_SAMPLE records must carry exactly
 * PERF_SAMPLE_IP | PERF_SAMPLE_TID. -ENOMEM, or -EPROTO for a record that
 * cannot be (size 0 or larger than the ring). */
int llc_sampling_ring_drain(struct perf_event_mmap_page *meta, const unsigned char *data,
                            uint64_t size, struct llc_sampling_sink *k);

/* perf_event_open(2); -errno on failure. */
int llc_sampling_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu);

/* Fills attr for one source (sampling, user mode, inherit, disabled until
 * exec or enable). -errno-style code and a reason if the source cannot even
 * be described here (no PMU known to libpfm4, no branch event). */
int llc_sampling_source_attr(enum llc_sampling_source src, struct perf_event_attr *attr,
                             char *event, size_t eventlen, char *why, size_t whylen);
/* One line for an open() failure of a source, from its errno. */
void llc_sampling_explain_errno(int code, char *why, size_t whylen);

#endif
