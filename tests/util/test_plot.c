/* util/plot: a PNG appears only when gnuplot succeeded, a missing or
 * failing gnuplot is one clear line, and names are quoted for gnuplot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/plot.h"

static char dir[256];
static char png[400];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/llc_plot_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    /* A quote in the name exercises llc_plot_quote on the output line. */
    snprintf(png, sizeof(png), "%s/it's.png", dir);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void emit_line(void *ctx, FILE *gp)
{
    (void)ctx;
    fputs("set title 'a ''quoted'' title'\nplot x*x title 'y'\n", gp);
}

static void emit_garbage(void *ctx, FILE *gp)
{
    (void)ctx;
    fputs("this is not gnuplot\n", gp);
}

static void test_quote(void **state)
{
    (void)state;
    char buf[64] = "";
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    assert_non_null(f);
    llc_plot_quote(f, "it's 'x'");
    fclose(f);
    assert_string_equal(buf, "'it''s ''x'''");
}

static void test_missing_gnuplot(void **state)
{
    (void)state;
    char err[256] = "";
    assert_true(
        llc_plot_png("/nonexistent/gnuplot", png, 300, 200, emit_line, NULL, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "is not installed"));
    assert_int_not_equal(access(png, F_OK), 0);
}

static void test_failing_gnuplot(void **state)
{
    (void)state;
    char err[256] = "";
    /* `false` reads nothing and exits 1: the writer must survive SIGPIPE. */
    assert_true(llc_plot_png("false", png, 300, 200, emit_line, NULL, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "gnuplot failed"));
    assert_int_not_equal(access(png, F_OK), 0);
}

static int have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static void test_real_plot(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    char err[256] = "";
    assert_int_equal(llc_plot_png(NULL, png, 300, 200, emit_line, NULL, err, sizeof(err)), 0);
    FILE *f = fopen(png, "rb");
    assert_non_null(f);
    unsigned char magic[4] = {0};
    assert_int_equal(fread(magic, 1, 4, f), 4);
    fclose(f);
    assert_memory_equal(magic, "\x89PNG", 4);
    char tmp[420];
    snprintf(tmp, sizeof(tmp), "%s.tmp", png);
    assert_int_not_equal(access(tmp, F_OK), 0);
    unlink(png);
}

static void test_bad_script(void **state)
{
    (void)state;
    if (!have_gnuplot())
        skip();
    char err[256] = "";
    assert_true(llc_plot_png(NULL, png, 300, 200, emit_garbage, NULL, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "gnuplot failed"));
    assert_int_not_equal(access(png, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote),
        cmocka_unit_test_setup_teardown(test_missing_gnuplot, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_failing_gnuplot, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_real_plot, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_bad_script, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
