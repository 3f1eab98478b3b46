/*
 * fsfeatures.c - feature names, lookups and e2fsprogs-style edit lists.
 *
 * One table holds every (word, bit, name) triple.  The first row for a bit
 * gives its canonical name (the one dumpe2fs prints); later rows for the same
 * bit are aliases that are accepted on input only.  Bits without a row print
 * and parse as FEATURE_C<n>, FEATURE_I<n> or FEATURE_R<n>.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "ext4fs/errors.h"
#include "ext4fs/fsfeatures.h"

struct feature_row {
	int word;
	uint32_t mask;
	const char *name;
};

#define C_ EXT4FS_FEATURE_WORD_COMPAT
#define I_ EXT4FS_FEATURE_WORD_INCOMPAT
#define R_ EXT4FS_FEATURE_WORD_RO_COMPAT

static const struct feature_row feature_rows[] = {
	/* compat */
	{ C_, 0x0001, "dir_prealloc" },
	{ C_, 0x0002, "imagic_inodes" },
	{ C_, 0x0004, "has_journal" },
	{ C_, 0x0008, "ext_attr" },
	{ C_, 0x0010, "resize_inode" },
	{ C_, 0x0020, "dir_index" },
	{ C_, 0x0040, "lazy_bg" },
	{ C_, 0x0100, "snapshot_bitmap" },
	{ C_, 0x0200, "sparse_super2" },
	{ C_, 0x0400, "fast_commit" },
	{ C_, 0x0800, "stable_inodes" },
	{ C_, 0x1000, "orphan_file" },
	/* incompat */
	{ I_, 0x00001, "compression" },
	{ I_, 0x00002, "filetype" },
	{ I_, 0x00004, "needs_recovery" },
	{ I_, 0x00008, "journal_dev" },
	{ I_, 0x00010, "meta_bg" },
	{ I_, 0x00040, "extent" },
	{ I_, 0x00080, "64bit" },
	{ I_, 0x00100, "mmp" },
	{ I_, 0x00200, "flex_bg" },
	{ I_, 0x00400, "ea_inode" },
	{ I_, 0x01000, "dirdata" },
	{ I_, 0x02000, "metadata_csum_seed" },
	{ I_, 0x04000, "large_dir" },
	{ I_, 0x08000, "inline_data" },
	{ I_, 0x10000, "encrypt" },
	{ I_, 0x20000, "casefold" },
	/* ro_compat */
	{ R_, 0x00001, "sparse_super" },
	{ R_, 0x00002, "large_file" },
	{ R_, 0x00008, "huge_file" },
	{ R_, 0x00010, "uninit_bg" },
	{ R_, 0x00020, "dir_nlink" },
	{ R_, 0x00040, "extra_isize" },
	{ R_, 0x00100, "quota" },
	{ R_, 0x00200, "bigalloc" },
	{ R_, 0x00400, "metadata_csum" },
	{ R_, 0x00800, "replica" },
	{ R_, 0x01000, "read-only" },
	{ R_, 0x02000, "project" },
	{ R_, 0x04000, "shared_blocks" },
	{ R_, 0x08000, "verity" },
	{ R_, 0x10000, "orphan_present" },
	/* aliases accepted on input (e2fsprogs spells them so too) */
	{ I_, 0x00040, "extents" },
	{ I_, 0x20000, "fname_encoding" },
	{ R_, 0x00010, "uninit_groups" },
};

#define N_ROWS (sizeof(feature_rows) / sizeof(feature_rows[0]))

static const char word_letters[3] = { 'C', 'I', 'R' };

const char *ext4fs_feature_name(int word, uint32_t mask)
{
	for (size_t i = 0; i < N_ROWS; i++)
		if (feature_rows[i].word == word && feature_rows[i].mask == mask)
			return feature_rows[i].name;
	return NULL;
}

