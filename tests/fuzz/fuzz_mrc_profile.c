/* The runtime's reuse profile text (probe/mrc/profile.c), as `mrc` reads it
 * back from an instrumented program. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/reusefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[LLC_ERRLEN];
    char *text = fuzz_cstr(data, size);
    struct llc_statmodel_hist *h;
    if (llc_statmodel_hist_create(&h, err, sizeof(err)) < 0)
        abort();
    struct llc_reusefile_info info;
    struct llc_reusefile_windows w = {0};
    if (llc_reusefile_parse(text, "fuzz", &info, h, &w, err, sizeof(err)) == 0)
        llc_reusefile_windows_free(&w);
    llc_statmodel_hist_destroy(h);
    free(text);
    return 0;
}
