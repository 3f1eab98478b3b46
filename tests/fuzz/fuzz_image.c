/*
 * fuzz_image.c - libFuzzer target: the input is a whole file-system image.
 *
 * The image is opened through a memory channel twice, once ignoring
 * checksums (so the fuzzer gets past them and reaches the structures behind)
 * and once strictly, and everything the library can read is walked: group
 * descriptors, both bitmaps, every inode the scanner hands out and every
 * inode number directly, each inode's block map (extent tree or indirect
 * map) by iteration and by lookups at chosen offsets, extended attributes,
 * directory entries, htree indexes, file contents, symlink targets and path
 * lookups.  A backup superblock is tried as well.
 *
 * Corrupt input must give errors, never crashes, leaks, undefined behaviour
 * or hangs (the sanitizers and libFuzzer's timeout judge that).  Results
 * that did not fail are held to what the headers promise (CHECK: blocks
 * handed out lie inside the file system, inode numbers in range, reads no
 * longer than asked, names terminated...).  Work per input is capped so a
 * legal but huge file system cannot time out the fuzzer on its own.
 *
 * The same function is linked into tests/fuzz/replay (no libFuzzer) so the
 * seed corpus runs under "make check" in every build.
 */
#include "config.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/htree.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/namei.h"
#include "ext4fs/scan.h"
#include "ext4fs/xattr.h"
#include "fuzz_walk.h"

/* Caps on the work done for one input. */
#define MAX_GROUPS         4096     /* group descriptors examined */
#define MAX_SCANNED        20000    /* inodes taken from the scanner */
#define MAX_WALKED         512      /* inodes whose blocks etc. are walked */
#define MAX_DIRECT_READS   256      /* inode numbers read one by one */
#define MAX_BLOCK_VISITS   20000    /* block-iteration callbacks per inode */
#define MAX_EXTENT_VISITS  20000    /* extent-walk callbacks per inode */
#define MAX_BMAP_PROBES    64       /* logical offsets looked up per inode */
#define MAX_BITMAP_BITS    (1ULL << 24) /* bitmaps larger than this are not loaded */
#define SCAN_GROUPS        256      /* groups scanned from the start (and 2 at the end) */

/* Something the optimiser cannot drop: every result is folded into it. */
static volatile uint64_t sink;

/*
 * What the headers promise about results that did not fail; a broken
 * promise aborts, which libFuzzer and replay report like a crash.
 */
#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz_image.c:%d: broken promise: %s\n", __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

static void consume(uint64_t v)
{
	sink = sink * 31 + v;
}

/* FUZZ_WALK_VERBOSE=1 prints every error the walk meets (for looking at seeds). */
static int verbose = -1;

/* Every message must be a readable, terminated string. */
static void consume_msg(struct ext4fs_fs *fs, int err)
{
	consume(strlen(ext4fs_strerror(err)));
	if (fs)
		consume(strlen(ext4fs_errmsg(fs)));
	if (verbose < 0) {
		const char *v = getenv("FUZZ_WALK_VERBOSE");
		verbose = v && *v && *v != '0';
	}
	if (verbose)
		fprintf(stderr, "  %s: %s\n", ext4fs_strerror(err), fs ? ext4fs_errmsg(fs) : "");
}

/* -- block maps ------------------------------------------------------------ */

struct block_probe {
	struct ext4fs_fs *fs;
	unsigned visits;
	unsigned nprobes;
	uint64_t probes[MAX_BMAP_PROBES];
	const struct ext4fs_bitmap *blocks;
};

static void add_probe(struct block_probe *p, uint64_t lblk)
{
	if (p->nprobes < MAX_BMAP_PROBES)
		p->probes[p->nprobes++] = lblk;
}

static int block_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct block_probe *p = arg;

	consume(v->pblk ^ v->lblk ^ v->count ^ (uint64_t)v->kind ^ (uint64_t)v->unwritten);
	/* Every block handed out was checked to lie inside the file system. */
	CHECK(v->count >= 1);
	CHECK(ext4fs_block_ptr_valid(p->fs, v->pblk));
	CHECK(ext4fs_block_ptr_valid(p->fs, v->pblk + v->count - 1));
	if (p->blocks) {
		int r = ext4fs_bitmap_test(p->blocks, v->pblk);
		consume((uint64_t)r);
	}
	if (v->kind == EXT4FS_BLOCK_DATA) {
		add_probe(p, v->lblk);
		if (v->count > 1)
			add_probe(p, v->lblk + v->count - 1);
		add_probe(p, v->lblk + v->count);
	}
	return ++p->visits >= MAX_BLOCK_VISITS;
}

