/*
 * profile.c - mke2fs's policy: from the command line and the target to the
 * numbers libext4fs plans with.
 *
 * mke4fs does not read /etc/mke2fs.conf.  Its built-in table below equals
 * Debian's default file for e2fsprogs 1.47.0:
 *
 *   [defaults] base_features = sparse_super,large_file,filetype,resize_inode,
 *              dir_index,ext_attr; default_mntopts = acl,user_xattr;
 *              enable_periodic_fsck = 0; blocksize = 4096; inode_size = 256;
 *              inode_ratio = 16384
 *   [fs_types] ext3, ext4 (features), small, floppy, big, huge, news,
 *              largefile, largefile4, hurd (sizes and ratios)
 *
 * The order of the steps in mk_build_config() is mke2fs's (PRS() and the
 * start of main()), because the order decides which message a user sees
 * when several things are wrong and how later settings override earlier
 * ones.  Each step's comment names the rule it applies.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <uuid/uuid.h>
#include "ext4fs/fsfeatures.h"
#include "ext4fs/journal.h"
#include "mke4fs.h"
#include "support/parse.h"
#include "support/prompt.h"

#define MAX_32_NUM 0xFFFFFFFFULL

/* ------------------------------------------------------------------ the built-in mke2fs.conf */

#define DEF_BASE_FEATURES "sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr"
#define DEF_MNTOPTS       0x000C   /* acl,user_xattr */
#define DEF_BLOCKSIZE     4096
#define DEF_INODE_SIZE    256
#define DEF_INODE_RATIO   16384
#define DEF_RESERVED      5.0
#define DEF_FLEX_BG_SIZE  16

struct fs_type_def {
	const char *name;
	const char *features;   /* edit list, or NULL */
	int blocksize;          /* 0: not set; -1: the page size */
	uint32_t inode_ratio;   /* 0: not set */
	uint32_t inode_size;    /* 0: not set */
};

static const struct fs_type_def fs_type_table[] = {
	{ "ext3", "has_journal", 0, 0, 0 },
	{ "ext4", "has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize", 0, 0, 0 },
	{ "small", NULL, 1024, 4096, 0 },
	{ "floppy", NULL, 1024, 8192, 0 },
	{ "big", NULL, 0, 32768, 0 },
	{ "huge", NULL, 0, 65536, 0 },
	{ "news", NULL, 0, 4096, 0 },
	{ "largefile", NULL, -1, 1048576, 0 },
	{ "largefile4", NULL, -1, 4194304, 0 },
	{ "hurd", NULL, 4096, 0, 128 },
};

static const struct fs_type_def *find_type(const char *name)
{
	for (size_t i = 0; i < sizeof(fs_type_table) / sizeof(fs_type_table[0]); i++)
		if (!strcmp(fs_type_table[i].name, name))
			return &fs_type_table[i];
	return NULL;
}

/* The features mke2fs 1.47 lets -O set or clear (its ok_features). */
static const uint32_t ok_features[3] = {
	EXT4FS_FEATURE_COMPAT_HAS_JOURNAL | EXT4FS_FEATURE_COMPAT_RESIZE_INODE |
		EXT4FS_FEATURE_COMPAT_DIR_INDEX | EXT4FS_FEATURE_COMPAT_EXT_ATTR |
		EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2 | EXT4FS_FEATURE_COMPAT_FAST_COMMIT |
		EXT4FS_FEATURE_COMPAT_STABLE_INODES | EXT4FS_FEATURE_COMPAT_ORPHAN_FILE,
	EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_EXTENTS |
		EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV | EXT4FS_FEATURE_INCOMPAT_META_BG |
		EXT4FS_FEATURE_INCOMPAT_FLEX_BG | EXT4FS_FEATURE_INCOMPAT_EA_INODE |
		EXT4FS_FEATURE_INCOMPAT_MMP | EXT4FS_FEATURE_INCOMPAT_64BIT |
		EXT4FS_FEATURE_INCOMPAT_INLINE_DATA | EXT4FS_FEATURE_INCOMPAT_ENCRYPT |
		EXT4FS_FEATURE_INCOMPAT_CASEFOLD | EXT4FS_FEATURE_INCOMPAT_CSUM_SEED |
		EXT4FS_FEATURE_INCOMPAT_LARGEDIR,
	EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE | EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE |
		EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK | EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE |
		EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM |
		EXT4FS_FEATURE_RO_COMPAT_BIGALLOC | EXT4FS_FEATURE_RO_COMPAT_QUOTA |
		EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM | EXT4FS_FEATURE_RO_COMPAT_PROJECT |
		EXT4FS_FEATURE_RO_COMPAT_VERITY,
};

/* ------------------------------------------------------------------ helpers */

static uint32_t log2_u64(uint64_t n)
{
	uint32_t l = 0;

	while (n > 1) {
		n >>= 1;
		l++;
	}
	return l;
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static int push_type(struct mk_config *c, const char *name)
{
	size_t n = 0;

	while (c->fs_types[n])
		n++;
	if (n + 1 >= sizeof(c->fs_types) / sizeof(c->fs_types[0])) {
		fprintf(stderr, "%s: too many usage types (-T)\n", prog_name);
		return -1;
	}
	c->fs_types[n] = strdup(name);
	if (!c->fs_types[n]) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return -1;
	}
	return 0;
}

