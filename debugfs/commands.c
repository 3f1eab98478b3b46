/* commands.c - the command groups, lookup, and the core commands (help, cd, pwd). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "debug4fs.h"
#include "ext4fs/namei.h"

const struct dbg_cmd *const dbg_command_groups[] = {
	dbg_cmds_core, dbg_cmds_super, dbg_cmds_inode, dbg_cmds_dir, dbg_cmds_set, dbg_cmds_write,
	dbg_cmds_files, NULL,
};

const struct dbg_cmd *dbg_find_command(const char *name)
{
	for (int g = 0; dbg_command_groups[g]; g++)
		for (const struct dbg_cmd *c = dbg_command_groups[g]; c->names[0]; c++)
			for (int i = 0; i < 4 && c->names[i]; i++)
				if (!strcmp(c->names[i], name))
					return c;
	return NULL;
}

static int do_help(struct dbg *d, int argc, char **argv)
{
	fprintf(d->out, "Available debug4fs requests:\n\n");
	for (int g = 0; dbg_command_groups[g]; g++) {
		for (const struct dbg_cmd *c = dbg_command_groups[g]; c->names[0]; c++) {
			char names[64] = "";
			for (int i = 0; i < 4 && c->names[i]; i++) {
				if (i)
					strncat(names, ", ", sizeof(names) - strlen(names) - 1);
				strncat(names, c->names[i], sizeof(names) - strlen(names) - 1);
			}
			fprintf(d->out, "%-25s%s\n", names, c->help);
		}
	}
	return 0;
}

static int do_cd(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode inode;
	uint32_t ino;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (dbg_read_inode(d, argv[0], ino, &inode))
		return 1;
	if (!EXT4FS_ISDIR(inode.i_mode)) {
		dbg_error(d, argv[1], EXT4FS_E_NOT_DIR, NULL);
		return 1;
	}
	d->cwd = ino;
	return 0;
}

static int do_pwd(struct dbg *d, int argc, char **argv)
{
	char *cwd = NULL, *root = NULL;
	int err;

	if (dbg_check_args(argc, argv, 1, 1, ""))
		return 1;
	err = ext4fs_get_pathname(d->fs, d->cwd, 0, &cwd);
	if (!err)
		err = ext4fs_get_pathname(d->fs, d->root, 0, &root);
	if (err) {
		dbg_error(d, argv[0], err, "while trying to get pathname of cwd");
		free(cwd);
		free(root);
		return 1;
	}
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_string(&j, "cwd", cwd);
		json_uint(&j, "cwd_inode", d->cwd);
		json_string(&j, "root", root);
		json_uint(&j, "root_inode", d->root);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "[pwd]   INODE: %6u  PATH: %s\n", d->cwd, cwd);
		fprintf(d->out, "[root]  INODE: %6u  PATH: %s\n", d->root, root);
	}
	free(cwd);
	free(root);
	return 0;
}

const struct dbg_cmd dbg_cmds_core[] = {
	{ { "help", "?", NULL }, do_help, 0, "Display info on command or topic." },
	{ { "change_working_directory", "cd", NULL }, do_cd, 1, "Change working directory" },
	{ { "print_working_directory", "pwd", NULL }, do_pwd, 1, "Print current working directory" },
	{ { NULL }, NULL, 0, NULL },
};
