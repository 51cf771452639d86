/* llcprobe-fit JSON (probe/mapfile/fitfile_read.c), what `sample --fit` reads. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_fitfile *f;
    if (llc_fitfile_read(path, &f, err, sizeof(err)) == 0)
        llc_fitfile_free(f);
    close(fd);
    return 0;
}
