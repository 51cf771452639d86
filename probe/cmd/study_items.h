/* llcprobe study: the programs to profile (items after '--', split by
 * ';;'), shared by local profiling (study_profile.c) and Slurm
 * (study_slurm.c). */
#ifndef LLC_CMD_STUDY_ITEMS_H
#define LLC_CMD_STUDY_ITEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct study_item {
    char **argv; /* the item's tokens (not owned) */
    size_t argc;
    bool options; /* tokens are `llcprobe profile` options, not a program */
    char name[64];
    char prefix[4096], file[4200], log[4200];
    pid_t pid;
    size_t same; /* 1 + index of an earlier item with the same key, or 0 */
};

/* Splits argv at ";;" into *out (calloc'd, n entries). */
int study_items_split(char **argv, size_t argc, struct study_item **out, size_t *n, char *err,
                      size_t errlen);
/* Name, cache key and paths in dir (prefix, .profile.json, .log). */
int study_item_init(struct study_item *j, const char *dir, char *err, size_t errlen);
/* av (argc + 9 slots) gets `profile -q -o PREFIX ...` for the item, NULL
 * terminated; returns the count. */
size_t study_item_argv(const struct study_item *j, char **av);

#endif
