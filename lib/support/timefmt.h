/*
 * timefmt.h - times as debugfs and dumpe2fs print them.
 */
#ifndef SUPPORT_TIMEFMT_H
#define SUPPORT_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/*
 * asctime's layout without the newline ("Sat Nov 28 01:02:03 2026") in
 * local time, or in UTC when TZ is "GMT" or "GMT0" (debugfs's rule); the
 * bare number when the time cannot be shown.  Writes buf (40 bytes are
 * enough) and returns it.
 */
const char *sup_time_str(int64_t t, char *buf, size_t len);

#endif