static int extent_visit(const struct ext4fs_extent_visit *v, void *arg)
{
	unsigned *visits = arg;

	consume(v->level ^ v->max_level ^ v->node_block ^ v->entry ^ v->entries ^ v->max_entries);
	consume((uint64_t)v->is_leaf ^ v->lblk ^ v->range_end ^ v->len ^ v->pblk ^ (uint64_t)v->unwritten);
	CHECK(v->level <= v->max_level && v->max_level <= EXT4FS_EXTENT_MAX_DEPTH);
	CHECK(v->entry < v->entries && v->entries <= v->max_entries);
	CHECK(v->range_end > v->lblk && v->range_end <= (1ULL << 32));
	if (v->is_leaf)
		CHECK(v->len >= 1 && v->range_end == (uint64_t)v->lblk + v->len);
	return ++*visits >= MAX_EXTENT_VISITS;
}

static void walk_blocks(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			const struct ext4fs_bitmap *blocks)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct block_probe p = { .fs = fs, .blocks = blocks };
	uint64_t per = geo->block_size / 4;
	uint64_t size = ext4fs_inode_size(inode);
	int err;

	err = ext4fs_block_iterate(fs, ino, inode, 0, block_visit, &p);
	if (err < 0)
		consume_msg(fs, err);
	p.visits = 0;
	err = ext4fs_block_iterate(fs, ino, inode, EXT4FS_ITER_DATA_ONLY, block_visit, &p);
	if (err < 0)
		consume_msg(fs, err);

	if (ext4fs_inode_has_extents(inode)) {
		unsigned visits = 0;
		err = ext4fs_extent_walk(fs, ino, inode, extent_visit, &visits);
		if (err < 0)
			consume_msg(fs, err);
	}

	/* The edges of the direct, indirect, double and triple ranges, and the end of the file. */
	uint64_t fixed[] = {
		0, 1, 11, 12, 13, 12 + per - 1, 12 + per, 12 + per + per * per - 1,
		12 + per + per * per, 12 + per + per * per + per * per * per - 1,
		12 + per + per * per + per * per * per, size / geo->block_size,
		size ? (size - 1) / geo->block_size : 0, 0x7FFFFFFFULL, 0xFFFFFFFEULL,
		0xFFFFFFFFULL, 1ULL << 32, UINT64_MAX,
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		add_probe(&p, fixed[i]);
	for (unsigned i = 0; i < p.nprobes; i++) {
		uint64_t pblk = 0, run = 0;
		int unwritten = 0;
		err = ext4fs_bmap(fs, ino, inode, p.probes[i], &pblk, &run, &unwritten);
		if (err < 0) {
			consume_msg(fs, err);
			continue;
		}
		consume(pblk ^ run ^ (uint64_t)unwritten);
		CHECK(run >= 1);
		CHECK(pblk == 0 || ext4fs_block_ptr_valid(fs, pblk));
		/* Whatever bmap returns must be readable or rejected cleanly. */
		if (pblk && i < 8) {
			unsigned char *buf = malloc(geo->block_size);
			if (buf) {
				err = ext4fs_block_read(fs, pblk, buf);
				consume(err ? (uint64_t)-err : buf[0]);
				free(buf);
			}
		}
	}
}

/* -- directories, attributes, contents ------------------------------------ */

#define MAX_DIRENTS        20000    /* directory-entry callbacks per iteration */
#define MAX_DIR_BLOCKS     64       /* directory blocks read one by one */
#define MAX_NAMES          16       /* names kept per directory for lookups */
#define MAX_HTREE_EVENTS   50000    /* htree-walk callbacks per walk */
#define MAX_FILE_BYTES     (256U << 10) /* file data read per inode */
#define MAX_PATHNAMES      64       /* ext4fs_get_pathname() calls per file system */
#define MAX_ROOT_NAMES     24       /* root entries looked up by path */

struct names {
	unsigned visits;
	unsigned n;
	char name[MAX_NAMES][EXT4FS_NAME_LEN + 1];
	uint8_t len[MAX_NAMES];
};

