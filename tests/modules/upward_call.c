/* Linked against the simulator (a pure model) alone: a call into the
 * session layer above it must be an undefined reference. The public
 * headers are one folder, so the declaration is visible; the link is what
 * enforces the direction. The test that builds this expects failure. */
#include "llcprobe/session.h"

int main(void)
{
    llc_session_close(NULL);
    return 0;
}
