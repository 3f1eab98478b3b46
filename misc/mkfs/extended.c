/*
 * extended.c - mke2fs's -E extended options.
 *
 * Values are checked for syntax here; what they mean for the file system
 * (a stride against the group size, resize= against the block count) is
 * decided in profile.c, at the point where mke2fs applies them.  Options
 * mke2fs has but mke4fs cannot honour yet are refused by name.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include "mke4fs.h"

void mk_ext_usage(const char *badopt)
{
	fprintf(stderr, "\nBad option(s) specified: %s\n\n"
		"Extended options are separated by commas, and may take an argument which\n"
		"\tis set off by an equals ('=') sign.\n\n"
		"Valid extended options are:\n"
		"\tnum_backup_sb=<0|1|2>\n"
		"\tstride=<RAID per-disk data chunk in blocks>\n"
		"\tstripe-width=<RAID stride * data disks in blocks>\n"
		"\toffset=<offset to create the file system>\n"
		"\tresize=<resize maximum size in blocks>\n"
		"\tpacked_meta_blocks=<0 to disable, 1 to enable>\n"
		"\tlazy_itable_init=<0 to disable, 1 to enable>\n"
		"\tlazy_journal_init=<0 to disable, 1 to enable>\n"
		"\troot_owner=<uid of root dir>:<gid of root dir>\n"
		"\thash_seed=<UUID>\n"
		"\torphan_file_size=<size>\n"
		"\tdiscard\n"
		"\tnodiscard\n"
		"\tencoding=<utf8>\n"
		"\tassume_storage_prezeroed=<0 to disable, 1 to enable>\n\n",
		badopt ? badopt : "");
}

/* "name[=0|1]" for boolean options: 1 without a value. */
static int bool_arg(const char *arg, int *out)
{
	char *end;
	unsigned long v;

	if (!arg) {
		*out = 1;
		return 0;
	}
	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || *end || end == arg)
		return -1;
	*out = v != 0;
	return 0;
}