static int xattr_visit(const struct ext4fs_xattr *x, void *arg)
{
	struct names *nm = arg;
	size_t len = strlen(x->name);

	consume(len ^ x->where ^ x->block ^ x->entry_offset ^ x->name_index ^ x->suffix_len);
	consume(strlen(x->suffix) ^ x->value_len ^ x->value_offs ^ x->value_inum ^ x->hash);
	CHECK(len <= EXT4FS_XATTR_NAME_MAX && x->value_len <= EXT4FS_XATTR_SIZE_MAX);
	if (x->value && x->value_len)
		consume(x->value[0] ^ x->value[x->value_len - 1]);
	consume((uint64_t)(uintptr_t)ext4fs_xattr_prefix(x->name_index));
	if (nm->n < MAX_NAMES && len <= EXT4FS_NAME_LEN) {
		memcpy(nm->name[nm->n], x->name, len + 1);
		nm->len[nm->n++] = (uint8_t)len;
	}
	return ++nm->visits >= MAX_DIRENTS;
}

static void walk_xattrs(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	static const char *const fixed[] = { "system.data", "user.small", "system.posix_acl_access", "", "user." };
	struct names nm = { 0 };
	int err;

	for (unsigned flags = 0; flags <= EXT4FS_XATTR_ITER_NO_EA_VALUES; flags += 2) {
		nm.visits = 0;
		err = ext4fs_xattr_iterate(fs, ino, inode, flags == 2 ? EXT4FS_XATTR_ITER_NO_BLOCK : flags,
					   xattr_visit, &nm);
		if (err < 0)
			consume_msg(fs, err);
	}
	for (unsigned i = 0; i < nm.n + sizeof(fixed) / sizeof(fixed[0]); i++) {
		const char *name = i < nm.n ? nm.name[i] : fixed[i - nm.n];
		void *value = NULL;
		size_t len = 0;
		err = ext4fs_xattr_get(fs, ino, inode, name, &value, &len);
		if (err) {
			consume_msg(fs, err);
			continue;
		}
		if (len)
			consume(((unsigned char *)value)[len - 1]);
		free(value);
	}
	uint64_t acl = ext4fs_inode_file_acl(fs, inode);
	if (acl && ext4fs_block_ptr_valid(fs, acl)) {
		unsigned char *buf = malloc(ext4fs_geom(fs)->block_size);
		if (buf) {
			if (ext4fs_block_read(fs, acl, buf) == 0)
				consume(ext4fs_xattr_block_csum(fs, acl, buf));
			free(buf);
		}
	}
}

static int dirent_visit(const struct ext4fs_dirent *d, void *arg)
{
	struct names *nm = arg;

	consume(d->inode ^ d->rec_len ^ d->name_len ^ d->file_type ^ d->lblk ^ d->pblk ^ d->offset ^ d->flags);
	consume(strlen(d->name) ^ (unsigned char)d->name[d->name_len]);
	CHECK(d->name[d->name_len] == '\0');
	if (nm && nm->n < MAX_NAMES && d->inode && !(d->flags & EXT4FS_DIRENT_DELETED)) {
		memcpy(nm->name[nm->n], d->name, d->name_len);
		nm->name[nm->n][d->name_len] = '\0';
		nm->len[nm->n++] = d->name_len;
	}
	if (nm)
		return ++nm->visits >= MAX_DIRENTS;
	return 0;
}

struct htree_count {
	unsigned events;
};

static int htree_visit(const struct ext4fs_htree_event *ev, void *arg)
{
	struct htree_count *c = arg;

	consume(ev->type ^ ev->entry ^ ev->root->hash_version ^ ev->root->indirect_levels);
	consume((uint64_t)ev->root->hash_version_eff);
	switch (ev->type) {
	case EXT4FS_HTREE_EV_INDEX:
	case EXT4FS_HTREE_EV_CHILD:
	case EXT4FS_HTREE_EV_INDEX_END:
		consume(ev->node->level ^ ev->node->lblk ^ ev->node->pblk ^ ev->node->limit);
		consume(ev->node->csum ^ ev->node->csum_calc ^ (uint64_t)ev->node->has_tail);
		for (unsigned i = 0; i < ev->node->count; i++)
			consume(ev->node->entries[i].hash ^ ev->node->entries[i].block ^
				ev->node->entries[i].block_raw);
		break;
	case EXT4FS_HTREE_EV_DIRENT:
		dirent_visit(ev->dirent, NULL);
		consume(ev->hash ^ ev->minor_hash ^ (uint64_t)ev->hash_err ^ (uint64_t)ev->hash_approx);
		/* fall through */
	case EXT4FS_HTREE_EV_LEAF:
	case EXT4FS_HTREE_EV_LEAF_END:
		consume(ev->leaf->lblk ^ ev->leaf->pblk ^ ev->leaf->csum ^ ev->leaf->csum_calc);
		break;
	case EXT4FS_HTREE_EV_ERROR:
		consume((uint64_t)ev->err ^ ev->err_lblk);
		break;
	}
	return ++c->events >= MAX_HTREE_EVENTS;
}

