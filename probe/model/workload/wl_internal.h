/* Private to probe/workload: parsed specs, generator state, the generator's
 * random number source. */
#ifndef LLC_WORKLOAD_INTERNAL_H
#define LLC_WORKLOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/rng.h"
#include "llcprobe/workload.h"

enum wl_kind { WL_UNIFORM, WL_STREAM, WL_ZIPF, WL_HOTSETS, WL_GAUSSIAN, WL_PHASED };

/* One non-phased generator's parameters (unused ones are 0). */
struct wl_params {
    enum wl_kind kind;
    uint64_t size;
    uint64_t stride;
    double alpha;
    double frac, weight;
    double cv;
    double write;
};

struct wl_spec {
    struct wl_params top; /* kind WL_PHASED for a phased spec */
    unsigned nphases;
    struct wl_params phase[LLC_WORKLOAD_MAX_PHASES];
    uint64_t length[LLC_WORKLOAD_MAX_PHASES];
};

int wl_spec_parse(const char *spec, struct wl_spec *out, char *err, size_t errlen);
const char *wl_kind_name(enum wl_kind k);
static inline bool wl_kind_is_set_shaped(enum wl_kind k)
{
    return k == WL_HOTSETS || k == WL_GAUSSIAN;
}

/* Standard normal (Box-Muller; one of the pair is dropped: only used at
 * set-up time). */
double wl_rng_normal(struct llc_xoshiro *r);

/* Per-kind state of a leaf generator. */
/* Zipf ranks up to this one come from an alias table. */
#define WL_ZIPF_HEAD (1u << 16)

struct wl_zipf {
    uint64_t n; /* lines */
    double alpha;
    uint32_t head;    /* ranks 1..head by alias table */
    double head_mass; /* their share of the probability */
    double *head_prob;
    uint32_t *head_alias;
    double h_x1, h_n, s;     /* rejection-inversion constants, tail */
    uint64_t perm_a, perm_b; /* rank -> line bijection */
};

struct wl_sets {
    uint32_t nsets;
    uint32_t lines_per_set;
    uint32_t *line_of; /* [set * lines_per_set + j]: line offset from base */
    double *prob;      /* alias table */
    uint32_t *alias;
    double *weight; /* normalised intensity per set (sums to 1) */
};

struct llc_workload {
    enum wl_kind kind;
    struct wl_params p;
    struct llc_xoshiro rng;
    struct llc_xoshiro write_rng;
    uint64_t base;
    uint32_t line_size;
    uint64_t nlines;
    uint64_t pos; /* stream */
    uint64_t emitted;
    uint64_t extent;
    uint64_t footprint;
    bool physical;
    struct wl_zipf zipf;
    struct wl_sets sets;
    /* phased */
    unsigned nphases, cur;
    struct llc_workload *child[LLC_WORKLOAD_MAX_PHASES];
    uint64_t length[LLC_WORKLOAD_MAX_PHASES];
    uint64_t left; /* accesses left in the current phase */
};

/* Vose's alias table for weights w[0..n) summing to 1. 0 or -ENOMEM. */
int wl_alias_build(const double *w, uint32_t n, double *prob, uint32_t *alias);

/* Leaf set-up and filling, by family. */
int wl_basic_init(struct llc_workload *w, char *err, size_t errlen);
void wl_basic_fill(struct llc_workload *w, uint64_t *addrs, size_t n);
int wl_sets_init(struct llc_workload *w, const struct llc_sim_geometry *g, char *err,
                 size_t errlen);
void wl_sets_fill(struct llc_workload *w, uint64_t *addrs, size_t n);
void wl_sets_free(struct wl_sets *s);
void wl_zipf_free(struct wl_zipf *z);

#endif
