/* Workload spec parsing: every kind accepted with its keys, every kind of
 * mistake rejected with a message that names it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/workload.h"

static void good_specs(void **state)
{
    (void)state;
    static const char *const good[] = {
        "uniform:size=64M",
        "uniform:size=4096",
        "uniform:size=1K,write=0.3",
        "stream:size=256M,stride=64",
        "stream:size=256M",
        "stream:write=1,size=1M,stride=4K",
        "zipf:size=16M,alpha=0.99",
        "zipf:size=16M,alpha=1",
        "hotsets:size=8M,frac=0.1,weight=0.9",
        "hotsets:size=8M,frac=1,weight=0",
        "gaussian:size=16M,cv=0.3",
        "gaussian:size=16M,cv=0,write=0.5",
        "phased:uniform:size=1M@2e6;zipf:size=32M,alpha=0.8@1e6",
        "phased:stream:size=1M@1",
        "phased:hotsets:size=8M,frac=0.1,weight=0.9@1000;gaussian:size=8M,cv=0.2@1000",
    };
    for (size_t i = 0; i < LLC_ARRAY_LEN(good); i++) {
        char err[LLC_ERRLEN] = "";
        const int rc = llc_workload_check(good[i], err, sizeof(err));
        if (rc != 0)
            fail_msg("'%s' rejected: %s", good[i], err);
    }
}

static void bad_specs(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        const char *needle; /* the message must name the problem */
    } bad[] = {
        {"", "empty"},
        {"unform:size=1M", "unknown workload kind 'unform'"},
        {"uniform", "needs parameters"},
        {"uniform:", "needs parameters"},
        {"uniform:sz=1M", "unknown key 'sz'"},
        {"uniform:size", "not key=value"},
        {"uniform:size=1Q", "not a size"},
        {"uniform:size=-1M", "not a size"},
        {"uniform:size=0", "out of range"},
        {"uniform:size=1T", "out of range"},
        {"uniform:size=32", "at least one 64-byte line"},
        {"uniform:size=1M,size=2M", "given twice"},
        {"uniform:size=1M,", "stray comma"},
        {"uniform:size=1M,,write=0.1", "stray comma"},
        {"uniform:size=1M,write=1.5", "out of range"},
        {"uniform:size=1M,write=abc", "not a number"},
        {"uniform:size=1M,alpha=1", "unknown key 'alpha'"},
        {"stream:size=1M,stride=2M", "stride must be smaller"},
        {"zipf:size=1M", "missing alpha"},
        {"zipf:size=1M,alpha=0", "out of range"},
        {"zipf:size=1M,alpha=nan", "not a number"},
        {"zipf:alpha=1", "missing size"},
        {"hotsets:size=8M,frac=0.1", "missing weight"},
        {"hotsets:size=8M,frac=0,weight=0.5", "out of range"},
        {"hotsets:size=2G,frac=0.1,weight=0.5", "1 GiB limit"},
        {"gaussian:size=8M,cv=0.8", "out of range"},
        {"gaussian:size=8M", "missing cv"},
        {"phased:", "needs phases"},
        {"phased", "needs phases"},
        {"phased:uniform:size=1M", "no '@length'"},
        {"phased:uniform:size=1M@0", "not a positive whole number"},
        {"phased:uniform:size=1M@1.5", "not a positive whole number"},
        {"phased:uniform:size=1M@", "bad length"},
        {"phased:uniform:size=1M@10;zipf:size=1M@10", "phase 2: zipf: missing alpha"},
        {"phased:uniform:size=1M@10;;", "phase 2"},
        {"phased:phased:uniform:size=1M@5@5", "cannot be phased"},
        {"phased:uniform:size=1M@10;gaussian:size=8M,cv=0.1@10", "cannot mix"},
    };
    for (size_t i = 0; i < LLC_ARRAY_LEN(bad); i++) {
        char err[LLC_ERRLEN] = "";
        const int rc = llc_workload_check(bad[i].spec, err, sizeof(err));
        if (rc != -EINVAL)
            fail_msg("'%s' accepted (rc %d)", bad[i].spec, rc);
        if (!strstr(err, bad[i].needle))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].needle);
        if (strchr(err, '\n'))
            fail_msg("'%s': message has a newline", bad[i].spec);
    }
}

/* Creation catches what the spec alone cannot: set-shaped kinds need a
 * geometry, and a footprint of at least one line per set. */
static void create_errors(void **state)
{
    (void)state;
    char err[LLC_ERRLEN] = "";
    struct llc_workload *w = NULL;
    assert_int_equal(llc_workload_create("gaussian:size=16M,cv=0.3", NULL, 1, &w, err, sizeof(err)),
                     -EINVAL);
    assert_null(w);
    assert_non_null(strstr(err, "geometry"));

    struct llc_sim_config c;
    assert_int_equal(llc_sim_preset("intel8", &c, err, sizeof(err)), 0);
    const struct llc_workload_target t = {.geometry = &c.llc, .phys_base = (uint64_t)1 << 40};
    assert_int_equal(
        llc_workload_create("hotsets:size=64K,frac=0.1,weight=0.9", &t, 1, &w, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "one line in each of the 8192 LLC sets"));
    assert_int_equal(llc_workload_create("bogus:size=1M", &t, 1, &w, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "unknown workload kind"));

    assert_int_equal(llc_workload_create("phased:uniform:size=1M@10;zipf:size=2M,alpha=1@5", &t, 1,
                                         &w, err, sizeof(err)),
                     0);
    assert_false(llc_workload_is_physical(w));
    assert_int_equal(llc_workload_footprint(w), 3u << 20);
    assert_int_equal(llc_workload_extent(w), LLC_WORKLOAD_PHASE_GAP + (2u << 20));
    llc_workload_destroy(w);
}

static void help_lists_every_kind(void **state)
{
    (void)state;
    const char *h = llc_workload_help();
    static const char *const kinds[] = {
        "uniform:", "stream:", "zipf:", "hotsets:", "gaussian:", "phased:", "write="};
    for (size_t i = 0; i < LLC_ARRAY_LEN(kinds); i++)
        assert_non_null(strstr(h, kinds[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_specs),
        cmocka_unit_test(bad_specs),
        cmocka_unit_test(create_errors),
        cmocka_unit_test(help_lists_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
