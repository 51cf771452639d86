/* Streaming trace writer: codes records against the shared predictor into a
 * large buffer, written out in blocks to a temporary file that is renamed
 * into place only when the trace is complete. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "trace/format.h"
#include "util/atomic_file.h"
#include "util/version.h"

#define WRITE_BUF_SIZE (1u << 20)

struct llc_trace_writer {
    struct llc_afile *file;
    uint8_t *buf;
    size_t len;
    uint64_t flushed;
    uint32_t crc;
    int error; /* sticky: the first write error */
    struct llc_model model;
    uint64_t pending_run;
    uint64_t counts[4];
    char path[4096];
};

static int flush_buf(struct llc_trace_writer *w)
{
    if (w->error)
        return w->error;
    if (w->len == 0)
        return 0;
    w->crc = llc_trace_crc32(w->crc, w->buf, w->len);
    if (fwrite(w->buf, 1, w->len, llc_afile_stream(w->file)) != w->len)
        w->error = errno ? -errno : -EIO;
    w->flushed += w->len;
    w->len = 0;
    return w->error;
}

static uint8_t *put_string(uint8_t *p, const char *s, size_t max)
{
    const size_t n = strnlen(s, max);
    llc_put_le(p, n, 2);
    memcpy(p + 2, s, n);
    return p + 2 + n;
}

static void write_header(struct llc_trace_writer *w, const struct llc_trace_info *info)
{
    uint8_t *const start = w->buf;
    uint8_t *p = start + LLC_TRACE_PREAMBLE_LEN;
    llc_put_le(p, info->page_size, 4);
    p = put_string(p + 4, info->recorder, sizeof(info->recorder) - 1);
    p = put_string(p, info->command, sizeof(info->command) - 1);
    p = put_string(p, "llcprobe " LLCPROBE_VERSION_STRING, 64);
    memcpy(start, LLC_TRACE_MAGIC, LLC_TRACE_MAGIC_LEN);
    llc_put_le(start + 8, LLC_TRACE_VERSION, 2);
    llc_put_le(start + 10, 0, 2);
    llc_put_le(start + 12, (uint64_t)(p - start - LLC_TRACE_PREAMBLE_LEN), 4);
    w->len = (size_t)(p - start);
}

int llc_trace_writer_open(const char *path, const struct llc_trace_info *info,
                          struct llc_trace_writer **out, char *err, size_t errlen)
{
    *out = NULL;
    struct stat st;
    /* The output is renamed into place: that must not replace a device or
     * a directory (think of -o /dev/null run as root). */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return llc_errf(err, errlen, -EINVAL, "%s: exists and is not a regular file", path);
    struct llc_trace_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    int rc = 0;
    if (snprintf(w->path, sizeof(w->path), "%s", path) >= (int)sizeof(w->path)) {
        rc = llc_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
        goto out;
    }
    w->buf = malloc(WRITE_BUF_SIZE);
    if (!w->buf || llc_model_init(&w->model) < 0) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    rc = llc_afile_open(path, &w->file, err, errlen);
    if (rc < 0)
        goto out;
    write_header(w, info);
out:
    if (rc < 0) {
        llc_model_free(&w->model);
        free(w->buf);
        free(w);
    } else {
        *out = w;
    }
    return rc;
}

static void put_run(struct llc_trace_writer *w)
{
    const uint64_t n = w->pending_run;
    if (n == 0)
        return;
    if (n <= LLC_OP_RUN_INLINE_MAX) {
        w->buf[w->len++] = LLC_CONTROL_TAG(n);
    } else {
        w->buf[w->len++] = LLC_CONTROL_TAG(LLC_OP_RUN_VARINT);
        w->len = (size_t)(llc_put_varint(w->buf + w->len, n - LLC_OP_RUN_VARINT) - w->buf);
    }
    w->pending_run = 0;
}

static uint8_t *put_instr(const struct llc_model *m, const struct llc_trace_rec *r, uint8_t *p)
{
    uint8_t *const tag = p++;
    *tag = LLC_TRACE_INSTR;
    if (r->addr != m->next_ip) {
        *tag |= LLC_TAG_INSTR_JUMP;
        p = llc_put_varint(p, llc_zigzag((int64_t)(r->addr - m->next_ip)));
    }
    if (r->size >= 1 && r->size <= 15)
        *tag |= (uint8_t)(r->size << LLC_TAG_INSTR_LEN_SHIFT);
    else
        p = llc_put_varint(p, r->size);
    return p;
}