void mk_config_free(struct mk_config *c)
{
	for (size_t i = 0; c->fs_types[i]; i++) {
		free(c->fs_types[i]);
		c->fs_types[i] = NULL;
	}
}

/* An integer setting: the default, overridden by each type in list order. */
static int profile_int(const struct mk_config *c, const char *what, int def)
{
	int v = def;

	for (size_t i = 0; c->fs_types[i]; i++) {
		const struct fs_type_def *t = find_type(c->fs_types[i]);
		if (!t)
			continue;
		if (!strcmp(what, "blocksize") && t->blocksize)
			v = t->blocksize;
		else if (!strcmp(what, "inode_ratio") && t->inode_ratio)
			v = (int)t->inode_ratio;
		else if (!strcmp(what, "inode_size") && t->inode_size)
			v = (int)t->inode_size;
	}
	return v;
}

/*
 * Check every word of an edit list against mke2fs's rules (known, and one
 * mke2fs lets users set or clear), then apply it.  `what` names the source.
 */
static int edit_features(const char *list, uint32_t f[3], const char *what)
{
	char bad[64];
	const char *p = list;

	while (p && *p) {
		char word[64];
		const char *name = word;
		size_t n = 0;
		int w;
		uint32_t m;

		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		while (p[n] && p[n] != ',' && p[n] != ' ' && p[n] != '\t')
			n++;
		if (!n)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
		p += n;
		if (!strcasecmp(word, "none") || !strcasecmp(word, "clear"))
			continue;
		if (*name == '^' || *name == '-' || *name == '+')
			name++;
		if (ext4fs_feature_lookup(name, &w, &m)) {
			fprintf(stderr, "%s: unknown feature '%s' in %s '%s'\n", prog_name, name, what, list);
			return -1;
		}
		if (!(ok_features[w] & m)) {
			fprintf(stderr, "%s: the feature '%s' (%s '%s') cannot be set or cleared by mke2fs or mke4fs\n",
				prog_name, name, what, list);
			return -1;
		}
	}
	if (ext4fs_features_edit(list, f, bad, sizeof(bad))) {
		fprintf(stderr, "%s: Invalid filesystem option set: %s (%s; bad word '%s')\n",
			prog_name, list, what, bad);
		return -1;
	}
	return 0;
}

static int has(const uint32_t f[3], int word, uint32_t mask)
{
	return (f[word] & mask) != 0;
}

#define W_C EXT4FS_FEATURE_WORD_COMPAT
#define W_I EXT4FS_FEATURE_WORD_INCOMPAT
#define W_R EXT4FS_FEATURE_WORD_RO_COMPAT

static int for_hurd(const char *os)
{
	if (!os)
		return 0;
	if (isdigit((unsigned char)*os))
		return atoi(os) == 1;
	return !strcasecmp(os, "GNU") || !strcasecmp(os, "hurd");
}

static int parse_os(const char *os, uint32_t *out)
{
	if (isdigit((unsigned char)*os))
		*out = (uint32_t)atoi(os);
	else if (!strcasecmp(os, "linux"))
		*out = 0;
	else if (!strcasecmp(os, "GNU") || !strcasecmp(os, "hurd"))
		*out = 1;
	else if (!strcasecmp(os, "freebsd"))
		*out = 3;
	else if (!strcasecmp(os, "lites"))
		*out = 4;
	else
		return -1;
	return 0;
}

/* Linux older than major.minor.rev?  0 when the version cannot be parsed. */
static int is_before_linux(int major, int minor, int rev)
{
	struct utsname ut;
	int a = 0, b = 0, d = 0;

	if (uname(&ut) || sscanf(ut.release, "%d.%d.%d", &a, &b, &d) < 2)
		return 0;
	return (a << 16) + (b << 8) + d < (major << 16) + (minor << 8) + rev;
}

/* ------------------------------------------------------------------ the policy */

/* The policy's working state, handed from step to step (mke2fs keeps these
 * as locals of PRS()). */
struct policy {
	const struct mk_opts *o;
	const struct mk_target *t;
	struct mk_config *c;
	struct ext4fs_mkfs_params *p;
	const struct mk_compat_profile *compat;
	struct mk_ext_opts e;
	uint32_t f[3];                  /* the feature words being decided */
	uint32_t param_bs;              /* unit of the size argument: -b, else 1 KiB */
	uint64_t fs_blocks, dev_size;   /* in param_bs units until the block size is known */
	uint64_t size_for_type, meg;
	long page;
	int is_hurd, explicit_fssize;
	int lazy_itable, lazy_journal, packed, discard;
	uint32_t blocksize, lsector, psector, inode_ratio, inode_size;
	uint32_t creator_os, journal_blocks, journal_fc;
	unsigned long long num_inodes;
	unsigned long flex_bg_size;
	const char *ext_type, *env;
	double reserved_ratio;
	int csum_was_on;
};

