/* CPUID dump parsing and decoding: vendor, model, features, cache leaves. */
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

static struct llc_cpuid_dump dump;
static struct llc_cpu_info cpu;

static void load(const char *name)
{
    char path[512], err[LLC_ERRLEN];
    if (llc_cpuid_dump_read(fixture_path(path, sizeof(path), "cpuid", name, ".txt"), &dump, err,
                            sizeof(err)) < 0)
        fail_msg("%s", err);
    if (llc_cpuid_decode(&dump, &cpu, err, sizeof(err)) < 0)
        fail_msg("%s", err);
}

static void expect_cache(unsigned i, unsigned level, enum llc_cache_type type, unsigned ways,
                         unsigned sets, uint64_t size, bool inclusive, unsigned sharing)
{
    const struct llc_cpuid_cache *c = &cpu.caches[i];
    assert_int_equal(c->level, level);
    assert_int_equal(c->type, type);
    assert_int_equal(c->ways, ways);
    assert_int_equal(c->sets, sets);
    assert_int_equal(c->line_size, 64);
    assert_int_equal(c->partitions, 1);
    assert_int_equal(c->size, size);
    assert_int_equal(c->inclusive, inclusive);
    assert_int_equal(c->max_sharing, sharing);
    assert_int_equal(c->subleaf, i);
}

static void test_parse_format(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const char *text =
        "# comment\n"
        "CPU 0:\n"
        "   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
        "\n"
        "   0x00000004 0x01: eax=0x1c004122 ebx=0x01c0003f ecx=0x0000003f edx=0x00000000  \n"
        "CPU 1:\n"
        "   0x00000001 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n";
    assert_int_equal(llc_cpuid_dump_parse(text, &dump, err, sizeof(err)), 0);
    assert_int_equal(dump.n, 2);
    const struct llc_cpuid_leaf *l = llc_cpuid_get(&dump, 4, 1);
    assert_non_null(l);
    assert_int_equal(l->eax, 0x1c004122);
    assert_int_equal(l->ebx, 0x01c0003f);
    assert_null(llc_cpuid_get(&dump, 4, 0));
    assert_null(llc_cpuid_get(&dump, 1, 0)); /* second CPU's leaves are not read */
}

