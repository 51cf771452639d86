/* The hardware backends' tests count this process's threads to check that
 * every probe, aggressor and co-runner thread is joined. */
#ifndef LLCPROBE_TESTS_MAPHW_THREADS_H
#define LLCPROBE_TESTS_MAPHW_THREADS_H

#include <dirent.h>

/* Threads of this process now (entries of /proc/self/task), -1 if unknown. */
static inline int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

#endif
