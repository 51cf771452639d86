/* Hugepage arenas and the pool reservation: restored exactly on release,
 * on failure and from the emergency path; refused without permission;
 * fallback to smaller pages with the reason. Pool logic runs on a fake
 * sysfs tree for everybody, and on the real pool when root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL_2M "/sys/kernel/mm/hugepages/hugepages-2048kB"

static uint64_t read_u64(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    unsigned long long v = 0;
    if (fscanf(f, "%llu", &v) != 1)
        fail_msg("%s: not a number", path);
    fclose(f);
    return v;
}

static void write_u64(const char *path, uint64_t v)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%" PRIu64 "\n", v);
    fclose(f);
}

/* A sysfs tree with a 2 MiB pool only: nr, free and resv as given. */
static char *fake_sysfs(uint64_t nr, uint64_t free_pages)
{
    static char root[] = "/tmp/llc-arena-sysfs-XXXXXX";
    strcpy(root, "/tmp/llc-arena-sysfs-XXXXXX");
    assert_non_null(mkdtemp(root));
    char path[256];
    const char *parts[] = {"/kernel", "/kernel/mm", "/kernel/mm/hugepages",
                           "/kernel/mm/hugepages/hugepages-2048kB"};
    for (size_t i = 0; i < LLC_ARRAY_LEN(parts); i++) {
        snprintf(path, sizeof(path), "%s%s", root, parts[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", root);
    write_u64(path, nr);
    snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", root);
    write_u64(path, free_pages);
    snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages", root);
    write_u64(path, 0);
    return root;
}

static void remove_fake(const char *root)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void test_fake_pool_restored_on_failure(void **state)
{
    (void)state;
    /* The "kernel" grants the reservation (the file takes the value) but
     * free_hugepages stays 0, so mapping is refused: the pool must be put
     * back. Runs as any user. */
    char *root = fake_sysfs(5, 0);
    char nr_path[256];
    snprintf(nr_path, sizeof(nr_path), "%s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
             root);
    const struct llc_arena_options opt = {
        .page = LLC_ARENA_PAGE_2M, .reserve = 2, .sysfs_root = root};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_arena_create(4 << 20, &opt, &a, err, sizeof(err)), -ENOMEM);
    assert_null(a);
    assert_non_null(strstr(err, "only 0 2 MiB hugepages are free and 2 are needed"));
    assert_int_equal(read_u64(nr_path), 5);
    remove_fake(root);
}

static void test_fake_fallback(void **state)
{
    (void)state;
    /* No 1 GiB pool at all and no free 2 MiB page: 1G -> 2M -> small. */
    char *root = fake_sysfs(0, 0);
    const struct llc_arena_options opt = {
        .page = LLC_ARENA_PAGE_1G, .allow_fallback = true, .sysfs_root = root};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_arena_create(3 << 20, &opt, &a, err, sizeof(err)), 0);
    const struct llc_arena_info *in = llc_arena_info(a);
    assert_true(in->fallback);
    assert_int_equal(in->page, LLC_ARENA_PAGE_SMALL);
    assert_int_equal(llc_arena_page_size(a), (size_t)sysconf(_SC_PAGESIZE));
    assert_non_null(strstr(in->fallback_reason, "1 GiB pages unavailable"));
    assert_non_null(strstr(in->fallback_reason, "using small pages"));
    assert_non_null(strstr(in->fallback_reason, "timing"));
    assert_int_equal(llc_arena_release(a, err, sizeof(err)), 0);
    /* Without fallback the same request fails and says why. */
    const struct llc_arena_options strict = {.page = LLC_ARENA_PAGE_2M, .sysfs_root = root};
    assert_int_equal(llc_arena_create(3 << 20, &strict, &a, err, sizeof(err)), -ENOMEM);
    assert_non_null(strstr(err, "--reserve"));
    remove_fake(root);
}

/* As an unprivileged user a reservation is refused, fallback or not. */
static const char *check_reserve_refused(void)
{
    static char why[LLC_ERRLEN + 64];
    const struct llc_arena_options opt = {
        .page = LLC_ARENA_PAGE_2M, .reserve = 1, .allow_fallback = true};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    const uint64_t free_pages = read_u64(POOL_2M "/free_hugepages");
    if (free_pages >= 1)
        return NULL; /* nothing to reserve: not this check's case */
    const int rc = llc_arena_create(4 << 20, &opt, &a, err, sizeof(err));
    if (rc != -EPERM || a || !strstr(err, "needs root") || !strstr(err, "nr_hugepages")) {
        snprintf(why, sizeof(why), "rc %d, message \"%s\"", rc, err);
        llc_arena_release(a, err, sizeof(err));
        return why;
    }
    return NULL;
}

static void test_reserve_needs_root(void **state)
{
    (void)state;
    if (access(POOL_2M, F_OK) != 0)
        skip();
    if (geteuid() != 0) {
        const char *why = check_reserve_refused();
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
        const char *why =
            setgid(65534) || setuid(65534) ? "setuid(nobody) failed" : check_reserve_refused();
        if (why)
            (void)!write(pipefd[1], why, strlen(why));
        _exit(why ? 1 : 0);
    }
    close(pipefd[1]);
    char why[LLC_ERRLEN + 64] = "";
    (void)!read(pipefd[0], why, sizeof(why) - 1);
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("as nobody: %s", why[0] ? why : "child crashed");
}

static bool root_with_pool(void)
{
    if (geteuid() != 0 || access(POOL_2M "/nr_hugepages", W_OK) != 0) {
        print_message("skipped: needs root and a writable %s/nr_hugepages\n", POOL_2M);
        return false;
    }
    return true;
}

static void test_real_reserve_restored(void **state)
{
    (void)state;
    if (!root_with_pool())
        skip();
    const uint64_t before = read_u64(POOL_2M "/nr_hugepages");
    const struct llc_arena_options opt = {.page = LLC_ARENA_PAGE_2M,
                                          .reserve = LLC_ARENA_RESERVE_NEEDED};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    const int rc = llc_arena_create(3 << 20, &opt, &a, err, sizeof(err));
    if (rc == -ENOMEM) {
        /* The kernel could not find 2 MiB of contiguous memory: still a
         * failure path, which must have restored the pool. */
        assert_int_equal(read_u64(POOL_2M "/nr_hugepages"), before);
        print_message("skipped: %s\n", err);
        skip();
    }
    if (rc != 0)
        fail_msg("%s", err);
    const struct llc_arena_info *in = llc_arena_info(a);
    assert_int_equal(llc_arena_page_size(a), 2 << 20);
    assert_int_equal(llc_arena_size(a), 4 << 20);
    assert_int_equal((uintptr_t)llc_arena_base(a) % (2 << 20), 0);
    assert_false(in->fallback);
    assert_true(in->locked);
    print_message("method: %s\npool: %" PRIu64 " -> %" PRIu64 "\nframes: %s\ncontiguity: %s\n",
                  in->method, in->pool_before, in->pool_raised_to, in->frames_reason,
                  in->contiguity_note);
    memset(llc_arena_base(a), 1, llc_arena_size(a));
    if (in->pool_raised_to) {
        assert_int_equal(in->pool_before, before);
        assert_true(read_u64(POOL_2M "/nr_hugepages") >= before + 1);
    }
    assert_int_equal(in->frames, LLC_ARENA_FRAMES_KNOWN);
    assert_true(in->contiguity_checked);
    assert_true(in->contiguous);
    uint64_t p;
    assert_int_equal(llc_arena_paddr(a, 0, &p, err, sizeof(err)), 0);
    assert_int_equal(p % (2 << 20), 0);
    assert_int_equal(llc_arena_paddr(a, (2 << 20) + 12345, &p, err, sizeof(err)), 0);
    assert_int_equal(p % (2 << 20), 12345);
    /* In-page bits of a hugepage reach bit 20: one line per 2 MiB page has
     * bits 6-20 equal to 0x1fffc0. */
    size_t offs[4];
    assert_int_equal(llc_arena_lines_matching(a, 64, 0x1fffc0, 0x1fffc0, offs, 4, err, sizeof(err)),
                     2);
    assert_int_equal(offs[0], 0x1fffc0);
    assert_int_equal(offs[1], (2 << 20) + 0x1fffc0);
    assert_int_equal(llc_arena_release(a, err, sizeof(err)), 0);
    assert_int_equal(read_u64(POOL_2M "/nr_hugepages"), before);
}

static void test_real_reserve_failure_restores(void **state)
{
    (void)state;
    if (!root_with_pool())
        skip();
    const uint64_t before = read_u64(POOL_2M "/nr_hugepages");
    if (read_u64(POOL_2M "/free_hugepages") >= 2)
        skip(); /* the pool already has enough for the too-small reservation */
    /* Reserving 1 page for an arena of 3 cannot work without fallback. */
    const struct llc_arena_options opt = {.page = LLC_ARENA_PAGE_2M, .reserve = 1};
    struct llc_arena *a = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_arena_create(6 << 20, &opt, &a, err, sizeof(err)), -ENOMEM);
    assert_null(a);
    assert_non_null(strstr(err, "hugepages"));
    assert_int_equal(read_u64(POOL_2M "/nr_hugepages"), before);
}

