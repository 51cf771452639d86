/* sysfs cache parsing on the fixture trees, CPU lists, malformed files,
 * hugepage pools. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"

static const char *fmt_set(const struct llc_cpuset *s)
{
    static char buf[512];
    return llc_cpuset_format(s, buf, sizeof(buf));
}

static void test_cpuset_parse(void **state)
{
    (void)state;
    struct llc_cpuset s;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_cpuset_parse("0-5,12-17\n", &s, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuset_count(&s), 12);
    assert_true(llc_cpuset_has(&s, 5) && llc_cpuset_has(&s, 12) && !llc_cpuset_has(&s, 6));
    assert_string_equal(fmt_set(&s), "0-5,12-17");
    assert_int_equal(llc_cpuset_parse("7,19", &s, err, sizeof(err)), 0);
    assert_string_equal(fmt_set(&s), "7,19");
    assert_int_equal(llc_cpuset_first(&s), 7);
    assert_int_equal(llc_cpuset_parse("1023", &s, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuset_first(&s), 1023);
    assert_int_equal(llc_cpuset_parse("", &s, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuset_count(&s), 0);
    assert_int_equal(llc_cpuset_first(&s), -1);
    assert_string_equal(fmt_set(&s), "");

    assert_int_equal(llc_cpuset_parse("3-1", &s, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "backwards"));
    assert_int_equal(llc_cpuset_parse("1,,2", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_cpuset_parse("0-", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_cpuset_parse("x", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_cpuset_parse("1 2", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_cpuset_parse("1024", &s, err, sizeof(err)), -ERANGE);
}

struct expect_cache {
    unsigned level;
    enum llc_cache_type type;
    uint64_t size;
    unsigned ways, sets, line, partitions, n_domains;
    const char *first_domain;
};

static void check_topo(const char *name, const struct expect_cache *want, unsigned n,
                       const char *online, unsigned slice_pmus)
{
    char root[512], err[LLC_ERRLEN];
    struct llc_cache_topo *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    const int rc = llc_sysfs_read_caches(fixture_path(root, sizeof(root), "sysfs", name, ""), t,
                                         err, sizeof(err));
    if (rc < 0)
        fail_msg("%s: %s", name, err);
    assert_string_equal(fmt_set(&t->online), online);
    assert_int_equal(t->n_caches, n);
    for (unsigned i = 0; i < n; i++) {
        const struct llc_sysfs_cache *c = &t->caches[i];
        assert_int_equal(c->level, want[i].level);
        assert_int_equal(c->type, want[i].type);
        assert_int_equal(c->size, want[i].size);
        assert_int_equal(c->ways, want[i].ways);
        assert_int_equal(c->sets, want[i].sets);
        assert_int_equal(c->line_size, want[i].line);
        assert_int_equal(c->partitions, want[i].partitions);
        assert_int_equal(c->n_domains, want[i].n_domains);
        assert_string_equal(fmt_set(&c->domains[0]), want[i].first_domain);
    }
    assert_int_equal(t->uncore_slice_pmus, slice_pmus);
    free(t);
}

static void test_intel_snb(void **state)
{
    (void)state;
    const struct expect_cache want[] = {
        {1, LLC_CACHE_DATA, 32768, 8, 64, 64, 1, 4, "0,4"},
        {1, LLC_CACHE_INSTRUCTION, 32768, 8, 64, 64, 1, 4, "0,4"},
        {2, LLC_CACHE_UNIFIED, 262144, 8, 512, 64, 1, 4, "0,4"},
        {3, LLC_CACHE_UNIFIED, 8u << 20, 16, 8192, 64, 1, 1, "0-7"},
    };
    check_topo("intel-snb-4c", want, 4, "0-7", 4);
}

static void test_amd_zen4(void **state)
{
    (void)state;
    const struct expect_cache want[] = {
        {1, LLC_CACHE_DATA, 32768, 8, 64, 64, 1, 8, "0,8"},
        {1, LLC_CACHE_INSTRUCTION, 32768, 8, 64, 64, 1, 8, "0,8"},
        {2, LLC_CACHE_UNIFIED, 1u << 20, 8, 2048, 64, 1, 8, "0,8"},
        {3, LLC_CACHE_UNIFIED, 32u << 20, 16, 32768, 64, 1, 1, "0-15"},
    };
    check_topo("amd-zen4-8c", want, 4, "0-15", 0);
}

static void test_intel_hsx_two_domains(void **state)
{
    (void)state;
    const struct expect_cache want[] = {
        {1, LLC_CACHE_DATA, 32768, 8, 64, 64, 1, 12, "0,12"},
        {1, LLC_CACHE_INSTRUCTION, 32768, 8, 64, 64, 1, 12, "0,12"},
        {2, LLC_CACHE_UNIFIED, 262144, 8, 512, 64, 1, 12, "0,12"},
        {3, LLC_CACHE_UNIFIED, 15u << 20, 20, 12288, 64, 1, 2, "0-5,12-17"},
    };
    check_topo("intel-hsx-2x6c", want, 4, "0-23", 6);

    char root[512], err[LLC_ERRLEN];
    struct llc_cache_topo *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    assert_int_equal(
        llc_sysfs_read_caches(fixture_path(root, sizeof(root), "sysfs", "intel-hsx-2x6c", ""), t,
                              err, sizeof(err)),
        0);
    assert_string_equal(fmt_set(&t->caches[3].domains[1]), "6-11,18-23");
    assert_string_equal(fmt_set(&t->caches[2].domains[11]), "11,23");
    free(t);
}

static void test_real_kvm_guest(void **state)
{
    (void)state;
    const struct expect_cache want[] = {
        {1, LLC_CACHE_DATA, 49152, 12, 64, 64, 1, 2, "0"},
        {1, LLC_CACHE_INSTRUCTION, 32768, 8, 64, 64, 1, 2, "0"},
        {2, LLC_CACHE_UNIFIED, 2u << 20, 16, 2048, 64, 1, 2, "0"},
        {3, LLC_CACHE_UNIFIED, 266240ull * 1024, 20, 212992, 64, 1, 1, "0-1"},
    };
    check_topo("xeon-emr-kvm", want, 4, "0-1", 0);
}

/* ---- malformed trees ---- */