/* The size: -o is checked first, then the fs-size argument and the device size. */
static int step_size(struct policy *s)
{
	if (s->o->creator_os && parse_os(s->o->creator_os, &s->creator_os)) {
		fprintf(stderr, "%s: unknown os - %s (-o)\n", prog_name, s->o->creator_os);
		return -1;
	}

	/* The fs-size argument counts -b blocks, or KiB without -b. */
	if (s->o->size_arg) {
		s->fs_blocks = sup_parse_size(s->o->size_arg, 10 + (int)log2_u64(s->param_bs / 1024));
		if (!s->fs_blocks) {
			fprintf(stderr, "%s: invalid blocks '%s' on device '%s'\n", prog_name,
				s->o->size_arg, s->o->device);
			return -1;
		}
		s->explicit_fssize = 1;
	}

	/* The device's size, in the same units; -n with a size does not look. */
	if (s->o->noaction && s->fs_blocks)
		s->dev_size = s->fs_blocks;
	else
		s->dev_size = s->t->size / s->param_bs;
	if (!s->fs_blocks) {
		if (s->dev_size == 0) {
			if (s->t->is_dev)
				fprintf(stderr, "%s: Device size reported to be zero.  Invalid partition specified, or\n"
					"\tpartition table wasn't reread after running fdisk, due to\n"
					"\ta modified partition being busy and in use.  You may need to reboot\n"
					"\tto re-read your partition table.\n", prog_name);
			else
				fprintf(stderr, "%s: %s is empty; give the file system size after the file name\n",
					prog_name, s->o->device);
			return -1;
		}
		s->fs_blocks = s->dev_size;
		if ((uint64_t)s->page > s->param_bs)
			s->fs_blocks &= ~((uint64_t)(s->page / s->param_bs) - 1);
	} else if (!s->o->force && s->t->is_dev && s->fs_blocks > s->dev_size) {
		fprintf(stderr, "%s: Filesystem larger than apparent device size.\n", prog_name);
		if (sup_proceed_question(prog_name, "the file system would not fit on the device"))
			return -1;
	}
	return 0;
}

/* The fs type and the usage types (mke2fs's fs_types list). */
static int step_types(struct policy *s)
{
	const char *size_type;
	char *list, *tok, *next;

	/* mke4fs makes ext4 unless -t says otherwise (mke2fs goes by its name). */
	s->ext_type = s->o->fs_type ? s->o->fs_type : (s->is_hurd ? "ext2" : "ext4");
	if (strcmp(s->ext_type, "ext2") && strcmp(s->ext_type, "ext3") && strcmp(s->ext_type, "ext4")) {
		fprintf(stderr, "%s: unknown file system type '%s' (-t): mke4fs makes ext2, ext3 and ext4\n",
			prog_name, s->ext_type);
		return -1;
	}
	s->size_for_type = s->fs_blocks ? s->fs_blocks : s->dev_size;
	s->meg = (1024 * 1024) / s->param_bs;
	if (push_type(s->c, s->ext_type))
		return -1;
	if (s->size_for_type < 3 * s->meg)
		size_type = "floppy";
	else if (s->size_for_type < 512 * s->meg)
		size_type = "small";
	else if (s->size_for_type < 4ULL * 1024 * 1024 * s->meg)
		size_type = "default";
	else if (s->size_for_type < 16ULL * 1024 * 1024 * s->meg)
		size_type = "big";
	else
		size_type = "huge";
	list = strdup(s->o->usage_types ? s->o->usage_types : size_type);
	if (!list) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return -1;
	}
	for (tok = list; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		if (!*tok)
			continue;
		if (find_type(tok)) {
			if (push_type(s->c, tok)) {
				free(list);
				return -1;
			}
		} else if (strcmp(tok, "default")) {
			/* mke2fs only warns; a typo here silently changes the inode ratio. */
			fprintf(stderr, "%s: unknown usage type '%s' (-T): mke4fs knows floppy, small, "
				"default, big, huge, news, largefile, largefile4 and hurd\n", prog_name, tok);
			free(list);
			return -1;
		}
	}
	free(list);
	if (s->is_hurd && push_type(s->c, "hurd"))
		return -1;
	return 0;
}

