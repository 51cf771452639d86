/* CPUID dumps in `cpuid -r` text (probe/sysinfo/cpuid.c), the machine
 * descriptions `info --cpuid-dump` reads, and their decoding. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/sysinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[LLC_ERRLEN];
    char *text = fuzz_cstr(data, size);
    static struct llc_cpuid_dump dump;
    if (llc_cpuid_dump_parse(text, &dump, err, sizeof(err)) == 0) {
        /* A dump is a machine description: decoding it must not trust it. */
        static struct llc_cpu_info info;
        (void)llc_cpuid_decode(&dump, &info, err, sizeof(err));
    }
    free(text);
    return 0;
}
