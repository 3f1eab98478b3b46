/* htree.c - decoding, walking and searching htree directory indexes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/extent.h"
#include "ext4fs/htree.h"
#include "ext4fs/utf8fold.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define ROOT_INFO_OFF         0x18
#define ROOT_INFO_LEN         8
#define DX_ENTRY_SIZE         8
#define MAX_DX_BLOCKS         (1ULL << 28)    /* what a 28-bit dx block number reaches */
#define MAX_INDEX_LEVELS      3               /* with largedir: root plus two node levels */

static uint32_t dx_limit(const struct ext4fs_fs *fs, uint32_t count_offset)
{
	uint32_t space = fs->geom.block_size - count_offset;

	if (fs->geom.has_metadata_csum)
		space -= EXT4FS_DX_TAIL_SIZE;
	return space / DX_ENTRY_SIZE;
}

static uint64_t dir_dx_blocks(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	uint64_t size = ext4fs_inode_size(inode);
	uint64_t n = size / fs->geom.block_size + (size % fs->geom.block_size != 0);

	return n < MAX_DX_BLOCKS ? n : MAX_DX_BLOCKS;
}

/*
 * Decode and check the dx entries of an index block whose count/limit sit
 * at count_offset.  entries has room for a full block's worth.
 */
static int decode_entries(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  const unsigned char *b, uint32_t count_offset, uint32_t lblk,
			  struct ext4fs_htree_node *node, struct ext4fs_dx_entry *entries)
{
	uint32_t want = dx_limit(fs, count_offset);
	uint64_t nblocks = dir_dx_blocks(fs, inode);

	node->lblk = lblk;
	node->limit = le16_load(b + count_offset);
	node->count = le16_load(b + count_offset + 2);
	node->entries = entries;
	node->has_tail = 0;
	node->csum = node->csum_calc = 0;
	if (node->limit != want)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree index block %u has limit %u, should be %u",
				       ino, lblk, node->limit, want);
	if (node->count == 0 || node->count > node->limit)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree index block %u has count %u (limit %u)", ino, lblk,
				       node->count, node->limit);
	for (uint32_t i = 0; i < node->count; i++) {
		const unsigned char *e = b + count_offset + (size_t)i * DX_ENTRY_SIZE;
		struct ext4fs_dx_entry *x = &entries[i];

		x->hash = i ? le32_load(e) : 0;
		x->block_raw = le32_load(e + 4);
		x->block = x->block_raw & EXT4FS_DX_BLOCK_MASK;
		if (i >= 2 && x->hash < entries[i - 1].hash)
			return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
					       "directory %u: htree index block %u: hash of entry %u (0x%08x) is below its predecessor's (0x%08x)",
					       ino, lblk, i, x->hash, entries[i - 1].hash);
		if (x->block == 0 || x->block >= nblocks)
			return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
					       "directory %u: htree index block %u: entry %u points to block %u, outside the directory (%llu blocks)",
					       ino, lblk, i, x->block, (unsigned long long)nblocks);
	}
	/* With metadata_csum, limit == want leaves room for the tail; without, it never fits. */
	if (ext4fs_dx_block_csum(fs, ino, inode->i_generation, b, count_offset, &node->csum_calc,
				 &node->csum) == 0)
		node->has_tail = 1;
	if (fs->geom.has_metadata_csum && fs_csum_strict(fs) && node->csum != node->csum_calc)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CSUM,
				       "directory %u: htree index block %u checksum is 0x%08x, should be 0x%08x",
				       ino, lblk, node->csum, node->csum_calc);
	return 0;
}

static int root_check(struct ext4fs_fs *fs, uint32_t ino, const unsigned char *b,
		      struct ext4fs_htree_root *root)
{
	uint32_t bs = fs->geom.block_size;
	unsigned max_levels = ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR) ? 3 : 2;

	memset(root, 0, sizeof(*root));
	root->dot_inode = le32_load(b);
	root->dotdot_inode = le32_load(b + 12);
	root->reserved_zero = le32_load(b + ROOT_INFO_OFF);
	root->hash_version = b[ROOT_INFO_OFF + 4];
	root->info_length = b[ROOT_INFO_OFF + 5];
	root->indirect_levels = b[ROOT_INFO_OFF + 6];
	root->unused_flags = b[ROOT_INFO_OFF + 7];
	root->hash_version_eff = ext4fs_dx_hash_version_effective(root->hash_version, fs->sb.s_flags);
	if (ext4fs_dirent_rec_len(le16_load(b + 4), bs) != 12 || b[6] != 1 ||
	    ext4fs_dirent_rec_len(le16_load(b + 16), bs) != bs - 12 || b[18] != 2)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree root lacks its \".\" and \"..\" records", ino);
	if (root->reserved_zero != 0 || root->info_length != ROOT_INFO_LEN)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree root info has reserved %u, length %u", ino,
				       root->reserved_zero, root->info_length);
	if (root->indirect_levels >= max_levels)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree has %u indirect levels (at most %u)", ino,
				       root->indirect_levels, max_levels - 1);
	return 0;
}