static void test_parse_errors(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    assert_int_equal(
        llc_cpuid_dump_parse("0x0 0x0: eax=0x1 ebx=0x2 ecx=0x3\n", &dump, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "line 1"));
    assert_int_equal(llc_cpuid_dump_parse("# x\n0x0 0x0: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4 junk\n",
                                          &dump, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "line 2"));
    assert_int_equal(llc_cpuid_dump_parse("0x0 0x0: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n"
                                          "0x0 0x0: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n",
                                          &dump, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(llc_cpuid_dump_parse("# only comments\n", &dump, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "no CPUID leaves"));
    assert_true(llc_cpuid_dump_read("/nonexistent.txt", &dump, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "/nonexistent.txt"));

    /* Leaf 0 is the one thing decoding cannot do without. */
    assert_int_equal(
        llc_cpuid_dump_parse("0x1 0x0: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n", &dump, err, sizeof(err)),
        0);
    assert_int_equal(llc_cpuid_decode(&dump, &cpu, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "leaf 0"));
}

static void test_decode_intel_snb(void **state)
{
    (void)state;
    load("intel-snb-4c");
    assert_int_equal(cpu.vendor, LLC_VENDOR_INTEL);
    assert_string_equal(cpu.vendor_id, "GenuineIntel");
    assert_string_equal(cpu.brand, "Intel(R) Core(TM) i7-2600 CPU @ 3.40GHz");
    assert_int_equal(cpu.family, 6);
    assert_int_equal(cpu.model, 0x2a);
    assert_int_equal(cpu.stepping, 7);
    assert_false(cpu.hypervisor);
    assert_int_equal(cpu.perfmon_version, 3);
    assert_true(cpu.has_rdtscp);
    assert_true(cpu.invariant_tsc);
    assert_int_equal(cpu.tsc_hz, 0);
    assert_int_equal(cpu.cache_leaf, 4);
    assert_int_equal(cpu.n_caches, 4);
    expect_cache(0, 1, LLC_CACHE_DATA, 8, 64, 32768, false, 2);
    expect_cache(1, 1, LLC_CACHE_INSTRUCTION, 8, 64, 32768, false, 2);
    expect_cache(2, 2, LLC_CACHE_UNIFIED, 8, 512, 262144, false, 2);
    expect_cache(3, 3, LLC_CACHE_UNIFIED, 16, 8192, 8u << 20, true, 16);
}

static void test_decode_amd_zen4(void **state)
{
    (void)state;
    load("amd-zen4-8c");
    assert_int_equal(cpu.vendor, LLC_VENDOR_AMD);
    assert_string_equal(cpu.brand, "AMD Ryzen 7 7700X 8-Core Processor");
    assert_int_equal(cpu.family, 0x19);
    assert_int_equal(cpu.model, 0x61);
    assert_int_equal(cpu.stepping, 2);
    assert_int_equal(cpu.perfmon_version, 0); /* leaf 0xA is Intel's */
    assert_true(cpu.has_rdtscp);
    assert_true(cpu.invariant_tsc);
    /* leaf 4 is all zeros on AMD: the decoder must use 0x8000001D. */
    assert_int_equal(cpu.cache_leaf, 0x8000001D);
    assert_int_equal(cpu.n_caches, 4);
    expect_cache(0, 1, LLC_CACHE_DATA, 8, 64, 32768, false, 2);
    expect_cache(2, 2, LLC_CACHE_UNIFIED, 8, 2048, 1u << 20, true, 2);
    expect_cache(3, 3, LLC_CACHE_UNIFIED, 16, 32768, 32u << 20, false, 16);
}

static void test_decode_real_kvm(void **state)
{
    (void)state;
    load("xeon-emr-kvm");
    assert_int_equal(cpu.vendor, LLC_VENDOR_INTEL);
    assert_int_equal(cpu.family, 6);
    assert_int_equal(cpu.model, 207);
    assert_true(cpu.hypervisor);
    assert_string_equal(cpu.hypervisor_id, "KVMKVMKVM");
    assert_int_equal(cpu.perfmon_version, 0);
    assert_true(cpu.has_rdtscp);
    assert_true(cpu.invariant_tsc);
    assert_int_equal(cpu.tsc_hz, 0); /* leaves 0x15, 0x16 and 0x40000010 are zero */
    assert_int_equal(cpu.n_caches, 4);
    expect_cache(1, 1, LLC_CACHE_INSTRUCTION, 8, 64, 32768, false, 1);
    expect_cache(3, 3, LLC_CACHE_UNIFIED, 20, 212992, 266240ull * 1024, false, 2);
}

static void test_decode_tsc_from_leaf15(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* Skylake-style: 24 MHz crystal, ratio 300/2 -> 3.6 GHz. */
    const char *text =
        "0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
        "0x00000015 0x00: eax=0x00000002 ebx=0x0000012c ecx=0x016e3600 edx=0x00000000\n"
        "0x00000016 0x00: eax=0x00000e10 ebx=0x00001324 ecx=0x00000064 edx=0x00000000\n";
    assert_int_equal(llc_cpuid_dump_parse(text, &dump, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuid_decode(&dump, &cpu, err, sizeof(err)), 0);
    assert_int_equal(cpu.tsc_hz, 3600000000ull);
    assert_non_null(strstr(cpu.tsc_hz_source, "0x15"));
    assert_false(cpu.has_rdtscp); /* no extended leaves in this dump */
    assert_int_equal(cpu.n_caches, 0);

    /* Without a crystal frequency, the base frequency of leaf 0x16. */
    const char *text16 =
        "0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
        "0x00000015 0x00: eax=0x00000002 ebx=0x0000012c ecx=0x00000000 edx=0x00000000\n"
        "0x00000016 0x00: eax=0x00000e10 ebx=0x00001324 ecx=0x00000064 edx=0x00000000\n";
    assert_int_equal(llc_cpuid_dump_parse(text16, &dump, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuid_decode(&dump, &cpu, err, sizeof(err)), 0);
    assert_int_equal(cpu.tsc_hz, 3600000000ull);
    assert_non_null(strstr(cpu.tsc_hz_source, "0x16"));
}

static void test_dump_roundtrip_and_live(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    load("intel-snb-4c");
    char buf[16384];
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    assert_non_null(f);
    assert_int_equal(llc_cpuid_dump_write(&dump, f), 0);
    fclose(f);
    struct llc_cpuid_dump again;
    assert_int_equal(llc_cpuid_dump_parse(buf, &again, err, sizeof(err)), 0);
    assert_int_equal(again.n, dump.n);
    assert_memory_equal(again.leaves, dump.leaves, dump.n * sizeof(dump.leaves[0]));

#if defined(__x86_64__)
    assert_int_equal(llc_cpuid_dump_live(&dump, err, sizeof(err)), 0);
    assert_int_equal(llc_cpuid_decode(&dump, &cpu, err, sizeof(err)), 0);
    assert_true(cpu.family > 0);
    assert_true(cpu.vendor_id[0] != '\0');
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_decode_intel_snb),
        cmocka_unit_test(test_decode_amd_zen4),
        cmocka_unit_test(test_decode_real_kvm),
        cmocka_unit_test(test_decode_tsc_from_leaf15),
        cmocka_unit_test(test_dump_roundtrip_and_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
