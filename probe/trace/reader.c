/* Streaming trace reader: validates the header and (for regular files) the
 * trailer at open, so that a truncated or foreign file is refused before a
 * consumer sees a record, then decodes records from large buffered reads. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "trace/format.h"

#define READ_BUF_SIZE (1u << 20)

struct llc_trace_reader {
    int fd;
    bool eof;
    bool seekable;       /* regular file: trailer checked at open */
    uint64_t end_tag_at; /* seekable: file offset of the END tag */
    uint8_t *buf;
    const uint8_t *p, *end; /* undecoded bytes */
    uint64_t buf_off;       /* file offset of buf[0] */
    const uint8_t *crc_from;
    uint32_t crc;
    uint32_t trailer_crc;
    uint8_t trailer[LLC_TRACE_TRAILER_LEN];
    struct llc_model model;
    uint64_t run_left;
    uint64_t left; /* seekable: records the trailer says are still to come */
    uint64_t counts[4];
    int state; /* 0 reading, 1 finished, negative: the error */
    char errmsg[LLC_ERRLEN];
    struct llc_trace_info info;
    char tool[64];
    char path[1024];
};

static uint64_t offset_of(const struct llc_trace_reader *r, const uint8_t *p)
{
    return r->buf_off + (uint64_t)(p - r->buf);
}

/* Keeps the undecoded bytes and reads until the buffer is full or the file
 * ends. Bytes that leave the buffer enter the checksum first. */
static int refill(struct llc_trace_reader *r)
{
    r->crc = llc_trace_crc32(r->crc, r->crc_from, (size_t)(r->p - r->crc_from));
    const size_t keep = (size_t)(r->end - r->p);
    r->buf_off += (uint64_t)(r->p - r->buf);
    memmove(r->buf, r->p, keep);
    r->p = r->crc_from = r->buf;
    size_t have = keep;
    while (!r->eof && have < READ_BUF_SIZE) {
        const ssize_t n = read(r->fd, r->buf + have, READ_BUF_SIZE - have);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            r->eof = true;
        have += (size_t)n;
    }
    r->end = r->buf + have;
    return 0;
}

/* Records the error (every later call repeats it) as "<path>: <why>". */
static int fail(struct llc_trace_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct llc_trace_reader *r, int code, const char *fmt, ...)
{
    int n = snprintf(r->errmsg, sizeof(r->errmsg), "%.300s: ", r->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->errmsg + n, sizeof(r->errmsg) - (size_t)n, fmt, ap);
    va_end(ap);
    r->state = code;
    return code;
}

static int truncated(struct llc_trace_reader *r)
{
    return fail(r, -EPROTO, "truncated at byte %llu", (unsigned long long)offset_of(r, r->end));
}

static int get_string(const uint8_t **pp, const uint8_t *end, char *dst, size_t cap)
{
    if (end - *pp < 2)
        return -1;
    const size_t n = (size_t)llc_get_le(*pp, 2);
    if ((size_t)(end - *pp - 2) < n)
        return -1;
    const size_t keep = n < cap - 1 ? n : cap - 1;
    memcpy(dst, *pp + 2, keep);
    dst[keep] = '\0';
    *pp += 2 + n;
    return 0;
}

static int parse_header(struct llc_trace_reader *r)
{
    const size_t have = (size_t)(r->end - r->p);
    if (have == 0)
        return fail(r, -EPROTO, "empty file, not an llcprobe trace");
    const size_t cmp = have < LLC_TRACE_MAGIC_LEN ? have : LLC_TRACE_MAGIC_LEN;
    if (memcmp(r->p, LLC_TRACE_MAGIC, cmp) != 0)
        return fail(r, -EPROTO, "not an llcprobe trace");
    if (have < LLC_TRACE_PREAMBLE_LEN)
        return truncated(r);
    const unsigned version = (unsigned)llc_get_le(r->p + 8, 2);
    if (version > LLC_TRACE_VERSION)
        return fail(r, -EPROTO,
                    "trace format version %u is newer than this llcprobe reads (%d); "
                    "upgrade llcprobe",
                    version, LLC_TRACE_VERSION);
    if (version == 0)
        return fail(r, -EPROTO, "not an llcprobe trace (format version 0)");
    const uint64_t body_len = llc_get_le(r->p + 12, 4);
    if (body_len > LLC_TRACE_MAX_BODY)
        return fail(r, -EPROTO, "corrupt header (length %llu)", (unsigned long long)body_len);
    if (have < LLC_TRACE_PREAMBLE_LEN + body_len)
        return truncated(r);
    const uint8_t *q = r->p + LLC_TRACE_PREAMBLE_LEN;
    const uint8_t *const body_end = q + body_len;
    if (body_end - q < 4)
        return fail(r, -EPROTO, "corrupt header at byte %d", LLC_TRACE_PREAMBLE_LEN);
    r->info.page_size = (uint32_t)llc_get_le(q, 4);
    q += 4;
    if (get_string(&q, body_end, r->info.recorder, sizeof(r->info.recorder)) < 0 ||
        get_string(&q, body_end, r->info.command, sizeof(r->info.command)) < 0 ||
        get_string(&q, body_end, r->tool, sizeof(r->tool)) < 0)
        return fail(r, -EPROTO, "corrupt header at byte %d", LLC_TRACE_PREAMBLE_LEN);
    /* Later fields of a same-version writer would go here; skip them. */
    r->p = body_end;
    return 0;
}

