/* parse.c - numbers and sizes on the command line (see parse.h). */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include "support/parse.h"

int sup_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

uint64_t sup_parse_size(const char *arg, int unit_shift)
{
	unsigned long long num;
	unsigned shift;
	char *end;

	if (!arg || !*arg || *arg == '-' || isspace((unsigned char)*arg))
		return 0;
	errno = 0;
	num = strtoull(arg, &end, 0);
	if (errno || end == arg)
		return 0;
	if (end[0] && end[1])
		return 0;
	switch (*end) {
	case '\0':
		return num;                     /* already in units */
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case 's': shift = 9; break;             /* 512-byte sectors */
	default: return 0;
	}
	if (num > (UINT64_MAX >> shift))
		return 0;
	return ((uint64_t)num << shift) >> unit_shift;
}
