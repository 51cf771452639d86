#include "util/json.h"

#include <math.h>

json_t *llc_json_finite(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}
