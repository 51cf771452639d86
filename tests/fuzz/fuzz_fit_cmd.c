/* `llcprobe fit MAP` on a damaged map (probe/cmd/fit.c): the map reader,
 * the exclusion mask the command reads itself, and the fit of whatever
 * values the map holds. Outputs go to a scratch directory. */
#include "fuzz.h"
#include "cmd/commands.h"

#include <dirent.h>
#include <getopt.h>

static char dir[] = "/tmp/llcprobe-fuzz-fit-XXXXXX", prefix[64];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (d) {
        for (const struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.')
                (void)unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    (void)rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!prefix[0]) {
        if (!mkdtemp(dir))
            abort();
        atexit(remove_dir);
        snprintf(prefix, sizeof(prefix), "%s/out", dir);
    }
    char path[64];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    char *argv[] = {"fit", "--no-plots", "-q", "-o", prefix, path, NULL};
    optind = 0; /* glibc: start getopt afresh */
    (void)llc_cmd_fit(6, argv);
    close(fd);
    return 0;
}