static void on_term(int sig)
{
    (void)sig;
    llc_arena_emergency_release();
    _exit(0);
}

static void test_real_emergency_release(void **state)
{
    (void)state;
    if (!root_with_pool())
        skip();
    const uint64_t before = read_u64(POOL_2M "/nr_hugepages");
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        signal(SIGTERM, on_term);
        const struct llc_arena_options opt = {.page = LLC_ARENA_PAGE_2M,
                                              .reserve = LLC_ARENA_RESERVE_NEEDED};
        struct llc_arena *a = NULL;
        char err[LLC_ERRLEN] = "";
        if (llc_arena_create(2 << 20, &opt, &a, err, sizeof(err)) != 0) {
            (void)!write(pipefd[1], err, strlen(err));
            _exit(2);
        }
        const uint64_t raised = llc_arena_info(a)->pool_raised_to;
        char msg[64];
        const int n = snprintf(msg, sizeof(msg), "raised %" PRIu64, raised);
        (void)!write(pipefd[1], msg, (size_t)n);
        raise(SIGTERM);
        _exit(3); /* not reached */
    }
    close(pipefd[1]);
    char msg[LLC_ERRLEN] = "";
    (void)!read(pipefd[0], msg, sizeof(msg) - 1);
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 2 && strstr(msg, "allocated only")) {
        assert_int_equal(read_u64(POOL_2M "/nr_hugepages"), before);
        print_message("skipped: %s\n", msg);
        skip();
    }
    if (WEXITSTATUS(status) != 0)
        fail_msg("child: %s", msg);
    print_message("child %s, pool before %" PRIu64 "\n", msg, before);
    assert_int_equal(read_u64(POOL_2M "/nr_hugepages"), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fake_pool_restored_on_failure),
        cmocka_unit_test(test_fake_fallback),
        cmocka_unit_test(test_reserve_needs_root),
        cmocka_unit_test(test_real_reserve_restored),
        cmocka_unit_test(test_real_reserve_failure_restores),
        cmocka_unit_test(test_real_emergency_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
