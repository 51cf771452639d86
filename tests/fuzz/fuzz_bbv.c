/* valgrind exp-bbv output (probe/ipsampling/bbv.c), `phase --bbv FILE`. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/sampling.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_sampling_bbv b = {0};
    if (llc_sampling_bbv_read(path, &b, err, sizeof(err)) == 0)
        llc_sampling_bbv_free(&b);
    close(fd);
    return 0;
}
