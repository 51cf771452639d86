/* The trace file layout and the record model shared by the writer and the
 * reader. probe/trace/FORMAT.md is the prose version of this file; keep the
 * two in step.
 *
 * Records are coded against a predictor that the writer and the reader run
 * in lock step: a record equal to the prediction costs nothing but a share
 * of a run-length byte, anything else is coded explicitly relative to the
 * prediction or to the previous address. Both sides update the predictor
 * with every record in the same way, so the predictor's state is never
 * stored. */
#ifndef LLC_TRACE_FORMAT_H
#define LLC_TRACE_FORMAT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/trace.h"

/* "\x89LLCTRC\n": the high byte and the newline catch text-mode mangling,
 * like PNG's signature. */
#define LLC_TRACE_MAGIC "\x89LLCTRC\n"
#define LLC_TRACE_MAGIC_LEN 8
#define LLC_TRACE_END_MAGIC "LLCTEND\n"
#define LLC_TRACE_VERSION 1

/* magic, u16 version, u16 flags, u32 length of the header body. */
#define LLC_TRACE_PREAMBLE_LEN 16
/* Header body: u32 page size, then three strings each as u16 length +
 * bytes: recorder, command, tool. */
#define LLC_TRACE_MAX_BODY 4096

/* After the END tag: four u64 counts, i32 exit status, u32 CRC-32 of every
 * byte before it (magic to exit status), end magic. */
#define LLC_TRACE_TRAILER_CRC_AT (4 * 8 + 4)
#define LLC_TRACE_TRAILER_LEN (LLC_TRACE_TRAILER_CRC_AT + 4 + 8)
/* Longest explicit record: tag, pc, address, size as varints. */
#define LLC_TRACE_MAX_REC 32

/* Tag byte. Low two bits: kind. Data tags (kind 1-3):
 *   bits 2-4 size class (1,2,4,8,16,32,64 bytes; 7 = varint size follows)
 *   bits 5-6 address mode (enum llc_trace_amode)
 *   bit 7    pc follows as zig-zag delta from the current pc
 * Instruction tags (kind 0, bit 2 clear):
 *   bit 3    address follows as zig-zag delta from the sequential address
 *   bits 4-7 length 1..15 (0 = varint length follows)
 * Control tags (kind 0, bit 2 set): bits 3-7 opcode. */
#define LLC_TAG_KIND(t) ((t)&3u)
#define LLC_TAG_CONTROL 0x04u
#define LLC_TAG_DATA_SIZE_SHIFT 2
#define LLC_TAG_DATA_MODE_SHIFT 5
#define LLC_TAG_DATA_PC 0x80u
#define LLC_TAG_INSTR_JUMP 0x08u
#define LLC_TAG_INSTR_LEN_SHIFT 4
#define LLC_SIZE_CLASS_VARINT 7u

enum llc_trace_amode {
    LLC_AMODE_PREDICTED = 0,  /* address exactly as predicted */
    LLC_AMODE_PRED_DELTA = 1, /* delta from the predicted address */
    LLC_AMODE_LAST_DELTA = 2, /* delta from the context's last address */
    LLC_AMODE_KIND_DELTA = 3, /* delta from the previous address of the same kind */
};

/* Control opcodes: 0 ends the records, 1..29 is a run of that many
 * predicted records, 30 a run of 30 + varint records, 31 reserved. */
#define LLC_OP_END 0u
#define LLC_OP_RUN_INLINE_MAX 29u
#define LLC_OP_RUN_VARINT 30u
#define LLC_CONTROL_TAG(op) ((uint8_t)(LLC_TAG_CONTROL | ((op) << 3)))

static inline uint32_t llc_size_class(uint32_t size)
{
    switch (size) {
    case 1:
        return 0;
    case 2:
        return 1;
    case 4:
        return 2;
    case 8:
        return 3;
    case 16:
        return 4;
    case 32:
        return 5;
    case 64:
        return 6;
    default:
        return LLC_SIZE_CLASS_VARINT;
    }
}