static void walk_htree(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       const struct names *nm)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	unsigned char *buf;
	int err;

	for (unsigned flags = 0; flags <= EXT4FS_HTREE_WALK_CONTINUE; flags++) {
		struct htree_count c = { 0 };
		err = ext4fs_htree_walk(fs, ino, inode, flags, htree_visit, &c);
		if (err < 0)
			consume_msg(fs, err);
	}
	buf = malloc(geo->block_size);
	if (!buf)
		return;
	if (ext4fs_dir_block_read(fs, ino, inode, 0, buf, NULL) == 0) {
		struct ext4fs_htree_root root;
		struct ext4fs_htree_node node;
		struct ext4fs_dx_entry *entries = NULL;
		uint32_t csum = 0, calc = 0;

		err = ext4fs_htree_root_decode(fs, ino, inode, buf, &root, &node, &entries);
		if (err) {
			consume_msg(fs, err);
		} else {
			for (unsigned i = 0; i < node.count; i++)
				consume(entries[i].hash ^ entries[i].block);
			for (unsigned i = 0; i < nm->n; i++) {
				uint32_t hash = 0, minor = 0;
				int approx = 0;
				err = ext4fs_htree_name_hash(fs, inode, root.hash_version_eff, nm->name[i],
							     nm->len[i], &hash, &minor, &approx);
				consume((uint64_t)err ^ hash ^ minor ^ (uint64_t)approx);
			}
			free(entries);
		}
		err = ext4fs_dx_block_csum(fs, ino, inode->i_generation, buf,
					   EXT4FS_DX_ROOT_COUNT_OFFSET, &calc, &csum);
		consume((uint64_t)err ^ calc ^ csum);
		err = ext4fs_dx_block_csum(fs, ino, inode->i_generation, buf,
					   EXT4FS_DX_NODE_COUNT_OFFSET, &calc, &csum);
		consume((uint64_t)err ^ calc ^ csum);
	}
	free(buf);
	for (unsigned i = 0; i < nm->n; i++) {
		uint32_t found = 0;
		err = ext4fs_htree_lookup(fs, ino, inode, nm->name[i], nm->len[i], &found);
		if (err)
			consume_msg(fs, err);
		consume(found);
	}
	uint32_t found = 0;
	err = ext4fs_htree_lookup(fs, ino, inode, "no such name", 12, &found);
	consume((uint64_t)err ^ found);
}