int ext4fs_htree_root_decode(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			     const void *root_block, struct ext4fs_htree_root *root,
			     struct ext4fs_htree_node *node, struct ext4fs_dx_entry **entries)
{
	struct ext4fs_dx_entry *ents;
	int err;

	*entries = NULL;
	memset(node, 0, sizeof(*node));
	err = root_check(fs, ino, root_block, root);
	if (err)
		return err;
	ents = malloc(sizeof(*ents) * (fs->geom.block_size / DX_ENTRY_SIZE));
	if (!ents)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory for the htree", ino);
	err = decode_entries(fs, ino, inode, root_block, EXT4FS_DX_ROOT_COUNT_OFFSET, 0, node, ents);
	if (err) {
		free(ents);
		node->entries = NULL;
		return err;
	}
	*entries = ents;
	return 0;
}

/* Decode an interior node read from logical block lblk. */
static int node_decode(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       const unsigned char *b, uint32_t lblk, struct ext4fs_htree_node *node,
		       struct ext4fs_dx_entry *entries)
{
	if (le32_load(b) != 0 ||
	    ext4fs_dirent_rec_len(le16_load(b + 4), fs->geom.block_size) != fs->geom.block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree node %u does not start with an empty entry covering the block",
				       ino, lblk);
	return decode_entries(fs, ino, inode, b, EXT4FS_DX_NODE_COUNT_OFFSET, lblk, node, entries);
}

int ext4fs_htree_name_hash(const struct ext4fs_fs *fs, const struct ext4fs_inode *dir_inode,
			   int hash_version_eff, const char *name, size_t len,
			   uint32_t *hash, uint32_t *minor_hash, int *approx)
{
	uint8_t folded[EXT4FS_UTF8_FOLD_MAX];
	int n;

	*approx = 0;
	*hash = *minor_hash = 0;
	if (len > EXT4FS_NAME_LEN)
		return EXT4FS_E_INVALID_ARG;
	if (len && (dir_inode->i_flags & EXT4FS_CASEFOLD_FL) &&
	    (fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CASEFOLD)) {
		/* The kernel hashes an invalid UTF-8 name as its raw bytes. */
		n = ext4fs_utf8_casefold(name, len, folded, sizeof(folded));
		if (n >= 0)
			return ext4fs_dx_hash(hash_version_eff, (const char *)folded, (size_t)n,
					      fs->sb.s_hash_seed, hash, minor_hash);
	}
	return ext4fs_dx_hash(hash_version_eff, name, len, fs->sb.s_hash_seed, hash, minor_hash);
}

/* -- walk ------------------------------------------------------------------ */

struct walk {
	struct ext4fs_fs *fs;
	uint32_t ino;
	const struct ext4fs_inode *inode;
	unsigned flags;
	ext4fs_htree_fn fn;
	void *arg;
	int stopped;                 /* fn returned nonzero: unwind without EV_ERROR */
	int stored_hashes;           /* encrypted + casefolded: hashes follow the names */
	struct ext4fs_htree_root root;
	unsigned char *visited;      /* one bit per directory block */
	unsigned char *bufs[MAX_INDEX_LEVELS + 1];
	struct ext4fs_dx_entry *ents[MAX_INDEX_LEVELS];
	struct ext4fs_htree_node nodes[MAX_INDEX_LEVELS];
	const struct ext4fs_htree_node *leaf_parent;
	unsigned leaf_entry;
	const struct ext4fs_htree_leaf *leaf;
	const unsigned char *leaf_buf;
};

static int emit(struct walk *w, struct ext4fs_htree_event *ev)
{
	int ret;

	ev->root = &w->root;
	ret = w->fn(ev, w->arg);
	if (ret)
		w->stopped = 1;
	return ret;
}

