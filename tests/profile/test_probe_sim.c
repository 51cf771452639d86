/* Probe readings of a profile in the simulator (llc_profile_probe_sim):
 * against a streaming co-runner whose foreign insertions are known
 * (every access a new line: Phi(tau) = insertions/s x tau over the whole
 * cache), in the linear regime within the method's 5%; a set-skewed
 * target reads a larger per-set CV than a uniform one (normal build only);
 * a target that fits in its L2 reads no footprint and says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/profile.h"
#include "llcprobe/sim.h"

#define WINDOWS 40

/* A one-phase profile of `windows` windows of `acc` accesses at `rate`
 * accesses per second each, every access an LLC insertion (`ins` of them). */
static void run_probe(const char *spec, double rate, double acc, double ins, struct llc_profile *p)
{
    char err[LLC_ERRLEN];
    struct llc_sim_config cfg;
    assert_int_equal(llc_sim_preset("intel8", &cfg, err, sizeof(err)), 0);
    llc_profile_init(p);
    assert_int_equal(llc_profile_alloc_windows(p, WINDOWS, err, sizeof(err)), 0);
    assert_int_equal(llc_profile_alloc_phases(p, 1, err, sizeof(err)), 0);
    double a[WINDOWS], s[WINDOWS], n[WINDOWS];
    for (size_t k = 0; k < WINDOWS; k++) {
        p->windows.phase_of[k] = 0;
        a[k] = acc;
        s[k] = acc / rate;
        n[k] = ins;
    }
    const struct llc_profile_probe_run run = {
        .workload = spec, .n_windows = WINDOWS, .accesses = a, .seconds = s, .insertions = n};
    struct llc_profile_probe_config pc;
    llc_profile_probe_config_default(&pc);
    const int rc = llc_profile_probe_sim(&cfg, &run, &pc, p, err, sizeof(err));
    if (rc)
        fail_msg("llc_profile_probe_sim: %s", err);
    assert_true(p->probe.ok);
    assert_int_equal(p->probe.n_phases, 1);
}

static void test_streaming_phi(void **state)
{
    (void)state;
    struct llc_profile p;
    const double rate = 5e6; /* accesses (= insertions) per second */
    run_probe("stream:size=1G", rate, 2e5, 2e5, &p);
    const struct llc_profile_probe_phase *e = &p.probe.per_phase[0];
    assert_int_equal(e->n_rates, 3);
    assert_true(fabs(e->rates[2] / e->rates[0] - 10) < 1e-6);
    for (size_t j = 0; j < e->n_rates; j++) {
        const double want = rate * e->tau_s[j];
        const double rel = fabs(e->phi_hat[j] - want) / want;
        printf(
            "rate %.4g/s: tau %.4g s, phi_hat %.1f lines, insertions x tau %.1f, %.1f%%, q_max %.3f\n",
            e->rates[j], e->tau_s[j], e->phi_hat[j], want, 100 * rel, e->q_max[j]);
        assert_true(e->q_max[j] <= LLC_PROFILE_PROBE_Q_LINEAR);
        assert_true(rel <= 0.05);
    }
    /* a stream spreads evenly: the noise-corrected CV is small */
    assert_true(e->cv < 0.15);
    size_t sets = 0;
    for (size_t g = 0; g < LLC_PROFILE_KEYS; g++)
        sets += e->n_sets[g];
    assert_int_equal(sets, 25);
    assert_null(e->note);
    llc_profile_free(&p);
}

static void test_skew_cv(void **state)
{
    (void)state;
    /* Two more runs of the whole path test_streaming_phi takes, for a
     * statistic: four minutes under the sanitizers, which the readings'
     * code gets from test_streaming_phi and the profile CLI tests. */
    const char *sanitized = getenv("LLCPROBE_SANITIZED");
    if (sanitized && strcmp(sanitized, "1") == 0) {
        printf("skip: the per-set CV comparison runs in the normal build only\n");
        skip();
    }
    struct llc_profile u, h;
    run_probe("uniform:size=64M", 5e6, 2e5, 1.8e5, &u);
    run_probe("hotsets:size=64M,frac=0.2,weight=0.6", 5e6, 2e5, 1.8e5, &h);
    const double cu = u.probe.per_phase[0].cv, ch = h.probe.per_phase[0].cv;
    printf("per-set CV: uniform %.3f, hotsets %.3f\n", cu, ch);
    assert_true(cu < 0.15);
    assert_true(ch > cu + 0.3);
    llc_profile_free(&u);
    llc_profile_free(&h);
}

static void test_no_footprint(void **state)
{
    (void)state;
    struct llc_profile p;
    /* 64 KiB: held by the L2, nothing reaches the LLC after warm-up */
    run_probe("uniform:size=64K", 5e6, 1e5, 0, &p);
    const struct llc_profile_probe_phase *e = &p.probe.per_phase[0];
    assert_non_null(e->note);
    for (size_t j = 0; j < e->n_rates; j++)
        assert_true(e->phi_hat[j] < 1);
    llc_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_phi),
        cmocka_unit_test(test_skew_cv),
        cmocka_unit_test(test_no_footprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
