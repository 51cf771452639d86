/* Signature vectors: the documented hash must never change, vectors are
 * normalised, distance is on the [0,1] scale. */
#include <errno.h>

#include "llcprobe/phase.h"
#include "phase_test.h"

/* Expected values computed by an independent implementation of docs/METHODS.md §10.4
 * (SplitMix64 reference: first output from seed 0 is 0xe220a8397b1dcdaf). */
static void test_masks_are_documented(void **state)
{
    (void)state;
    assert_true(llc_phase_hash_mask(0) == 0xd40cea088fc9b042ULL);
    assert_true(llc_phase_hash_mask(1) == 0xc49407031a951edeULL);
    assert_true(llc_phase_hash_mask(2) == 0xe3194eb03de1c19cULL);
    assert_true(llc_phase_hash_mask(3) == 0xa4e71e4ff972d0cdULL);
    assert_true(llc_phase_hash_mask(4) == 0xf147b24ef4e57d29ULL);
}

static void test_buckets_are_stable(void **state)
{
    (void)state;
    static const struct {
        uint64_t ip;
        unsigned bucket;
    } cases[] = {
        {0x0, 0},
        {0x40, 24},
        {0x400000, 23},
        {0x401000, 28},
        {0x401040, 4},
        {0x7f0000001234ULL, 10},
        {UINT64_MAX, 10},
        {0x55555555a0c0ULL, 2},
        /* one 64-byte line, one bucket */
        {0x40103f, 28},
        {0x1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(llc_phase_hash_ip(cases[i].ip), cases[i].bucket);
}

static void test_hash_is_linear_over_gf2(void **state)
{
    (void)state;
    /* Random projection: h(a ^ b) = h(a) ^ h(b). */
    uint64_t x = 0x1234;
    for (int i = 0; i < 200; i++) {
        const uint64_t a = x * 0x9E3779B97F4A7C15ULL, b = (x + 7) * 0xC2B2AE3D27D4EB4FULL;
        assert_int_equal(llc_phase_hash_ip(a ^ b), llc_phase_hash_ip(a) ^ llc_phase_hash_ip(b));
        assert_true(llc_phase_hash_ip(a) < LLC_PHASE_BUCKETS);
        x++;
    }
}

static void test_signature_counts_and_normalises(void **state)
{
    (void)state;
    /* 3 x bucket 24 (line 1), 1 x bucket 23: 0.75 / 0.25. */
    const uint64_t ips[] = {0x40, 0x44, 0x7f, 0x400000};
    double v[LLC_PHASE_BUCKETS];
    assert_int_equal(llc_phase_signature_ips(ips, 4, v), 4);
    double sum = 0.0;
    for (int i = 0; i < LLC_PHASE_BUCKETS; i++)
        sum += v[i];
    assert_near(sum, 1.0, 1e-12);
    assert_near(v[24], 0.75, 1e-12);
    assert_near(v[23], 0.25, 1e-12);

    assert_int_equal(llc_phase_signature_ips(ips, 0, v), 0);
    for (int i = 0; i < LLC_PHASE_BUCKETS; i++)
        assert_near(v[i], 0.0, 0.0);
}

static void test_normalize_dense(void **state)
{
    (void)state;
    double v[5] = {1, 0, 3, 0, 4};
    assert_int_equal(llc_phase_normalize(v, 5), 0);
    assert_near(v[0], 0.125, 1e-12);
    assert_near(v[2], 0.375, 1e-12);
    assert_near(v[4], 0.5, 1e-12);

    double zero[3] = {0, 0, 0};
    assert_int_equal(llc_phase_normalize(zero, 3), -EDOM);
    double neg[2] = {1, -1};
    assert_int_equal(llc_phase_normalize(neg, 2), -EINVAL);
    double nan_v[2] = {1, NAN};
    assert_int_equal(llc_phase_normalize(nan_v, 2), -EINVAL);
}

static void test_distance_scale(void **state)
{
    (void)state;
    const double a[4] = {1, 0, 0, 0}, b[4] = {0, 1, 0, 0}, c[4] = {0.5, 0.5, 0, 0};
    assert_near(llc_phase_distance(a, a, 4), 0.0, 0.0);
    assert_near(llc_phase_distance(a, b, 4), 1.0, 1e-12); /* disjoint = 1 */
    assert_near(llc_phase_distance(a, c, 4), 0.5, 1e-12);
    assert_near(llc_phase_distance(c, a, 4), 0.5, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks_are_documented),
        cmocka_unit_test(test_buckets_are_stable),
        cmocka_unit_test(test_hash_is_linear_over_gf2),
        cmocka_unit_test(test_signature_counts_and_normalises),
        cmocka_unit_test(test_normalize_dense),
        cmocka_unit_test(test_distance_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
