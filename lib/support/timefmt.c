/* timefmt.c - times as debugfs prints them (see timefmt.h). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "support/timefmt.h"

const char *sup_time_str(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	const char *tz = getenv("TZ");

	if (tz && (!strcmp(tz, "GMT") || !strcmp(tz, "GMT0")))
		gmtime_r(&tt, &tm);
	else
		localtime_r(&tt, &tm);
	if (!strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}
