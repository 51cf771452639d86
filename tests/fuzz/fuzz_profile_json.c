/* llcprobe-profile JSON (probe/profile/profile_read.c), what `predict`
 * reads. What the reader accepts must pass the writer's own checks. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_profile p;
    llc_profile_init(&p);
    if (llc_profile_read(path, &p, err, sizeof(err)) == 0) {
        if (llc_profile_check(&p, "fuzz", err, sizeof(err)) != 0)
            abort();
        (void)llc_profile_check_predictable(&p, "fuzz", err, sizeof(err));
    }
    llc_profile_free(&p);
    close(fd);
    return 0;
}
