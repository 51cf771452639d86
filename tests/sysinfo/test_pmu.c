/* LLC-miss event choice and libpfm4 encoding under LIBPFM_FORCE_PMU, which
 * makes the encoding testable on machines without that PMU (or any PMU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "llcprobe/sysinfo.h"

/* PERF_TYPE_RAW: core PMU events are raw configs. */
enum { RAW = 4 };

static void forced(const char *pmu, struct llc_pmu_check *out)
{
    setenv("LIBPFM_FORCE_PMU", pmu, 1);
    llc_pmu_check(NULL, false, out);
    unsetenv("LIBPFM_FORCE_PMU");
}

static void expect(const char *pmu, const char *event, uint64_t config)
{
    struct llc_pmu_check c;
    forced(pmu, &c);
    if (!c.pfm_ok || !c.encoded)
        fail_msg("%s: %s %s", pmu, c.pfm_error, c.reason);
    assert_true(c.forced);
    assert_string_equal(c.pmu, pmu);
    assert_string_equal(c.event, event);
    assert_int_equal(c.type, RAW);
    if (c.config != config)
        fail_msg("%s: config 0x%llx, expected 0x%llx", pmu, (unsigned long long)c.config,
                 (unsigned long long)config);
    assert_false(c.open_tried);
    assert_non_null(strstr(c.fstr, "u=1")); /* user mode only */
    assert_non_null(strstr(c.fstr, "k=0"));
}

static void test_table(void **state)
{
    (void)state;
    const char *note = NULL;
    assert_string_equal(llc_pmu_llc_miss_event("skl", &note), "MEM_LOAD_RETIRED:L3_MISS");
    assert_non_null(note);
    assert_string_equal(llc_pmu_llc_miss_event("snb", NULL), "MEM_LOAD_UOPS_MISC_RETIRED:LLC_MISS");
    assert_string_equal(llc_pmu_llc_miss_event("hsw", NULL), "MEM_LOAD_UOPS_RETIRED:L3_MISS");
    assert_null(llc_pmu_llc_miss_event("no_such_pmu", NULL));
}

/* Encodings: event code | umask << 8, as in the vendors' event lists. */
static void test_forced_intel(void **state)
{
    (void)state;
    expect("snb", "snb::MEM_LOAD_UOPS_MISC_RETIRED:LLC_MISS", 0x02d4);
    expect("hsw", "hsw::MEM_LOAD_UOPS_RETIRED:L3_MISS", 0x20d1);
    expect("skl", "skl::MEM_LOAD_RETIRED:L3_MISS", 0x20d1);
    expect("icx", "icx::MEM_LOAD_RETIRED:L3_MISS", 0x20d1);
    expect("spr", "spr::MEM_LOAD_RETIRED:L3_MISS", 0x20d1);
}

static void test_forced_amd(void **state)
{
    (void)state;
    expect("amd64_fam17h", "amd64_fam17h::CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",
           0x0864);
    expect(
        "amd64_fam17h_zen2",
        "amd64_fam17h_zen2::DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM",
        0x4843);
    expect("amd64_fam19h_zen3",
           "amd64_fam19h_zen3::DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT", 0x4843);
    expect("amd64_fam19h_zen4",
           "amd64_fam19h_zen4::DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR",
           0x4843);
}

/* Every PMU named in the table that this libpfm4 knows must encode its
 * event; a typo in the table fails here. */
static void test_every_table_entry_encodes(void **state)
{
    (void)state;
    static const char *const pmus[] = {"snb",
                                       "snb_ep",
                                       "ivb",
                                       "ivb_ep",
                                       "hsw",
                                       "hsw_ep",
                                       "bdw",
                                       "bdw_ep",
                                       "skl",
                                       "skx",
                                       "clx",
                                       "icl",
                                       "icx",
                                       "spr",
                                       "nhm",
                                       "nhm_ex",
                                       "wsm",
                                       "wsm_dp",
                                       "amd64_fam17h",
                                       "amd64_fam17h_zen1",
                                       "amd64_fam17h_zen2",
                                       "amd64_fam19h_zen3",
                                       "amd64_fam19h_zen4"};
    for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
        struct llc_pmu_check c;
        forced(pmus[i], &c);
        if (strcmp(c.pmu, pmus[i]) != 0)
            fail_msg("libpfm4 does not know PMU %s (found \"%s\")", pmus[i], c.pmu);
        const char *ev = llc_pmu_llc_miss_event(pmus[i], NULL);
        assert_non_null(ev);
        if (!c.encoded || !strstr(c.event, ev))
            fail_msg("%s: table event %s did not encode (%s; used %s)", pmus[i], ev, c.encode_error,
                     c.event);
    }
}

static void test_forced_unknown_pmu(void **state)
{
    (void)state;
    struct llc_pmu_check c;
    forced("no_such_pmu", &c);
    assert_false(c.encoded);
    assert_string_equal(c.pmu, "");
    assert_non_null(strstr(c.reason, "LIBPFM_FORCE_PMU=no_such_pmu"));
}

static void test_unforced(void **state)
{
    (void)state;
    unsetenv("LIBPFM_FORCE_PMU");
    struct llc_pmu_check c;
    llc_pmu_check(NULL, true, &c);
    assert_true(c.pfm_ok);
    assert_false(c.forced);
    /* Some event always encodes: the core PMU's or the kernel's generic one. */
    assert_true(c.encoded);
    assert_true(c.open_tried);
    assert_true(c.reason[0] != '\0');
    if (!c.opened)
        assert_true(c.open_errno != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_forced_intel),
        cmocka_unit_test(test_forced_amd),
        cmocka_unit_test(test_every_table_entry_encodes),
        cmocka_unit_test(test_forced_unknown_pmu),
        cmocka_unit_test(test_unforced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
