/* Arena on small pages, pagemap frames, and the lines-by-low-bits helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static struct llc_arena *small_arena(size_t bytes)
{
    const struct llc_arena_options opt = {.page = LLC_ARENA_PAGE_SMALL};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    const int rc = llc_arena_create(bytes, &opt, &a, err, sizeof(err));
    if (rc != 0)
        fail_msg("small arena: %s", err);
    return a;
}

static void test_small_pages(void **state)
{
    (void)state;
    const long page = sysconf(_SC_PAGESIZE);
    struct llc_arena *a = small_arena(1000 * 1000);
    const struct llc_arena_info *in = llc_arena_info(a);
    assert_int_equal(llc_arena_page_size(a), page);
    assert_int_equal(llc_arena_size(a) % (size_t)page, 0);
    assert_true(llc_arena_size(a) >= 1000 * 1000);
    assert_int_equal((uintptr_t)llc_arena_base(a) % (uintptr_t)page, 0);
    assert_false(in->fallback);
    memset(llc_arena_base(a), 0xa5, llc_arena_size(a));
    if (geteuid() == 0)
        assert_true(in->locked);
    char err[LLC_ERRLEN] = "";
    uint64_t p0 = 0, p1 = 0;
    if (llc_arena_frames_known(a)) {
        assert_int_equal(llc_arena_paddr(a, 0, &p0, err, sizeof(err)), 0);
        assert_int_equal(llc_arena_paddr(a, (size_t)page + 65, &p1, err, sizeof(err)), 0);
        assert_int_equal(p0 % (uint64_t)page, 0);
        assert_int_equal(p1 % (uint64_t)page, 65);
        assert_true(p0 != 0);
        /* Distinct pages have distinct frames. */
        const size_t n = llc_arena_size(a) / (size_t)page;
        uint64_t *frames = calloc(n, sizeof(*frames));
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(llc_arena_paddr(a, i * (size_t)page, &frames[i], err, sizeof(err)), 0);
            for (size_t j = 0; j < i; j++)
                assert_true(frames[j] != frames[i]);
        }
        free(frames);
        assert_int_equal(llc_arena_refresh_frames(a, err, sizeof(err)) >= 0, 1);
    } else {
        assert_int_equal(in->frames, LLC_ARENA_FRAMES_HIDDEN);
        assert_non_null(strstr(in->frames_reason, "CAP_SYS_ADMIN"));
    }
    /* As root in these VMs the kernel hands out frame numbers. */
    if (geteuid() == 0)
        assert_int_equal(in->frames, LLC_ARENA_FRAMES_KNOWN);
    assert_int_equal(llc_arena_paddr(a, llc_arena_size(a), &p0, err, sizeof(err)), -ERANGE);
    assert_non_null(strstr(err, "outside"));
    assert_int_equal(llc_arena_release(a, err, sizeof(err)), 0);
}

/* Without CAP_SYS_ADMIN pagemap reads frame 0: checked as nobody in a child
 * when root, or directly otherwise. Returns a failure description or NULL. */
static const char *check_hidden_frames(void)
{
    const struct llc_arena_options opt = {.page = LLC_ARENA_PAGE_SMALL};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN];
    if (llc_arena_create(64 * 1024, &opt, &a, err, sizeof(err)) != 0)
        return "create failed";
    const char *why = NULL;
    const struct llc_arena_info *in = llc_arena_info(a);
    uint64_t p;
    size_t offs[32];
    static char text[LLC_ARENA_TEXT_LEN + 64];
    snprintf(text, sizeof(text), "frames not reported hidden: %s", in->frames_reason);
    if (in->frames != LLC_ARENA_FRAMES_HIDDEN)
        why = text;
    else if (!strstr(in->frames_reason, "CAP_SYS_ADMIN"))
        why = "reason does not name CAP_SYS_ADMIN";
    else if (llc_arena_paddr(a, 0, &p, err, sizeof(err)) != -ENODATA || !strstr(err, "unknown"))
        why = "paddr did not refuse clearly";
    else if (llc_arena_known_bits(a) != 4095)
        why = "known bits should be the page offset";
    else if (llc_arena_lines_matching(a, 64, 0x3000, 0x1000, offs, 32, err, sizeof(err)) !=
             -ENODATA)
        why = "bits above the page accepted without frames";
    else if (llc_arena_lines_matching(a, 64, 0xfc0, 0x240, offs, 32, err, sizeof(err)) != 16)
        why = "in-page bits should still select one line per page";
    llc_arena_release(a, err, sizeof(err));
    return why;
}

