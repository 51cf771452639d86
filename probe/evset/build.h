/* State of one llc_evset_build run, shared by its files. */
#ifndef LLC_EVSET_BUILD_H
#define LLC_EVSET_BUILD_H

#include "evset/evset_internal.h"

#define EVSET_FREE UINT32_MAX          /* line not in any class */
#define EVSET_DROPPED (UINT32_MAX - 1) /* a victim no candidate set evicted */

struct evset_class {
    uint32_t index, label;
    uint8_t source;
    bool verified;
    double rate;
    uint32_t victim;
    uint32_t *lines; /* group_size ids */
};

struct evset_build {
    struct llc_evset_finder *f;
    unsigned g;          /* group size */
    uint32_t *owner;     /* per arena line: class id, EVSET_FREE or EVSET_DROPPED */
    uint32_t *found;     /* lines a prune put with a new set */
    uint32_t *per_index; /* classes found per index */
    struct evset_class *cls;
    size_t n_cls, cap_cls;
    uint64_t domain; /* address bits above the index that vary in the arena */
    struct evset_paddr_map map;
    struct evset_rng rng;
    struct llc_evset_report rep;
    uint32_t *scratch; /* group_size + 1 ids */
};

/* Adds a class (copies lines); its id, or a negative code. */
int evset_class_add(struct evset_build *b, uint32_t index, uint8_t source, uint32_t victim,
                    const uint32_t *lines, double rate, bool verified);
/* Verification of one candidate set: counts it and returns 1 (passed),
 * 0 (failed) or a negative code; *rate receives the eviction rate. */
int evset_verify(struct evset_build *b, uint32_t victim, const uint32_t *lines, double *rate,
                 char *err, size_t errlen);
/* Tries to solve the slice hash from the classes found so far: 1 solved
 * (classes are then relabelled by the hash), 0 more classes needed, -1 no
 * linear hash fits (stop trying). The reason goes to rep.hash_note. */
int evset_try_solve(struct evset_build *b);
/* Sets for every unit still missing, from the solved hash. */
int evset_fill_from_hash(struct evset_build *b, char *err, size_t errlen);

#endif
