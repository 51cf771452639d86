/* Numbers and byte sizes in strings: the parsers behind every option and
 * every spec string (workloads, sets). Pure: the model modules use them. */
#ifndef LLC_PARSE_PARSE_H
#define LLC_PARSE_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Whole numbers: decimal, 0x hex, or scientific with an integral value
 * (1e6). Rejects signs, garbage and overflow. */
int llc_parse_u64(const char *s, uint64_t *out);
/* Like llc_parse_u64 with bounds (inclusive). */
int llc_parse_u64_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Finite real numbers. */
int llc_parse_double(const char *s, double *out);
/* Byte sizes: a number with an optional suffix K/M/G/T or KiB/MiB/GiB/TiB
 * (both binary: 1K = 1024), or B. */
int llc_parse_size(const char *s, uint64_t *out);
/* Formats a byte count as "32 MiB", "1.5 KiB", "100 B". */
const char *llc_format_size(uint64_t bytes, char *buf, size_t len);

#endif
