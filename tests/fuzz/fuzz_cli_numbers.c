/* Numeric option values (probe/util/cli.c): llc_parse_u64/_range/double/
 * size and the ranged llc_opt_* the commands use. The value is checked
 * against its range whenever it is accepted. */
#include "fuzz.h"
#include "util/cli.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    uint64_t u = 0;
    double d;
    (void)llc_parse_u64(s, &u);
    (void)llc_parse_size(s, &u);
    if (llc_parse_double(s, &d) == 0 && !isfinite(d))
        abort();
    if (llc_parse_u64_range(s, 3, 1000, &u) == 0 && (u < 3 || u > 1000))
        abort();
    if (llc_opt_u64("fuzz", "count", s, 1, 1u << 20, &u) == 0 && (u < 1 || u > 1u << 20))
        abort();
    if (llc_opt_u64("fuzz", "seed", s, 0, UINT64_MAX, &u) == 0)
        (void)u;
    if (llc_opt_double("fuzz", "rate", s, 1e-3, 1e9, &d) == 0 && !(d >= 1e-3 && d <= 1e9))
        abort();
    if (llc_opt_size("fuzz", "size", s, 4096, 1ull << 40, &u) == 0 && (u < 4096 || u > 1ull << 40))
        abort();
    char buf[32];
    (void)llc_format_size(u, buf, sizeof(buf));
    free(s);
    return 0;
}
