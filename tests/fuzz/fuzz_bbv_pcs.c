/* exp-bbv's --pc-out-file (probe/ipsampling/bbv.c), `phase --bbv-pc FILE`,
 * read against a fixed small BBV file of four blocks. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/sampling.h"

static const char bbv_text[] = "T:1:10 :2:5 :4:1\nT:3:7 :1:2\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char bbv_path[64], path[64], err[LLC_ERRLEN];
    const int bbv_fd =
        fuzz_file((const uint8_t *)bbv_text, sizeof(bbv_text) - 1, bbv_path, sizeof(bbv_path));
    struct llc_sampling_bbv b = {0};
    if (llc_sampling_bbv_read(bbv_path, &b, err, sizeof(err)) < 0)
        abort();
    const int fd = fuzz_file(data, size, path, sizeof(path));
    (void)llc_sampling_bbv_read_pcs(path, &b, err, sizeof(err));
    llc_sampling_bbv_free(&b);
    close(fd);
    close(bbv_fd);
    return 0;
}