static uint8_t *put_data(const struct llc_model *m, const struct llc_model_entry *e,
                         const struct llc_trace_rec *r, uint8_t *p)
{
    uint8_t *const tag = p++;
    const uint32_t size_class = llc_size_class(r->size);
    *tag = (uint8_t)(r->kind | size_class << LLC_TAG_DATA_SIZE_SHIFT);
    if (r->pc != m->cur_pc) {
        *tag |= LLC_TAG_DATA_PC;
        p = llc_put_varint(p, llc_zigzag((int64_t)(r->pc - m->cur_pc)));
    }
    if (size_class == LLC_SIZE_CLASS_VARINT)
        p = llc_put_varint(p, r->size);
    const uint64_t predicted = e->last + (uint64_t)e->stride;
    if (r->addr == predicted)
        return p; /* LLC_AMODE_PREDICTED */
    const uint64_t bases[] = {predicted, e->last, m->last_of_kind[r->kind]};
    const enum llc_trace_amode modes[] = {LLC_AMODE_PRED_DELTA, LLC_AMODE_LAST_DELTA,
                                          LLC_AMODE_KIND_DELTA};
    uint64_t best = 0;
    unsigned best_len = 99, best_i = 0;
    for (unsigned i = 0; i < 3; i++) {
        const uint64_t z = llc_zigzag((int64_t)(r->addr - bases[i]));
        const unsigned len = llc_varint_len(z);
        if (len < best_len) {
            best = z;
            best_len = len;
            best_i = i;
        }
    }
    *tag |= (uint8_t)(modes[best_i] << LLC_TAG_DATA_MODE_SHIFT);
    return llc_put_varint(p, best);
}

int llc_trace_writer_put(struct llc_trace_writer *w, const struct llc_trace_rec *rec)
{
    if (rec->kind > LLC_TRACE_MODIFY)
        return -EINVAL;
    if (w->len + 2 * LLC_TRACE_MAX_REC > WRITE_BUF_SIZE) {
        const int rc = flush_buf(w);
        if (rc < 0)
            return rc;
    }
    struct llc_model_entry *const e = llc_model_context(&w->model);
    if (llc_model_matches(e, rec)) {
        /* Bounded so that a run's count always fits the reader's counter. */
        if (++w->pending_run == UINT32_MAX)
            put_run(w);
    } else {
        put_run(w);
        uint8_t *const p = w->buf + w->len;
        uint8_t *const q = rec->kind == LLC_TRACE_INSTR ? put_instr(&w->model, rec, p)
                                                        : put_data(&w->model, e, rec, p);
        w->len += (size_t)(q - p);
    }
    llc_model_update(&w->model, e, rec);
    w->counts[rec->kind]++;
    return 0;
}

uint64_t llc_trace_writer_bytes(const struct llc_trace_writer *w)
{
    return w->flushed + w->len + (w->pending_run ? 1 : 0);
}

static void free_writer(struct llc_trace_writer *w)
{
    llc_model_free(&w->model);
    free(w->buf);
    free(w);
}

int llc_trace_writer_close(struct llc_trace_writer *w, int exit_status, char *err, size_t errlen)
{
    put_run(w);
    w->buf[w->len++] = LLC_CONTROL_TAG(LLC_OP_END);
    int rc = flush_buf(w);
    if (rc < 0) {
        rc = llc_errf(err, errlen, rc, "%s: write failed: %s", w->path, strerror(-rc));
        llc_afile_abort(w->file);
        goto out;
    }
    uint8_t *p = w->buf;
    for (unsigned k = 0; k < 4; k++, p += 8)
        llc_put_le(p, w->counts[k], 8);
    llc_put_le(p, (uint32_t)exit_status, 4);
    w->crc = llc_trace_crc32(w->crc, w->buf, (size_t)(p + 4 - w->buf));
    llc_put_le(p + 4, w->crc, 4);
    memcpy(p + 8, LLC_TRACE_END_MAGIC, LLC_TRACE_MAGIC_LEN);
    if (fwrite(w->buf, 1, LLC_TRACE_TRAILER_LEN, llc_afile_stream(w->file)) !=
        LLC_TRACE_TRAILER_LEN) {
        rc = llc_errf(err, errlen, -EIO, "%s: write failed: %s", w->path, strerror(errno));
        llc_afile_abort(w->file);
        goto out;
    }
    rc = llc_afile_commit(w->file, err, errlen);
out:
    free_writer(w);
    return rc;
}

void llc_trace_writer_abort(struct llc_trace_writer *w)
{
    if (!w)
        return;
    llc_afile_abort(w->file);
    free_writer(w);
}
