/*
 * output.c - what mke4fs prints, in mke2fs 1.47's formats.
 *
 * The summary ("Creating filesystem with ...", or the -v block), the
 * numeric progress meter ("0/8" followed by backspaces, redrawn at most
 * once a second, the same on a terminal and in a pipe, skipped when
 * E2FSPROGS_SKIP_PROGRESS is set), and the --json document.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ext4fs/fsfeatures.h"
#include "ext4fs/ondisk_names.h"
#include "support/json.h"
#include "support/progress.h"
#include "mke4fs.h"

/* ------------------------------------------------------------------ summary */

void mk_show_stats(const struct ext4fs_mkfs_plan *plan, const struct mk_config *c, int verbose)
{
	const struct ext4fs_super *s = ext4fs_mkfs_plan_super(plan);
	const struct ext4fs_geom *g = ext4fs_mkfs_plan_geom(plan);
	uint32_t nb = ext4fs_mkfs_plan_backups(plan, NULL, 0);
	uint64_t *backups = NULL;
	char uuid[40];
	int col_left = 0;

	if (!verbose) {
		printf("Creating filesystem with %" PRIu64 " %uk blocks and %u inodes\n",
		       g->blocks_count, g->block_size >> 10, g->inodes_count);
	} else {
		if (c->requested_blocks != g->blocks_count)
			fprintf(stderr, "warning: %" PRIu64 " blocks unused.\n\n",
				c->requested_blocks - g->blocks_count);
		printf("Filesystem label=%.*s\n", (int)strnlen((const char *)s->s_volume_name, 16),
		       (const char *)s->s_volume_name);
		printf("OS type: %s\n", ext4fs_creator_os_name(s->s_creator_os));
		printf("Block size=%u (log=%u)\n", g->block_size, s->s_log_block_size);
		printf("Fragment size=%u (log=%u)\n", g->block_size, s->s_log_cluster_size);
		printf("Stride=%u blocks, Stripe width=%u blocks\n", s->s_raid_stride, s->s_raid_stripe_width);
		printf("%u inodes, %" PRIu64 " blocks\n", g->inodes_count, g->blocks_count);
		printf("%" PRIu64 " blocks (%2.2f%%) reserved for the super user\n", g->r_blocks_count,
		       100.0 * (double)g->r_blocks_count / (double)g->blocks_count);
		printf("First data block=%u\n", g->first_data_block);
		if (c->root_owner_set)
			printf("Root directory owner=%u:%u\n", c->p.root_uid, c->p.root_gid);
		if (s->s_reserved_gdt_blocks)
			printf("Maximum filesystem blocks=%" PRIu64 "\n",
			       ((uint64_t)s->s_reserved_gdt_blocks + g->desc_blocks) * g->desc_per_block *
				       g->blocks_per_group);
		printf("%u block group%s\n", g->group_count, g->group_count > 1 ? "s" : "");
		printf("%u blocks per group, %u fragments per group\n", g->blocks_per_group,
		       g->clusters_per_group);
		printf("%u inodes per group\n", g->inodes_per_group);
	}
	if (g->group_count == 1) {
		printf("\n");
		return;
	}
	if (!ext4fs_uuid_is_null(s->s_uuid)) {
		printf("Filesystem UUID: %s\n", ext4fs_uuid_format(s->s_uuid, uuid, sizeof(uuid)));
	}
	printf("Superblock backups stored on blocks: ");
	if (nb)
		backups = calloc(nb, sizeof(*backups));
	if (backups) {
		ext4fs_mkfs_plan_backups(plan, backups, nb);
		for (uint32_t i = 0; i < nb; i++) {
			uint64_t group = (backups[i] - g->first_data_block) / g->blocks_per_group;
			int need = sup_decimal_digits(backups[i]) + 2;

			/* mke2fs puts the comma before every group but group 1. */
			if (group != 1)
				printf(", ");
			if (need > col_left) {
				printf("\n\t");
				col_left = 72;
			}
			col_left -= need;
			printf("%" PRIu64, backups[i]);
		}
	}
	free(backups);
	printf("\n\n");
}