static void walk_dir(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct names nm = { 0 };
	unsigned char *buf;
	int err;

	err = ext4fs_dir_iterate(fs, ino, inode, 0, dirent_visit, &nm);
	if (err < 0)
		consume_msg(fs, err);
	struct names all = { 0 };
	err = ext4fs_dir_iterate(fs, ino, inode,
				 EXT4FS_DIR_ITER_EMPTY | EXT4FS_DIR_ITER_DELETED | EXT4FS_DIR_ITER_CSUM_TAIL,
				 dirent_visit, &all);
	if (err < 0)
		consume_msg(fs, err);

	/* Block by block, as debugfs's block-level commands see them. */
	buf = malloc(geo->block_size);
	if (buf) {
		uint64_t nblocks = ext4fs_inode_size(inode) / geo->block_size;
		if (nblocks > MAX_DIR_BLOCKS)
			nblocks = MAX_DIR_BLOCKS;
		for (uint64_t lblk = 0; lblk <= nblocks; lblk++) {
			uint64_t pblk = 0;
			err = ext4fs_dir_block_read(fs, ino, inode, lblk, buf, &pblk);
			if (err) {
				consume_msg(fs, err);
				continue;
			}
			unsigned kind = ext4fs_dir_block_kind(fs, inode, lblk, buf);
			err = ext4fs_dir_block_csum_verify(fs, ino, inode, lblk, buf);
			if (err)
				consume_msg(fs, err);
			consume((uint64_t)ext4fs_dirent_tail_offset(fs, buf));
			consume(ext4fs_dirent_csum(fs, ino, inode->i_generation, buf,
						   geo->block_size - EXT4FS_DIRENT_TAIL_SIZE));
			struct names blk = { 0 };
			err = ext4fs_dir_block_iterate(fs, ino, buf, geo->block_size, lblk, pblk, kind,
						       EXT4FS_DIR_ITER_EMPTY | EXT4FS_DIR_ITER_DELETED |
						       EXT4FS_DIR_ITER_CSUM_TAIL, dirent_visit, &blk);
			if (err < 0)
				consume_msg(fs, err);
		}
		free(buf);
	}

	for (unsigned i = 0; i < nm.n; i++) {
		uint32_t found = 0;
		err = ext4fs_dir_lookup(fs, ino, nm.name[i], nm.len[i], &found);
		if (err)
			consume_msg(fs, err);
		consume(found);
	}
	uint32_t found = 0;
	err = ext4fs_dir_lookup(fs, ino, "NO-such-Name", 12, &found);
	consume((uint64_t)err ^ found);
	if (inode->i_flags & EXT4FS_INDEX_FL)
		walk_htree(fs, ino, inode, &nm);
}

static void walk_contents(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	static unsigned char buf[16384];
	uint64_t size = ext4fs_inode_size(inode);
	size_t bufsize = sizeof(buf), got = 0;
	int err;

	for (uint64_t off = 0; off < size && off < MAX_FILE_BYTES; off += bufsize) {
		err = ext4fs_file_read(fs, ino, inode, off, buf, bufsize, &got);
		CHECK(got <= bufsize);
		CHECK(err || got == bufsize || off + got == size);
		if (got)
			consume(buf[0] ^ buf[got - 1]);
		if (err) {
			consume_msg(fs, err);
			break;
		}
		if (got < bufsize)
			break;
	}
	/* Odd offsets and lengths: the last byte, the end, far beyond. */
	uint64_t offs[] = { size ? size - 1 : 0, size, size + 1, 4095, 4097, UINT64_MAX - 1, 1ULL << 62 };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		err = ext4fs_file_read(fs, ino, inode, offs[i], buf, 3, &got);
		CHECK(got <= 3);
		CHECK(err || offs[i] < size || got == 0);
		consume((uint64_t)err ^ got);
		if (err)
			consume_msg(fs, err);
	}
	if (ext4fs_inode_has_inline_data(inode)) {
		unsigned char *data = NULL;
		size_t len = 0;
		err = ext4fs_inline_data_read(fs, ino, inode, &data, &len);
		if (err) {
			consume_msg(fs, err);
		} else {
			if (len)
				consume(data[len - 1]);
			free(data);
		}
	}
	if (EXT4FS_ISLNK(inode->i_mode)) {
		size_t sizes[] = { 1, 5, bufsize };
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t len = 0;
			err = ext4fs_symlink_target(fs, ino, inode, (char *)buf, sizes[i], &len);
			if (err) {
				consume_msg(fs, err);
			} else {
				CHECK(memchr(buf, '\0', sizes[i]) != NULL);
				consume(strlen((char *)buf) ^ len);
			}
		}
	}
}

/* Attributes, directory entries, htree index, contents, symlink target of one inode. */
static void fuzz_walk_inode_extra(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	walk_xattrs(fs, ino, inode);
	if (EXT4FS_ISDIR(inode->i_mode))
		walk_dir(fs, ino, inode);
	walk_contents(fs, ino, inode);
}

static void resolve(struct ext4fs_fs *fs, uint32_t cwd, const char *path, int follow, unsigned *pathnames)
{
	uint32_t ino = 0;
	int err = ext4fs_namei(fs, EXT4FS_ROOT_INO, cwd, path, follow, &ino);

	if (err) {
		consume_msg(fs, err);
		return;
	}
	consume(ino);
	CHECK(ino >= 1 && ino <= ext4fs_geom(fs)->inodes_count);
	if (*pathnames < MAX_PATHNAMES) {
		char *name = NULL;
		++*pathnames;
		err = ext4fs_get_pathname(fs, cwd, ino, &name);
		if (err) {
			consume_msg(fs, err);
		} else {
			consume(strlen(name));
			free(name);
		}
	}
}

