#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/cli.h"

static void parse_u64_accepts_decimal_hex_and_exact_scientific(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(llc_parse_u64("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(llc_parse_u64("123456789012", &v), 0);
    assert_int_equal(v, 123456789012ULL);
    assert_int_equal(llc_parse_u64("0x40", &v), 0);
    assert_int_equal(v, 64);
    assert_int_equal(llc_parse_u64("1e6", &v), 0);
    assert_int_equal(v, 1000000);
    assert_int_equal(llc_parse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
}

static void parse_u64_rejects_garbage_signs_fractions_overflow(void **state)
{
    (void)state;
    uint64_t v = 77;
    assert_int_equal(llc_parse_u64("", &v), -EINVAL);
    assert_int_equal(llc_parse_u64("-1", &v), -EINVAL);
    assert_int_equal(llc_parse_u64("+1", &v), -EINVAL);
    assert_int_equal(llc_parse_u64("12abc", &v), -EINVAL);
    assert_int_equal(llc_parse_u64("1.5", &v), -EINVAL);
    assert_int_equal(llc_parse_u64("18446744073709551616", &v), -ERANGE);
    assert_int_equal(llc_parse_u64("1e30", &v), -ERANGE);
    assert_int_equal(v, 77);
    assert_int_equal(llc_parse_u64_range("10", 1, 9, &v), -ERANGE);
    assert_int_equal(llc_parse_u64_range("9", 1, 9, &v), 0);
    assert_int_equal(v, 9);
}

static void parse_double_rejects_non_finite(void **state)
{
    (void)state;
    double d = 0;
    assert_int_equal(llc_parse_double("0.25", &d), 0);
    assert_true(d == 0.25);
    assert_int_equal(llc_parse_double("-3e2", &d), 0);
    assert_true(d == -300);
    assert_int_equal(llc_parse_double("inf", &d), -ERANGE);
    assert_int_equal(llc_parse_double("nan", &d), -ERANGE);
    assert_int_equal(llc_parse_double("1x", &d), -EINVAL);
    assert_int_equal(llc_parse_double("", &d), -EINVAL);
}

static void parse_size_binary_suffixes(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(llc_parse_size("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(llc_parse_size("4K", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(llc_parse_size("2MiB", &v), 0);
    assert_int_equal(v, 2u << 20);
    assert_int_equal(llc_parse_size("1.5k", &v), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(llc_parse_size("32m", &v), 0);
    assert_int_equal(v, 32u << 20);
    assert_int_equal(llc_parse_size("1G", &v), 0);
    assert_int_equal(v, 1u << 30);
    assert_int_equal(llc_parse_size("1.0000001K", &v), -EINVAL);
    assert_int_equal(llc_parse_size("3Q", &v), -EINVAL);
    assert_int_equal(llc_parse_size("-1K", &v), -EINVAL);
    assert_int_equal(llc_parse_size("K", &v), -EINVAL);
}

static void format_size_picks_unit(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(llc_format_size(100, buf, sizeof(buf)), "100 B");
    assert_string_equal(llc_format_size(32u << 20, buf, sizeof(buf)), "32 MiB");
    assert_string_equal(llc_format_size(1536, buf, sizeof(buf)), "1.5 KiB");
    assert_string_equal(llc_format_size(266240ULL << 10, buf, sizeof(buf)), "260 MiB");
}

static void option_parsers_enforce_ranges_with_usage_exit(void **state)
{
    (void)state;
    uint64_t u = 7;
    double d = 7;
    assert_int_equal(llc_opt_u64("t", "n", "5", 1, 10, &u), 0);
    assert_int_equal(u, 5);
    assert_int_equal(llc_opt_u64("t", "n", "11", 1, 10, &u), LLC_EXIT_USAGE);
    assert_int_equal(llc_opt_u64("t", "n", "abc", 1, 10, &u), LLC_EXIT_USAGE);
    assert_int_equal(llc_opt_u64("t", "n", "1e30", 1, 10, &u), LLC_EXIT_USAGE);
    assert_int_equal(u, 5);
    assert_int_equal(llc_opt_double("t", "rate", "0.5", 0, 1, &d), 0);
    assert_true(d == 0.5);
    assert_int_equal(llc_opt_double("t", "rate", "1e12", 0, 1e9, &d), LLC_EXIT_USAGE);
    assert_int_equal(llc_opt_double("t", "rate", "nan", 0, 1, &d), LLC_EXIT_USAGE);
    assert_int_equal(llc_opt_double("t", "rate", "inf", 0, 1, &d), LLC_EXIT_USAGE);
    assert_true(d == 0.5);
    assert_int_equal(llc_opt_size("t", "size", "4K", 64, 1 << 20, &u), 0);
    assert_int_equal(u, 4096);
    assert_int_equal(llc_opt_size("t", "size", "2M", 64, 1 << 20, &u), LLC_EXIT_USAGE);
    assert_int_equal(llc_opt_size("t", "size", "x", 64, 1 << 20, &u), LLC_EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_u64_accepts_decimal_hex_and_exact_scientific),
        cmocka_unit_test(parse_u64_rejects_garbage_signs_fractions_overflow),
        cmocka_unit_test(parse_double_rejects_non_finite),
        cmocka_unit_test(parse_size_binary_suffixes),
        cmocka_unit_test(format_size_picks_unit),
        cmocka_unit_test(option_parsers_enforce_ranges_with_usage_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
