/* util/lockfile: a planted symlink is refused, and a lock held by another
 * process is waited for only up to the timeout, with the holder named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "util/cli.h"
#include "util/lockfile.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/llc_lock_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void symlink_is_refused(void **state)
{
    (void)state;
    char lock[128], target[128], err[LLC_ERRLEN];
    snprintf(lock, sizeof(lock), "%s/x.lock", dir);
    snprintf(target, sizeof(target), "%s/created-through-link", dir);
    assert_int_equal(symlink(target, lock), 0);
    assert_int_equal(llc_lockfile_acquire(lock, 1.0, err, sizeof(err)), -ELOOP);
    assert_non_null(strstr(err, "is a symlink"));
    assert_int_not_equal(access(target, F_OK), 0);
}

static void held_lock_times_out_naming_the_holder(void **state)
{
    (void)state;
    char lock[128], err[LLC_ERRLEN];
    snprintf(lock, sizeof(lock), "%s/y.lock", dir);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    const pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        const int fd = open(lock, O_RDWR | O_CREAT, 0600);
        if (fd < 0 || flock(fd, LOCK_EX) != 0)
            _exit(1);
        (void)!write(ready[1], "x", 1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    const double t0 = llc_now();
    const int rc = llc_lockfile_acquire(lock, 0.5, err, sizeof(err));
    const double waited = llc_now() - t0;
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    assert_int_equal(rc, -ETIMEDOUT);
    assert_true(waited >= 0.45 && waited < 3.0);
    char want[64];
    snprintf(want, sizeof(want), "held by process %d", (int)holder);
    assert_non_null(strstr(err, want));
    /* Released (the holder died): taken at once. */
    const int fd = llc_lockfile_acquire(lock, 0.5, err, sizeof(err));
    assert_true(fd >= 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(symlink_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(held_lock_times_out_naming_the_holder, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