static inline uint64_t llc_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t llc_unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline uint8_t *llc_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline unsigned llc_varint_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads a varint from [*pp, end). Returns 0, or -1 if the bytes run out or
 * the value does not fit 64 bits. */
static inline int llc_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        const uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

static inline void llc_put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t llc_get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* --- predictor ---------------------------------------------------------
 * A context is (current pc, number of data records since it was set): the
 * position in the program's instruction stream. Each context remembers the
 * record that followed it last time and the address stride, which predicts
 * straight-line code and taken branches (instructions) and strided or
 * repeated accesses (data). Collisions in the table only cost compression:
 * both sides see the same collisions. */
#define LLC_MODEL_BITS 16
#define LLC_MODEL_SLOTS (1u << LLC_MODEL_BITS)
#define LLC_MODEL_MAX_SLOT 255u

struct llc_model_entry {
    uint64_t last;  /* address of the record that followed this context */
    int64_t stride; /* data: difference of its last two addresses */
    uint64_t pc;    /* data: its pc */
    uint32_t size;
    uint8_t kind;
};

struct llc_model {
    struct llc_model_entry *table;
    uint64_t cur_pc;
    uint64_t next_ip; /* address of the instruction after the last one */
    uint64_t last_of_kind[4];
    uint32_t slot;
};

static inline int llc_model_init(struct llc_model *m)
{
    memset(m, 0, sizeof(*m));
    m->table = calloc(LLC_MODEL_SLOTS, sizeof(*m->table));
    return m->table ? 0 : -1;
}

static inline void llc_model_free(struct llc_model *m)
{
    free(m->table);
    m->table = NULL;
}

static inline struct llc_model_entry *llc_model_context(const struct llc_model *m)
{
    const uint64_t h = (m->cur_pc ^ ((uint64_t)m->slot << 56) ^ m->slot) * 0x9E3779B97F4A7C15ull;
    return &m->table[h >> (64 - LLC_MODEL_BITS)];
}

static inline void llc_model_predict(const struct llc_model_entry *e, struct llc_trace_rec *rec)
{
    rec->kind = e->kind;
    rec->size = e->size;
    rec->addr = e->last + (uint64_t)e->stride;
    rec->pc = e->kind == LLC_TRACE_INSTR ? 0 : e->pc;
}

static inline int llc_model_matches(const struct llc_model_entry *e, const struct llc_trace_rec *r)
{
    if (r->kind != e->kind || r->size != e->size || r->addr != e->last + (uint64_t)e->stride)
        return 0;
    return r->kind == LLC_TRACE_INSTR || r->pc == e->pc;
}

/* Learns from `r`, which followed context `e` (looked up before `r`). */
static inline void llc_model_update(struct llc_model *m, struct llc_model_entry *e,
                                    const struct llc_trace_rec *r)
{
    if (r->kind == LLC_TRACE_INSTR) {
        /* Branch targets repeat; a stride between them means nothing. */
        e->stride = 0;
        m->cur_pc = r->addr;
        m->slot = 0;
        m->next_ip = r->addr + r->size;
    } else {
        e->stride = e->kind == r->kind ? (int64_t)(r->addr - e->last) : 0;
        e->pc = r->pc;
        /* A new pc starts a new context, so that recorders without
         * instruction records get per-pc contexts too. */
        if (r->pc != m->cur_pc) {
            m->cur_pc = r->pc;
            m->slot = 0;
        }
        if (m->slot < LLC_MODEL_MAX_SLOT)
            m->slot++;
    }
    e->last = r->addr;
    e->kind = r->kind;
    e->size = r->size;
    m->last_of_kind[r->kind] = r->addr;
}

/* CRC-32 (IEEE 802.3, reflected), continued from `crc` (0 to start). */
uint32_t llc_trace_crc32(uint32_t crc, const void *buf, size_t len);

#endif
