/* Next-phase predictors (docs/METHODS.md §10.7) on hand-made phase sequences. */
#include <errno.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

enum { A = 0, B = 1, C = 2 };

static struct llc_phase_predictor *make(enum llc_phase_predictor_kind kind, unsigned conf_max)
{
    struct llc_phase_predictor_config cfg;
    llc_phase_predictor_config_default(&cfg);
    cfg.kind = kind;
    if (conf_max)
        cfg.confidence_max = conf_max;
    struct llc_phase_predictor *p = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_predictor_create(&cfg, &p, err, sizeof err), 0);
    return p;
}

static struct llc_phase_prediction step(struct llc_phase_predictor *p, int phase)
{
    llc_phase_predictor_update(p, phase);
    return llc_phase_predictor_predict(p);
}

static void test_defaults_match_spec(void **state)
{
    (void)state;
    struct llc_phase_predictor_config cfg;
    llc_phase_predictor_config_default(&cfg);
    assert_int_equal(cfg.kind, LLC_PHASE_PREDICT_RUN_LENGTH);
    assert_int_equal(cfg.table_size, 256);
    assert_int_equal(cfg.pattern_length, 2);
    assert_int_equal(cfg.confidence_threshold, 1);
    assert_int_equal(cfg.confidence_max, 100);
    assert_int_equal(cfg.history, 20);
}

static void test_empty_predicts_unclassified(void **state)
{
    (void)state;
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_RUN_LENGTH, 0);
    const struct llc_phase_prediction pr = llc_phase_predictor_predict(p);
    assert_int_equal(pr.phase, LLC_PHASE_UNCLASSIFIED);
    assert_int_equal(pr.confidence, 0);
    llc_phase_predictor_destroy(p);
}

static void test_last_value_confidence(void **state)
{
    (void)state;
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_LAST_VALUE, 0);
    for (unsigned i = 0; i < 5; i++) {
        const struct llc_phase_prediction pr = step(p, A);
        assert_int_equal(pr.phase, A);
        assert_int_equal(pr.confidence, i); /* grows while A stays */
    }
    struct llc_phase_prediction pr = step(p, B);
    assert_int_equal(pr.phase, B);
    assert_int_equal(pr.confidence, 0); /* B never stayed */
    pr = step(p, A);
    assert_int_equal(pr.phase, A);
    assert_int_equal(pr.confidence, 3); /* 4, less one for leaving */
    llc_phase_predictor_destroy(p);
}

static void test_run_length_learns_a3_then_b(void **state)
{
    (void)state;
    struct llc_phase_predictor *rl = make(LLC_PHASE_PREDICT_RUN_LENGTH, 0);
    struct llc_phase_predictor *lv = make(LLC_PHASE_PREDICT_LAST_VALUE, 0);
    const int cycle[] = {A, A, A, B};
    /* Cycle 2 creates the entry (pattern (A,3)(B,1) -> B), cycle 3 confirms it. */
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++) {
            step(rl, cycle[i]);
            step(lv, cycle[i]);
        }
    struct llc_phase_prediction pr = step(rl, A);
    assert_int_equal(pr.phase, A); /* mid-run: the last-value fallback */
    pr = step(rl, A);
    assert_int_equal(pr.phase, A);
    pr = step(rl, A);
    assert_int_equal(pr.phase, B); /* "after 3 windows of A comes B" */
    assert_true(pr.confidence >= 1);
    assert_int_equal(step(lv, A).phase, A);
    assert_int_equal(step(lv, A).phase, A);
    assert_int_equal(step(lv, A).phase, A); /* last value cannot see it coming */

    pr = step(rl, B);
    assert_int_equal(pr.phase, A); /* and after that B, A again */
    assert_true(pr.confidence >= 1);
    llc_phase_predictor_destroy(rl);
    llc_phase_predictor_destroy(lv);
}

static void test_run_length_falls_back_to_last_value(void **state)
{
    (void)state;
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_RUN_LENGTH, 0);
    const int cycle[] = {A, A, A, B};
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++)
            step(p, cycle[i]);
    /* An unseen pattern: (C,1)(B,1). */
    struct llc_phase_prediction pr = step(p, C);
    assert_int_equal(pr.phase, C);
    assert_int_equal(pr.confidence, 0);
    /* A run longer than any learned one: (A,4)(C,1) is unknown. */
    for (int i = 0; i < 4; i++)
        pr = step(p, A);
    assert_int_equal(pr.phase, A);
    llc_phase_predictor_destroy(p);
}

static void test_wrong_prediction_retrains(void **state)
{
    (void)state;
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_RUN_LENGTH, 0);
    /* Learn (B,1)(A,2) -> C twice (created, then confidence 1). */
    const int seq[] = {A, A, B, A, A, C, B, A, A, C, B, A, A};
    struct llc_phase_prediction pr = {0};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        pr = step(p, seq[i]);
    assert_int_equal(pr.phase, C);
    assert_int_equal(pr.confidence, 1);
    /* This time B comes: the entry's confidence drops to 0, it now says B. */
    step(p, B);
    pr = step(p, A);
    pr = step(p, A);
    assert_int_equal(pr.phase, A); /* confidence 0 < threshold: last value */
    /* Confirming B brings it back above the threshold, predicting B. */
    step(p, B);
    step(p, A);
    pr = step(p, A);
    assert_int_equal(pr.phase, B);
    assert_int_equal(pr.confidence, 1);
    llc_phase_predictor_destroy(p);
}

static void test_confidence_saturates(void **state)
{
    (void)state;
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_RUN_LENGTH, 3);
    struct llc_phase_prediction pr = {0};
    for (int c = 0; c < 10; c++) {
        step(p, A);
        pr = step(p, A);
        assert_true(pr.confidence <= 3);
        step(p, B);
    }
    step(p, A);
    pr = step(p, A);
    assert_int_equal(pr.phase, B);
    assert_int_equal(pr.confidence, 3);
    llc_phase_predictor_destroy(p);
}

static void test_long_history_is_bounded(void **state)
{
    (void)state;
    /* Many short runs: the record buffer must wrap, not overflow. */
    struct llc_phase_predictor *p = make(LLC_PHASE_PREDICT_RUN_LENGTH, 0);
    struct llc_phase_prediction pr = {0};
    for (int i = 0; i < 1000; i++)
        pr = step(p, i % 7);
    assert_int_equal(pr.phase, 6); /* last was 999 % 7 = 5, and 6 always followed 5 */
    assert_true(pr.confidence >= 1);
    llc_phase_predictor_destroy(p);
}

static void test_bad_config(void **state)
{
    (void)state;
    struct llc_phase_predictor_config cfg;
    llc_phase_predictor_config_default(&cfg);
    cfg.history = 1;
    struct llc_phase_predictor *p = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_predictor_create(&cfg, &p, err, sizeof err), -EINVAL);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_match_spec),
        cmocka_unit_test(test_empty_predicts_unclassified),
        cmocka_unit_test(test_last_value_confidence),
        cmocka_unit_test(test_run_length_learns_a3_then_b),
        cmocka_unit_test(test_run_length_falls_back_to_last_value),
        cmocka_unit_test(test_wrong_prediction_retrains),
        cmocka_unit_test(test_confidence_saturates),
        cmocka_unit_test(test_long_history_is_bounded),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
