/* valgrind lackey's text as the trace recorder parses it from a pipe
 * (probe/trace/lackey.c), cut into chunks at arbitrary places: the first
 * byte of the input picks the chunk length. */
#include "fuzz.h"
#include "trace/lackey.h"

static int count(void *ctx, const struct llc_trace_rec *rec)
{
    (void)rec;
    (*(uint64_t *)ctx)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const size_t chunk = (size_t)data[0] + 1;
    data++;
    size--;
    uint64_t n = 0;
    struct llc_lackey_parser p;
    llc_lackey_init(&p, count, &n);
    int rc = 0;
    for (size_t off = 0; off < size && rc >= 0; off += chunk)
        rc = llc_lackey_feed(&p, (const char *)data + off, size - off < chunk ? size - off : chunk);
    if (rc >= 0)
        rc = llc_lackey_finish(&p);
    if (rc >= 0 && n != p.records)
        abort();
    return 0;
}
