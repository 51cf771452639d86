/* A small simulated machine for the eviction-set tests: a sliced LLC with a
 * hidden slice hash, the latency model on, optional noise, an arena of
 * random 4 KiB frames, and the ground truth to check results against. */
#ifndef EVSET_FIXTURE_H
#define EVSET_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/evset.h"
#include "llcprobe/sim.h"

struct fx_opts {
    unsigned slices, sets_per_slice, ways;
    unsigned l2_sets, l2_ways; /* 0 = no L2 */
    enum llc_sim_inclusion inclusion;
    bool modulo_hash;     /* else a hidden random XOR hash */
    unsigned hash_lo_bit; /* random hash over [lo, phys_bits) */
    unsigned phys_bits;   /* physical memory 2^phys_bits */
    unsigned pages;       /* arena: this many random 4 KiB frames */
    double noise_rate;    /* background accesses per probe access */
    double outlier_prob;  /* < 0: latency default */
    uint64_t seed;
};
void fx_opts_default(struct fx_opts *o);

struct fx {
    struct fx_opts o;
    struct llc_sim *sim;
    struct llc_sim_config cfg;
    struct llc_evset_oracle *oracle;
    struct llc_evset_calibration calib;
    struct llc_evset_line *lines;
    size_t n_lines;
    struct llc_evset_params params;
    struct llc_evset_finder *finder;
};

/* Sets everything up (finder with params derived from the geometry and
 * params_edit applied if not NULL); fails the test on error. */
void fx_setup(struct fx *fx, const struct fx_opts *o,
              void (*params_edit)(struct llc_evset_params *p));
void fx_teardown(struct fx *fx);
/* The true set unit of a physical address. */
uint32_t fx_true_set(const struct fx *fx, uint64_t paddr);
/* Arena line ids with the given index, at most cap. */
size_t fx_lines_at_index(const struct fx *fx, uint32_t index, uint32_t *out, size_t cap);

#endif
