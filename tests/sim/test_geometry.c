/* Slice hashes and set indices on hand-computed addresses, presets, the
 * random hidden hash, and the page allocator (uniqueness, seeding). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_test_util.h"

static struct llc_sim_loc locate(const struct llc_sim_config *c, uint64_t paddr)
{
    struct llc_sim_loc loc;
    llc_sim_geometry_locate(&c->llc, paddr, &loc);
    return loc;
}

static void test_intel8_hash(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_config c;
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_geometry_bytes(&c.llc), 8u << 20);
    assert_int_equal(c.l2_sets * c.l2_ways * 64, 256u << 10);
    assert_int_equal(c.inclusion, LLC_SIM_INCLUSIVE);
    /* bit 6 is in o0 only: slice 1, index 1. */
    struct llc_sim_loc l = locate(&c, 0x40);
    assert_int_equal(l.slice, 1);
    assert_int_equal(l.index, 1);
    assert_int_equal(l.set, 2048 + 1);
    /* bit 7 in o1 only: slice 2. */
    assert_int_equal(locate(&c, 0x80).slice, 2);
    /* bit 17 in both: slice 3; it is index bit 11, beyond 2048 sets: index 0. */
    l = locate(&c, 1ULL << 17);
    assert_int_equal(l.slice, 3);
    assert_int_equal(l.index, 0);
    assert_int_equal(l.set, 3 * 2048);
    assert_int_equal(l.tag, 1);
    /* bit 8 in neither; bits 6 and 10 (both o0) cancel: index 0x11, slice 0. */
    l = locate(&c, 0x440);
    assert_int_equal(l.slice, 0);
    assert_int_equal(l.index, 0x11);
    /* bit 37 in o1 only, bit 36 in o0 only. */
    assert_int_equal(locate(&c, 1ULL << 37).slice, 2);
    assert_int_equal(locate(&c, (1ULL << 36) | (1ULL << 37)).slice, 3);
}

static void test_amd32_hash(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_config c;
    assert_int_equal(llc_sim_preset("amd32", &c, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_geometry_bytes(&c.llc), 32u << 20);
    assert_int_equal(c.l2_sets * c.l2_ways * 64, 1u << 20);
    assert_int_equal(c.inclusion, LLC_SIM_EXCLUSIVE);
    /* bit 12: mask 0 -> slice 1; index (4096 >> 6) = 64. */
    struct llc_sim_loc l = locate(&c, 1ULL << 12);
    assert_int_equal(l.slice, 1);
    assert_int_equal(l.set, 4096 + 64);
    /* bit 8: mask 2 -> slice 4; bit 14 (mask 2) too -> cancels. */
    assert_int_equal(locate(&c, 1ULL << 8).slice, 4);
    assert_int_equal(locate(&c, (1ULL << 8) | (1ULL << 14)).slice, 0);
    /* bit 19: 19 = 13 + 6 -> mask 1 -> slice 2; bit 18 = 12 + 6 -> mask 0. */
    assert_int_equal(locate(&c, 1ULL << 19).slice, 2);
    assert_int_equal(locate(&c, (1ULL << 18) | (1ULL << 19)).slice, 3);
    /* Balanced over random line addresses: each slice near 1/8. */
    struct llc_sim *sim = make_sim(&c);
    unsigned count[8] = {0};
    uint64_t x = 88172645463325252ULL;
    for (unsigned i = 0; i < 80000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        struct llc_sim_result r;
        llc_sim_access_phys(sim, 0, x & ((1ULL << 36) - 1), &r);
        assert_int_equal(r.set / 4096, locate(&c, r.paddr).slice);
        count[r.set / 4096]++;
    }
    for (unsigned s = 0; s < 8; s++)
        assert_in_range(count[s], 10000 - 450, 10000 + 450);
    llc_sim_destroy(sim);
}

static void test_modulo_hash(void **state)
{
    (void)state;
    struct llc_sim_config c = tiny_config(1024, 16, LLC_SIM_LRU);
    c.llc.slices = 4;
    const uint64_t paddr = ((5ULL << 10) | 3) << 6;
    struct llc_sim_loc l = locate(&c, paddr);
    assert_int_equal(l.slice, 1);
    assert_int_equal(l.index, 3);
    assert_int_equal(l.set, 1024 + 3);
    assert_int_equal(l.tag, 5);
    c.llc.slices = 3; /* not a power of two: plain modulo */
    assert_int_equal(locate(&c, paddr).slice, 2);
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sim_geometry_check(&c.llc, err, sizeof(err)), 0);
    c.llc.hash = LLC_SIM_HASH_XOR;
    assert_int_equal(llc_sim_geometry_check(&c.llc, err, sizeof(err)), -EINVAL);
    c.llc.slices = 4;
    c.llc.sets_per_slice = 1000;
    assert_int_equal(llc_sim_geometry_check(&c.llc, err, sizeof(err)), -EINVAL);
}