/* Path lookups from the root: fixed paths, the seeds' names, and every root entry. */
static void fuzz_walk_fs_extra(struct ext4fs_fs *fs)
{
	static const char *const paths[] = {
		"/", "", ".", "..", "/..", "//./..//", "/lost+found", "/hello.txt", "/dir/sub/b",
		"/dir/sub/../a", "/fastlink", "/slowlink", "/dir/rel", "/dangling", "/fifo/x",
		"/hello.txt/", "/htree/entry-with-a-longish-name-07", "/htree/target",
		"/sparse", "/far", "no/such/path", "/dir/./sub/./b/",
	};
	struct ext4fs_inode root;
	struct names nm = { 0 };
	unsigned pathnames = 0;
	char path[EXT4FS_NAME_LEN + 3];
	int err;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (int follow = 0; follow <= 1; follow++)
			resolve(fs, EXT4FS_ROOT_INO, paths[i], follow, &pathnames);
	err = ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &root);
	if (err) {
		consume_msg(fs, err);
		return;
	}
	err = ext4fs_dir_iterate(fs, EXT4FS_ROOT_INO, &root, 0, dirent_visit, &nm);
	if (err < 0)
		consume_msg(fs, err);
	for (unsigned i = 0; i < nm.n && i < MAX_ROOT_NAMES; i++) {
		snprintf(path, sizeof(path), "/%s", nm.name[i]);
		resolve(fs, EXT4FS_ROOT_INO, path, 1, &pathnames);
		snprintf(path, sizeof(path), "%s/", nm.name[i]);
		resolve(fs, EXT4FS_ROOT_INO, path, 0, &pathnames);
		uint32_t ino = 0;
		if (ext4fs_namei(fs, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO, nm.name[i], 1, &ino) == 0) {
			/* From inside each entry: "..", and its own first names. */
			resolve(fs, ino, "..", 0, &pathnames);
			resolve(fs, ino, "../.", 1, &pathnames);
			resolve(fs, ino, "sub/b", 1, &pathnames);
		}
	}
}

/* -- one inode ------------------------------------------------------------- */

static void look_at_inode(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	uint32_t nsec = 0;

	consume(ext4fs_inode_size(inode) ^ ext4fs_inode_uid(inode) ^ ext4fs_inode_gid(inode));
	consume(ext4fs_inode_file_acl(fs, inode) ^ ext4fs_inode_blocks_raw(fs, inode));
	consume(ext4fs_inode_sectors(fs, inode));
	consume((uint64_t)ext4fs_inode_time(inode, 'a', &nsec) ^ nsec);
	consume((uint64_t)ext4fs_inode_time(inode, 'c', &nsec) ^ nsec);
	consume((uint64_t)ext4fs_inode_time(inode, 'm', &nsec) ^ nsec);
	consume((uint64_t)ext4fs_inode_time(inode, 'r', &nsec) ^ nsec);
	consume((uint64_t)ext4fs_inode_is_fast_symlink(fs, inode));
	consume((uint64_t)ext4fs_inode_has_inline_data(inode));
	consume((uint64_t)ext4fs_inode_has_field(inode, EXT4FS_INODE_OFF_PROJID, 4));
	consume(ext4fs_inode_group(fs, ino));
}

static void walk_inode(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       const struct ext4fs_bitmap *blocks)
{
	look_at_inode(fs, ino, inode);
	walk_blocks(fs, ino, inode, blocks);
	fuzz_walk_inode_extra(fs, ino, inode);
}

/* -- the whole file system -------------------------------------------------- */

static void walk_groups(struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	uint32_t n = geo->group_count < MAX_GROUPS ? geo->group_count : MAX_GROUPS;

	for (uint32_t g = 0; g < n; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, g);
		uint64_t sblk = 0, odesc = 0, ndesc = 0;
		uint32_t odesc_blocks = 0, meta = 0;

		consume(gd->block_bitmap ^ gd->inode_bitmap ^ gd->inode_table ^ gd->flags);
		consume(ext4fs_group_desc_csum(fs, g) ^ (uint64_t)ext4fs_group_desc_csum_ok(fs, g));
		consume(ext4fs_group_desc_raw(fs, g)[geo->desc_size - 1]);
		ext4fs_group_meta_location(fs, g, &sblk, &odesc, &odesc_blocks, &ndesc, &meta);
		consume(sblk ^ odesc ^ odesc_blocks ^ ndesc ^ meta);
		consume(ext4fs_group_first_block(fs, g) ^ ext4fs_group_last_block(fs, g));
		consume((uint64_t)ext4fs_group_has_super(fs, g));
		consume(ext4fs_group_of_block(fs, ext4fs_group_last_block(fs, g)));
	}
}

