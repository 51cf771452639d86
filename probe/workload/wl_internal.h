/* Private to probe/workload: parsed specs, generator state, the generator's
 * random number source. */
#ifndef LLC_WORKLOAD_INTERNAL_H
#define LLC_WORKLOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    struct wl_params top;     /* kind WL_PHASED for a phased spec */
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

/* xoshiro256**, seeded through splitmix64: fast, and every generator owns
 * its state so streams are reproducible and independent. */
struct wl_rng {
    uint64_t s[4];
};

static inline uint64_t wl_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline void wl_rng_seed(struct wl_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = wl_splitmix64(&seed);
}

static inline uint64_t wl_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t wl_rng_next(struct wl_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = wl_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = wl_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static inline double wl_rng_u01(struct wl_rng *r)
{
    return (double)(wl_rng_next(r) >> 11) * 0x1p-53;
}

/* Uniform in [0, n) by multiply-shift (bias below 2^-32 for our n). */
static inline uint64_t wl_rng_below(struct wl_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)wl_rng_next(r) * n) >> 64);
}

/* Standard normal (Box-Muller; one of the pair is dropped: only used at
 * set-up time). */
double wl_rng_normal(struct wl_rng *r);

/* Per-kind state of a leaf generator. */
/* Zipf ranks up to this one come from an alias table. */
#define WL_ZIPF_HEAD (1u << 16)

struct wl_zipf {
    uint64_t n;                /* lines */
    double alpha;
    uint32_t head;             /* ranks 1..head by alias table */
    double head_mass;          /* their share of the probability */
    double *head_prob;
    uint32_t *head_alias;
    double h_x1, h_n, s;       /* rejection-inversion constants, tail */
    uint64_t perm_a, perm_b;   /* rank -> line bijection */
};

struct wl_sets {
    uint32_t nsets;
    uint32_t lines_per_set;
    uint32_t *line_of;         /* [set * lines_per_set + j]: line offset from base */
    double *prob;              /* alias table */
    uint32_t *alias;
    double *weight;            /* normalised intensity per set (sums to 1) */
};

struct llc_workload {
    enum wl_kind kind;
    struct wl_params p;
    struct wl_rng rng;
    struct wl_rng write_rng;
    uint64_t base;
    uint32_t line_size;
    uint64_t nlines;
    uint64_t pos;              /* stream */
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
    uint64_t left;             /* accesses left in the current phase */
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
