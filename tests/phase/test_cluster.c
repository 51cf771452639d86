/* Leader-follower clustering on hand-made vectors (docs/METHODS.md §10.6). */
#include <errno.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

#define DIM 4

static struct llc_phase_lf *make(double theta, unsigned t_tr, size_t k_max)
{
    const struct llc_phase_lf_config cfg = {
        .dim = DIM, .theta = theta, .transition_threshold = t_tr, .max_clusters = k_max};
    struct llc_phase_lf *lf = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_lf_create(&cfg, &lf, err, sizeof err), 0);
    return lf;
}

static struct llc_phase_match feed(struct llc_phase_lf *lf, double a, double b, double c, double d)
{
    const double v[DIM] = {a, b, c, d};
    struct llc_phase_match m;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_lf_classify(lf, v, &m, err, sizeof err), 0);
    return m;
}

static void test_new_cluster_vs_join(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.2, 0, 0);
    struct llc_phase_match m = feed(lf, 1, 0, 0, 0);
    assert_true(m.created);
    assert_int_equal(m.phase, 0);
    assert_near(m.distance, -1.0, 0.0); /* nothing to compare with */

    m = feed(lf, 0.9, 0.1, 0, 0); /* d~ = 0.1 < 0.2 */
    assert_false(m.created);
    assert_int_equal(m.phase, 0);
    assert_near(m.distance, 0.1, 1e-12);

    m = feed(lf, 0, 1, 0, 0); /* d~ = 0.95 */
    assert_true(m.created);
    assert_int_equal(m.phase, 1);
    assert_int_equal(m.cluster, 1);
    assert_near(m.distance, 0.95, 1e-12);
    assert_int_equal(llc_phase_lf_count(lf), 2);
    assert_int_equal(llc_phase_lf_phases(lf), 2);
    llc_phase_lf_destroy(lf);
}

static void test_threshold_is_strict(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.25, 0, 0);
    feed(lf, 1, 0, 0, 0);
    const struct llc_phase_match m = feed(lf, 0.75, 0.25, 0, 0); /* d~ = 0.25 exactly */
    assert_near(m.distance, 0.25, 0.0);
    assert_true(m.created);
    llc_phase_lf_destroy(lf);
}

static void test_centroid_running_mean(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.3, 0, 0);
    feed(lf, 0.9, 0.1, 0, 0);
    feed(lf, 1.0, 0.0, 0, 0);
    feed(lf, 0.8, 0.2, 0, 0);
    feed(lf, 0.7, 0.1, 0.2, 0);
    assert_int_equal(llc_phase_lf_count(lf), 1);
    assert_int_equal(llc_phase_lf_members(lf, 0), 4);
    /* Arithmetic mean of the members, not the lib's 1/n_j overwrite. */
    const double *c = llc_phase_lf_centroid(lf, 0);
    assert_near(c[0], 0.85, 1e-12);
    assert_near(c[1], 0.1, 1e-12);
    assert_near(c[2], 0.05, 1e-12);
    assert_near(c[3], 0.0, 1e-12);
    assert_null(llc_phase_lf_centroid(lf, 1));
    llc_phase_lf_destroy(lf);
}

static void test_ties_go_to_lowest_id(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.6, 0, 0);
    feed(lf, 1, 0, 0, 0);
    feed(lf, 0, 1, 0, 0);
    const struct llc_phase_match m = feed(lf, 0.5, 0.5, 0, 0); /* d~ = 0.5 to both */
    assert_int_equal(m.cluster, 0);
    assert_int_equal(m.phase, 0);
    assert_near(llc_phase_lf_centroid(lf, 0)[0], 0.75, 1e-12);
    assert_near(llc_phase_lf_centroid(lf, 1)[1], 1.0, 0.0);
    llc_phase_lf_destroy(lf);
}

static void test_transition_threshold(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.2, 3, 0);
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, LLC_PHASE_TRANSITION); /* A: 1 member */
    assert_int_equal(feed(lf, 0, 1, 0, 0).phase, LLC_PHASE_TRANSITION); /* B: 1 */
    assert_int_equal(feed(lf, 0, 1, 0, 0).phase, LLC_PHASE_TRANSITION); /* B: 2 */
    /* Ids go in order of becoming stable, not of creation. */
    assert_int_equal(feed(lf, 0, 1, 0, 0).phase, 0);                    /* B: 3 */
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, LLC_PHASE_TRANSITION); /* A: 2 */
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, 1);                    /* A: 3 */
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, 1);
    assert_int_equal(llc_phase_lf_phase(lf, 0), 1);
    assert_int_equal(llc_phase_lf_phase(lf, 1), 0);
    assert_int_equal(llc_phase_lf_phases(lf), 2);
    llc_phase_lf_destroy(lf);

    /* 0 and 1 both mean "at once". */
    lf = make(0.2, 1, 0);
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, 0);
    llc_phase_lf_destroy(lf);
}