/* The features: defaults, the Hurd's and --compat's masks, then -O. */
static int step_features(struct policy *s)
{
	/* Features: base, then each type's, then the masks, then -O. */
	if (edit_features(DEF_BASE_FEATURES, s->f, "the built-in base_features"))
		return -1;
	s->p->default_mount_opts = DEF_MNTOPTS;
	for (size_t i = 0; s->c->fs_types[i]; i++) {
		const struct fs_type_def *td = find_type(s->c->fs_types[i]);
		if (td && td->features && edit_features(td->features, s->f, "the built-in features"))
			return -1;
	}
	if (s->is_hurd) {
		s->f[W_I] &= ~(EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_EA_INODE |
			    EXT4FS_FEATURE_INCOMPAT_CASEFOLD);
		s->f[W_R] &= ~(EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE | EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	}
	s->csum_was_on = has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	if (s->compat) {
		uint32_t dropped[3];
		char names[512];

		for (int w = 0; w < 3; w++) {
			dropped[w] = s->f[w] & ~s->compat->allowed[w];
			s->f[w] &= s->compat->allowed[w];
		}
		if (s->csum_was_on && !has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
			s->f[W_R] |= s->compat->instead_of_csum;
		if (s->o->verbose && (dropped[0] | dropped[1] | dropped[2])) {
			ext4fs_features_format(dropped, names, sizeof(names));
			printf("--compat=%s: leaving out %s\n", s->compat->name, names);
		}
	}
	if (s->o->features) {
		uint32_t asked[3] = { 0, 0, 0 };

		if (edit_features(s->o->features, s->f, "-O"))
			return -1;
		ext4fs_features_edit(s->o->features, asked, NULL, 0);  /* what -O turned on */
		if (s->compat) {
			for (int w = 0; w < 3; w++) {
				uint32_t one[3] = { 0, 0, 0 };
				char name[64];

				one[w] = asked[w] & ~s->compat->allowed[w];
				if (!one[w])
					continue;
				ext4fs_features_format(one, name, sizeof(name));
				fprintf(stderr, "%s: -O %s asks for %s, which --compat=%s leaves out: %s\n",
					prog_name, s->o->features, name, s->compat->name, s->compat->summary);
				return -1;
			}
		}
	}
	if (s->is_hurd) {
		static const struct { int w; uint32_t m; const char *n; } no_hurd[] = {
			{ W_I, EXT4FS_FEATURE_INCOMPAT_FILETYPE, "filetype" },
			{ W_R, EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE, "huge_file" },
			{ W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM, "metadata_csum" },
			{ W_I, EXT4FS_FEATURE_INCOMPAT_EA_INODE, "ea_inode" },
		};
		for (size_t i = 0; i < sizeof(no_hurd) / sizeof(no_hurd[0]); i++)
			if (has(s->f, no_hurd[i].w, no_hurd[i].m)) {
				fprintf(stderr, "The HURD does not support the %s feature.\n", no_hurd[i].n);
				return -1;
			}
	}
	return 0;
}

/* The block size, and the size limits that depend on it. */
static int step_blocksize(struct policy *s)
{
	/* Sector sizes: MKE2FS_DEVICE_SECTSIZE / _PHYS_SECTSIZE override, as in mke2fs. */
	if ((s->env = getenv("MKE2FS_DEVICE_SECTSIZE")))
		s->lsector = (uint32_t)atoi(s->env);
	if ((s->env = getenv("MKE2FS_DEVICE_PHYS_SECTSIZE")))
		s->psector = (uint32_t)atoi(s->env);
	if (!s->psector)
		s->psector = s->lsector;

	/* Block size: the profile's (page size for "-1"), never below the logical sector. */
	if (!s->o->blocksize) {
		int use = profile_int(s->c, "blocksize", DEF_BLOCKSIZE);
		if (use == -1)
			use = (int)s->page;
		if (s->lsector && (uint32_t)use < s->lsector)
			use = (int)s->lsector;
		s->blocksize = (uint32_t)use;
		s->fs_blocks /= s->blocksize / 1024;
	} else {
		s->blocksize = s->o->blocksize;
		if (s->blocksize < s->lsector) {
			fprintf(stderr, "%s: Invalid argument while setting blocksize; too small for device "
				"(-b %u, logical sector size %u)\n", prog_name, s->blocksize, s->lsector);
			return -1;
		}
		if (s->blocksize < s->psector && s->psector <= (uint32_t)s->page)
			fprintf(stderr, "Warning: specified blocksize %u is less than device physical sectorsize %u\n",
				s->blocksize, s->psector);
	}
	s->c->dev_blocks = s->t->size / s->blocksize;

	/* 32-bit block numbers without 64bit; a bound on the group count. */
	if (s->fs_blocks > MAX_32_NUM && has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT))
		s->f[W_C] &= ~EXT4FS_FEATURE_COMPAT_RESIZE_INODE;
	if (s->fs_blocks > MAX_32_NUM && !has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT)) {
		fprintf(stderr, "%s: Size of device (0x%llx blocks) %s too big to be expressed\n"
			"\tin 32 bits using a blocksize of %u.\n", prog_name,
			(unsigned long long)s->fs_blocks, s->o->device, s->blocksize);
		return -1;
	}
	if (s->fs_blocks > (1ULL << (log2_u64(s->blocksize) + 3 + 32)) - 1) {
		fprintf(stderr, "%s: Size of device (0x%llx blocks) %s too big to create\n"
			"\ta filesystem using a blocksize of %u.\n", prog_name,
			(unsigned long long)s->fs_blocks, s->o->device, s->blocksize);
		return -1;
	}
	return 0;
}