static void walk_bitmap(const struct ext4fs_bitmap *bm)
{
	uint64_t start = ext4fs_bitmap_start(bm), end = ext4fs_bitmap_end(bm), found = 0;

	consume((uint64_t)ext4fs_bitmap_test(bm, start) ^ (uint64_t)ext4fs_bitmap_test(bm, end));
	consume((uint64_t)ext4fs_bitmap_test(bm, end + 1));
	if (start > 0)
		consume((uint64_t)ext4fs_bitmap_test(bm, start - 1));
	for (int want = 0; want <= 1; want++) {
		int err = ext4fs_bitmap_find(bm, start, end, want, &found);
		consume((uint64_t)err ^ found);
		err = ext4fs_bitmap_find(bm, start + (end - start) / 2, end, want, &found);
		consume((uint64_t)err ^ found);
	}
	consume((uint64_t)ext4fs_bitmap_find(bm, end, start == end ? end : start, 1, &found));
	consume(ext4fs_bitmap_count_set(bm, 0, UINT64_MAX));
	consume(ext4fs_bitmap_count_set(bm, start + 1, end - 1));
}

static void walk_fs(struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct ext4fs_bitmap *blocks = NULL, *inodes = NULL;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode inode;
	unsigned char *raw;
	unsigned scanned = 0, walked = 0;
	int err;

	consume(ext4fs_sb(fs)->s_magic ^ ext4fs_sb_raw(fs)[0x3FF] ^ geo->group_count);
	consume(strlen(ext4fs_fs_name(fs)) ^ ext4fs_fs_flags(fs) ^ ext4fs_fs_io(fs)->size);
	consume((uint64_t)ext4fs_has_compat(fs, ~0U) ^ (uint64_t)ext4fs_has_incompat(fs, ~0U) ^
		(uint64_t)ext4fs_has_ro_compat(fs, ~0U));
	walk_groups(fs);

	/*
	 * Loading a bitmap costs time in proportion to what the superblock
	 * claims, which a small image can make enormous while still valid:
	 * the walker skips such bitmaps rather than time out on them.
	 */
	if (geo->blocks_count / geo->cluster_ratio <= MAX_BITMAP_BITS) {
		err = ext4fs_block_bitmap_load(fs, &blocks);
		if (err)
			consume_msg(fs, err);
		else
			walk_bitmap(blocks);
	}
	if (geo->inodes_count <= MAX_BITMAP_BITS) {
		err = ext4fs_inode_bitmap_load(fs, &inodes);
		if (err)
			consume_msg(fs, err);
		else
			walk_bitmap(inodes);
	}

	/* A few blocks at the edges. */
	raw = malloc((size_t)geo->block_size * 2);
	if (raw) {
		uint64_t edges[] = { 0, geo->first_data_block, geo->blocks_count - 1, geo->blocks_count,
				     UINT64_MAX };
		for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
			err = ext4fs_block_read(fs, edges[i], raw);
			consume(err ? (uint64_t)-err : raw[0]);
		}
		err = ext4fs_blocks_read(fs, geo->first_data_block, 2, raw);
		consume(err ? (uint64_t)-err : raw[geo->block_size]);
		free(raw);
	}

	/*
	 * Every inode the scanner offers, in both modes, from the first groups
	 * (the scanner skips never-used inodes internally, so a huge claimed
	 * inode count of zeroed tables is slow, not wrong) and from the last two.
	 */
	for (unsigned pass = 0; pass < 3; pass++) {
		unsigned flags = pass == 1 ? EXT4FS_SCAN_ALL_INODES : 0;
		uint32_t first = pass == 2 ? (geo->group_count > 2 ? geo->group_count - 2 : 0) : 0;
		uint32_t last = pass == 2 ? UINT32_MAX : SCAN_GROUPS - 1;
		if (pass == 2 && geo->group_count <= SCAN_GROUPS)
			break;
		err = ext4fs_scan_open(fs, first, last, flags, &scan);
		if (err) {
			consume_msg(fs, err);
			continue;
		}
		uint32_t prev_ino = 0;
		for (;;) {
			uint32_t ino = 0;
			const unsigned char *rec = NULL;
			int csum_ok = 0;
			err = ext4fs_scan_next(scan, &ino, &inode, &rec, &csum_ok);
			if (err <= 0) {
				if (err < 0)
					consume_msg(fs, err);
				break;
			}
			consume(ino ^ rec[0] ^ (uint64_t)csum_ok);
			CHECK(ino > prev_ino && ino <= geo->inodes_count);
			prev_ino = ino;
			if (++scanned >= MAX_SCANNED)
				break;
			if (pass != 1 && walked < MAX_WALKED) {
				walked++;
				walk_inode(fs, ino, &inode, blocks);
			}
			if (inodes)
				consume((uint64_t)ext4fs_bitmap_test(inodes, ino));
		}
		consume(ext4fs_scan_blocks_read(scan) ^ ext4fs_scan_blocks_skipped(scan));
		ext4fs_scan_close(scan);
		scan = NULL;
	}

	/* Inode numbers one by one, including the invalid ones around the range. */
	raw = malloc(geo->inode_size);
	if (raw) {
		uint32_t last = geo->inodes_count < MAX_DIRECT_READS ? geo->inodes_count : MAX_DIRECT_READS;
		uint32_t extra[] = { 0, geo->inodes_count, geo->inodes_count + 1, UINT32_MAX };
		for (uint32_t i = 1; i <= last + 4; i++) {
			uint32_t ino = i <= last ? i : extra[i - last - 1];
			err = ext4fs_inode_read_raw(fs, ino, raw);
			if (err) {
				consume_msg(fs, err);
				continue;
			}
			consume(ext4fs_inode_csum(fs, ino, raw) ^ (uint64_t)ext4fs_inode_csum_ok(fs, ino, raw));
			err = ext4fs_inode_read(fs, ino, &inode);
			if (err) {
				consume_msg(fs, err);
				continue;
			}
			look_at_inode(fs, ino, &inode);
			/* The reserved inodes are walked even when the scanner skipped them. */
			if (ino < geo->first_ino && walked < MAX_WALKED) {
				walked++;
				walk_inode(fs, ino, &inode, blocks);
			}
		}
		free(raw);
	}

	fuzz_walk_fs_extra(fs);
	ext4fs_bitmap_free(blocks);
	ext4fs_bitmap_free(inodes);
}

