/* The PMU reuse sampler's parts (docs/METHODS.md §6.3), split so that the bookkeeping
 * can be tested without hardware: an event source (the real one is perf
 * precise samples + perf breakpoint watchpoints on a ptraced program, in
 * pmu.c; tests use a replay of a reference stream) and the engine that
 * turns its events into reuse distances. Private to probe/mrc and tests. */
#ifndef LLC_MRC_PMU_H
#define LLC_MRC_PMU_H

#include <stddef.h>
#include <stdint.h>

#include "mrc/mrc.h"

enum llc_pmu_ev_kind {
    LLC_PMU_EV_SAMPLE, /* a sampled reference */
    LLC_PMU_EV_WATCH,  /* an armed watchpoint saw its line referenced again */
};

struct llc_pmu_ev {
    enum llc_pmu_ev_kind kind;
    uint64_t addr; /* data address of the reference */
    unsigned slot; /* WATCH: the watchpoint that fired */
    /* References (loads + stores) counted so far. SAMPLE: including the
     * sampled reference (c_s of docs/METHODS.md §6.3). WATCH: excluding the reusing
     * reference (c_r); a source whose counter already includes it (trap-
     * after watchpoints) subtracts it. rd = c_r - c_s. */
    uint64_t count;
};

struct llc_pmu_source {
    void *ctx;
    unsigned n_slots;   /* watchpoints that can be armed at once */
    unsigned n_streams; /* independently sampled streams (loads, stores): each
                           gets its first gap before the first next() */
    /* 1 and *ev filled, 0 at the end of the program, < 0 on error. */
    int (*next)(void *ctx, struct llc_pmu_ev *ev, char *err, size_t errlen);
    /* Watch the 64-byte line of addr in slot (free) / stop watching slot. */
    int (*arm)(void *ctx, unsigned slot, uint64_t addr, char *err, size_t errlen);
    int (*disarm)(void *ctx, unsigned slot, char *err, size_t errlen);
    /* The next sample of the stream that gave the last sample (before any
     * sample: of stream 0, 1, ... in turn) comes `gap` references of that
     * stream later (>= 1). */
    int (*set_gap)(void *ctx, uint64_t gap, char *err, size_t errlen);
};

/* Runs src to its end: random exponential gaps at rate (seeded), a
 * watchpoint per sampled line while a slot is free (a sample arriving when
 * all are busy is dropped and counted), a new sample on a watched line
 * resolves that watch first (the sampled reference is itself the reuse),
 * and watches still pending at the end become dangling samples (docs/METHODS.md §6.3: no
 * cap on the watch duration). Distances go into h; stats gets samples,
 * dropped and refs (the last count seen). */
int llc_pmu_engine_run(const struct llc_pmu_source *src, double rate, uint64_t seed,
                       struct llc_statmodel_hist *h, struct llc_mrc_pmu_stats *stats, char *err,
                       size_t errlen);

/* Geometric gap of docs/METHODS.md §6.2 (>= 1) from u in (0, 1]. */
uint64_t llc_pmu_gap(double rate, double u);

#endif
