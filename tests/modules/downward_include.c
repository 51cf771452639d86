/* The control of upward_include.c: built the same way, a header of a
 * module util depends on (parse) and one of util itself are found. */
#include "parse/parse.h"
#include "util/cli.h"

int llc_boundary_downward_include(void);
int llc_boundary_downward_include(void)
{
    return llc_parse_u64("1", &(uint64_t){0});
}
