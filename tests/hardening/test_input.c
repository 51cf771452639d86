/* util/input and the exp-bbv readers: bounded lines (NUL bytes included),
 * bounded block ids, errors naming file, line and limit; escaping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "ipsampling/sampling_internal.h"
#include "util/input.h"

static char path[64];

static int make_file(void **state)
{
    (void)state;
    snprintf(path, sizeof(path), "/tmp/llc_input_XXXXXX");
    const int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int remove_file(void **state)
{
    (void)state;
    return unlink(path);
}

static void write_file(const char *data, size_t n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void long_line_is_refused_with_file_line_and_limit(void **state)
{
    (void)state;
    char *data = calloc(1, 5000); /* line 2: 4000 NUL bytes, no newline */
    memcpy(data, "short\n", 6);
    write_file(data, 4006);
    free(data);
    struct llc_lines r;
    char err[LLC_ERRLEN], *line;
    assert_int_equal(llc_lines_open(&r, path, 1000, err, sizeof(err)), 0);
    assert_int_equal(llc_lines_next(&r, &line, err, sizeof(err)), 1);
    assert_string_equal(line, "short");
    assert_int_equal(llc_lines_next(&r, &line, err, sizeof(err)), -E2BIG);
    char want[128];
    snprintf(want, sizeof(want), "%s: line 2: longer than 1000 bytes", path);
    assert_string_equal(err, want);
    llc_lines_close(&r);
}

static void dev_zero_as_bbv_is_refused(void **state)
{
    (void)state;
    struct llc_sampling_bbv b;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sampling_bbv_read("/dev/zero", &b, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "/dev/zero: line 1: longer than"));
}

static void huge_block_id_is_refused(void **state)
{
    (void)state;
    const char text[] = "T:1:5 :2:7\nT:100000000:1\n";
    write_file(text, sizeof(text) - 1);
    struct llc_sampling_bbv b;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, ": line 2: block id 100000000 is over the limit of"));
    const char ok[] = "T:1:5 :2:7\nT:2:1\n";
    write_file(ok, sizeof(ok) - 1);
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), 0);
    assert_int_equal(b.windows, 2);
    assert_int_equal(b.dim, 2);
    llc_sampling_bbv_free(&b);
}

static void directory_is_named(void **state)
{
    (void)state;
    char err[LLC_ERRLEN], *text;
    size_t n;
    assert_int_equal(llc_input_slurp("/tmp", 1000, &text, &n, err, sizeof(err)), -EISDIR);
    assert_string_equal(err, "/tmp: is a directory");
}

static void escape_marks_every_unprintable_byte(void **state)
{
    (void)state;
    char out[64];
    assert_string_equal(llc_escape("a\x1b[2J\\\x01\xff", 8, out, sizeof(out)),
                        "a\\x1b[2J\\\\\\x01\\xff");
    assert_string_equal(llc_escape("abcdefghijklmnop", 16, out, 10), "abcdef...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(long_line_is_refused_with_file_line_and_limit, make_file,
                                        remove_file),
        cmocka_unit_test(dev_zero_as_bbv_is_refused),
        cmocka_unit_test_setup_teardown(huge_block_id_is_refused, make_file, remove_file),
        cmocka_unit_test(directory_is_named),
        cmocka_unit_test(escape_marks_every_unprintable_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
