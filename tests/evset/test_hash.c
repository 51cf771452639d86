/* The GF(2) slice-hash solver on classes from the true slice function. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/evset.h"
#include "llcprobe/sim.h"

#define LINE 64u
#define SETS 256u
#define PHYS_BITS 32u

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t random_paddr(uint64_t *s, uint32_t index)
{
    const uint64_t a = mix(s) & ((1ULL << PHYS_BITS) - 1) & ~(uint64_t)(LINE * SETS - 1);
    return a | (uint64_t)index * LINE;
}

/* per_class members of every slice at each of the given indexes; class id =
 * index * slices + true slice. */
static size_t make_classes(const struct llc_sim_geometry *g, const uint32_t *indexes, size_t n_idx,
                           unsigned per_class, uint64_t seed, uint64_t *paddrs, uint32_t *cls)
{
    uint64_t s = seed;
    size_t n = 0;
    for (size_t i = 0; i < n_idx; i++) {
        unsigned *count = calloc(g->slices, sizeof(*count));
        unsigned full = 0;
        while (full < g->slices) {
            const uint64_t pa = random_paddr(&s, indexes[i]);
            struct llc_sim_loc loc;
            llc_sim_geometry_locate(g, pa, &loc);
            if (count[loc.slice] == per_class)
                continue;
            paddrs[n] = pa;
            cls[n++] = indexes[i] * g->slices + loc.slice;
            full += ++count[loc.slice] == per_class;
        }
        free(count);
    }
    return n;
}

static void geometry(struct llc_sim_geometry *g, unsigned slices, bool modulo, uint64_t seed)
{
    char err[LLC_ERRLEN];
    memset(g, 0, sizeof(*g));
    g->line_size = LINE;
    g->sets_per_slice = SETS;
    g->slices = slices;
    g->ways = 16;
    g->hash = LLC_SIM_HASH_MODULO;
    if (!modulo)
        assert_int_equal(llc_sim_geometry_random_hash(g, seed, 6, PHYS_BITS, err, sizeof(err)), 0);
}

/* Predicted labels must be a bijection of true slices within each index. */
static void check_prediction(const struct llc_sim_geometry *g, const struct llc_evset_hash *h,
                             uint64_t seed)
{
    uint64_t s = seed;
    for (uint32_t index = 0; index < SETS; index += 37) {
        int32_t map[64], back[64];
        memset(map, -1, sizeof(map));
        memset(back, -1, sizeof(back));
        for (int k = 0; k < 400; k++) {
            const uint64_t pa = random_paddr(&s, index);
            struct llc_sim_loc loc;
            llc_sim_geometry_locate(g, pa, &loc);
            const uint32_t label = llc_evset_hash_label(h, pa);
            assert_true(label < g->slices);
            if (map[loc.slice] < 0)
                map[loc.slice] = (int32_t)label;
            if (back[label] < 0)
                back[label] = (int32_t)loc.slice;
            assert_int_equal(map[loc.slice], label);
            assert_int_equal(back[label], loc.slice);
        }
    }
}

static void test_recovers_hidden_hash(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    for (unsigned slices = 2; slices <= 16; slices *= 2) {
        struct llc_sim_geometry g;
        geometry(&g, slices, false, 100 + slices);
        uint64_t paddrs[2048];
        uint32_t cls[2048];
        const uint32_t idx[] = {3};
        const size_t n = make_classes(&g, idx, 1, 12, slices, paddrs, cls);
        struct llc_evset_hash h;
        const int rc =
            llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, slices, 0, &h, err, sizeof(err));
        if (rc)
            fail_msg("%u slices: %s", slices, err);
        assert_int_equal(h.bits, __builtin_ctz(slices));
        for (unsigned b = 0; b < h.bits; b++)
            assert_int_equal(h.masks[b] & (LINE * SETS - 1), 0);
        /* classes from one index predict every index (up to relabelling) */
        check_prediction(&g, &h, 7 * slices);
    }
}

static void test_modulo_power_of_two_is_linear(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_geometry g;
    geometry(&g, 4, true, 0);
    uint64_t paddrs[512];
    uint32_t cls[512];
    const uint32_t idx[] = {0, 9};
    const size_t n = make_classes(&g, idx, 2, 20, 5, paddrs, cls);
    struct llc_evset_hash h;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     0);
    check_prediction(&g, &h, 9);
}

static void test_rejects_modulo3(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_geometry g;
    geometry(&g, 3, true, 0);
    uint64_t paddrs[512];
    uint32_t cls[512];
    const uint32_t idx[] = {1, 2};
    const size_t n = make_classes(&g, idx, 2, 30, 5, paddrs, cls);
    struct llc_evset_hash h;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 3, 0, &h, err, sizeof(err)),
                     -EDOM);
    printf("modulo-3: %s\n", err);
}

static void test_rejects_inconsistent_classes(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_geometry g;
    geometry(&g, 4, false, 77);
    uint64_t paddrs[512];
    uint32_t cls[512];
    const uint32_t idx[] = {5};
    size_t n = make_classes(&g, idx, 1, 16, 8, paddrs, cls);
    struct llc_evset_hash h;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     0);
    /* two slices claimed to be one class: no 2-bit linear hash fits */
    for (size_t i = 0; i < n; i++)
        if (cls[i] == 5 * 4 + 1)
            cls[i] = 5 * 4 + 0;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     -EDOM);
    printf("merged classes: %s\n", err);
    /* one class split in two: both halves get one label */
    n = make_classes(&g, idx, 1, 16, 8, paddrs, cls);
    for (size_t i = 0, seen = 0; i < n; i++)
        if (cls[i] == 5 * 4 + 2 && seen++ % 2)
            cls[i] = 999;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     -EDOM);
    printf("split class: %s\n", err);
    /* a class mixing indexes */
    n = make_classes(&g, idx, 1, 16, 8, paddrs, cls);
    paddrs[0] ^= LINE;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     -EDOM);
}

static void test_underdetermined(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_geometry g;
    geometry(&g, 4, false, 78);
    uint64_t paddrs[64];
    uint32_t cls[64];
    const uint32_t idx[] = {5};
    const size_t n = make_classes(&g, idx, 1, 2, 8, paddrs, cls);
    struct llc_evset_hash h;
    assert_int_equal(llc_evset_hash_solve(paddrs, cls, n, LINE, SETS, 4, 0, &h, err, sizeof(err)),
                     -EAGAIN);
    printf("few classes: %s\n", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_hidden_hash),
        cmocka_unit_test(test_modulo_power_of_two_is_linear),
        cmocka_unit_test(test_rejects_modulo3),
        cmocka_unit_test(test_rejects_inconsistent_classes),
        cmocka_unit_test(test_underdetermined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