static void test_random_hash(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_config c1, c2, c3;
    llc_sim_preset("intel8", &c1, err, sizeof(err));
    c1.llc.slices = 8;
    c2 = c1;
    c3 = c1;
    assert_int_equal(llc_sim_geometry_random_hash(&c1.llc, 5, 6, 40, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_geometry_random_hash(&c2.llc, 5, 6, 40, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_geometry_random_hash(&c3.llc, 6, 6, 40, err, sizeof(err)), 0);
    assert_memory_equal(c1.llc.slice_masks, c2.llc.slice_masks, sizeof(c1.llc.slice_masks));
    assert_memory_not_equal(c1.llc.slice_masks, c3.llc.slice_masks, sizeof(c1.llc.slice_masks));
    for (int b = 0; b < 3; b++) {
        assert_int_equal(c1.llc.slice_masks[b] & ~(((1ULL << 40) - 1) & ~63ULL), 0);
        assert_true(c1.llc.slice_masks[b] != 0);
    }
    assert_int_equal(c1.llc.slice_masks[3], 0);
    /* Linear independence shows as every slice being reachable. */
    unsigned seen = 0;
    for (uint64_t i = 0; i < 4096; i++)
        seen |= 1u << locate(&c1, i * 0x10040ULL).slice;
    assert_int_equal(seen, 0xffu);
    assert_int_equal(llc_sim_config_check(&c1, err, sizeof(err)), 0);
    c1.llc.slices = 6;
    assert_int_equal(llc_sim_geometry_random_hash(&c1.llc, 5, 6, 40, err, sizeof(err)), -EINVAL);
}

static void test_presets(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_config c;
    const char *const *names = llc_sim_preset_names();
    unsigned n = 0;
    for (; names[n]; n++) {
        assert_int_equal(llc_sim_preset(names[n], &c, err, sizeof(err)), 0);
        assert_int_equal(llc_sim_config_check(&c, err, sizeof(err)), 0);
        struct llc_sim *sim = make_sim(&c);
        assert_true(llc_sim_paddr_bits(sim) >= 46);
        llc_sim_destroy(sim);
    }
    assert_int_equal(n, 2);
    assert_int_equal(llc_sim_preset("zen9", &c, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "zen9"));
    assert_non_null(strstr(err, "intel8, amd32"));
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_pages_unique(void **state)
{
    (void)state;
    enum { FRAMES = 4096 };
    char err[LLC_ERRLEN];
    struct llc_sim_pages *p;
    assert_int_equal(llc_sim_pages_create(FRAMES * 4096ULL, 4096, 3, 9, &p, err, sizeof(err)), 0);
    uint64_t *frames = test_malloc(FRAMES * sizeof(*frames));
    for (unsigned i = 0; i < FRAMES; i++) {
        uint64_t pa;
        /* Interleaved agents, sparse virtual pages, an in-page offset. */
        const unsigned agent = i % 3;
        const uint64_t va = (uint64_t)(i / 3) * 7 * 4096 + 0x123;
        assert_int_equal(llc_sim_pages_translate(p, agent, va, &pa), 0);
        assert_int_equal(pa & 4095, 0x123);
        assert_true(pa < FRAMES * 4096ULL);
        frames[i] = pa >> 12;
        uint64_t again;
        llc_sim_pages_translate(p, agent, va + 8, &again);
        assert_int_equal(again, pa + 8);
    }
    assert_int_equal(llc_sim_pages_used(p), FRAMES);
    qsort(frames, FRAMES, sizeof(*frames), cmp_u64);
    for (unsigned i = 0; i < FRAMES; i++)
        assert_int_equal(frames[i], i); /* a permutation of all frames */
    uint64_t pa;
    assert_int_equal(llc_sim_pages_translate(p, 0, 1ULL << 40, &pa), -ENOMEM);
    assert_int_equal(llc_sim_pages_translate(p, 3, 0, &pa), -EINVAL);
    /* Earlier mappings still answer. */
    assert_int_equal(llc_sim_pages_translate(p, 1, 0, &pa), 0);
    test_free(frames);
    llc_sim_pages_destroy(p);
}

static void test_pages_seeded(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_sim_pages *a, *b, *c;
    const uint64_t mem = 4ULL << 30;
    assert_int_equal(llc_sim_pages_create(mem, 2u << 20, 2, 1, &a, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_pages_create(mem, 2u << 20, 2, 1, &b, err, sizeof(err)), 0);
    assert_int_equal(llc_sim_pages_create(mem, 2u << 20, 2, 2, &c, err, sizeof(err)), 0);
    unsigned differ = 0, low_bits_kept = 0;
    for (uint64_t i = 0; i < 200; i++) {
        uint64_t x, y, z;
        const uint64_t va = i * (2u << 20) + (i * 4160) % (2u << 20);
        llc_sim_pages_translate(a, (unsigned)i & 1, va, &x);
        llc_sim_pages_translate(b, (unsigned)i & 1, va, &y);
        llc_sim_pages_translate(c, (unsigned)i & 1, va, &z);
        assert_int_equal(x, y);
        assert_true(x < mem);
        differ += x != z;
        low_bits_kept += (x & ((2u << 20) - 1)) == (va & ((2u << 20) - 1));
    }
    assert_true(differ > 190);
    assert_int_equal(low_bits_kept, 200);
    struct llc_sim_pages *bad = NULL;
    assert_int_equal(llc_sim_pages_create(mem, 8192, 2, 1, &bad, err, sizeof(err)), -EINVAL);
    assert_null(bad);
    llc_sim_pages_destroy(a);
    llc_sim_pages_destroy(b);
    llc_sim_pages_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intel8_hash),  cmocka_unit_test(test_amd32_hash),
        cmocka_unit_test(test_modulo_hash),  cmocka_unit_test(test_random_hash),
        cmocka_unit_test(test_presets),      cmocka_unit_test(test_pages_unique),
        cmocka_unit_test(test_pages_seeded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