static void get_trailer(struct llc_trace_reader *r, const uint8_t *t)
{
    memcpy(r->trailer, t, LLC_TRACE_TRAILER_LEN);
    r->info.n_instr = llc_get_le(t, 8);
    r->info.n_load = llc_get_le(t + 8, 8);
    r->info.n_store = llc_get_le(t + 16, 8);
    r->info.n_modify = llc_get_le(t + 24, 8);
    r->info.exit_status = (int32_t)(uint32_t)llc_get_le(t + 32, 4);
    r->trailer_crc = (uint32_t)llc_get_le(t + LLC_TRACE_TRAILER_CRC_AT, 4);
}

/* Records per byte of file past which the checksum is checked at open. A
 * run of predicted records costs a few bytes however long it is, so a
 * damaged trailer count can have a small file decoded for minutes before
 * the END tag's checksum refuses it (the fuzzer found one of 307 bytes
 * claiming 1.8e19 records). Reading such a file once more first costs at
 * most 1/64 of decoding what it claims. */
#define CRC_FIRST_RECORDS_PER_BYTE 64.0

/* The whole-file checksum (magic to exit status) against the trailer's. */
static int check_crc_first(struct llc_trace_reader *r, uint64_t size)
{
    const uint64_t n = size - LLC_TRACE_MAGIC_LEN - 4;
    uint8_t *b = malloc(1u << 16);
    if (!b)
        return fail(r, -ENOMEM, "out of memory");
    uint32_t crc = 0;
    int rc = 0;
    for (uint64_t off = 0; rc == 0 && off < n;) {
        const size_t len = n - off < (1u << 16) ? (size_t)(n - off) : (1u << 16);
        if (pread(r->fd, b, len, (off_t)off) != (ssize_t)len)
            rc = fail(r, -EIO, "read error at byte %llu", (unsigned long long)off);
        crc = llc_trace_crc32(crc, b, len);
        off += len;
    }
    free(b);
    if (rc == 0 && crc != r->trailer_crc)
        rc = fail(r, -EPROTO, "checksum mismatch: the file is corrupt");
    return rc;
}

/* A regular file must end with END tag + trailer: checked up front so that a
 * cut file is refused at open rather than after its records were used. */
static int check_trailer(struct llc_trace_reader *r, uint64_t size)
{
    const uint64_t header_end = offset_of(r, r->p);
    if (size < header_end + 1 + LLC_TRACE_TRAILER_LEN)
        return fail(r, -EPROTO, "truncated at byte %llu (no end marker)", (unsigned long long)size);
    uint8_t t[1 + LLC_TRACE_TRAILER_LEN];
    const off_t at = (off_t)(size - sizeof(t));
    if (pread(r->fd, t, sizeof(t), at) != (ssize_t)sizeof(t))
        return fail(r, -EIO, "cannot read the trailer at byte %lld", (long long)at);
    if (memcmp(t + sizeof(t) - LLC_TRACE_MAGIC_LEN, LLC_TRACE_END_MAGIC, LLC_TRACE_MAGIC_LEN) !=
            0 ||
        t[0] != LLC_CONTROL_TAG(LLC_OP_END))
        return fail(r, -EPROTO, "truncated at byte %llu (no end marker)", (unsigned long long)size);
    get_trailer(r, t + 1);
    r->end_tag_at = (uint64_t)at;
    r->left = r->info.n_instr + r->info.n_load + r->info.n_store + r->info.n_modify;
    /* in doubles: damaged counts may overflow the sum */
    const double claimed = (double)r->info.n_instr + (double)r->info.n_load +
                           (double)r->info.n_store + (double)r->info.n_modify;
    return claimed > CRC_FIRST_RECORDS_PER_BYTE * (double)size ? check_crc_first(r, size) : 0;
}

