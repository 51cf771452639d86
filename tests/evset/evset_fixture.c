#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evset_fixture.h"
#include "llcprobe/common.h"

void fx_opts_default(struct fx_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->slices = 4;
    o->sets_per_slice = 64;
    o->ways = 16;
    o->l2_sets = 16;
    o->l2_ways = 8;
    o->inclusion = LLC_SIM_INCLUSIVE;
    o->hash_lo_bit = 6;
    o->phys_bits = 30;
    o->pages = 600;
    o->outlier_prob = -1;
    o->seed = 42;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void fx_setup(struct fx *fx, const struct fx_opts *o,
              void (*params_edit)(struct llc_evset_params *p))
{
    char err[LLC_ERRLEN];
    memset(fx, 0, sizeof(*fx));
    fx->o = *o;
    struct llc_sim_config *c = &fx->cfg;
    llc_sim_config_default(c);
    c->llc.line_size = 64;
    c->llc.sets_per_slice = o->sets_per_slice;
    c->llc.slices = o->slices;
    c->llc.ways = o->ways;
    c->llc.hash = LLC_SIM_HASH_MODULO;
    if (!o->modulo_hash)
        assert_int_equal(llc_sim_geometry_random_hash(&c->llc, o->seed * 7 + 1, o->hash_lo_bit,
                                                      o->phys_bits, err, sizeof(err)),
                         0);
    c->inclusion = o->inclusion;
    c->l2_sets = o->l2_sets;
    c->l2_ways = o->l2_ways;
    c->agents = 2;
    c->seed = o->seed;
    c->phys_mem_bytes = 1ULL << o->phys_bits;
    c->latency.enabled = true;
    if (o->outlier_prob >= 0)
        c->latency.outlier_prob = o->outlier_prob;
    int rc = llc_sim_create(c, &fx->sim, err, sizeof(err));
    if (rc)
        fail_msg("llc_sim_create: %s", err);

    struct llc_evset_sim_config sc;
    llc_evset_sim_config_default(&sc);
    sc.agent = 0;
    sc.noise_agent = 1;
    sc.noise_rate = o->noise_rate;
    sc.noise_base = 0;
    sc.noise_bytes = 1ULL << o->phys_bits;
    sc.seed = o->seed + 5;
    rc = llc_evset_oracle_sim(fx->sim, &sc, &fx->oracle, &fx->calib, err, sizeof(err));
    if (rc)
        fail_msg("llc_evset_oracle_sim: %s", err);

    /* arena: distinct random frames, every line of each */
    uint64_t s = o->seed * 1000 + 17;
    uint64_t *frames = malloc(o->pages * sizeof(*frames));
    assert_non_null(frames);
    size_t nf = 0;
    while (nf < o->pages) {
        for (size_t i = nf; i < o->pages; i++)
            frames[i] = mix(&s) % (1ULL << (o->phys_bits - 12));
        qsort(frames, o->pages, sizeof(*frames), cmp_u64);
        nf = 0;
        for (size_t i = 0; i < o->pages; i++)
            if (!nf || frames[i] != frames[nf - 1])
                frames[nf++] = frames[i];
    }
    fx->n_lines = (size_t)o->pages * 64;
    fx->lines = malloc(fx->n_lines * sizeof(*fx->lines));
    assert_non_null(fx->lines);
    for (size_t f = 0; f < o->pages; f++)
        for (size_t k = 0; k < 64; k++) {
            const uint64_t pa = (frames[f] << 12) | (k << 6);
            fx->lines[f * 64 + k] = (struct llc_evset_line){pa, pa};
        }
    free(frames);

    llc_evset_params_default(&fx->params);
    fx->params.sets_per_slice = o->sets_per_slice;
    fx->params.slices = o->slices;
    fx->params.llc_ways = o->ways;
    fx->params.l2_ways = o->l2_ways;
    fx->params.l2_sets = o->l2_sets;
    fx->params.victim_llc = o->inclusion == LLC_SIM_EXCLUSIVE;
    fx->params.seed = o->seed;
    if (params_edit)
        params_edit(&fx->params);
    rc = llc_evset_finder_create(fx->oracle, &fx->params, fx->lines, fx->n_lines, &fx->finder, err,
                                 sizeof(err));
    if (rc)
        fail_msg("llc_evset_finder_create: %s", err);
}

void fx_teardown(struct fx *fx)
{
    llc_evset_finder_destroy(fx->finder);
    llc_evset_oracle_destroy(fx->oracle);
    llc_sim_destroy(fx->sim);
    free(fx->lines);
}

uint32_t fx_true_set(const struct fx *fx, uint64_t paddr)
{
    struct llc_sim_loc loc;
    llc_sim_geometry_locate(&fx->cfg.llc, paddr, &loc);
    return loc.set;
}

size_t fx_lines_at_index(const struct fx *fx, uint32_t index, uint32_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < fx->n_lines && n < cap; i++)
        if (((fx->lines[i].paddr >> 6) & (fx->o.sets_per_slice - 1)) == index)
            out[n++] = (uint32_t)i;
    return n;
}
