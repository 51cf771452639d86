/* llcprobe-calibration JSON (probe/mapfile/calibfile.c) and the inversion
 * `sample` makes with it. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_calib c;
    if (llc_calib_read(path, &c, err, sizeof(err)) == 0) {
        static const double probes[] = {-1.0, 0.0, 0.5, 1.0, 3.7, 64.0, 1e9, INFINITY, NAN};
        for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
            (void)llc_calib_lines(&c, probes[i]);
    }
    close(fd);
    return 0;
}
