/* LLC choice, hierarchy kind, slices, sysfs-vs-CPUID cross-check, timing
 * clock and the auto backend decision, on the fixture machines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "fixture.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"

struct machine {
    struct llc_cache_topo topo;
    struct llc_cpu_info cpu;
    struct llc_geometry geo;
};

static struct machine *load(const char *name)
{
    struct machine *m = calloc(1, sizeof(*m));
    struct llc_cpuid_dump *d = calloc(1, sizeof(*d));
    char path[512], err[LLC_ERRLEN];
    assert_non_null(m);
    assert_non_null(d);
    if (llc_sysfs_read_caches(fixture_path(path, sizeof(path), "sysfs", name, ""), &m->topo, err,
                              sizeof(err)) < 0 ||
        llc_cpuid_dump_read(fixture_path(path, sizeof(path), "cpuid", name, ".txt"), d, err,
                            sizeof(err)) < 0 ||
        llc_cpuid_decode(d, &m->cpu, err, sizeof(err)) < 0)
        fail_msg("%s: %s", name, err);
    free(d);
    return m;
}

static void derive(struct machine *m, const struct llc_cpu_info *cpu)
{
    char err[LLC_ERRLEN];
    if (llc_geometry_derive(&m->topo, cpu, &m->geo, err, sizeof(err)) < 0)
        fail_msg("%s", err);
}

static const char *fmt_set(const struct llc_cpuset *s)
{
    static char buf[512];
    return llc_cpuset_format(s, buf, sizeof(buf));
}

static void test_intel_inclusive(void **state)
{
    (void)state;
    struct machine *m = load("intel-snb-4c");
    derive(m, &m->cpu);
    const struct llc_geometry *g = &m->geo;
    assert_int_equal(g->level, 3);
    assert_int_equal(g->size, 8u << 20);
    assert_int_equal(g->ways, 16);
    assert_int_equal(g->sets, 8192);
    assert_string_equal(fmt_set(&g->shared), "0-7");
    assert_int_equal(g->n_domains, 1);
    assert_int_equal(g->cores_per_domain, 4);
    assert_int_equal(g->upper_level, 2);
    assert_int_equal(g->upper_ways, 8);
    assert_int_equal(g->upper_sets, 512);
    assert_int_equal(g->upper_size, 256u << 10);
    assert_int_equal(g->hierarchy, LLC_HIER_INCLUSIVE);
    assert_non_null(strstr(g->hierarchy_reason, "leaf 4 subleaf 3 EDX bit 1 = 1"));
    assert_int_equal(g->slices, 4);
    assert_non_null(strstr(g->slices_reason, "uncore_cbox"));
    assert_true(g->cpuid_checked);
    assert_int_equal(g->n_mismatches, 0);
    free(m);
}

static void test_amd_victim(void **state)
{
    (void)state;
    struct machine *m = load("amd-zen4-8c");
    derive(m, &m->cpu);
    const struct llc_geometry *g = &m->geo;
    assert_int_equal(g->size, 32u << 20);
    assert_int_equal(g->cores_per_domain, 8);
    assert_int_equal(g->upper_size, 1u << 20);
    assert_int_equal(g->upper_ways, 8);
    assert_int_equal(g->hierarchy, LLC_HIER_EXCLUSIVE_VICTIM);
    assert_non_null(strstr(g->hierarchy_reason, "0x8000001D subleaf 3 EDX bit 1 = 0"));
    assert_non_null(strstr(g->hierarchy_reason, "victim"));
    assert_int_equal(g->slices, 8);
    assert_non_null(strstr(g->slices_reason, "inferred"));
    assert_int_equal(g->n_mismatches, 0);
    free(m);
}

static void test_two_domains(void **state)
{
    (void)state;
    struct machine *m = load("intel-hsx-2x6c");
    derive(m, &m->cpu);
    const struct llc_geometry *g = &m->geo;
    assert_int_equal(g->size, 15u << 20);
    assert_int_equal(g->ways, 20);
    assert_string_equal(fmt_set(&g->shared), "0-5,12-17");
    assert_int_equal(g->n_domains, 2);
    assert_int_equal(g->cores_per_domain, 6);
    assert_int_equal(g->hierarchy, LLC_HIER_INCLUSIVE);
    assert_int_equal(g->slices, 6);
    assert_int_equal(g->n_mismatches, 0);
    free(m);
}

static void test_real_kvm_non_inclusive(void **state)
{
    (void)state;
    struct machine *m = load("xeon-emr-kvm");
    derive(m, &m->cpu);
    const struct llc_geometry *g = &m->geo;
    assert_int_equal(g->sets, 212992);
    assert_int_equal(g->ways, 20);
    assert_int_equal(g->upper_ways, 16);
    assert_int_equal(g->upper_size, 2u << 20);
    assert_int_equal(g->cores_per_domain, 2);
    assert_int_equal(g->hierarchy, LLC_HIER_NON_INCLUSIVE);
    assert_non_null(strstr(g->hierarchy_reason, "EDX bit 1 = 0"));
    assert_int_equal(g->slices, 0);
    assert_non_null(strstr(g->slices_reason, "unknown"));
    assert_int_equal(g->n_mismatches, 0);
    free(m);
}

static const struct llc_geometry_mismatch *find(const struct llc_geometry *g, unsigned level,
                                                const char *field)
{
    for (unsigned i = 0; i < g->n_mismatches; i++)
        if (g->mismatches[i].level == level && strcmp(g->mismatches[i].field, field) == 0)
            return &g->mismatches[i];
    return NULL;
}

static void test_mismatches(void **state)
{
    (void)state;
    struct machine *m = load("intel-snb-4c");
    /* CPUID claims a 20-way L3: ways and size disagree with sysfs. */
    m->cpu.caches[3].ways = 20;
    m->cpu.caches[3].size = 20ull * 8192 * 64;
    derive(m, &m->cpu);
    assert_int_equal(m->geo.n_mismatches, 2);
    const struct llc_geometry_mismatch *w = find(&m->geo, 3, "ways");
    assert_non_null(w);
    assert_int_equal(w->sysfs_value, 16);
    assert_int_equal(w->cpuid_value, 20);
    assert_int_equal(w->type, LLC_CACHE_UNIFIED);
    assert_non_null(find(&m->geo, 3, "size"));
    assert_non_null(strstr(m->geo.cpuid_check, "disagreements"));

    /* sysfs inconsistent with itself, and a level CPUID does not list. */
    m->cpu.caches[3].ways = 16;
    m->cpu.caches[3].size = 8u << 20;
    m->topo.caches[2].size = 512u << 10;
    m->cpu.n_caches = 3; /* drop CPUID's L3 */
    derive(m, &m->cpu);
    const struct llc_geometry_mismatch *p = find(&m->geo, 2, "size-vs-product");
    assert_non_null(p);
    assert_int_equal(p->sysfs_value, 512u << 10);
    assert_int_equal(p->cpuid_value, 256u << 10);
    assert_non_null(find(&m->geo, 2, "size"));
    const struct llc_geometry_mismatch *missing = find(&m->geo, 3, "present");
    assert_non_null(missing);
    assert_int_equal(missing->sysfs_value, 1);
    assert_int_equal(missing->cpuid_value, 0);
    /* Without CPUID's L3 the hierarchy cannot be decided. */
    assert_int_equal(m->geo.hierarchy, LLC_HIER_UNKNOWN);
    free(m);
}