static int walk_dirent(const struct ext4fs_dirent *d, void *arg)
{
	struct walk *w = arg;
	struct ext4fs_htree_event ev = {
		.type = EXT4FS_HTREE_EV_DIRENT, .node = w->leaf_parent, .entry = w->leaf_entry,
		.leaf = w->leaf, .dirent = d,
	};

	if (w->stored_hashes) {
		uint32_t at = d->offset + ((8U + d->name_len + 3U) & ~3U);
		if (d->inode && at + 8 <= d->offset + d->rec_len) {
			ev.hash = le32_load(w->leaf_buf + at);
			ev.minor_hash = le32_load(w->leaf_buf + at + 4);
		} else {
			ev.hash_err = EXT4FS_E_DIR_CORRUPT;
		}
	} else {
		ev.hash_err = ext4fs_htree_name_hash(w->fs, w->inode, w->root.hash_version_eff,
						     d->name, d->name_len, &ev.hash, &ev.minor_hash,
						     &ev.hash_approx);
	}
	return emit(w, &ev);
}

static int walk_node(struct walk *w, unsigned level);

static int walk_leaf(struct walk *w, unsigned level, unsigned entry, uint32_t lblk)
{
	struct ext4fs_fs *fs = w->fs;
	unsigned char *b = w->bufs[MAX_INDEX_LEVELS];
	struct ext4fs_htree_leaf leaf = { .lblk = lblk };
	int err, tail;

	err = ext4fs_dir_block_read(fs, w->ino, w->inode, lblk, b, &leaf.pblk);
	if (err)
		return err;
	if (fs->geom.has_metadata_csum) {
		tail = ext4fs_dirent_tail_offset(fs, b);
		if (tail >= 0) {
			leaf.has_tail = 1;
			leaf.csum = le32_load(b + tail + 8);
			leaf.csum_calc = ext4fs_dirent_csum(fs, w->ino, w->inode->i_generation, b,
							    (uint32_t)tail);
		}
		if (fs_csum_strict(fs) && (!leaf.has_tail || leaf.csum != leaf.csum_calc))
			return ext4fs_dir_block_csum_verify(fs, w->ino, w->inode, lblk, b);
	}
	w->leaf_parent = &w->nodes[level];
	w->leaf_entry = entry;
	w->leaf = &leaf;
	w->leaf_buf = b;
	struct ext4fs_htree_event ev = {
		.type = EXT4FS_HTREE_EV_LEAF, .node = &w->nodes[level], .entry = entry, .leaf = &leaf,
	};
	err = emit(w, &ev);
	if (err)
		return err;
	err = ext4fs_dir_block_iterate(fs, w->ino, b, fs->geom.block_size, lblk, leaf.pblk, 0,
				       EXT4FS_DIR_ITER_EMPTY, walk_dirent, w);
	if (err)
		return err;
	ev.type = EXT4FS_HTREE_EV_LEAF_END;
	return emit(w, &ev);
}

static int walk_child(struct walk *w, unsigned level, unsigned entry)
{
	struct ext4fs_fs *fs = w->fs;
	uint32_t lblk = w->nodes[level].entries[entry].block;
	int err;

	if (w->visited[lblk / 8] & (1U << (lblk % 8)))
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree block %u is referenced twice", w->ino, lblk);
	w->visited[lblk / 8] |= (unsigned char)(1U << (lblk % 8));
	if (level >= w->root.indirect_levels)
		return walk_leaf(w, level, entry, lblk);
	err = ext4fs_dir_block_read(fs, w->ino, w->inode, lblk, w->bufs[level + 1],
				    &w->nodes[level + 1].pblk);
	if (err)
		return err;
	err = node_decode(fs, w->ino, w->inode, w->bufs[level + 1], lblk, &w->nodes[level + 1],
			  w->ents[level + 1]);
	if (err)
		return err;
	w->nodes[level + 1].level = level + 1;
	return walk_node(w, level + 1);
}

static int walk_node(struct walk *w, unsigned level)
{
	const struct ext4fs_htree_node *node = &w->nodes[level];
	struct ext4fs_htree_event ev = { .type = EXT4FS_HTREE_EV_INDEX, .node = node };
	int err = emit(w, &ev);

	if (err)
		return err;
	for (unsigned i = 0; i < node->count; i++) {
		struct ext4fs_htree_event child = {
			.type = EXT4FS_HTREE_EV_CHILD, .node = node, .entry = i,
		};
		err = emit(w, &child);
		if (err)
			return err;
		err = walk_child(w, level, i);
		if (!err)
			continue;
		if (w->stopped || !(w->flags & EXT4FS_HTREE_WALK_CONTINUE) || err == EXT4FS_E_NO_MEMORY)
			return err;
		struct ext4fs_htree_event bad = {
			.type = EXT4FS_HTREE_EV_ERROR, .node = node, .entry = i, .err = err,
			.err_lblk = node->entries[i].block,
		};
		err = emit(w, &bad);
		if (err)
			return err;
	}
	ev.type = EXT4FS_HTREE_EV_INDEX_END;
	return emit(w, &ev);
}

