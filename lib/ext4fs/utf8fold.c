/*
 * utf8fold.c - ext4's Unicode casefolding ("utf8-12.1").
 *
 * A name is decoded into code points; each is replaced by its folded form
 * (the generated tables of utf8data.c, or arithmetic for a Hangul
 * syllable); then every run of combining marks is sorted by combining class
 * (stably, which is Unicode's canonical ordering), and the result encoded
 * as UTF-8 again.  An ignorable code point folds to nothing but, as in the
 * kernel, ends a run of combining marks where it stood.  The work is done on a fixed array of code points, so
 * nothing is allocated.
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/utf8fold.h"
#include "utf8data.h"

/* Names longer than this are refused; the folded form fits FOLD_CPS code points. */
#define NAME_MAX_BYTES 1024
#define FOLD_CPS (4 * NAME_MAX_BYTES)

/* Hangul syllables: S = 0xAC00 + (L * 21 + V) * 28 + T. */
#define HANGUL_FIRST 0xac00u
#define HANGUL_LAST  0xd7a3u
#define HANGUL_L0    0x1100u
#define HANGUL_V0    0x1161u
#define HANGUL_T0    0x11a7u
#define HANGUL_NV    21u
#define HANGUL_NT    28u

/* Where an ignorable code point stood: class 0 for the ordering, then dropped. */
#define BARRIER 0xffffffffu

/*
 * Decode the code point at s[0..len) into *cp; returns its length in bytes,
 * or 0 if the bytes there are no well-formed UTF-8 sequence.
 */
static size_t decode(const uint8_t *s, size_t len, uint32_t *cp)
{
	size_t n, i;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2, c = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3, c = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static size_t encode(uint32_t c, uint8_t *out)
{
	if (c < 0x80) {
		out[0] = (uint8_t)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (uint8_t)(0xc0 | (c >> 6));
		out[1] = (uint8_t)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (uint8_t)(0xe0 | (c >> 12));
		out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (uint8_t)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | (c >> 18));
	out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (uint8_t)(0x80 | (c & 0x3f));
	return 4;
}

int ext4fs_utf8_validate(const void *name, size_t len, size_t *bad_off)
{
	const uint8_t *s = name;
	size_t off = 0, n;
	uint32_t cp;

	while (off < len && s[off]) {
		n = decode(s + off, len - off, &cp);
		if (!n) {
			if (bad_off)
				*bad_off = off;
			return 1;
		}
		off += n;
	}
	return 0;
}

static int cmp_class_range(const void *key, const void *elem)
{
	uint32_t cp = *(const uint32_t *)key;
	const struct ext4fs_utf8_class_range *r = elem;

	return cp < r->first ? -1 : cp > r->last;
}

static int cmp_range(const void *key, const void *elem)
{
	uint32_t cp = *(const uint32_t *)key;
	const struct ext4fs_utf8_range *r = elem;

	return cp < r->first ? -1 : cp > r->last;
}

static int cmp_mapping(const void *key, const void *elem)
{
	uint32_t cp = *(const uint32_t *)key;
	const struct ext4fs_utf8_mapping *m = elem;

	return cp < m->cp ? -1 : cp > m->cp;
}

static unsigned combining_class(uint32_t cp)
{
	const struct ext4fs_utf8_class_range *r;

	if (cp == BARRIER)
		return 0;
	r = bsearch(&cp, ext4fs_utf8_classes, ext4fs_utf8_nclasses, sizeof(*r), cmp_class_range);
	return r ? r->ccc : 0;
}

static int ignorable(uint32_t cp)
{
	return bsearch(&cp, ext4fs_utf8_ignorables, ext4fs_utf8_nignorables,
		       sizeof(ext4fs_utf8_ignorables[0]), cmp_range) != NULL;
}

static const struct ext4fs_utf8_mapping *mapping(uint32_t cp)
{
	return bsearch(&cp, ext4fs_utf8_mappings, ext4fs_utf8_nmappings,
		       sizeof(ext4fs_utf8_mappings[0]), cmp_mapping);
}

/*
 * Append the folded form of cp to cps[*n..]; returns 0 or
 * EXT4FS_E_NAME_TOO_LONG.  The tables' UTF-8 is well formed (generated).
 */
static int fold_one(uint32_t cp, uint32_t *cps, size_t *n)
{
	const struct ext4fs_utf8_mapping *m;
	uint32_t s;
	size_t off;

	if (cp >= HANGUL_FIRST && cp <= HANGUL_LAST) {
		if (*n + 3 > FOLD_CPS)
			return EXT4FS_E_NAME_TOO_LONG;
		s = cp - HANGUL_FIRST;
		cps[(*n)++] = HANGUL_L0 + s / (HANGUL_NV * HANGUL_NT);
		cps[(*n)++] = HANGUL_V0 + (s % (HANGUL_NV * HANGUL_NT)) / HANGUL_NT;
		if (s % HANGUL_NT)
			cps[(*n)++] = HANGUL_T0 + s % HANGUL_NT;
		return 0;
	}
	if (ignorable(cp)) {
		/* It vanishes, but still stops combining marks moving across it. */
		if (*n >= FOLD_CPS)
			return EXT4FS_E_NAME_TOO_LONG;
		cps[(*n)++] = BARRIER;
		return 0;
	}
	m = mapping(cp);
	if (!m) {
		if (*n >= FOLD_CPS)
			return EXT4FS_E_NAME_TOO_LONG;
		cps[(*n)++] = cp;
		return 0;
	}
	for (off = 0; off < m->len;) {
		if (*n >= FOLD_CPS)
			return EXT4FS_E_NAME_TOO_LONG;
		off += decode(ext4fs_utf8_pool + m->off + off, m->len - off, &cps[*n]);
		(*n)++;
	}
	return 0;
}

/* Stable sort of each run of nonzero combining classes by class. */
static void canonical_order(uint32_t *cps, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		uint32_t c = cps[i];
		unsigned cc = combining_class(c);

		if (!cc)
			continue;
		for (j = i; j > 0; j--) {
			unsigned prev = combining_class(cps[j - 1]);

			if (!prev || prev <= cc)
				break;
			cps[j] = cps[j - 1];
		}
		cps[j] = c;
	}
}