/* Simple options and profile defaults; RAID geometry; lazy init. */
static int step_defaults(struct policy *s)
{
	if (s->o->verbose && !s->o->json) {
		fputs("fs_types for mke2fs.conf resolution: ", stdout);
		for (size_t i = 0; s->c->fs_types[i]; i++)
			printf("'%s'%s", s->c->fs_types[i], s->c->fs_types[i + 1] ? ", " : "");
		putchar('\n');
	}

	if (s->o->s_opt > 0)
		s->f[W_R] |= EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER;
	else if (s->o->s_opt == 0)
		s->f[W_R] &= ~EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER;
	if (s->o->journal_size != 0)
		s->f[W_C] |= EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;

	s->reserved_ratio = s->o->reserved_ratio >= 0 ? s->o->reserved_ratio : DEF_RESERVED;

	if (has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT) && !has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_EXTENTS)) {
		printf("Extents MUST be enabled for a 64-bit filesystem.  Pass -O extents to rectify.\n");
		return -1;
	}
	if (has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_BIGALLOC)) {
		fprintf(stderr, "%s: the bigalloc feature (-O bigalloc) is not supported by mke4fs yet\n",
			prog_name);
		return -1;
	}

	/* Bytes per inode: the profile's, at least one block. */
	s->inode_ratio = s->o->inode_ratio;
	if (!s->inode_ratio) {
		s->inode_ratio = (uint32_t)profile_int(s->c, "inode_ratio", DEF_INODE_RATIO);
		if (s->inode_ratio < s->blocksize)
			s->inode_ratio = s->blocksize;
	}

	/* RAID geometry of a block device (blkid topology), as mke2fs reads it. */
	if (s->t->is_dev) {
		if (!s->t->topology_ok) {
			fprintf(stderr, "warning: Unable to get device geometry for %s\n", s->o->device);
		} else {
			unsigned long min_io = s->t->min_io, opt_io = s->t->opt_io;
			if (min_io == 0 && s->psector > s->blocksize)
				min_io = s->psector;
			if (opt_io == 0 && min_io > 0)
				opt_io = min_io;
			if (opt_io == 0 && s->psector > s->blocksize)
				opt_io = s->psector;
			if (min_io > s->blocksize)
				s->p->raid_stride = (uint32_t)(min_io / s->blocksize);
			if (opt_io > s->blocksize)
				s->p->raid_stripe_width = (uint32_t)(opt_io / s->blocksize);
			if (s->t->align_offset) {
				printf("%s alignment is offset by %lu bytes.\n", s->o->device, s->t->align_offset);
				printf("This may result in very poor performance, (re)-partitioning suggested.\n");
			}
		}
	}

	if (s->blocksize > (uint32_t)s->page) {
		if (!s->o->force) {
			fprintf(stderr, "%s: %u-byte blocks too big for system (max %ld)\n", prog_name,
				s->blocksize, s->page);
			if (sup_proceed_question(prog_name, "the kernel could not mount it"))
				return -1;
		}
		fprintf(stderr, "Warning: %u-byte blocks too big for system (max %ld), forced to continue\n",
			s->blocksize, s->page);
	}

	/* Lazy inode table init: any kernel from 2.6.37 on zeroes them itself. */
	s->lazy_itable = !is_before_linux(2, 6, 37) ||
		      access("/sys/fs/ext4/features/lazy_itable_init", R_OK) == 0;
	s->discard = !s->o->nodiscard_K;
	return 0;
}