static void test_frames_hidden_without_cap(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        const char *why = check_hidden_frames();
        if (why)
            fail_msg("%s", why);
        return;
    }
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        /* A process that changed uid is not dumpable, which would make
         * /proc/self root's; an ordinary unprivileged process is. */
        const char *why = setgid(65534) || setuid(65534) || prctl(PR_SET_DUMPABLE, 1)
                              ? "setuid(nobody) failed"
                              : check_hidden_frames();
        if (why)
            (void)!write(pipefd[1], why, strlen(why));
        _exit(why ? 1 : 0);
    }
    close(pipefd[1]);
    char why[LLC_ARENA_TEXT_LEN + 64] = "";
    (void)!read(pipefd[0], why, sizeof(why) - 1);
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("as nobody: %s", why[0] ? why : "child crashed");
}

static void test_lines_matching(void **state)
{
    (void)state;
    char err[LLC_ERRLEN] = "";
    struct llc_arena *a = small_arena(256 * 1024);
    const size_t pages = llc_arena_size(a) / 4096;
    size_t offs[4096];
    /* In-page bits 6-11: exactly one line per page, at that offset. */
    long n =
        llc_arena_lines_matching(a, 64, 0xfc0, 0x240, offs, LLC_ARRAY_LEN(offs), err, sizeof(err));
    assert_int_equal(n, pages);
    for (long i = 0; i < n; i++) {
        assert_int_equal(offs[i] % 4096, 0x240);
        if (i)
            assert_true(offs[i] > offs[i - 1]);
    }
    /* Counting only, and truncation. */
    assert_int_equal(llc_arena_lines_matching(a, 64, 0xfc0, 0x240, NULL, 0, err, sizeof(err)),
                     pages);
    assert_int_equal(llc_arena_lines_matching(a, 64, 0xfc0, 0x240, offs, 3, err, sizeof(err)),
                     pages);
    assert_int_equal(llc_arena_lines_matching(a, 48, 0xfc0, 0x240, NULL, 0, err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(llc_arena_lines_matching(a, 64, 0xfc0, 0x1240, NULL, 0, err, sizeof(err)),
                     -EINVAL);
    if (llc_arena_frames_known(a)) {
        /* Bits 12-15 come from the frames: compare with a brute-force scan. */
        const uint64_t mask = 0xffc0;
        uint64_t p0;
        assert_int_equal(llc_arena_paddr(a, 0x80, &p0, err, sizeof(err)), 0);
        const uint64_t value = p0 & mask;
        n = llc_arena_lines_matching(a, 64, mask, value, offs, LLC_ARRAY_LEN(offs), err,
                                     sizeof(err));
        assert_true(n >= 1);
        long expect = 0;
        for (size_t off = 0; off < llc_arena_size(a); off += 64) {
            uint64_t p;
            assert_int_equal(llc_arena_paddr(a, off, &p, err, sizeof(err)), 0);
            if ((p & mask) == value) {
                assert_true(expect < n);
                assert_int_equal(offs[expect], off);
                expect++;
            }
        }
        assert_int_equal(n, expect);
    }
    llc_arena_release(a, err, sizeof(err));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct llc_arena *a = (struct llc_arena *)1;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_arena_create(0, NULL, &a, err, sizeof(err)), -EINVAL);
    assert_null(a);
    assert_non_null(strstr(err, "positive"));
    const struct llc_arena_options bad = {.page = (enum llc_arena_page)7};
    assert_int_equal(llc_arena_create(4096, &bad, &a, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_arena_release(NULL, err, sizeof(err)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_pages),
        cmocka_unit_test(test_frames_hidden_without_cap),
        cmocka_unit_test(test_lines_matching),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