/* The folded code points of name into cps (FOLD_CPS of them); returns how many, or a code. */
static int fold_cps(const void *name, size_t len, uint32_t *cps)
{
	const uint8_t *s = name;
	size_t off = 0, n = 0, k;
	uint32_t cp;
	int err;

	if (len > NAME_MAX_BYTES)
		return EXT4FS_E_NAME_TOO_LONG;
	while (off < len && s[off]) {
		k = decode(s + off, len - off, &cp);
		if (!k)
			return EXT4FS_E_INVALID_ARG;
		off += k;
		err = fold_one(cp, cps, &n);
		if (err)
			return err;
	}
	canonical_order(cps, n);
	return (int)n;
}

int ext4fs_utf8_casefold(const void *name, size_t len, void *out, size_t out_size)
{
	uint32_t cps[FOLD_CPS];
	uint8_t *o = out, buf[4];
	size_t done = 0, k;
	int n, i;

	n = fold_cps(name, len, cps);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (cps[i] == BARRIER)
			continue;
		k = encode(cps[i], buf);
		if (done + k > out_size)
			return EXT4FS_E_NAME_TOO_LONG;
		memcpy(o + done, buf, k);
		done += k;
	}
	return (int)done;
}

int ext4fs_utf8_casefold_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
	uint8_t fa[EXT4FS_UTF8_FOLD_MAX], fb[EXT4FS_UTF8_FOLD_MAX];
	int na, nb;

	na = ext4fs_utf8_casefold(a, alen, fa, sizeof(fa));
	if (na < 0)
		return na;
	nb = ext4fs_utf8_casefold(b, blen, fb, sizeof(fb));
	if (nb < 0)
		return nb;
	return na != nb || memcmp(fa, fb, (size_t)na) != 0;
}
