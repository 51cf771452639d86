#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

static char dir[256];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/llc_afile_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static size_t entries_in_dir(void)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void commit_replaces_target_and_leaves_no_temporary(void **state)
{
    (void)state;
    char path[300], err[LLC_ERRLEN];
    snprintf(path, sizeof(path), "%s/out.csv", dir);
    FILE *old = fopen(path, "w");
    fputs("old\n", old);
    fclose(old);

    struct llc_afile *f = NULL;
    assert_int_equal(llc_afile_open(path, &f, err, sizeof(err)), 0);
    fputs("new contents\n", llc_afile_stream(f));
    /* Until commit the old file is intact. */
    FILE *r = fopen(path, "r");
    char line[64] = {0};
    assert_non_null(fgets(line, sizeof(line), r));
    fclose(r);
    assert_string_equal(line, "old\n");
    assert_int_equal(llc_afile_commit(f, err, sizeof(err)), 0);

    r = fopen(path, "r");
    assert_non_null(fgets(line, sizeof(line), r));
    fclose(r);
    assert_string_equal(line, "new contents\n");
    assert_int_equal(entries_in_dir(), 1);
}

static void abort_removes_temporary(void **state)
{
    (void)state;
    char path[300], err[LLC_ERRLEN];
    snprintf(path, sizeof(path), "%s/aborted.json", dir);
    struct llc_afile *f = NULL;
    assert_int_equal(llc_afile_open(path, &f, err, sizeof(err)), 0);
    fputs("partial", llc_afile_stream(f));
    llc_afile_abort(f);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(entries_in_dir(), 1); /* only out.csv from the previous test */
}

static void open_in_missing_directory_fails_with_reason(void **state)
{
    (void)state;
    char err[LLC_ERRLEN] = "";
    struct llc_afile *f = NULL;
    assert_int_equal(llc_afile_open("/nonexistent-dir/x.json", &f, err, sizeof(err)), -ENOENT);
    assert_null(f);
    assert_non_null(strstr(err, "/nonexistent-dir/x.json: cannot create"));
}

static void json_doc_has_header_and_round_trips(void **state)
{
    (void)state;
    char path[300], err[LLC_ERRLEN];
    snprintf(path, sizeof(path), "%s/doc.json", dir);
    json_t *doc = llc_json_doc_new("llcprobe-test", 3);
    json_object_set_new(doc, "answer", json_integer(42));
    assert_int_equal(llc_json_write_atomic(path, doc, err, sizeof(err)), 0);
    json_decref(doc);

    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_object_get(back, "format")), "llcprobe-test");
    assert_int_equal(json_integer_value(json_object_get(back, "version")), 3);
    assert_int_equal(json_integer_value(json_object_get(back, "answer")), 42);
    json_decref(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commit_replaces_target_and_leaves_no_temporary),
        cmocka_unit_test(abort_removes_temporary),
        cmocka_unit_test(open_in_missing_directory_fails_with_reason),
        cmocka_unit_test(json_doc_has_header_and_round_trips),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