static void test_bounded_evicts_least_recently_matched(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.2, 0, 2);
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, 0); /* A, slot 0 */
    assert_int_equal(feed(lf, 0, 1, 0, 0).phase, 1); /* B, slot 1 */
    assert_int_equal(feed(lf, 1, 0, 0, 0).phase, 0); /* A matched again: B is LRU */

    struct llc_phase_match m = feed(lf, 0, 0, 1, 0); /* C replaces B */
    assert_true(m.created);
    assert_true(m.evicted);
    assert_int_equal(m.cluster, 1);
    assert_int_equal(m.phase, 2);
    assert_int_equal(llc_phase_lf_count(lf), 2);
    assert_int_equal(llc_phase_lf_members(lf, 1), 1);
    assert_near(llc_phase_lf_centroid(lf, 1)[2], 1.0, 0.0);

    m = feed(lf, 0, 1, 0, 0); /* B returns: A (last used before C) goes */
    assert_true(m.evicted);
    assert_int_equal(m.cluster, 0);
    assert_int_equal(m.phase, 3);
    assert_int_equal(llc_phase_lf_phase(lf, 1), 2);
    llc_phase_lf_destroy(lf);
}

static void test_unbounded_grows(void **state)
{
    (void)state;
    /* Beyond the initial allocation: 20 disjoint one-hot 20-d vectors. */
    const struct llc_phase_lf_config cfg = {.dim = 20, .theta = 0.2};
    struct llc_phase_lf *lf = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_lf_create(&cfg, &lf, err, sizeof err), 0);
    for (int k = 0; k < 20; k++) {
        double v[20] = {0};
        v[k] = 1.0;
        struct llc_phase_match m;
        assert_int_equal(llc_phase_lf_classify(lf, v, &m, err, sizeof err), 0);
        assert_int_equal(m.phase, k);
        assert_false(m.evicted);
    }
    assert_int_equal(llc_phase_lf_count(lf), 20);
    assert_near(llc_phase_lf_centroid(lf, 13)[13], 1.0, 0.0);
    llc_phase_lf_destroy(lf);
}

static void test_match_only_changes_nothing(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = make(0.2, 0, 0);
    feed(lf, 1, 0, 0, 0);
    const double near[DIM] = {0.7, 0.3, 0, 0}; /* d~ 0.3: beyond theta, within 0.5 */
    const double far[DIM] = {0.2, 0.8, 0, 0};  /* d~ 0.8 */
    struct llc_phase_match m;
    assert_int_equal(llc_phase_lf_match(lf, near, 0.5, &m), 0);
    assert_int_equal(m.phase, 0);
    assert_false(m.created);
    assert_int_equal(llc_phase_lf_match(lf, far, 0.5, &m), 0);
    assert_int_equal(m.phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(m.cluster, -1);
    assert_near(m.distance, 0.8, 1e-12);
    assert_int_equal(llc_phase_lf_count(lf), 1);
    assert_int_equal(llc_phase_lf_members(lf, 0), 1);
    assert_near(llc_phase_lf_centroid(lf, 0)[0], 1.0, 0.0);
    llc_phase_lf_destroy(lf);
}

static void test_bad_config(void **state)
{
    (void)state;
    struct llc_phase_lf *lf = NULL;
    char err[LLC_ERRLEN] = "";
    struct llc_phase_lf_config cfg = {.dim = 0, .theta = 0.2};
    assert_int_equal(llc_phase_lf_create(&cfg, &lf, err, sizeof err), -EINVAL);
    assert_null(lf);
    assert_true(strlen(err) > 0);
    cfg = (struct llc_phase_lf_config){.dim = 4, .theta = 0.0};
    assert_int_equal(llc_phase_lf_create(&cfg, &lf, err, sizeof err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_cluster_vs_join),
        cmocka_unit_test(test_threshold_is_strict),
        cmocka_unit_test(test_centroid_running_mean),
        cmocka_unit_test(test_ties_go_to_lowest_id),
        cmocka_unit_test(test_transition_threshold),
        cmocka_unit_test(test_bounded_evicts_least_recently_matched),
        cmocka_unit_test(test_unbounded_grows),
        cmocka_unit_test(test_match_only_changes_nothing),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