/* -E, applied over everything above. */
static int step_extended(struct policy *s)
{
	/* -E, over everything above. */
	if (mk_parse_extended(s->o->extended, &s->e))
		return -1;
	if (s->e.stride_set)
		s->p->raid_stride = s->e.stride;
	if (s->e.stripe_set)
		s->p->raid_stripe_width = s->e.stripe;
	if (s->e.lazy_itable >= 0)
		s->lazy_itable = s->e.lazy_itable;
	if (s->e.lazy_journal >= 0)
		s->lazy_journal = s->e.lazy_journal;
	if (s->e.packed >= 0)
		s->packed = s->e.packed;
	if (s->e.discard >= 0)
		s->discard = s->e.discard;
	if (s->e.casefold)
		s->f[W_I] |= EXT4FS_FEATURE_INCOMPAT_CASEFOLD;
	if (s->p->raid_stride && s->p->raid_stripe_width % s->p->raid_stride)
		fprintf(stderr, "\nWarning: RAID stripe-width %u not an even multiple of stride %u.\n\n",
			s->p->raid_stripe_width, s->p->raid_stride);
	if (s->e.stride_set) {
		uint32_t bpg = s->o->blocks_per_group ? s->o->blocks_per_group : 8 * s->blocksize;
		if (s->e.stride > bpg || s->e.stride > 0xFFFF) {
			fprintf(stderr, "%s: invalid RAID stride %u (-E stride=): it must be at most %u blocks "
				"(a block group, and at most 65535)\n", prog_name, s->e.stride,
				bpg < 0xFFFF ? bpg : 0xFFFF);
			return -1;
		}
	}
	if (s->e.offset_set) {
		s->c->offset = s->e.offset;
		if (s->t->exists && s->t->size && s->e.offset >= s->t->size && !s->explicit_fssize) {
			fprintf(stderr, "%s: offset %llu (-E offset=) is beyond the end of %s (%llu bytes)\n",
				prog_name, (unsigned long long)s->e.offset, s->o->device,
				(unsigned long long)s->t->size);
			return -1;
		}
		if (!s->explicit_fssize && s->e.offset > 0) {
			s->fs_blocks -= s->e.offset / s->blocksize;
			fprintf(stderr, "\nWarning: offset specified without an explicit file system size.\n"
				"Creating a file system with %llu blocks but this might\n"
				"not be what you want.\n\n", (unsigned long long)s->fs_blocks);
		}
	}
	if (s->e.resize) {
		uint64_t resize = sup_parse_size(s->e.resize, 10 + (int)log2_u64(s->blocksize / 1024));
		uint32_t desc = has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT) ? 64 : 32;
		uint64_t bpg = s->o->blocks_per_group ? s->o->blocks_per_group : 8ULL * s->blocksize;
		uint64_t gdpb = s->blocksize / desc, desc_blocks, rsv;

		if (!resize) {
			fprintf(stderr, "Invalid resize parameter: %s\n", s->e.resize);
			mk_ext_usage(NULL);
			return -1;
		}
		if (resize <= s->fs_blocks) {
			fprintf(stderr, "The resize maximum must be greater than the filesystem size.\n");
			mk_ext_usage(NULL);
			return -1;
		}
		desc_blocks = div_ceil(div_ceil(s->fs_blocks, bpg), gdpb);
		rsv = div_ceil(div_ceil(resize, bpg), gdpb);
		rsv = rsv > desc_blocks ? rsv - desc_blocks : 0;
		if (rsv > s->blocksize / 4)
			rsv = s->blocksize / 4;
		if (rsv > 0) {
			s->f[W_C] |= EXT4FS_FEATURE_COMPAT_RESIZE_INODE;
			s->p->reserved_gdt_blocks = (int32_t)rsv;
		}
	}
	if (s->e.orphan_size) {
		uint64_t n = sup_parse_size(s->e.orphan_size, 10 + (int)log2_u64(s->blocksize / 1024));
		if (!n || n > 0xFFFFFFFFULL) {
			fprintf(stderr, "%s: invalid orphan file size - %s (-E orphan_file_size=)\n",
				prog_name, s->e.orphan_size);
			return -1;
		}
		s->p->orphan_file_blocks = (uint32_t)n;
	}
	return 0;
}

/* Feature combinations, group size, inode size. */
static int step_combinations(struct policy *s)
{
	/* metadata_csum wins over uninit_bg; checks of feature combinations. */
	if (has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
		s->f[W_R] &= ~EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	if (has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_META_BG) && has(s->f, W_C, EXT4FS_FEATURE_COMPAT_RESIZE_INODE)) {
		fprintf(stderr, "The resize_inode and meta_bg features are not compatible.\n"
			"They can not be both enabled simultaneously.\n");
		return -1;
	}
	if (has(s->f, W_C, EXT4FS_FEATURE_COMPAT_RESIZE_INODE) &&
	    !has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER)) {
		fprintf(stderr, "%s: reserved online resize blocks not supported on non-sparse filesystem\n",
			prog_name);
		return -1;
	}
	if (s->o->blocks_per_group && (s->o->blocks_per_group < 256 || s->o->blocks_per_group > 8 * s->blocksize)) {
		fprintf(stderr, "%s: blocks per group count out of range (-g %u: 256 to %u)\n", prog_name,
			s->o->blocks_per_group, 8 * s->blocksize);
		return -1;
	}

	s->inode_size = s->o->inode_size;
	if (!s->inode_size)
		s->inode_size = (uint32_t)profile_int(s->c, "inode_size", DEF_INODE_SIZE);
	if (!s->flex_bg_size && has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_FLEX_BG))
		s->flex_bg_size = DEF_FLEX_BG_SIZE;
	if (s->flex_bg_size && !has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_FLEX_BG)) {
		fprintf(stderr, "%s: Flex_bg feature not enabled, so flex_bg size may not be specified (-G)\n",
			prog_name);
		return -1;
	}
	if (s->inode_size < 128 || s->inode_size > s->blocksize || (s->inode_size & (s->inode_size - 1))) {
		fprintf(stderr, "%s: invalid inode size %u (min %d/max %u) (-I)\n", prog_name, s->inode_size,
			128, s->blocksize);
		return -1;
	}
	if (has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA) && s->inode_size == 128) {
		fprintf(stderr, "%s: %u byte inodes are too small for inline data; specify larger size\n",
			prog_name, s->inode_size);
		return -1;
	}

	/* mke2fs warns unless the hurd type (warn_y2038_dates = 0) is in the list. */
	if (s->inode_size == 128) {
		int warn = 1;
		for (size_t i = 0; s->c->fs_types[i]; i++)
			if (!strcmp(s->c->fs_types[i], "hurd"))
				warn = 0;
		if (warn)
			printf("128-byte inodes cannot handle dates beyond 2038 and are deprecated\n");
	}
	return 0;
}

