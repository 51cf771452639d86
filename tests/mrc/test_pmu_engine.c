/* The PMU sampler's reuse bookkeeping, driven by a fake event source that
 * replays a reference stream behind the same interface as the hardware:
 * samples at the requested gaps, watchpoints on whole lines, the count
 * conventions of docs/METHODS.md §6.3, and a watch and a sample firing on the same
 * reference in both orders. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "mrc/pmu.h"

#define MAX_SLOTS 4096

struct fake {
    const uint64_t *addr;
    size_t n, pos;        /* next reference to replay */
    uint64_t next_sample; /* 1-based count of the next sampled reference */
    uint64_t last_sample;
    bool armed[MAX_SLOTS];
    uint64_t line[MAX_SLOTS];
    unsigned n_slots;
    /* A reference that is both watched and sampled yields two events. */
    struct llc_pmu_ev queued;
    bool have_queued;
    unsigned both;   /* how many times that happened */
    size_t *sampled; /* positions of the samples, for the expectation */
    size_t n_sampled;
    unsigned arm_calls, disarm_calls;
};

static int f_next(void *ctx, struct llc_pmu_ev *ev, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct fake *f = ctx;
    if (f->have_queued) {
        *ev = f->queued;
        f->have_queued = false;
        return 1;
    }
    while (f->pos < f->n) {
        const size_t j = f->pos++;
        const uint64_t count = j + 1, line = f->addr[j] >> 6;
        unsigned hit = f->n_slots;
        for (unsigned k = 0; k < f->n_slots; k++)
            if (f->armed[k] && f->line[k] == line)
                hit = k;
        const struct llc_pmu_ev watch = {
            .kind = LLC_PMU_EV_WATCH, .addr = f->addr[j], .slot = hit, .count = count - 1};
        if (count == f->next_sample) {
            f->sampled[f->n_sampled++] = j;
            f->last_sample = count;
            const struct llc_pmu_ev sample = {
                .kind = LLC_PMU_EV_SAMPLE, .addr = f->addr[j], .count = count};
            if (hit < f->n_slots) {
                /* Alternate the order in which the two events arrive. */
                const bool watch_first = f->both++ % 2;
                *ev = watch_first ? watch : sample;
                f->queued = watch_first ? sample : watch;
                f->have_queued = true;
                return 1;
            }
            *ev = sample;
            return 1;
        }
        if (hit < f->n_slots) {
            *ev = watch;
            return 1;
        }
    }
    return 0;
}

static int f_arm(void *ctx, unsigned slot, uint64_t addr, char *err, size_t errlen)
{
    struct fake *f = ctx;
    if (slot >= f->n_slots || f->armed[slot])
        return llc_errf(err, errlen, -EBUSY, "fake: slot %u busy", slot);
    f->armed[slot] = true;
    f->line[slot] = addr >> 6;
    f->arm_calls++;
    return 0;
}

static int f_disarm(void *ctx, unsigned slot, char *err, size_t errlen)
{
    struct fake *f = ctx;
    if (slot >= f->n_slots || !f->armed[slot])
        return llc_errf(err, errlen, -EINVAL, "fake: slot %u not armed", slot);
    f->armed[slot] = false;
    f->disarm_calls++;
    return 0;
}

static int f_set_gap(void *ctx, uint64_t gap, char *err, size_t errlen)
{
    struct fake *f = ctx;
    if (gap < 1)
        return llc_errf(err, errlen, -EINVAL, "fake: gap 0");
    f->next_sample = f->last_sample + gap;
    return 0;
}

static struct llc_pmu_source source(struct fake *f)
{
    return (struct llc_pmu_source){.ctx = f,
                                   .n_slots = f->n_slots,
                                   .n_streams = 1,
                                   .next = f_next,
                                   .arm = f_arm,
                                   .disarm = f_disarm,
                                   .set_gap = f_set_gap};
}

static void fake_init(struct fake *f, const uint64_t *addr, size_t n, unsigned slots)
{
    memset(f, 0, sizeof *f);
    f->addr = addr;
    f->n = n;
    f->n_slots = slots;
    f->sampled = calloc(n + 1, sizeof *f->sampled);
    assert_non_null(f->sampled);
}

/* A B C C A, every reference sampled (addresses differ within a line):
 * the first A and C resolve with 3 and 0, B, the second C and the last A
 * are still watched at the end (dangling). Both C and the last A are a
 * sample and a watch hit at once, once in each order. */
static void test_known_distances(void **state)
{
    (void)state;
    const uint64_t s[] = {0x1000, 0x2008, 0x3010, 0x3030, 0x1038};
    struct fake f;
    fake_init(&f, s, 5, 8);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    struct llc_mrc_pmu_stats st;
    char err[LLC_ERRLEN] = "";
    const struct llc_pmu_source src = source(&f);
    assert_int_equal(llc_pmu_engine_run(&src, 1.0, 7, h, &st, err, sizeof err), 0);
    assert_int_equal(st.samples, 5);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.refs, 5);
    assert_true(llc_statmodel_hist_count(h, llc_statmodel_bucket_of(3)) == 1);
    assert_true(llc_statmodel_hist_count(h, llc_statmodel_bucket_of(0)) == 1);
    assert_true(llc_statmodel_hist_finite(h) == 2);
    assert_true(llc_statmodel_hist_dangling(h) == 3);
    assert_true(f.both == 2);
    llc_statmodel_hist_destroy(h);
    free(f.sampled);
}

