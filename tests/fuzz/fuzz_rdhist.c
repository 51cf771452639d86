/* The reuse histogram's text form (statmodel/hist_text.c). What parses must
 * format, and its formatted text must parse back to the same text. */
#include "fuzz.h"
#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"

static char *format(const struct llc_statmodel_hist *h)
{
    char err[LLC_ERRLEN];
    const int len = llc_statmodel_hist_format(h, NULL, 0, err, sizeof(err));
    if (len < 0)
        abort();
    char *buf = malloc((size_t)len + 1);
    if (!buf || llc_statmodel_hist_format(h, buf, (size_t)len + 1, err, sizeof(err)) != len)
        abort();
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[LLC_ERRLEN];
    char *text = fuzz_cstr(data, size);
    struct llc_statmodel_hist *h;
    if (llc_statmodel_hist_create(&h, err, sizeof(err)) < 0)
        abort();
    if (llc_statmodel_hist_parse(text, h, err, sizeof(err)) == 0) {
        char *once = format(h);
        if (llc_statmodel_hist_parse(once, h, err, sizeof(err)) != 0)
            abort();
        char *twice = format(h);
        if (strcmp(once, twice) != 0)
            abort();
        free(once);
        free(twice);
    }
    llc_statmodel_hist_destroy(h);
    free(text);
    return 0;
}
