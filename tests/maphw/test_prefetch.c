/* Prefetcher control: the decision (not the hardware), and the MSR
 * save/set/restore sequence on stand-in files laid out like /dev/cpu/N/msr
 * (an 8-byte register at offset 0x1A4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llcprobe/map.h"

static void test_decide(void **state)
{
    (void)state;
    char why[LLC_MAP_TEXT_LEN];
    struct llc_map_prefetch_facts f = {
        .intel = true, .vendor = "GenuineIntel", .msr_device = true, .msr_writable = true};
    assert_int_equal(llc_map_prefetch_decide(&f, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "restored"));
    f.msr_writable = false;
    assert_int_equal(llc_map_prefetch_decide(&f, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "not writable"));
    f.msr_device = false;
    assert_int_equal(llc_map_prefetch_decide(&f, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "modprobe msr"));
    f = (struct llc_map_prefetch_facts){
        .intel = true, .hypervisor = true, .msr_device = true, .msr_writable = true};
    assert_int_equal(llc_map_prefetch_decide(&f, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "hypervisor"));
    /* This VM's case: AMD, whatever the msr device allows. */
    f = (struct llc_map_prefetch_facts){
        .vendor = "AuthenticAMD", .hypervisor = true, .msr_device = true, .msr_writable = true};
    assert_int_equal(llc_map_prefetch_decide(&f, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "AuthenticAMD"));
}

static uint64_t reg(const char *dir, int cpu)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%d", dir, cpu);
    uint64_t v = 0;
    const int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &v, sizeof(v), LLC_MAP_MSR_PREFETCH), (ssize_t)sizeof(v));
    close(fd);
    return v;
}

static void make_reg(const char *dir, int cpu, uint64_t v)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%d", dir, cpu);
    const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &v, sizeof(v), LLC_MAP_MSR_PREFETCH), (ssize_t)sizeof(v));
    close(fd);
}

static void test_disable_restore(void **state)
{
    (void)state;
    char dir[] = "/tmp/llcprobe-msr-XXXXXX", fmt[128], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(fmt, sizeof(fmt), "%s/%%d", dir);
    make_reg(dir, 0, 0x30);
    make_reg(dir, 3, 0x5);
    struct llc_map_prefetch_facts f;
    llc_map_prefetch_facts_probe(true, "GenuineIntel", false, 3, fmt, &f);
    assert_true(f.msr_device && f.msr_writable);
    llc_map_prefetch_facts_probe(true, "GenuineIntel", false, 7, fmt, &f);
    assert_false(f.msr_device);

    struct llc_map_prefetch_saved s;
    const int cpus[] = {0, 3};
    assert_int_equal(llc_map_prefetch_disable(fmt, cpus, 2, &s, err, sizeof(err)), 0);
    assert_int_equal(reg(dir, 0), 0x3F); /* other bits kept */
    assert_int_equal(reg(dir, 3), 0xF);
    llc_map_prefetch_restore(&s);
    assert_int_equal(reg(dir, 0), 0x30);
    assert_int_equal(reg(dir, 3), 0x5);
    llc_map_prefetch_restore(&s); /* twice is harmless */
    assert_int_equal(reg(dir, 0), 0x30);

    /* A CPU without the device: what was changed before it is put back. */
    const int bad[] = {0, 9};
    assert_true(llc_map_prefetch_disable(fmt, bad, 2, &s, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "/9"));
    assert_int_equal(reg(dir, 0), 0x30);

    char path[256];
    snprintf(path, sizeof(path), "%s/0", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/3", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_disable_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