static uint64_t xs(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A mixed stream at rate 0.05 with enough watchpoints: the histogram is
 * exactly the forward reuse distances of the references the source
 * sampled, computed here by brute force. */
static void test_matches_forward_distances(void **state)
{
    (void)state;
    const size_t n = 60000;
    uint64_t *s = malloc(n * sizeof *s);
    assert_non_null(s);
    uint64_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = xs(&x);
        /* hot 32 lines, medium 2000 lines, a stream */
        const uint64_t line = r % 3 == 0   ? r % 32
                              : r % 3 == 1 ? 100 + (r >> 8) % 2000
                                           : 1000000 + i;
        s[i] = line * 64 + (r >> 40) % 64;
    }
    struct fake f;
    fake_init(&f, s, n, MAX_SLOTS);
    struct llc_statmodel_hist *h = NULL, *want = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    assert_int_equal(llc_statmodel_hist_create(&want, NULL, 0), 0);
    struct llc_mrc_pmu_stats st;
    char err[LLC_ERRLEN] = "";
    const struct llc_pmu_source src = source(&f);
    assert_int_equal(llc_pmu_engine_run(&src, 0.05, 3, h, &st, err, sizeof err), 0);
    assert_true(f.n_sampled > 2500 && f.n_sampled < 3500);
    assert_int_equal(st.samples, f.n_sampled);
    assert_int_equal(st.dropped, 0);
    for (size_t k = 0; k < f.n_sampled; k++) {
        const size_t i = f.sampled[k];
        size_t j = i + 1;
        while (j < n && s[j] >> 6 != s[i] >> 6)
            j++;
        if (j < n)
            assert_int_equal(llc_statmodel_hist_add(want, j - i - 1, 1, NULL, 0), 0);
        else
            assert_int_equal(llc_statmodel_hist_add_dangling(want, 1, NULL, 0), 0);
    }
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++)
        assert_true(llc_statmodel_hist_count(h, b) == llc_statmodel_hist_count(want, b));
    assert_true(llc_statmodel_hist_dangling(h) == llc_statmodel_hist_dangling(want));
    assert_true(f.both > 0);
    /* Every watch armed was either resolved by its watchpoint (disarmed),
     * resolved by a sample (kept armed) or is pending at the end. */
    assert_true(f.arm_calls >= f.disarm_calls);
    llc_statmodel_hist_destroy(h);
    llc_statmodel_hist_destroy(want);
    free(f.sampled);
    free(s);
}

/* Two watchpoints (as with hardware debug registers) for a stream of long
 * reuses: samples arriving while both are busy are dropped and counted,
 * and every sample not dropped ends as one distance or one dangling. */
static void test_few_slots_drop(void **state)
{
    (void)state;
    const size_t n = 20000;
    uint64_t *s = malloc(n * sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (i % 5000) * 64; /* every line reused after 4999 references */
    struct fake f;
    fake_init(&f, s, n, 2);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    struct llc_mrc_pmu_stats st;
    char err[LLC_ERRLEN] = "";
    const struct llc_pmu_source src = source(&f);
    assert_int_equal(llc_pmu_engine_run(&src, 0.01, 5, h, &st, err, sizeof err), 0);
    assert_true(st.dropped > 0);
    assert_true(llc_statmodel_hist_total(h) == (double)(st.samples - st.dropped));
    /* The only finite distance in this stream is 4999. */
    assert_true(llc_statmodel_hist_finite(h) ==
                llc_statmodel_hist_count(h, llc_statmodel_bucket_of(4999)));
    assert_true(llc_statmodel_hist_finite(h) > 0);
    llc_statmodel_hist_destroy(h);
    free(f.sampled);
    free(s);
}

static void test_gap(void **state)
{
    (void)state;
    assert_int_equal(llc_pmu_gap(1.0, 0.3), 1);
    assert_int_equal(llc_pmu_gap(0.5, 1.0), 1);
    /* ln(0.25) / ln(0.5) = 2 */
    assert_int_equal(llc_pmu_gap(0.5, 0.25), 3);
    /* mean of the gaps is 1/rate */
    double sum = 0;
    uint64_t x = 99;
    for (int i = 0; i < 100000; i++)
        sum += (double)llc_pmu_gap(1e-3, (double)((xs(&x) >> 11) + 1) * 0x1.0p-53);
    assert_true(sum / 100000 > 990 && sum / 100000 < 1010);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_distances),
        cmocka_unit_test(test_matches_forward_distances),
        cmocka_unit_test(test_few_slots_drop),
        cmocka_unit_test(test_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
