/* The per-window classifier: clustering, prediction and the dynamic sample
 * rate together (docs/METHODS.md §10.4-§10.8), and its per-window records and summary. */
#include <errno.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

/* Code addresses with known buckets (see test_signature.c). */
#define IP_B24 0x1ULL
#define IP_B29 0x400000ULL
#define IP_B6 0x401000ULL
#define IP_B8 0x401004ULL

static struct llc_phase_detector *make(bool dynamic_rate)
{
    struct llc_phase_config cfg;
    llc_phase_config_default(&cfg);
    cfg.dynamic_rate = dynamic_rate;
    struct llc_phase_detector *d = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_detector_create(&cfg, &d, err, sizeof err), 0);
    return d;
}

/* A window of n samples: k at ip1, n - k at ip2. */
static struct llc_phase_window feed(struct llc_phase_detector *d, uint64_t ip1, uint64_t ip2,
                                    size_t k, size_t n)
{
    uint64_t ips[400];
    assert_true(n <= 400);
    for (size_t i = 0; i < n; i++)
        ips[i] = i < k ? ip1 : ip2;
    struct llc_phase_window w;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_detector_feed_ips(d, ips, n, &w, err, sizeof err), 0);
    return w;
}

/* A window sampled at the rate the detector asked for: 200 / multiplier. */
static struct llc_phase_window feed_at_rate(struct llc_phase_detector *d, uint64_t ip1,
                                            uint64_t ip2, double share1)
{
    const size_t n = 200 / llc_phase_detector_multiplier(d);
    return feed(d, ip1, ip2, (size_t)(share1 * (double)n + 0.5), n);
}

static void test_defaults_match_spec(void **state)
{
    (void)state;
    struct llc_phase_config cfg;
    llc_phase_config_default(&cfg);
    assert_int_equal(cfg.dim, 32);
    assert_near(cfg.theta, 0.2, 0.0);
    assert_near(cfg.theta_dsr, 0.5, 0.0);
    assert_int_equal(cfg.transition_threshold, 0);
    assert_int_equal(cfg.min_samples, 10);
    assert_int_equal(cfg.max_multiplier, 8);
    assert_true(cfg.dynamic_rate);
}

static void test_rate_doubles_on_stable_phase_and_resets_on_change(void **state)
{
    (void)state;
    struct llc_phase_detector *d = make(true);
    const unsigned want_mult[] = {1, 1, 2, 4, 8, 8};
    const unsigned want_next[] = {1, 2, 4, 8, 8, 8};
    for (int t = 0; t < 6; t++) {
        const struct llc_phase_window w = feed_at_rate(d, IP_B24, IP_B29, 0.5);
        assert_int_equal(w.window, t);
        assert_int_equal(w.phase, 0);
        assert_int_equal(w.samples, 200 / want_mult[t]);
        assert_int_equal(w.multiplier, want_mult[t]);
        assert_int_equal(w.next_multiplier, want_next[t]);
        assert_int_equal(w.predicted, 0);
    }
    assert_int_equal(llc_phase_detector_multiplier(d), 8);

    /* The code changes: at rate 1/8 it matches nothing, so UNCLASSIFIED and
     * back to full rate. */
    struct llc_phase_window w = feed_at_rate(d, IP_B6, IP_B8, 0.5);
    assert_int_equal(w.multiplier, 8);
    assert_int_equal(w.samples, 25);
    assert_int_equal(w.phase, LLC_PHASE_UNCLASSIFIED);
    assert_false(w.new_cluster);
    assert_int_equal(w.next_multiplier, 1);
    assert_int_equal(llc_phase_lf_count(llc_phase_detector_clusters(d)), 1);

    /* Full rate again: the new code founds phase 1. */
    w = feed_at_rate(d, IP_B6, IP_B8, 0.5);
    assert_int_equal(w.multiplier, 1);
    assert_int_equal(w.phase, 1);
    assert_true(w.new_cluster);
    assert_int_equal(w.next_multiplier, 1);
    w = feed_at_rate(d, IP_B6, IP_B8, 0.5);
    assert_int_equal(w.phase, 1);
    assert_int_equal(w.next_multiplier, 2);
    llc_phase_detector_destroy(d);
}