int llc_trace_reader_open(const char *path, struct llc_trace_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_trace_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    int rc = 0;
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->info.exit_status = -1;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        rc = llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
        goto out;
    }
    struct stat st;
    r->buf = malloc(READ_BUF_SIZE);
    if (fstat(r->fd, &st) < 0 || !r->buf || llc_model_init(&r->model) < 0) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: cannot set up the reader", path);
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = llc_errf(err, errlen, -EISDIR, "%s: is a directory", path);
        goto out;
    }
    r->seekable = S_ISREG(st.st_mode);
    r->p = r->end = r->crc_from = r->buf;
    rc = refill(r);
    if (rc < 0) {
        rc = llc_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
        goto out;
    }
    rc = parse_header(r);
    if (rc == 0 && r->seekable)
        rc = check_trailer(r, (uint64_t)st.st_size);
    if (rc < 0)
        llc_errf(err, errlen, rc, "%s", r->errmsg);
out:
    if (rc < 0)
        llc_trace_reader_close(r);
    else
        *out = r;
    return rc;
}

const struct llc_trace_info *llc_trace_reader_info(const struct llc_trace_reader *r)
{
    return &r->info;
}

const char *llc_trace_reader_tool(const struct llc_trace_reader *r)
{
    return r->tool;
}

static int finish(struct llc_trace_reader *r, const uint8_t *after_end_tag)
{
    r->crc = llc_trace_crc32(r->crc, r->crc_from, (size_t)(after_end_tag - r->crc_from));
    r->crc_from = r->p = after_end_tag;
    if (!r->seekable) {
        if (r->end - r->p < LLC_TRACE_TRAILER_LEN && refill(r) < 0)
            return fail(r, -EIO, "read error at byte %llu", (unsigned long long)offset_of(r, r->p));
        if (r->end - r->p < LLC_TRACE_TRAILER_LEN)
            return truncated(r);
        if (memcmp(r->p + LLC_TRACE_TRAILER_LEN - LLC_TRACE_MAGIC_LEN, LLC_TRACE_END_MAGIC,
                   LLC_TRACE_MAGIC_LEN) != 0)
            return fail(r, -EPROTO, "corrupt trailer at byte %llu",
                        (unsigned long long)offset_of(r, r->p));
        get_trailer(r, r->p);
    }
    /* The checksum covers the counts and the exit status too. */
    r->crc = llc_trace_crc32(r->crc, r->trailer, LLC_TRACE_TRAILER_CRC_AT);
    if (r->trailer_crc != r->crc)
        return fail(r, -EPROTO, "checksum mismatch: the file is corrupt");
    if (r->counts[0] != r->info.n_instr || r->counts[1] != r->info.n_load ||
        r->counts[2] != r->info.n_store || r->counts[3] != r->info.n_modify)
        return fail(r, -EPROTO, "record counts disagree with the trailer: the file is corrupt");
    r->state = 1;
    return 0;
}

static int corrupt(struct llc_trace_reader *r, const uint8_t *at)
{
    return fail(r, -EPROTO, "corrupt record at byte %llu", (unsigned long long)offset_of(r, at));
}

