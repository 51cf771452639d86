/* The binary trace reader (probe/trace/reader.c): header, predictor-coded
 * records, counts and CRC at the end. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[LLC_ERRLEN];
    const int fd = fuzz_file(data, size, path, sizeof(path));
    struct llc_trace_reader *r;
    if (llc_trace_reader_open(path, &r, err, sizeof(err)) == 0) {
        const struct llc_trace_info *info = llc_trace_reader_info(r);
        (void)llc_trace_reader_tool(r);
        struct llc_trace_rec rec;
        uint64_t n = 0;
        int rc;
        while ((rc = llc_trace_reader_next(r, &rec, err, sizeof(err))) == 1)
            n++;
        /* A trace that reads to its end has as many records as it says. */
        if (rc == 0 && n != info->n_instr + info->n_load + info->n_store + info->n_modify)
            abort();
        llc_trace_reader_close(r);
    }
    close(fd);
    return 0;
}