/* Open the image with the given options and walk it. */
static void open_and_walk(const uint8_t *data, size_t size, const struct ext4fs_open_opts *opts,
			  struct ext4fs_fs **keep)
{
	struct ext4fs_io *io = NULL;
	struct ext4fs_fs *fs = NULL;
	char msg[128];
	int err;

	/* The channel is read-only: casting const away is safe. */
	err = ext4fs_io_open_memory((void *)(uintptr_t)data, size, 0, &io);
	if (err)
		return;
	err = ext4fs_open_io(io, opts, &fs, msg, sizeof(msg));
	if (err) {
		consume(strlen(msg));
		consume_msg(NULL, err);
		if (verbose > 0)
			fprintf(stderr, "  open: %s\n", msg);
		return;
	}
	walk_fs(fs);
	if (keep)
		*keep = fs;
	else
		ext4fs_close(fs);
}

int fuzz_walk_image(const uint8_t *data, size_t size)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_IGNORE_CSUM };
	struct ext4fs_fs *fs = NULL;

	open_and_walk(data, size, &opts, &fs);
	opts.flags = 0;
	open_and_walk(data, size, &opts, NULL);

	/* The first backup superblock, where the primary says it is. */
	if (fs) {
		const struct ext4fs_geom *geo = ext4fs_geom(fs);
		if (geo->group_count > 1) {
			struct ext4fs_open_opts backup = {
				.flags = EXT4FS_OPEN_IGNORE_CSUM,
				.superblock = geo->first_data_block + geo->blocks_per_group,
				.block_size = geo->block_size,
			};
			ext4fs_close(fs);
			fs = NULL;
			open_and_walk(data, size, &backup, NULL);
		}
		ext4fs_close(fs);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_walk_image(data, size);
}