/* "FEATURE_<C|I|R><0..31>", any case; 0 on success. */
static int parse_numeric_name(const char *name, int *word, uint32_t *mask)
{
	const char *p;
	unsigned bit = 0;

	if (strncasecmp(name, "FEATURE_", 8) != 0)
		return -1;
	p = name + 8;
	switch (*p) {
	case 'c': case 'C': *word = C_; break;
	case 'i': case 'I': *word = I_; break;
	case 'r': case 'R': *word = R_; break;
	default: return -1;
	}
	p++;
	if (!*p || strlen(p) > 2)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		bit = bit * 10 + (unsigned)(*p - '0');
	}
	if (bit > 31)
		return -1;
	*mask = 1U << bit;
	return 0;
}

int ext4fs_feature_lookup(const char *name, int *word, uint32_t *mask)
{
	int w;
	uint32_t m;

	if (!name)
		return EXT4FS_E_INVALID_ARG;
	for (size_t i = 0; i < N_ROWS; i++)
		if (strcasecmp(feature_rows[i].name, name) == 0) {
			*word = feature_rows[i].word;
			*mask = feature_rows[i].mask;
			return 0;
		}
	if (parse_numeric_name(name, &w, &m) != 0)
		return EXT4FS_E_INVALID_ARG;
	*word = w;
	*mask = m;
	return 0;
}

static int is_separator(char c)
{
	return c == ',' || c == ' ' || c == '\t';
}

/* Copy the n bytes at s into bad (NUL-terminated, truncated to bad_len). */
static void copy_bad(char *bad, size_t bad_len, const char *s, size_t n)
{
	if (!bad || !bad_len)
		return;
	if (n >= bad_len)
		n = bad_len - 1;
	memcpy(bad, s, n);
	bad[n] = '\0';
}

int ext4fs_features_edit(const char *list, uint32_t features[3], char *bad, size_t bad_len)
{
	uint32_t work[3] = { features[0], features[1], features[2] };
	const char *p = list;

	if (bad && bad_len)
		bad[0] = '\0';
	if (!list)
		return 0;
	while (*p) {
		const char *start, *name;
		char word_buf[64];
		size_t len;
		int clear = 0, w;
		uint32_t m;

		while (*p && is_separator(*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !is_separator(*p))
			p++;
		len = (size_t)(p - start);

		/* Longer than any name: cannot be valid. */
		if (len >= sizeof(word_buf)) {
			copy_bad(bad, bad_len, start, len);
			return EXT4FS_E_INVALID_ARG;
		}
		memcpy(word_buf, start, len);
		word_buf[len] = '\0';

		if (strcasecmp(word_buf, "none") == 0 || strcasecmp(word_buf, "clear") == 0) {
			work[0] = work[1] = work[2] = 0;
			continue;
		}
		name = word_buf;
		if (*name == '^' || *name == '-') {
			clear = 1;
			name++;
		} else if (*name == '+') {
			name++;
		}
		if (ext4fs_feature_lookup(name, &w, &m) != 0) {
			copy_bad(bad, bad_len, start, len);
			return EXT4FS_E_INVALID_ARG;
		}
		if (clear)
			work[w] &= ~m;
		else
			work[w] |= m;
	}
	features[0] = work[0];
	features[1] = work[1];
	features[2] = work[2];
	return 0;
}

size_t ext4fs_features_format(const uint32_t features[3], char *buf, size_t len)
{
	size_t need = 0;

	if (buf && len)
		buf[0] = '\0';
	for (int w = 0; w < 3; w++) {
		for (int b = 0; b < 32; b++) {
			uint32_t m = 1U << b;
			char unnamed[16];
			const char *n;
			size_t nlen;

			if (!(features[w] & m))
				continue;
			n = ext4fs_feature_name(w, m);
			if (!n) {
				snprintf(unnamed, sizeof(unnamed), "FEATURE_%c%d", word_letters[w], b);
				n = unnamed;
			}
			nlen = strlen(n);
			/* Append " name" (no space before the first), keeping buf terminated. */
			if (need && buf && need + 1 < len) {
				buf[need] = ' ';
				buf[need + 1] = '\0';
			}
			if (need)
				need++;
			if (buf && need < len) {
				size_t room = len - need - 1;
				size_t c = nlen < room ? nlen : room;

				memcpy(buf + need, n, c);
				buf[need + c] = '\0';
			}
			need += nlen;
		}
	}
	return need;
}