static void test_without_cpuid(void **state)
{
    (void)state;
    struct machine *m = load("amd-zen4-8c");
    derive(m, NULL);
    assert_int_equal(m->geo.hierarchy, LLC_HIER_UNKNOWN);
    assert_non_null(strstr(m->geo.hierarchy_reason, "no CPUID"));
    assert_false(m->geo.cpuid_checked);
    assert_int_equal(m->geo.slices, 0);
    assert_int_equal(m->geo.size, 32u << 20);

    /* No unified cache at all is an error, not a guess. */
    m->topo.n_caches = 1;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_geometry_derive(&m->topo, NULL, &m->geo, err, sizeof(err)), -ENOENT);
    free(m);
}

static void test_clock_and_backend(void **state)
{
    (void)state;
    struct machine *m = load("xeon-emr-kvm");
    struct llc_clock_check clock;
    llc_clock_check(&m->cpu, false, &clock);
    assert_true(clock.tsc);
    assert_true(clock.rdtscp);
    assert_true(clock.lfence_serializing); /* Intel */
    assert_true(clock.invariant_tsc);
    assert_true(clock.usable);
    assert_int_equal(clock.tsc_hz, 0);
    assert_string_equal(clock.reason, "invariant TSC, fenced by serialising lfence");

    struct llc_pmu_check pmu = {0};
    struct llc_backend_choice b;
    snprintf(pmu.reason, sizeof(pmu.reason),
             "perf_event_open(x) failed: No such file or directory (no PMU)");
    llc_backend_choose(&pmu, &clock, &b);
    assert_int_equal(b.backend, LLC_BACKEND_TIMING);
    assert_string_equal(b.reason,
                        "pmu: perf_event_open(x) failed: No such file or directory (no PMU); "
                        "timing: invariant TSC, fenced by serialising lfence");

    pmu.opened = true;
    snprintf(pmu.reason, sizeof(pmu.reason), "perf_event_open(x) succeeded");
    llc_backend_choose(&pmu, &clock, &b);
    assert_int_equal(b.backend, LLC_BACKEND_PMU);
    assert_string_equal(b.reason, "pmu: perf_event_open(x) succeeded");

    /* No rdtscp (as under some hypervisors): a serialising lfence will do. */
    m->cpu.has_rdtscp = false;
    llc_clock_check(&m->cpu, false, &clock);
    assert_true(clock.usable);
    /* Neither: nothing orders rdtsc around a load. */
    m->cpu.lfence_serializing = false;
    llc_clock_check(&m->cpu, false, &clock);
    assert_false(clock.usable);
    assert_non_null(strstr(clock.reason, "neither rdtscp"));
    m->cpu.has_tsc = false;
    llc_clock_check(&m->cpu, false, &clock);
    assert_false(clock.usable);
    assert_non_null(strstr(clock.reason, "no TSC"));
    pmu.opened = false;
    llc_backend_choose(&pmu, &clock, &b);
    assert_int_equal(b.backend, LLC_BACKEND_NONE);
    assert_string_equal(llc_backend_name(b.backend), "none");

    llc_clock_check(NULL, false, &clock);
    assert_false(clock.usable);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intel_inclusive),   cmocka_unit_test(test_amd_victim),
        cmocka_unit_test(test_two_domains),       cmocka_unit_test(test_real_kvm_non_inclusive),
        cmocka_unit_test(test_mismatches),        cmocka_unit_test(test_without_cpuid),
        cmocka_unit_test(test_clock_and_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