/* Decodes one explicitly coded record whose tag is at r->p. */
static int decode_explicit(struct llc_trace_reader *r, const uint8_t *lim,
                           struct llc_trace_rec *rec, const struct llc_model_entry *e)
{
    const uint8_t *const start = r->p;
    const uint8_t *q = start + 1;
    const uint8_t tag = *start;
    const struct llc_model *const m = &r->model;
    uint64_t v;
    rec->kind = LLC_TAG_KIND(tag);
    if (rec->kind == LLC_TRACE_INSTR) {
        rec->pc = 0;
        rec->addr = m->next_ip;
        if (tag & LLC_TAG_INSTR_JUMP) {
            if (llc_get_varint(&q, lim, &v) < 0)
                goto short_record;
            rec->addr += (uint64_t)llc_unzigzag(v);
        }
        rec->size = tag >> LLC_TAG_INSTR_LEN_SHIFT;
    } else {
        rec->pc = m->cur_pc;
        if (tag & LLC_TAG_DATA_PC) {
            if (llc_get_varint(&q, lim, &v) < 0)
                goto short_record;
            rec->pc += (uint64_t)llc_unzigzag(v);
        }
        const unsigned size_class = (tag >> LLC_TAG_DATA_SIZE_SHIFT) & 7u;
        rec->size = size_class == LLC_SIZE_CLASS_VARINT ? 0 : 1u << size_class;
        const unsigned mode = (tag >> LLC_TAG_DATA_MODE_SHIFT) & 3u;
        const uint64_t predicted = e->last + (uint64_t)e->stride;
        uint64_t base = predicted;
        if (mode == LLC_AMODE_LAST_DELTA)
            base = e->last;
        else if (mode == LLC_AMODE_KIND_DELTA)
            base = m->last_of_kind[rec->kind];
        if (size_class == LLC_SIZE_CLASS_VARINT) {
            if (llc_get_varint(&q, lim, &v) < 0)
                goto short_record;
            if (v > UINT32_MAX)
                return corrupt(r, start);
            rec->size = (uint32_t)v;
        }
        rec->addr = base;
        if (mode != LLC_AMODE_PREDICTED) {
            if (llc_get_varint(&q, lim, &v) < 0)
                goto short_record;
            rec->addr += (uint64_t)llc_unzigzag(v);
        }
        r->p = q;
        return 0;
    }
    if (rec->size == 0) {
        if (llc_get_varint(&q, lim, &v) < 0)
            goto short_record;
        if (v > UINT32_MAX)
            return corrupt(r, start);
        rec->size = (uint32_t)v;
    }
    r->p = q;
    return 0;
short_record:
    return lim < r->end || !r->eof ? corrupt(r, start) : truncated(r);
}

int llc_trace_reader_next(struct llc_trace_reader *r, struct llc_trace_rec *rec, char *err,
                          size_t errlen)
{
    if (r->state != 0) {
        if (r->state < 0)
            llc_errf(err, errlen, r->state, "%s", r->errmsg);
        return r->state < 0 ? r->state : 0;
    }
    struct llc_model_entry *const e = llc_model_context(&r->model);
    if (r->run_left == 0) {
        if (r->end - r->p < LLC_TRACE_MAX_REC && !r->eof) {
            const int rc = refill(r);
            if (rc < 0) {
                fail(r, rc, "read error at byte %llu", (unsigned long long)offset_of(r, r->p));
                return llc_errf(err, errlen, rc, "%s", r->errmsg);
            }
        }
        const uint8_t *lim = r->end;
        if (r->seekable && r->end_tag_at - r->buf_off < (uint64_t)(r->end - r->buf))
            lim = r->buf + (r->end_tag_at - r->buf_off);
        int rc = 0;
        if (r->p >= r->end) {
            rc = truncated(r);
        } else if ((*r->p & 7u) == LLC_TAG_CONTROL) {
            const unsigned op = *r->p >> 3;
            const uint8_t *q = r->p + 1;
            uint64_t n = op;
            if (op == LLC_OP_END) {
                if (r->seekable && offset_of(r, r->p) != r->end_tag_at)
                    rc = corrupt(r, r->p);
                else
                    rc = finish(r, q);
                if (rc == 0)
                    return 0;
            } else if (r->p >= lim || op > LLC_OP_RUN_VARINT) {
                rc = corrupt(r, r->p);
            } else if (op == LLC_OP_RUN_VARINT) {
                if (llc_get_varint(&q, lim, &n) < 0 || n >= UINT32_MAX)
                    rc = corrupt(r, r->p);
                n += LLC_OP_RUN_VARINT;
            }
            /* A damaged run length must not produce billions of records. */
            if (rc == 0 && r->seekable && n > r->left)
                rc = corrupt(r, r->p);
            if (rc == 0) {
                r->run_left = n;
                r->p = q;
            }
        } else if (r->p >= lim || (r->seekable && r->left == 0)) {
            rc = corrupt(r, r->p);
        } else {
            rc = decode_explicit(r, lim, rec, e);
            if (rc == 0)
                goto learn;
        }
        if (rc < 0)
            return llc_errf(err, errlen, rc, "%s", r->errmsg);
    }
    llc_model_predict(e, rec);
    r->run_left--;
learn:
    r->left--;
    llc_model_update(&r->model, e, rec);
    r->counts[rec->kind]++;
    return 1;
}

void llc_trace_reader_close(struct llc_trace_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    llc_model_free(&r->model);
    free(r->buf);
    free(r);
}