/* The inode count. */
static int step_inodes(struct policy *s)
{
	/* The inode count fits in 32 bits, and the inode tables fit in the size. */
	if (s->num_inodes == 0) {
		unsigned long long n = s->fs_blocks * s->blocksize / s->inode_ratio;
		if (n > MAX_32_NUM) {
			if (has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT)) {
				s->num_inodes = MAX_32_NUM;
			} else {
				fprintf(stderr, "%s: too many inodes (%llu), raise inode ratio?\n", prog_name, n);
				return -1;
			}
		}
	} else if (s->num_inodes > MAX_32_NUM) {
		fprintf(stderr, "%s: too many inodes (%llu), specify < 2^32 inodes (-N)\n", prog_name,
			s->num_inodes);
		return -1;
	}
	{
		unsigned long long count = s->num_inodes ? s->num_inodes : s->fs_blocks * s->blocksize / s->inode_ratio;
		if ((long double)count * s->inode_size >= (long double)s->fs_blocks * s->blocksize) {
			fprintf(stderr, "%s: inode_size (%u) * inodes_count (%llu) too big for a\n"
				"\tfilesystem with %llu blocks, specify higher inode_ratio (-i)\n"
				"\tor lower inode count (-N).\n\n", prog_name, s->inode_size, count,
				(unsigned long long)s->fs_blocks);
			return -1;
		}
	}

	if (s->e.num_backups >= 0 && !has(s->f, W_C, EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2)) {
		fprintf(stderr, "%s: num_backup_sb=%d (-E) needs the sparse_super2 feature (-O sparse_super2)\n",
			prog_name, s->e.num_backups);
		return -1;
	}
	return 0;
}

/* mke2fs main(): checksum advice, and the journal size. */
static int step_journal(struct policy *s)
{
	/* mke2fs main(): checksum advice and the feature pairs it insists on. */
	if (!s->o->quiet && has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM)) {
		if (!has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_EXTENTS))
			printf("Extents are not enabled.  The file extent tree can be checksummed, "
			       "whereas block maps cannot.  Not enabling extents reduces the coverage "
			       "of metadata checksumming.  Pass -O extents to rectify.\n");
		if (!has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_64BIT))
			printf("64-bit filesystem support is not enabled.  The larger fields afforded by "
			       "this feature enable full-strength checksumming.  Pass -O 64bit to rectify.\n");
	}
	if (has(s->f, W_I, EXT4FS_FEATURE_INCOMPAT_CSUM_SEED) &&
	    !has(s->f, W_R, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM)) {
		printf("The metadata_csum_seed feature requires the metadata_csum feature.\n");
		return -1;
	}

	/* The journal: mke2fs's default size, or -J size= within jbd2's limits. */
	if (has(s->f, W_C, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL)) {
		uint32_t def = ext4fs_mkfs_default_journal_blocks(s->fs_blocks);
		int fc = has(s->f, W_C, EXT4FS_FEATURE_COMPAT_FAST_COMMIT);

		if (!def) {
			/* main prints "Filesystem too small for a journal" once the plan exists. */
			s->f[W_C] &= ~(EXT4FS_FEATURE_COMPAT_HAS_JOURNAL | EXT4FS_FEATURE_COMPAT_FAST_COMMIT);
			s->c->journal_too_small = 1;
		} else if (s->o->journal_size > 0 || (fc && s->o->journal_fc_size > 0)) {
			uint64_t total;

			s->journal_blocks = s->o->journal_size > 0
				? (uint32_t)((uint64_t)s->o->journal_size * 1024 / (s->blocksize / 1024)) : def;
			s->journal_fc = !fc ? 0
				: s->o->journal_fc_size > 0 ? (uint32_t)((uint64_t)s->o->journal_fc_size * 1024 / s->blocksize)
				: def / 64;
			total = (uint64_t)s->journal_blocks + s->journal_fc;
			if (total < EXT4FS_JBD2_MIN_BLOCKS || total > EXT4FS_JBD2_MAX_BLOCKS) {
				fprintf(stderr, "\nThe total requested journal size is %llu blocks; it must be\n"
					"between 1024 and 10240000 blocks.  Aborting.\n",
					(unsigned long long)total);
				return -1;
			}
			if (total > s->fs_blocks / 2) {
				fputs("\nTotal journal size too big for filesystem.\n", stderr);
				return -1;
			}
			s->c->journal_requested_size = 1;
		}
	}
	return 0;
}

