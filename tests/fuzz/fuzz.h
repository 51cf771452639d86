/* Shared by the libFuzzer harnesses: the input as a C string or as a file
 * (the readers under test take paths). */
#ifndef LLC_FUZZ_H
#define LLC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy (an embedded NUL ends the text early, as it would
 * for a reader of a file). Abort on allocation failure: not the parser's. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The input as an anonymous in-memory file, named by path (a readable
 * "/proc/self/fd/N", what a reader's open() or fopen() accepts). Returns the
 * descriptor to close afterwards. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
    const int fd = memfd_create("llcprobe-fuzz", 0);
    if (fd < 0)
        abort();
    for (size_t done = 0; done < size;) {
        const ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            abort();
        done += (size_t)w;
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