/* ------------------------------------------------------------------ progress */

static const char *const stage_labels[] = {
	[EXT4FS_MKFS_STAGE_DISCARD] = "Discarding device blocks: ",
	[EXT4FS_MKFS_STAGE_TABLES] = "Allocating group tables: ",
	[EXT4FS_MKFS_STAGE_ITABLES] = "Writing inode tables: ",
	[EXT4FS_MKFS_STAGE_JOURNAL] = NULL,   /* "Creating journal (N blocks): " */
	[EXT4FS_MKFS_STAGE_SUPER] = "Writing superblocks and filesystem accounting information: ",
};

#define DONE_PADDED "done                            \n"

/* Close whatever stage is still open (a failed discard or write). */
void mk_progress_finish(struct mk_progress *pr, int failed)
{
	if (pr->quiet)
		return;
	if (pr->discard_pending) {
		pr->discard_pending = 0;    /* never shown: the first discard failed */
	} else if (pr->open_stage == EXT4FS_MKFS_STAGE_JOURNAL) {
		fputs(failed ? "failed\n" : "done\n", stdout);
	} else if (pr->open_stage >= 0) {
		sup_meter_close(&pr->meter, failed ? "failed\n" : DONE_PADDED);
	}
	pr->open_stage = -1;
}

void mk_progress_cb(void *arg, enum ext4fs_mkfs_stage stage, uint64_t done, uint64_t total)
{
	struct mk_progress *pr = arg;
	int starting = (int)stage != pr->open_stage && !(stage == EXT4FS_MKFS_STAGE_DISCARD &&
							  pr->discard_pending);

	if (pr->quiet)
		return;
	if (stage == EXT4FS_MKFS_STAGE_DISCARD_FAILED) {
		/* Like mke2fs: silent when the very first discard fails, else "failed - why". */
		if (pr->discard_pending) {
			pr->discard_pending = 0;
		} else if (pr->open_stage == EXT4FS_MKFS_STAGE_DISCARD) {
			sup_meter_close(&pr->meter, "failed - ");
			printf("%s\n", ext4fs_strerror(-(int)done));
		}
		pr->open_stage = -1;
		return;
	}
	/* A stage may report its end twice; only the first one counts. */
	if ((int)stage == pr->last_closed && (int)stage != pr->open_stage && done == total)
		return;
	if (starting) {
		/* A discard that started but never ended failed: mke2fs then says so. */
		if (pr->open_stage == EXT4FS_MKFS_STAGE_DISCARD || pr->discard_pending)
			mk_progress_finish(pr, 1);
		pr->open_stage = (int)stage;
		switch (stage) {
		case EXT4FS_MKFS_STAGE_DISCARD:
			/* Shown once it advances: a device without discard prints nothing. */
			pr->discard_pending = 1;
			break;
		case EXT4FS_MKFS_STAGE_TABLES:
			if (pr->verbose && pr->io && pr->io->discard_zeroes && pr->discard_done)
				printf("Discard succeeded and will return 0s - skipping inode table wipe\n");
			mk_show_stats(pr->plan, pr->config, pr->verbose);
			if (pr->config->p.flags & EXT4FS_MKFS_PACKED_META) {
				/* mke2fs's packed allocator prints no count */
				sup_meter_start_plain(&pr->meter, stage_labels[stage]);
			} else {
				sup_meter_start(&pr->meter, stage_labels[stage], total);
			}
			break;
		case EXT4FS_MKFS_STAGE_JOURNAL:
			printf("Creating journal (%" PRIu64 " blocks): ", total);
			fflush(stdout);
			break;
		default:
			sup_meter_start(&pr->meter, stage_labels[stage], total);
			break;
		}
		if (done < total || stage == EXT4FS_MKFS_STAGE_DISCARD)
			return;
	}
	if (stage == EXT4FS_MKFS_STAGE_DISCARD && pr->discard_pending && done > 0) {
		pr->discard_pending = 0;
		sup_meter_start(&pr->meter, stage_labels[stage], total);
	}
	if (done < total) {
		sup_meter_update(&pr->meter, done, 0);
		return;
	}
	/* The stage is complete. */
	switch (stage) {
	case EXT4FS_MKFS_STAGE_JOURNAL:
		fputs("done\n", stdout);
		break;
	case EXT4FS_MKFS_STAGE_SUPER:
		sup_meter_close(&pr->meter, "done\n\n");
		break;
	default:
		sup_meter_close(&pr->meter, DONE_PADDED);
		break;
	}
	if (stage == EXT4FS_MKFS_STAGE_DISCARD)
		pr->discard_done = 1;
	pr->last_closed = (int)stage;
	pr->open_stage = -1;
	fflush(stdout);
}

