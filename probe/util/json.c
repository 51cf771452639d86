#include "util/json.h"

#include <errno.h>
#include <math.h>

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/version.h"

json_t *llc_json_finite(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int llc_json_write_atomic(const char *path, const json_t *doc, char *err, size_t errlen)
{
    struct llc_afile *f = NULL;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    if (json_dumpf(doc, llc_afile_stream(f), JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
        fputc('\n', llc_afile_stream(f)) == EOF) {
        llc_afile_abort(f);
        return llc_errf(err, errlen, -EIO, "%s: cannot write JSON", path);
    }
    return llc_afile_commit(f, err, errlen);
}

json_t *llc_json_doc_new(const char *format, int version)
{
    return json_pack("{s:s, s:i, s:s}", "format", format, "version", version, "tool",
                     "llcprobe " LLCPROBE_VERSION_STRING);
}