static int u32_arg(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!arg || !*arg || *arg == '-')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || v > 0xFFFFFFFFULL)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int mk_parse_extended(const char *opts, struct mk_ext_opts *e)
{
	char *buf, *tok, *next;
	int bad = 0;
	char badopt[64] = "";

	if (!opts)
		return 0;
	buf = strdup(opts);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return -1;
	}
	for (tok = buf; tok && *tok; tok = next) {
		char *arg;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		arg = strchr(tok, '=');
		if (arg)
			*arg++ = '\0';

		if (!strcmp(tok, "hash_seed")) {
			if (!arg || uuid_parse(arg, e->hash_seed)) {
				fprintf(stderr, "Invalid hash seed: %s\n", arg ? arg : "");
				bad++;
				continue;
			}
			e->hash_seed_set = 1;
		} else if (!strcmp(tok, "offset")) {
			char *end;
			if (!arg || !*arg || *arg == '-') {
				bad++;
				snprintf(badopt, sizeof(badopt), "%s", tok);
				continue;
			}
			errno = 0;
			e->offset = strtoull(arg, &end, 0);
			if (errno || *end) {
				fprintf(stderr, "Invalid offset: %s\n", arg);
				bad++;
				continue;
			}
			e->offset_set = 1;
		} else if (!strcmp(tok, "num_backup_sb")) {
			uint32_t v;
			if (!arg || u32_arg(arg, &v) || v > 2) {
				fprintf(stderr, "Invalid # of backup superblocks: %s\n", arg ? arg : "");
				bad++;
				continue;
			}
			e->num_backups = (int)v;
		} else if (!strcmp(tok, "packed_meta_blocks")) {
			if (bool_arg(arg, &e->packed)) {
				fprintf(stderr, "Invalid packed_meta_blocks: %s\n", arg);
				bad++;
			}
		} else if (!strcmp(tok, "stride")) {
			if (u32_arg(arg, &e->stride)) {
				fprintf(stderr, "Invalid stride parameter: %s\n", arg ? arg : "");
				bad++;
				continue;
			}
			e->stride_set = 1;
		} else if (!strcmp(tok, "stripe-width") || !strcmp(tok, "stripe_width")) {
			if (u32_arg(arg, &e->stripe)) {
				fprintf(stderr, "Invalid stripe-width parameter: %s\n", arg ? arg : "");
				bad++;
				continue;
			}
			e->stripe_set = 1;
		} else if (!strcmp(tok, "resize")) {
			if (!arg) {
				bad++;
				snprintf(badopt, sizeof(badopt), "%s", tok);
				continue;
			}
			e->resize = opts + (arg - buf);
		} else if (!strcmp(tok, "orphan_file_size")) {
			if (!arg) {
				bad++;
				snprintf(badopt, sizeof(badopt), "%s", tok);
				continue;
			}
			e->orphan_size = opts + (arg - buf);
		} else if (!strcmp(tok, "lazy_itable_init")) {
			if (bool_arg(arg, &e->lazy_itable)) {
				fprintf(stderr, "Invalid lazy_itable_init: %s\n", arg);
				bad++;
			}
		} else if (!strcmp(tok, "lazy_journal_init")) {
			if (bool_arg(arg, &e->lazy_journal)) {
				fprintf(stderr, "Invalid lazy_journal_init: %s\n", arg);
				bad++;
			}
		} else if (!strcmp(tok, "assume_storage_prezeroed")) {
			if (bool_arg(arg, &e->prezeroed)) {
				fprintf(stderr, "Invalid assume_storage_prezeroed: %s\n", arg);
				bad++;
			}
		} else if (!strcmp(tok, "root_owner")) {
			if (arg) {
				char *end;
				unsigned long long u, g;
				errno = 0;
				u = strtoull(arg, &end, 0);
				if (errno || *end != ':' || end == arg || u > 0xFFFFFFFFULL) {
					fprintf(stderr, "Invalid root_owner: '%s'\n", arg);
					bad++;
					continue;
				}
				g = strtoull(end + 1, &end, 0);
				if (errno || *end || g > 0xFFFFFFFFULL) {
					fprintf(stderr, "Invalid root_owner: '%s'\n", arg);
					bad++;
					continue;
				}
				e->root_uid = (uint32_t)u;
				e->root_gid = (uint32_t)g;
			} else {
				e->root_uid = (uint32_t)getuid();
				e->root_gid = (uint32_t)getgid();
			}
			e->root_owner_set = 1;
		} else if (!strcmp(tok, "discard")) {
			e->discard = 1;
		} else if (!strcmp(tok, "nodiscard")) {
			e->discard = 0;
		} else if (!strcmp(tok, "no_copy_xattrs")) {
			e->no_copy_xattrs = 1;
		} else if (!strcmp(tok, "encoding")) {
			if (!arg || (strcmp(arg, "utf8") && strcmp(arg, "utf8-12.1"))) {
				fprintf(stderr, "Invalid encoding: %s\n", arg ? arg : "");
				bad++;
				continue;
			}
			e->casefold = 1;
		} else if (!strcmp(tok, "desc_size") || !strcmp(tok, "desc-size") ||
			   !strcmp(tok, "mmp_update_interval") || !strcmp(tok, "test_fs") ||
			   !strcmp(tok, "quotatype") || !strcmp(tok, "android_sparse") ||
			   !strcmp(tok, "encoding_flags")) {
			fprintf(stderr, "%s: the extended option '%s' (-E) is not supported by mke4fs yet\n",
				prog_name, tok);
			free(buf);
			return -1;
		} else {
			bad++;
			snprintf(badopt, sizeof(badopt), "%s", tok);
		}
	}
	free(buf);
	if (bad) {
		mk_ext_usage(badopt);
		return -1;
	}
	return 0;
}