/* ------------------------------------------------------------------ --json */

void mk_print_json(FILE *f, const struct ext4fs_mkfs_plan *plan, const struct mk_config *c,
		   const char *device, int written)
{
	const struct ext4fs_super *s = ext4fs_mkfs_plan_super(plan);
	const struct ext4fs_geom *g = ext4fs_mkfs_plan_geom(plan);
	uint32_t nb = ext4fs_mkfs_plan_backups(plan, NULL, 0);
	uint64_t *backups = nb ? calloc(nb, sizeof(*backups)) : NULL;
	const uint32_t words[3] = { s->s_feature_compat, s->s_feature_incompat, s->s_feature_ro_compat };
	char buf[40];
	struct json j;

	json_init(&j, f);
	json_object_begin(&j, NULL);
	json_string(&j, "device", device);
	json_bool(&j, "written", written);
	json_uint(&j, "block_size", g->block_size);
	json_uint(&j, "blocks_count", g->blocks_count);
	json_uint(&j, "inodes_count", g->inodes_count);
	json_uint(&j, "inode_size", g->inode_size);
	json_uint(&j, "groups", g->group_count);
	json_uint(&j, "blocks_per_group", g->blocks_per_group);
	json_uint(&j, "inodes_per_group", g->inodes_per_group);
	json_uint(&j, "flex_bg_size", g->groups_per_flex);
	json_uint(&j, "reserved_gdt_blocks", s->s_reserved_gdt_blocks);
	json_uint(&j, "reserved_blocks", g->r_blocks_count);
	json_uint(&j, "journal_blocks", ext4fs_mkfs_plan_journal_blocks(plan));
	json_uint(&j, "journal_fc_blocks", ext4fs_mkfs_plan_journal_fc_blocks(plan));
	json_array_begin(&j, "backups");
	if (backups) {
		ext4fs_mkfs_plan_backups(plan, backups, nb);
		for (uint32_t i = 0; i < nb; i++)
			json_uint(&j, NULL, backups[i]);
	}
	json_array_end(&j);
	ext4fs_uuid_format(s->s_uuid, buf, sizeof(buf));
	json_string(&j, "uuid", buf);
	json_string(&j, "label", c->p.volume_name);
	json_array_begin(&j, "features");
	for (int w = 0; w < 3; w++)
		for (int b = 0; b < 32; b++)
			if (words[w] & (1U << b)) {
				uint32_t one[3] = { 0, 0, 0 };
				char name[32];

				one[w] = 1U << b;
				ext4fs_features_format(one, name, sizeof(name));
				json_string(&j, NULL, name);
			}
	json_array_end(&j);
	json_uint(&j, "free_blocks", (uint64_t)s->s_free_blocks_count_lo |
				     (uint64_t)s->s_free_blocks_count_hi << 32);
	json_uint(&j, "free_inodes", s->s_free_inodes_count);
	json_object_end(&j);
	json_finish(&j);
	free(backups);
}