static char tmp_root[64];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
    for (char *p = path + strlen(tmp_root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Two CPUs, one private L1d each and a shared L2. */
static void make_small_tree(void)
{
    strcpy(tmp_root, "/tmp/llc-sysinfo-XXXXXX");
    assert_non_null(mkdtemp(tmp_root));
    put("devices/system/cpu/online", "0-1\n");
    for (int cpu = 0; cpu < 2; cpu++) {
        char base[128], rel[192];
        for (int idx = 0; idx < 2; idx++) {
            snprintf(base, sizeof(base), "devices/system/cpu/cpu%d/cache/index%d", cpu, idx);
#define PUT(name, val) (snprintf(rel, sizeof(rel), "%s/%s", base, name), put(rel, val))
            PUT("level", idx == 0 ? "1\n" : "2\n");
            PUT("type", idx == 0 ? "Data\n" : "Unified\n");
            PUT("size", idx == 0 ? "32K\n" : "1024K\n");
            PUT("ways_of_associativity", idx == 0 ? "8\n" : "16\n");
            PUT("number_of_sets", idx == 0 ? "64\n" : "1024\n");
            PUT("coherency_line_size", "64\n");
            PUT("physical_line_partition", "1\n");
            PUT("shared_cpu_list", idx == 0 ? (cpu == 0 ? "0\n" : "1\n") : "0-1\n");
#undef PUT
        }
    }
}

static void remove_tree(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
    assert_int_equal(system(cmd), 0);
}

static void expect_error(const char *rel, const char *text, const char *file_part,
                         const char *why_part)
{
    make_small_tree();
    if (text)
        put(rel, text);
    else {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
        assert_int_equal(unlink(path), 0);
    }
    struct llc_cache_topo *t = calloc(1, sizeof(*t));
    char err[LLC_ERRLEN] = "";
    const int rc = llc_sysfs_read_caches(tmp_root, t, err, sizeof(err));
    free(t);
    remove_tree();
    if (rc >= 0)
        fail_msg("%s = \"%s\" was accepted", rel, text ? text : "(missing)");
    if (!strstr(err, file_part) || !strstr(err, why_part))
        fail_msg("error \"%s\" lacks \"%s\" or \"%s\"", err, file_part, why_part);
}

static void test_small_tree_ok(void **state)
{
    (void)state;
    make_small_tree();
    struct llc_cache_topo *t = calloc(1, sizeof(*t));
    char err[LLC_ERRLEN];
    const int rc = llc_sysfs_read_caches(tmp_root, t, err, sizeof(err));
    remove_tree();
    assert_int_equal(rc, 0);
    assert_int_equal(t->n_caches, 2);
    assert_int_equal(t->caches[1].size, 1u << 20);
    assert_int_equal(t->caches[1].n_domains, 1);
    free(t);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_error("devices/system/cpu/cpu0/cache/index1/ways_of_associativity", "sixteen\n",
                 "cpu0/cache/index1/ways_of_associativity", "expected a whole number");
    expect_error("devices/system/cpu/cpu0/cache/index1/size", "12X\n", "index1/size",
                 "expected a size");
    expect_error("devices/system/cpu/cpu0/cache/index1/type", "Victim\n", "index1/type", "Unified");
    expect_error("devices/system/cpu/cpu0/cache/index0/number_of_sets", NULL,
                 "index0/number_of_sets", "No such file");
    expect_error("devices/system/cpu/cpu0/cache/index0/number_of_sets", "0\n", "index0",
                 "non-zero");
    expect_error("devices/system/cpu/cpu1/cache/index0/shared_cpu_list", "0\n", "cpu1/cache/index0",
                 "does not include cpu1");
    expect_error("devices/system/cpu/cpu1/cache/index1/shared_cpu_list", "1\n", "cpu1/cache/index1",
                 "overlap");
    expect_error("devices/system/cpu/cpu1/cache/index0/shared_cpu_list", "1-\n",
                 "cpu1/cache/index0", "bad CPU list");
    expect_error("devices/system/cpu/online", "", "online", "no online CPUs");
}

static void test_missing_root(void **state)
{
    (void)state;
    struct llc_cache_topo *t = calloc(1, sizeof(*t));
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sysfs_read_caches("/nonexistent/sysfs", t, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/sysfs/devices/system/cpu/online"));
    free(t);
}

static void test_hugepage_pools(void **state)
{
    (void)state;
    char root[512], err[LLC_ERRLEN];
    struct llc_hugepages h;
    assert_int_equal(
        llc_hugepages_query(fixture_path(root, sizeof(root), "sysfs", "intel-snb-4c", ""), false,
                            false, &h, err, sizeof(err)),
        0);
    assert_int_equal(h.n, 2);
    assert_false(h.live);
    assert_int_equal(h.sizes[0].size, 2u << 20);
    assert_int_equal(h.sizes[0].total, 16);
    assert_int_equal(h.sizes[0].free, 12);
    assert_int_equal(h.sizes[0].surplus, 0);
    assert_int_equal(h.sizes[0].reserved, 2);
    assert_int_equal(h.sizes[0].attempt, LLC_HUGE_NOT_TRIED);
    assert_int_equal(h.sizes[1].size, 1u << 30);
    assert_int_equal(h.sizes[1].total, 0);

    assert_int_equal(llc_hugepages_query("/nonexistent", false, false, &h, err, sizeof(err)), 0);
    assert_int_equal(h.n, 0);
    assert_non_null(strstr(h.reason, "/nonexistent/kernel/mm/hugepages"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuset_parse),   cmocka_unit_test(test_intel_snb),
        cmocka_unit_test(test_amd_zen4),       cmocka_unit_test(test_intel_hsx_two_domains),
        cmocka_unit_test(test_real_kvm_guest), cmocka_unit_test(test_small_tree_ok),
        cmocka_unit_test(test_malformed),      cmocka_unit_test(test_missing_root),
        cmocka_unit_test(test_hugepage_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
