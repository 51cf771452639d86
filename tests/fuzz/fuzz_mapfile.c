/* llcprobe-map JSON (probe/mapfile/mapfile.c) and the statistic a fit
 * takes from it. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_mapfile *m;
    if (llc_mapfile_read(path, &m, err, sizeof(err)) == 0) {
        double *x = malloc(m->units * sizeof(*x));
        uint8_t *excluded = malloc(m->units);
        if (!x || !excluded)
            abort();
        (void)llc_mapfile_statistic(m, x, excluded);
        free(x);
        free(excluded);
        llc_mapfile_free(m);
    }
    close(fd);
    return 0;
}