/* Check that ino is an indexed directory. */
static int check_indexed(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	if (!EXT4FS_ISDIR(inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", ino);
	if (!(inode->i_flags & EXT4FS_INDEX_FL) || ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT, "directory %u is not hash-indexed", ino);
	return 0;
}

int ext4fs_htree_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      unsigned flags, ext4fs_htree_fn fn, void *arg)
{
	struct walk w = { .fs = fs, .ino = ino, .inode = inode, .flags = flags, .fn = fn, .arg = arg };
	uint32_t bs = fs->geom.block_size;
	uint64_t nblocks;
	struct ext4fs_dx_entry *root_ents = NULL;
	int err = check_indexed(fs, ino, inode);

	if (err)
		return err;
	nblocks = dir_dx_blocks(fs, inode);
	w.stored_hashes = (inode->i_flags & EXT4FS_CASEFOLD_FL) && (inode->i_flags & EXT4FS_ENCRYPT_FL) &&
			  ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD);
	w.visited = calloc((size_t)(nblocks / 8 + 1), 1);
	for (unsigned i = 0; i <= MAX_INDEX_LEVELS; i++)
		w.bufs[i] = malloc(bs);
	for (unsigned i = 1; i < MAX_INDEX_LEVELS; i++)
		w.ents[i] = malloc(sizeof(struct ext4fs_dx_entry) * (bs / DX_ENTRY_SIZE));
	if (!w.visited || !w.bufs[0] || !w.bufs[1] || !w.bufs[2] || !w.bufs[3] || !w.ents[1] ||
	    !w.ents[2]) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory to walk the htree", ino);
		goto out;
	}
	err = ext4fs_dir_block_read(fs, ino, inode, 0, w.bufs[0], NULL);
	if (err)
		goto out;
	err = ext4fs_htree_root_decode(fs, ino, inode, w.bufs[0], &w.root, &w.nodes[0], &root_ents);
	if (err)
		goto out;
	err = ext4fs_bmap(fs, ino, inode, 0, &w.nodes[0].pblk, &(uint64_t){ 0 }, NULL);
	if (err)
		goto out;
	w.visited[0] |= 1;
	err = walk_node(&w, 0);
out:
	free(root_ents);
	free(w.visited);
	for (unsigned i = 0; i <= MAX_INDEX_LEVELS; i++)
		free(w.bufs[i]);
	for (unsigned i = 1; i < MAX_INDEX_LEVELS; i++)
		free(w.ents[i]);
	return err;
}

/* -- lookup ---------------------------------------------------------------- */

