/* Compiled as part of the lowest machine module (util): the session layer
 * sits above it, so its private header must not be found. The test that
 * builds this expects the build to fail. */
#include "session/session_internal.h"

int llc_boundary_upward_include(void);
int llc_boundary_upward_include(void)
{
    return 0;
}