static void test_low_rate_windows_only_match(void **state)
{
    (void)state;
    struct llc_phase_detector *d = make(true);
    for (int t = 0; t < 3; t++)
        feed_at_rate(d, IP_B24, IP_B29, 0.5);
    assert_int_equal(llc_phase_detector_multiplier(d), 4);
    const struct llc_phase_lf *lf = llc_phase_detector_clusters(d);
    const double before = llc_phase_lf_centroid(lf, 0)[24];
    const uint64_t members = llc_phase_lf_members(lf, 0);

    /* d~ = 0.3: a new cluster at full rate, but within theta_dsr = 0.5. */
    struct llc_phase_window w = feed(d, IP_B24, IP_B29, 40, 50);
    assert_int_equal(w.multiplier, 4);
    assert_near(w.distance, 0.3, 1e-12);
    assert_int_equal(w.phase, 0);
    assert_false(w.new_cluster);
    assert_int_equal(llc_phase_lf_count(lf), 1);
    assert_int_equal(llc_phase_lf_members(lf, 0), members);
    assert_near(llc_phase_lf_centroid(lf, 0)[24], before, 0.0);
    llc_phase_detector_destroy(d);
}

static void test_too_few_samples_is_unclassified(void **state)
{
    (void)state;
    struct llc_phase_detector *d = make(true);
    for (int t = 0; t < 3; t++)
        feed_at_rate(d, IP_B24, IP_B29, 0.5);
    struct llc_phase_window w = feed(d, IP_B24, IP_B29, 5, 9);
    assert_int_equal(w.samples, 9);
    assert_int_equal(w.phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(w.cluster, -1);
    assert_near(w.distance, -1.0, 0.0);
    assert_int_equal(w.next_multiplier, 1);
    w = feed(d, 0, 0, 0, 0);
    assert_int_equal(w.phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(llc_phase_lf_count(llc_phase_detector_clusters(d)), 1);
    llc_phase_detector_destroy(d);
}

static void test_static_rate_never_changes(void **state)
{
    (void)state;
    struct llc_phase_detector *d = make(false);
    for (int t = 0; t < 10; t++) {
        const struct llc_phase_window w = feed(d, IP_B24, IP_B29, 100, 200);
        assert_int_equal(w.multiplier, 1);
        assert_int_equal(w.next_multiplier, 1);
    }
    llc_phase_detector_destroy(d);
}

static void test_summary_and_records(void **state)
{
    (void)state;
    struct llc_phase_detector *d = make(false);
    /* A x4, B x4, A x4, then one near-empty window. */
    for (int t = 0; t < 12; t++) {
        if (t >= 4 && t < 8)
            feed(d, IP_B6, IP_B8, 100, 200);
        else
            feed(d, IP_B24, IP_B29, 100, 200);
    }
    feed(d, IP_B24, IP_B29, 1, 3);

    size_t n = 0;
    const struct llc_phase_window *ws = llc_phase_detector_windows(d, &n);
    assert_int_equal(n, 13);
    assert_int_equal(ws[5].phase, 1);
    assert_int_equal(ws[8].phase, 0);
    assert_false(ws[8].new_cluster);
    assert_int_equal(ws[12].phase, LLC_PHASE_UNCLASSIFIED);

    struct llc_phase_summary s;
    llc_phase_detector_summary(d, &s);
    assert_int_equal(s.windows, 13);
    assert_int_equal(s.samples, 12 * 200 + 3);
    assert_int_equal(s.phases, 2);
    assert_int_equal(s.clusters, 2);
    assert_int_equal(s.unclassified, 1);
    assert_near(s.unclassified_share, 1.0 / 13, 1e-12);
    assert_int_equal(s.low_rate, 0);
    assert_near(s.mean_rate, 1.0, 0.0);
    assert_int_equal(s.phase_changes, 3);
    /* Wrong only at the three changes, which were never seen before. */
    assert_int_equal(s.predictions, 12);
    assert_int_equal(s.predictions_correct, 9);
    assert_near(s.prediction_accuracy, 0.75, 1e-12);

    uint64_t counts[4] = {99, 99, 99, 99};
    assert_int_equal(llc_phase_detector_phase_counts(d, counts, 4), 2);
    assert_int_equal(counts[0], 8);
    assert_int_equal(counts[1], 4);
    assert_int_equal(counts[2], 99); /* only the phases are written */
    assert_int_equal(llc_phase_detector_phase_counts(d, counts, 1), 2);
    llc_phase_detector_destroy(d);
}

static void test_dense_vectors(void **state)
{
    (void)state;
    struct llc_phase_config cfg;
    llc_phase_config_default(&cfg);
    cfg.dim = 6;
    cfg.dynamic_rate = false;
    struct llc_phase_detector *d = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_detector_create(&cfg, &d, err, sizeof err), 0);

    /* Basic-block vectors with instruction counts as weights. */
    const double bbv_a[6] = {5000, 3000, 2000, 0, 0, 0};
    const double bbv_a2[6] = {10000, 6500, 3500, 0, 0, 0};
    const double bbv_b[6] = {0, 0, 100, 4000, 4000, 1900};
    const double zero[6] = {0};
    const double bad[6] = {1, -1, 0, 0, 0, 0};
    struct llc_phase_window w;
    assert_int_equal(llc_phase_detector_feed_dense(d, bbv_a, 6, 10000, &w, err, sizeof err), 0);
    assert_int_equal(w.phase, 0);
    assert_int_equal(llc_phase_detector_feed_dense(d, bbv_a2, 6, 20000, &w, err, sizeof err), 0);
    assert_int_equal(w.phase, 0);
    assert_near(w.distance, 0.025, 1e-12); /* scale-free: normalised first */
    assert_int_equal(llc_phase_detector_feed_dense(d, bbv_b, 6, 10000, &w, err, sizeof err), 0);
    assert_int_equal(w.phase, 1);
    assert_int_equal(llc_phase_detector_feed_dense(d, zero, 6, 10000, &w, err, sizeof err), 0);
    assert_int_equal(w.phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(llc_phase_detector_feed_dense(d, bbv_a, 6, 9, &w, err, sizeof err), 0);
    assert_int_equal(w.phase, LLC_PHASE_UNCLASSIFIED);

    assert_int_equal(llc_phase_detector_feed_dense(d, bad, 6, 100, &w, err, sizeof err), -EINVAL);
    assert_int_equal(llc_phase_detector_feed_dense(d, bbv_a, 5, 100, &w, err, sizeof err), -EINVAL);
    const uint64_t ips[20] = {0};
    assert_int_equal(llc_phase_detector_feed_ips(d, ips, 20, &w, err, sizeof err), -EINVAL);
    size_t n;
    llc_phase_detector_windows(d, &n);
    assert_int_equal(n, 5); /* rejected windows leave no record */
    llc_phase_detector_destroy(d);
}

static void test_bad_config(void **state)
{
    (void)state;
    struct llc_phase_config cfg;
    llc_phase_config_default(&cfg);
    cfg.max_multiplier = 6;
    struct llc_phase_detector *d = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_phase_detector_create(&cfg, &d, err, sizeof err), -EINVAL);
    assert_null(d);
    llc_phase_config_default(&cfg);
    cfg.theta = 1.5;
    assert_int_equal(llc_phase_detector_create(&cfg, &d, err, sizeof err), -EINVAL);
    assert_null(d);
    assert_true(strlen(err) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_match_spec),
        cmocka_unit_test(test_rate_doubles_on_stable_phase_and_resets_on_change),
        cmocka_unit_test(test_low_rate_windows_only_match),
        cmocka_unit_test(test_too_few_samples_is_unclassified),
        cmocka_unit_test(test_static_rate_never_changes),
        cmocka_unit_test(test_summary_and_records),
        cmocka_unit_test(test_dense_vectors),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