/* Entry of node whose range holds hash: the last one starting at or below it. */
static unsigned dx_search(const struct ext4fs_htree_node *node, uint32_t hash)
{
	unsigned lo = 1, hi = node->count;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (node->entries[mid].hash > hash)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

struct leaf_find {
	const char *name;
	size_t len;
	uint32_t found;
};

static int leaf_match(const struct ext4fs_dirent *d, void *arg)
{
	struct leaf_find *f = arg;

	if (d->name_len == f->len && memcmp(d->name, f->name, f->len) == 0) {
		f->found = d->inode;
		return 1;
	}
	return 0;
}

int ext4fs_htree_lookup(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			const char *name, size_t len, uint32_t *found)
{
	uint32_t bs = fs->geom.block_size;
	unsigned char *bufs[MAX_INDEX_LEVELS + 1] = { 0 };
	struct ext4fs_dx_entry *ents[MAX_INDEX_LEVELS] = { 0 };
	struct ext4fs_htree_node nodes[MAX_INDEX_LEVELS];
	struct ext4fs_htree_root root;
	unsigned pos[MAX_INDEX_LEVELS];
	struct leaf_find f = { .name = name, .len = len };
	uint32_t hash, minor;
	uint64_t steps = 0, nblocks;
	int approx, err = check_indexed(fs, ino, inode);

	*found = 0;
	if (err)
		return err;
	nblocks = dir_dx_blocks(fs, inode);
	for (unsigned i = 0; i <= MAX_INDEX_LEVELS; i++)
		bufs[i] = malloc(bs);
	for (unsigned i = 1; i < MAX_INDEX_LEVELS; i++)
		ents[i] = malloc(sizeof(struct ext4fs_dx_entry) * (bs / DX_ENTRY_SIZE));
	if (!bufs[0] || !bufs[1] || !bufs[2] || !bufs[3] || !ents[1] || !ents[2]) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory to search the htree", ino);
		goto out;
	}
	err = ext4fs_dir_block_read(fs, ino, inode, 0, bufs[0], NULL);
	if (err)
		goto out;
	err = ext4fs_htree_root_decode(fs, ino, inode, bufs[0], &root, &nodes[0], &ents[0]);
	if (err)
		goto out;
	if (root.hash_version_eff == EXT4FS_HASH_SIPHASH ||
	    ext4fs_htree_name_hash(fs, inode, root.hash_version_eff, name, len, &hash, &minor,
				   &approx) || approx) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_UNKNOWN_HASH,
				      "directory %u: cannot compute hash version %u here", ino,
				      root.hash_version);
		goto out;
	}

	/* Descend to the leaf whose range holds the hash. */
	unsigned levels = root.indirect_levels;
	pos[0] = dx_search(&nodes[0], hash);
	unsigned start = 1;
	for (;;) {
		for (unsigned l = start; l <= levels; l++) {
			uint32_t blk = nodes[l - 1].entries[pos[l - 1]].block;
			err = ext4fs_dir_block_read(fs, ino, inode, blk, bufs[l], &nodes[l].pblk);
			if (err)
				goto out;
			err = node_decode(fs, ino, inode, bufs[l], blk, &nodes[l], ents[l]);
			if (err)
				goto out;
			nodes[l].level = l;
			pos[l] = steps == 0 ? dx_search(&nodes[l], hash) : 0;
		}
		uint32_t leaf = nodes[levels].entries[pos[levels]].block;
		uint64_t pblk;
		err = ext4fs_dir_block_read(fs, ino, inode, leaf, bufs[MAX_INDEX_LEVELS], &pblk);
		if (err)
			goto out;
		if (fs->geom.has_metadata_csum && fs_csum_strict(fs)) {
			err = ext4fs_dir_block_csum_verify(fs, ino, inode, leaf, bufs[MAX_INDEX_LEVELS]);
			if (err)
				goto out;
		}
		err = ext4fs_dir_block_iterate(fs, ino, bufs[MAX_INDEX_LEVELS], bs, leaf, pblk, 0, 0,
					       leaf_match, &f);
		if (err > 0) {
			err = 0;
			*found = f.found;
			goto out;
		}
		if (err < 0)
			goto out;
		/* Not here: the next leaf counts only if it continues this hash. */
		if (++steps >= nblocks)
			break;
		int l = (int)levels;
		while (l >= 0 && pos[l] + 1 >= nodes[l].count)
			l--;
		if (l < 0)
			break;
		pos[l]++;
		if ((nodes[l].entries[pos[l]].hash & ~1U) != hash)
			break;
		start = (unsigned)l + 1;
	}
	err = ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "directory %u has no entry \"%.*s\"", ino, (int)len,
			      name);
out:
	for (unsigned i = 0; i <= MAX_INDEX_LEVELS; i++)
		free(bufs[i]);
	for (unsigned i = 0; i < MAX_INDEX_LEVELS; i++)
		free(ents[i]);
	return err;
}

int ext4fs_htree_readdir_hashed(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, int *version)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	uint32_t bs = ext4fs_geom(fs)->block_size;
	struct ext4fs_htree_root root;
	struct ext4fs_htree_node node;
	struct ext4fs_dx_entry *entries = NULL;
	void *block;
	int err;

	if (!ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX))
		return 0;
	if (!(inode->i_flags & EXT4FS_INDEX_FL)) {
		/* The kernel reads these through its hash-ordered path too (ext4_dx_readdir). */
		if (ext4fs_inode_size(inode) / bs != 1 && !ext4fs_inode_has_inline_data(inode))
			return 0;
		*version = ext4fs_dx_hash_version_effective(sb->s_def_hash_version, sb->s_flags);
		return 1;
	}
	if (!(block = malloc(bs)))
		return 0;
	err = ext4fs_dir_block_read(fs, ino, inode, 0, block, NULL);
	if (!err)
		err = ext4fs_htree_root_decode(fs, ino, inode, block, &root, &node, &entries);
	free(entries);
	free(block);
	if (err) {
		ext4fs_errmsg_clear(fs);
		return 0;
	}
	*version = root.hash_version_eff;
	return 1;
}
