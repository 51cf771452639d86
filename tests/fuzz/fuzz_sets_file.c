/* `sample --sets FILE` (probe/cmd/sample.c): set ids separated by commas,
 * blanks or newlines, ranges, '#' comments. Errors print one line on
 * stderr (scripts/fuzz.sh runs with -close_fd_mask=2). */
#include "fuzz.h"
#include "cmd/sample_out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    uint32_t *ids = NULL;
    size_t n = 0;
    if (llc_sample_read_sets(path, &ids, &n) == 0)
        free(ids);
    close(fd);
    return 0;
}