/* UUID, hash seed and time. */
static int step_identity(struct policy *s)
{
	/* UUID, hash seed, time. */
	if (s->o->uuid) {
		if (!strcasecmp(s->o->uuid, "null") || !strcasecmp(s->o->uuid, "clear"))
			memset(s->p->uuid, 0, 16);
		else if (!strcasecmp(s->o->uuid, "time"))
			uuid_generate_time(s->p->uuid);
		else if (!strcasecmp(s->o->uuid, "random"))
			uuid_generate(s->p->uuid);
		else if (uuid_parse(s->o->uuid, s->p->uuid)) {
			fprintf(stderr, "%s: could not parse UUID: %s (-U: a UUID, random, time or clear)\n",
				prog_name, s->o->uuid);
			return -1;
		}
	} else {
		uuid_generate(s->p->uuid);
	}
	if (s->e.hash_seed_set)
		memcpy(s->p->hash_seed, s->e.hash_seed, 16);
	else
		uuid_generate(s->p->hash_seed);
	s->p->now = (int64_t)time(NULL);
	if ((s->env = getenv("E2FSPROGS_FAKE_TIME")) && *s->env)
		s->p->now = strtoll(s->env, NULL, 0);
	return 0;
}

/* Everything decided: fill the library's parameters. */
static int fill_params(struct policy *s)
{
	/* Everything decided: fill the library's parameters. */
	s->p->blocks_count = s->fs_blocks;
	s->p->block_size = s->blocksize;
	s->p->inode_size = s->inode_size;
	s->p->inodes_count = s->num_inodes;
	s->p->inode_ratio = s->inode_ratio;
	s->p->blocks_per_group = s->o->blocks_per_group;
	s->p->reserved_percent = s->reserved_ratio;
	s->p->feature_compat = s->f[W_C];
	s->p->feature_incompat = s->f[W_I];
	s->p->feature_ro_compat = s->f[W_R];
	s->p->log_groups_per_flex = s->flex_bg_size ? log2_u64(s->flex_bg_size) : 0;
	if (!s->e.resize || !s->p->reserved_gdt_blocks)
		s->p->reserved_gdt_blocks = -1;
	s->p->journal_blocks = s->journal_blocks;
	s->p->journal_fc_blocks = s->journal_fc;
	s->p->num_backup_sb = s->e.num_backups >= 0 ? (uint32_t)s->e.num_backups : 2;
	s->p->def_hash_version = 1;                /* half_md4 */
	if (s->o->label)
		snprintf(s->p->volume_name, sizeof(s->p->volume_name), "%s", s->o->label);
	if (s->o->mount_dir)
		snprintf(s->p->last_mounted, sizeof(s->p->last_mounted), "%s", s->o->mount_dir);
	s->p->errors = (uint16_t)(s->o->errors_behavior ? s->o->errors_behavior : 1);
	s->p->max_mnt_count = -1;                  /* enable_periodic_fsck = 0 */
	s->p->checkinterval = 0;
	s->p->root_uid = s->e.root_uid;
	s->p->root_gid = s->e.root_gid;
	s->c->root_owner_set = s->e.root_owner_set && (s->e.root_uid || s->e.root_gid);
	s->c->no_copy_xattrs = s->e.no_copy_xattrs;
	s->p->creator_os = s->creator_os;
	s->p->flags = 0;
	if (s->lazy_itable || s->e.prezeroed > 0)
		s->p->flags |= EXT4FS_MKFS_LAZY_ITABLE_INIT;
	if (s->lazy_journal || s->e.prezeroed > 0)
		s->p->flags |= EXT4FS_MKFS_LAZY_JOURNAL_INIT;
	if (s->packed)
		s->p->flags |= EXT4FS_MKFS_PACKED_META;
	/* A new (sparse) image reads as zeros too, but mke2fs does not assume it:
	 * neither do we, so the group flags come out the same. */
	if (s->e.prezeroed > 0)
		s->p->flags |= EXT4FS_MKFS_ASSUME_ZEROED;
	/* Like mke2fs, discard only a target that had a size (not a new file). */
	s->c->discard = s->discard && s->t->size > 0 && !s->o->noaction;
	if (s->c->discard)
		s->p->flags |= EXT4FS_MKFS_DISCARD;
	s->c->requested_blocks = s->fs_blocks;
	return 0;
}

int mk_build_config(const struct mk_opts *o, const struct mk_target *t, struct mk_config *c)
{
	static int (*const steps[])(struct policy *) = {
		step_size, step_types, step_features, step_blocksize, step_defaults, step_extended,
		step_combinations, step_inodes, step_journal, step_identity, fill_params,
	};
	struct policy st, *s = &st;

	memset(s, 0, sizeof(*s));
	memset(c, 0, sizeof(*c));
	s->o = o;
	s->t = t;
	s->c = c;
	s->p = &c->p;
	c->device = o->device;
	s->compat = mk_find_compat(o->compat);
	s->e.num_backups = s->e.packed = s->e.lazy_itable = s->e.lazy_journal = -1;
	s->e.discard = s->e.prezeroed = -1;
	s->param_bs = o->blocksize ? o->blocksize : 1024;
	s->page = sysconf(_SC_PAGESIZE);
	if (s->page <= 0)
		s->page = 4096;
	s->is_hurd = for_hurd(o->creator_os);
	s->lsector = t->lsector;
	s->psector = t->psector;
	s->num_inodes = o->num_inodes;
	s->flex_bg_size = o->flex_bg_size;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i](s))
			return -1;
	return 0;
}
