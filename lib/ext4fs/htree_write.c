/*
 * htree_write.c - changing indexed directories: finding an entry to change,
 * adding one (splitting leaves and index blocks, growing the tree), and
 * turning a full one-block directory into an index.
 *
 * Adding a name, in the kernel's manner:
 *
 *   1. Hash the name (the root's hash version, unsigned per s_flags, the
 *      superblock's seed) and descend from the root, in each index block
 *      following the last entry whose hash is at or below the name's, to a
 *      leaf.  Names with the same hash may run on into the following
 *      leaves, whose index entries then carry the hash with its low bit set
 *      (the collision continuation bit); the name is looked for there too,
 *      as lookups do, and EXT4FS_E_EXISTS returned if found.
 *   2. If the first leaf has a record with room, the entry goes there.
 *   3. Else, if the leaf's parent has a free index slot, the leaf is split:
 *      its live entries are sorted by hash and the upper part (about half
 *      the bytes) moves to a new block.  The new block's index entry holds
 *      the first moved hash, with the continuation bit when the entry below
 *      it has the same hash.  The name goes to whichever half covers its
 *      hash; each half has at least a third of a block free, so it fits.
 *   4. Else room is made in the index and the descent repeated: the lowest
 *      full index block whose parent has room is split in two (the upper
 *      half of its entries to a new node, inserted in the parent); when
 *      every index block on the path is full, the root's entries move to a
 *      new node below it and the tree grows a level - up to two node
 *      levels with largedir, one without (then EXT4FS_E_DIR_FULL).
 *
 * Each step allocates at most one block, first, so a failed allocation
 * leaves the directory as the previous step left it: a valid tree.  New
 * blocks are written before the blocks that point to them.  Leaves are
 * never merged or freed when entries go away.
 *
 * Every index block on the path is checked before use: the fake entry of a
 * node, `limit' equal to what fits, 1 <= count <= limit, each followed
 * block inside the directory and not one of its own ancestors.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/dxhash.h"
#include "ext4fs/htree.h"
#include "dir_internal.h"
#include "fs_internal.h"
#include "htree_write_internal.h"
#include "ondisk_le.h"

#define DX_ENTRY_SIZE    8    /* le32 hash, le32 block */
#define DX_BLOCK         4    /* offset of the block in an entry */
#define DX_COUNT         2    /* offset of count after limit */
#define ROOT_INFO_OFF    0x18
#define ROOT_INFO_LEN    8
#define ROOT_HASH_OFF    (ROOT_INFO_OFF + 4)
#define ROOT_INFO_LEN_OFF (ROOT_INFO_OFF + 5)
#define ROOT_LEVELS_OFF  (ROOT_INFO_OFF + 6)
#define DOT_REC_LEN      12
#define MAX_FRAMES       3    /* index blocks on a path: the root and up to two nodes */
#define MAX_ROUNDS       8    /* index splits before a leaf split: at most one per level */

struct frame {
	unsigned char *buf;
	uint32_t lblk;
	uint64_t pblk;
	uint32_t count_off;          /* EXT4FS_DX_ROOT_COUNT_OFFSET or EXT4FS_DX_NODE_COUNT_OFFSET */
	unsigned at;                 /* the entry followed down */
};

/* A live entry of a leaf being split, with its hashes. */
struct leaf_ent {
	uint32_t hash, minor;
	uint32_t off, size;
};

struct path {
	struct ext4fs_fs *fs;
	uint32_t dir;
	struct ext4fs_inode *inode;
	uint32_t bs;
	int hash_version;            /* effective: unsigned per s_flags */
	unsigned levels;             /* index levels below the root */
	struct frame f[MAX_FRAMES];
	unsigned char *leaf;
	uint32_t leaf_lblk;
	uint64_t leaf_pblk;
	unsigned char *spare[2];     /* blocks being built */
	struct leaf_ent *map;        /* room for every entry a leaf can hold */
	unsigned char *mem;
};

/* -- index entries in a block buffer -------------------------------------- */

static unsigned char *dx_at(const struct frame *fr, unsigned i)
{
	return fr->buf + fr->count_off + (size_t)i * DX_ENTRY_SIZE;
}

static unsigned dx_limit(const struct frame *fr)
{
	return le16_load(fr->buf + fr->count_off);
}

static unsigned dx_count(const struct frame *fr)
{
	return le16_load(fr->buf + fr->count_off + DX_COUNT);
}

static void dx_set_count(struct frame *fr, unsigned count)
{
	le16_store(fr->buf + fr->count_off + DX_COUNT, (uint16_t)count);
}

/* Hash of entry i >= 1 (entry 0's slot holds limit and count). */
static uint32_t dx_hash(const struct frame *fr, unsigned i)
{
	return le32_load(dx_at(fr, i));
}

static uint32_t dx_block(const struct frame *fr, unsigned i)
{
	return le32_load(dx_at(fr, i) + DX_BLOCK) & EXT4FS_DX_BLOCK_MASK;
}

/* Insert (hash, block) as entry pos (1 <= pos <= count < limit). */
static void dx_insert(struct frame *fr, unsigned pos, uint32_t hash, uint32_t block)
{
	unsigned count = dx_count(fr);

	memmove(dx_at(fr, pos + 1), dx_at(fr, pos), (size_t)(count - pos) * DX_ENTRY_SIZE);
	le32_store(dx_at(fr, pos), hash);
	le32_store(dx_at(fr, pos) + DX_BLOCK, block);
	dx_set_count(fr, count + 1);
}

/* The last entry whose range holds hash. */
static unsigned dx_search(const struct frame *fr, uint32_t hash)
{
	unsigned lo = 1, hi = dx_count(fr);

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (dx_hash(fr, mid) > hash)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/* -- the path from the root to a leaf ------------------------------------- */

static int path_alloc(struct path *p, struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode)
{
	uint32_t bs = fs->geom.block_size;

	memset(p, 0, sizeof(*p));
	p->fs = fs;
	p->dir = dir;
	p->inode = inode;
	p->bs = bs;
	p->mem = malloc((size_t)bs * (MAX_FRAMES + 3));
	p->map = malloc(sizeof(*p->map) * (bs / DIRW_DE_HEADER));
	if (!p->mem || !p->map) {
		free(p->mem);
		free(p->map);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory for the htree", dir);
	}
	for (unsigned i = 0; i < MAX_FRAMES; i++)
		p->f[i].buf = p->mem + (size_t)i * bs;
	p->leaf = p->mem + (size_t)MAX_FRAMES * bs;
	p->spare[0] = p->leaf + bs;
	p->spare[1] = p->spare[0] + bs;
	return 0;
}

static void path_free(struct path *p)
{
	free(p->mem);
	free(p->map);
}

/* Read and check the root; learn the depth and the hash version. */
static int path_open(struct path *p)
{
	struct ext4fs_htree_root root;
	struct ext4fs_htree_node node;
	struct ext4fs_dx_entry *ents = NULL;
	struct frame *r = &p->f[0];
	int err;

	r->lblk = 0;
	r->count_off = EXT4FS_DX_ROOT_COUNT_OFFSET;
	err = ext4fs__dirw_block_read(p->fs, p->dir, p->inode, 0, r->buf, &r->pblk);
	if (err)
		return err;
	err = ext4fs_htree_root_decode(p->fs, p->dir, p->inode, r->buf, &root, &node, &ents);
	free(ents);
	if (err)
		return err;
	if (root.hash_version_eff == EXT4FS_HASH_SIPHASH)
		return ext4fs__fs_fail(p->fs, EXT4FS_E_UNKNOWN_HASH,
				       "directory %u: its index uses siphash, which is not written here", p->dir);
	p->hash_version = root.hash_version_eff;
	p->levels = root.indirect_levels;
	return 0;
}

/* Check that entry at of level l leads to a block of the directory off the path. */
static int check_child(const struct path *p, unsigned l, uint32_t blk)
{
	uint64_t nblocks = ext4fs_inode_size(p->inode) / p->bs;

	if (blk == 0 || blk >= nblocks)
		return ext4fs__fs_fail(p->fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree block %u points to block %u, outside the directory (%llu blocks)",
				       p->dir, p->f[l].lblk, blk, (unsigned long long)nblocks);
	for (unsigned i = 1; i <= l; i++)
		if (p->f[i].lblk == blk)
			return ext4fs__fs_fail(p->fs, EXT4FS_E_HTREE_CORRUPT,
					       "directory %u: htree block %u is its own descendant", p->dir, blk);
	return 0;
}

/* Read the child of level l's current entry: node l + 1, or the leaf. */
static int load_child(struct path *p, unsigned l)
{
	struct frame *fr = &p->f[l];
	uint32_t blk = dx_block(fr, fr->at);
	int err = check_child(p, l, blk);

	if (err)
		return err;
	if (l == p->levels) {
		p->leaf_lblk = blk;
		return ext4fs__dirw_block_read(p->fs, p->dir, p->inode, blk, p->leaf, &p->leaf_pblk);
	}
	struct frame *c = &p->f[l + 1];
	c->lblk = blk;
	c->count_off = EXT4FS_DX_NODE_COUNT_OFFSET;
	c->at = 0;
	err = ext4fs__dirw_block_read(p->fs, p->dir, p->inode, blk, c->buf, &c->pblk);
	if (err)
		return err;
	if (le32_load(c->buf) != 0 || ext4fs__dirw_rec_len(p->fs, c->buf, 0) != p->bs ||
	    dx_limit(c) != ext4fs__dirw_dx_limit(p->fs, c->count_off) || dx_count(c) == 0 ||
	    dx_count(c) > dx_limit(c))
		return ext4fs__fs_fail(p->fs, EXT4FS_E_HTREE_CORRUPT,
				       "directory %u: htree node %u is malformed (limit %u, count %u)", p->dir,
				       blk, dx_limit(c), dx_count(c));
	return 0;
}

/* Descend from the root to the leaf whose range holds hash. */
static int descend(struct path *p, uint32_t hash)
{
	int err;

	for (unsigned l = 0; l <= p->levels; l++) {
		p->f[l].at = dx_search(&p->f[l], hash);
		err = load_child(p, l);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Move to the next leaf if the index says it continues hash: 1 when moved,
 * 0 when not (the path is then unchanged), or an error.
 */
static int next_leaf(struct path *p, uint32_t hash)
{
	int l = (int)p->levels;
	int err;

	while (l >= 0 && p->f[l].at + 1 >= dx_count(&p->f[l]))
		l--;
	if (l < 0 || (dx_hash(&p->f[l], p->f[l].at + 1) & ~1U) != hash)
		return 0;
	p->f[l].at++;
	for (unsigned k = (unsigned)l; k <= p->levels; k++) {
		err = load_child(p, k);
		if (err)
			return err;
	}
	return 1;
}

static int name_hash(struct path *p, const char *name, size_t len, uint32_t *hash, uint32_t *minor)
{
	int approx;
	int err = ext4fs_htree_name_hash(p->fs, p->inode, p->hash_version, name, len, hash, minor,
					 &approx);

	if (err)
		return ext4fs__fs_fail(p->fs, err, "directory %u: cannot hash \"%.*s\" with hash version %d",
				       p->dir, (int)len, name, p->hash_version);
	return 0;
}

/*
 * Look for name from the leaf its hash leads to, through the leaves that
 * continue the hash.  *s tells whether and where it was found; *moved is
 * set when the path no longer ends at the first leaf.
 */
static int find_entry(struct path *p, const char *name, size_t len, uint32_t hash,
		      struct dirw_scan *s, int *moved)
{
	uint64_t nblocks = ext4fs_inode_size(p->inode) / p->bs;
	int err = descend(p, hash);

	*moved = 0;
	if (err)
		return err;
	for (uint64_t steps = 0; steps < nblocks; steps++) {
		err = ext4fs__dirw_leaf_scan(p->fs, p->dir, p->leaf, p->leaf_lblk, name, len, 0, s);
		if (err || s->found)
			return err;
		err = next_leaf(p, hash);
		if (err <= 0)
			return err;
		*moved = 1;
	}
	return 0;
}

/*
 * Open directory dir's tree and look for name: *hash, *s and *moved as
 * find_entry() leaves them.  On success the caller frees p (path_free());
 * on error p is freed already.
 */
static int path_lookup(struct path *p, struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		       const char *name, size_t len, uint32_t *hash, struct dirw_scan *s, int *moved)
{
	uint32_t minor;
	int err = path_alloc(p, fs, dir, inode);

	if (err)
		return err;
	err = path_open(p);
	if (!err)
		err = name_hash(p, name, len, hash, &minor);
	if (!err)
		err = find_entry(p, name, len, *hash, s, moved);
	if (err)
		path_free(p);
	return err;
}

int ext4fs__dirw_htree_find(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			    const char *name, size_t len, unsigned char *buf, struct dirw_loc *loc)
{
	struct path p;
	struct dirw_scan s;
	uint32_t hash;
	int moved, err = path_lookup(&p, fs, dir, inode, name, len, &hash, &s, &moved);

	if (err)
		return err;
	if (!s.found) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "directory %u has no entry \"%.*s\"", dir,
				      (int)len, name);
		goto out;
	}
	memcpy(buf, p.leaf, p.bs);
	loc->lblk = p.leaf_lblk;
	loc->pblk = p.leaf_pblk;
	loc->off = s.off;
	loc->prev = s.prev;
	loc->ino = s.found_ino;
out:
	path_free(&p);
	return err;
}

/* -- growing --------------------------------------------------------------- */

/* Write a new block (already built) and the inode whose size now covers it. */
static int write_new_block(struct path *p, uint32_t lblk, uint64_t pblk, unsigned char *buf)
{
	int err = ext4fs__dirw_block_write(p->fs, p->dir, p->inode, lblk, pblk, buf);

	if (err)
		return err;
	return ext4fs_inode_write(p->fs, p->dir, p->inode);
}

static int write_frame(struct path *p, struct frame *fr)
{
	return ext4fs__dirw_block_write(p->fs, p->dir, p->inode, fr->lblk, fr->pblk, fr->buf);
}

static int cmp_leaf_ent(const void *a, const void *b)
{
	const struct leaf_ent *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Collect the live entries of the leaf with their hashes into p->map. */
static int leaf_map(struct path *p, unsigned *n)
{
	uint32_t end = ext4fs__dirw_leaf_end(p->fs), off = 0;
	int err;

	*n = 0;
	/* The leaf was scanned whole just before: its records are sound. */
	while (off < end) {
		uint32_t rl = ext4fs__dirw_rec_len(p->fs, p->leaf, off);
		uint32_t nl = p->leaf[off + DIRW_DE_NAME_LEN];

		if (le32_load(p->leaf + off) != 0) {
			struct leaf_ent *m = &p->map[(*n)++];
			err = name_hash(p, (const char *)p->leaf + off + DIRW_DE_HEADER, nl, &m->hash,
					&m->minor);
			if (err)
				return err;
			m->off = off;
			m->size = dirw_rec_size(nl);
		}
		off += rl;
	}
	qsort(p->map, *n, sizeof(*p->map), cmp_leaf_ent);
	return 0;
}

/* Build a leaf in dst from entries [from, to) of p->map, packed, the last one taking the rest. */
static void leaf_pack(struct path *p, unsigned char *dst, unsigned from, unsigned to)
{
	uint32_t off = 0, last = 0;

	ext4fs__dirw_leaf_init(p->fs, dst);
	for (unsigned i = from; i < to; i++) {
		const struct leaf_ent *m = &p->map[i];
		uint32_t nl = p->leaf[m->off + DIRW_DE_NAME_LEN];

		memcpy(dst + off, p->leaf + m->off, DIRW_DE_HEADER + nl);
		memset(dst + off + DIRW_DE_HEADER + nl, 0, m->size - DIRW_DE_HEADER - nl);
		ext4fs_dirent_rec_len_set(dst + off, m->size, p->fs->geom.block_size);
		last = off;
		off += m->size;
	}
	if (to > from)
		ext4fs_dirent_rec_len_set(dst + last, ext4fs__dirw_leaf_end(p->fs) - last,
					  p->fs->geom.block_size);
}

/* Put the new entry into leaf buffer buf (lblk for messages), which must have room. */
static int leaf_put(struct path *p, unsigned char *buf, uint32_t lblk, const char *name,
		    size_t len, uint32_t ino, uint8_t file_type)
{
	struct dirw_scan s;
	int err = ext4fs__dirw_leaf_scan(p->fs, p->dir, buf, lblk, name, len, dirw_rec_size((uint32_t)len), &s);

	if (err)
		return err;
	if (!s.has_room)
		return ext4fs__fs_fail(p->fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u: no room for \"%.*s\" in block %u after packing it",
				       p->dir, (int)len, name, lblk);
	ext4fs__dirw_leaf_put(p->fs, buf, s.room, name, len, ino, file_type);
	return 0;
}

/*
 * The leaf is full and its parent has a free slot: split the leaf by hash
 * and add the entry to the half that covers its hash.
 */
static int split_leaf(struct path *p, const char *name, size_t len, uint32_t hash, uint32_t ino,
		      uint8_t file_type)
{
	struct frame *parent = &p->f[p->levels];
	uint32_t total = 0, acc = 0, lblk;
	uint64_t pblk;
	unsigned n, s;
	int err = leaf_map(p, &n);

	if (err)
		return err;
	if (n < 2) {
		/* Nothing to divide: the space is only scattered, so pack it. */
		leaf_pack(p, p->spare[0], 0, n);
		err = leaf_put(p, p->spare[0], p->leaf_lblk, name, len, ino, file_type);
		if (err)
			return err;
		return ext4fs__dirw_block_write(p->fs, p->dir, p->inode, p->leaf_lblk, p->leaf_pblk,
						p->spare[0]);
	}
	/* Split where the bytes are halved, never leaving a half empty. */
	for (unsigned i = 0; i < n; i++)
		total += p->map[i].size;
	for (s = 0; s < n; s++) {
		if (acc + p->map[s].size / 2 > total / 2)
			break;
		acc += p->map[s].size;
	}
	if (s < 1)
		s = 1;
	if (s > n - 1)
		s = n - 1;
	uint32_t hash2 = p->map[s].hash;
	uint32_t continued = p->map[s - 1].hash == hash2;

	leaf_pack(p, p->spare[0], 0, s);
	leaf_pack(p, p->spare[1], s, n);
	err = leaf_put(p, p->spare[hash >= hash2], p->leaf_lblk, name, len, ino, file_type);
	if (!err)
		err = ext4fs__dirw_block_append(p->fs, p->dir, p->inode, &lblk, &pblk);
	if (!err)
		err = write_new_block(p, lblk, pblk, p->spare[1]);
	if (!err)
		err = ext4fs__dirw_block_write(p->fs, p->dir, p->inode, p->leaf_lblk, p->leaf_pblk,
					       p->spare[0]);
	if (err)
		return err;
	dx_insert(parent, parent->at + 1, hash2 | continued, lblk);
	return write_frame(p, parent);
}

/* Split full node l (l >= 1), whose parent has a free slot. */
static int split_node(struct path *p, unsigned l)
{
	struct frame *fr = &p->f[l], *parent = &p->f[l - 1];
	unsigned count = dx_count(fr), keep = count / 2, moved = count - keep;
	unsigned char *buf = p->spare[0];
	uint32_t lblk;
	uint64_t pblk;
	int err;

	ext4fs__dirw_dx_node_init(p->fs, buf, moved);
	/* Entry 0's hash slot is the count: the first moved hash goes to the parent instead. */
	memcpy(buf + EXT4FS_DX_NODE_COUNT_OFFSET + DX_BLOCK, dx_at(fr, keep) + DX_BLOCK, 4);
	memcpy(buf + EXT4FS_DX_NODE_COUNT_OFFSET + DX_ENTRY_SIZE, dx_at(fr, keep + 1),
	       (size_t)(moved - 1) * DX_ENTRY_SIZE);
	err = ext4fs__dirw_block_append(p->fs, p->dir, p->inode, &lblk, &pblk);
	if (!err)
		err = write_new_block(p, lblk, pblk, buf);
	if (err)
		return err;
	uint32_t hash2 = dx_hash(fr, keep);
	memset(dx_at(fr, keep), 0, (size_t)moved * DX_ENTRY_SIZE);
	dx_set_count(fr, keep);
	err = write_frame(p, fr);
	if (err)
		return err;
	dx_insert(parent, parent->at + 1, hash2, lblk);
	return write_frame(p, parent);
}

/* Every index block on the path is full: move the root's entries down a new level. */
static int add_level(struct path *p)
{
	struct frame *root = &p->f[0];
	unsigned count = dx_count(root);
	unsigned char *buf = p->spare[0];
	uint32_t lblk;
	uint64_t pblk;
	int err;

	ext4fs__dirw_dx_node_init(p->fs, buf, count);
	memcpy(buf + EXT4FS_DX_NODE_COUNT_OFFSET + DX_BLOCK, dx_at(root, 0) + DX_BLOCK, 4);
	memcpy(buf + EXT4FS_DX_NODE_COUNT_OFFSET + DX_ENTRY_SIZE, dx_at(root, 1),
	       (size_t)(count - 1) * DX_ENTRY_SIZE);
	err = ext4fs__dirw_block_append(p->fs, p->dir, p->inode, &lblk, &pblk);
	if (!err)
		err = write_new_block(p, lblk, pblk, buf);
	if (err)
		return err;
	memset(dx_at(root, 1), 0, (size_t)(count - 1) * DX_ENTRY_SIZE);
	dx_set_count(root, 1);
	le32_store(dx_at(root, 0) + DX_BLOCK, lblk);
	root->buf[ROOT_LEVELS_OFF]++;
	p->levels++;
	return write_frame(p, root);
}

/* The leaf's parent is full: split the lowest index block that can be, or grow a level. */
static int make_index_room(struct path *p)
{
	unsigned max_levels = ext4fs_has_incompat(p->fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR) ? 2 : 1;
	unsigned l = p->levels;

	while (l > 0 && dx_count(&p->f[l - 1]) >= dx_limit(&p->f[l - 1]))
		l--;
	if (l > 0)
		return split_node(p, l);
	if (p->levels >= max_levels)
		return ext4fs__fs_fail(p->fs, EXT4FS_E_DIR_FULL,
				       "directory %u: its %u-level index is full%s", p->dir, p->levels + 1,
				       max_levels < 2 ? " (largedir would allow another level)" : "");
	return add_level(p);
}

int ext4fs__dirw_htree_add(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			   const char *name, size_t len, uint32_t ino, uint8_t file_type)
{
	struct path p;
	struct dirw_scan s;
	uint32_t hash, need = dirw_rec_size((uint32_t)len);
	int moved, err = path_lookup(&p, fs, dir, inode, name, len, &hash, &s, &moved);

	if (err)
		return err;
	if (s.found) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_EXISTS, "directory %u already has \"%.*s\"", dir, (int)len,
				      name);
		goto out;
	}
	if (moved) {
		err = descend(&p, hash);
		if (err)
			goto out;
	}
	for (unsigned round = 0; round < MAX_ROUNDS; round++) {
		err = ext4fs__dirw_leaf_scan(fs, dir, p.leaf, p.leaf_lblk, name, len, need, &s);
		if (err)
			goto out;
		if (s.has_room) {
			ext4fs__dirw_leaf_put(fs, p.leaf, s.room, name, len, ino, file_type);
			err = ext4fs__dirw_block_write(fs, dir, inode, p.leaf_lblk, p.leaf_pblk, p.leaf);
			goto out;
		}
		if (dx_count(&p.f[p.levels]) < dx_limit(&p.f[p.levels])) {
			err = split_leaf(&p, name, len, hash, ino, file_type);
			goto out;
		}
		err = make_index_room(&p);
		if (!err)
			err = descend(&p, hash);
		if (err)
			goto out;
	}
	err = ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT, "directory %u: no room found in the index", dir);
out:
	path_free(&p);
	return err;
}

/* -- converting a linear directory ----------------------------------------- */

int ext4fs__dirw_htree_convert(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			       const unsigned char *block0, uint64_t pblk0)
{
	uint32_t bs = fs->geom.block_size, end = ext4fs__dirw_leaf_end(fs), dot_rl, dotdot_rl, off;
	uint8_t def = fs->sb.s_def_hash_version;
	int version = ext4fs_dx_hash_version_effective(def, fs->sb.s_flags);
	uint32_t h, lblk = 0, limit = ext4fs__dirw_dx_limit(fs, EXT4FS_DX_ROOT_COUNT_OFFSET);
	uint64_t pblk = 0;
	unsigned char *leaf = NULL, *root;
	int err;

	/* The block was scanned whole by the caller; "." and ".." must lead it. */
	dot_rl = ext4fs__dirw_rec_len(fs, block0, 0);
	if (block0[DIRW_DE_NAME_LEN] != 1 || block0[DIRW_DE_NAME] != '.' ||
	    dot_rl > end - DOT_REC_LEN || block0[dot_rl + DIRW_DE_NAME_LEN] != 2 ||
	    memcmp(block0 + dot_rl + DIRW_DE_NAME, "..", 2) != 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u: block 0 does not start with \".\" and \"..\"", dir);
	dotdot_rl = ext4fs__dirw_rec_len(fs, block0, dot_rl);
	if (version == EXT4FS_HASH_SIPHASH || ext4fs_dx_hash(version, ".", 1, fs->sb.s_hash_seed, &h, NULL))
		return ext4fs__fs_fail(fs, EXT4FS_E_UNKNOWN_HASH,
				       "directory %u: cannot index with the default hash version %u", dir, def);
	leaf = malloc((size_t)bs * 2);
	if (!leaf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory to index it", dir);
	root = leaf + bs;

	/* The entries after "." and ".." move, packed, to a leaf at block 1. */
	uint32_t out = 0, last = 0;
	ext4fs__dirw_leaf_init(fs, leaf);
	for (off = dot_rl + dotdot_rl; off < end;) {
		uint32_t rl = ext4fs__dirw_rec_len(fs, block0, off), nl = block0[off + DIRW_DE_NAME_LEN];
		uint32_t size = dirw_rec_size(nl);

		if (rl < DIRW_DE_HEADER || rl > end - off)
			break;
		if (le32_load(block0 + off) != 0) {
			memcpy(leaf + out, block0 + off, size);
			ext4fs_dirent_rec_len_set(leaf + out, size, fs->geom.block_size);
			last = out;
			out += size;
		}
		off += rl;
	}
	if (out)
		ext4fs_dirent_rec_len_set(leaf + last, end - last, fs->geom.block_size);

	/* Block 0 becomes the root: ".", ".." over the whole rest, the info, one entry. */
	memset(root, 0, bs);
	ext4fs__dirw_entry_store(fs, root, 0, DOT_REC_LEN, ".", 1, le32_load(block0), block0[DIRW_DE_FILE_TYPE]);
	ext4fs__dirw_entry_store(fs, root, DOT_REC_LEN, bs - DOT_REC_LEN, "..", 2,
				 le32_load(block0 + dot_rl), block0[dot_rl + DIRW_DE_FILE_TYPE]);
	root[ROOT_HASH_OFF] = def;
	root[ROOT_INFO_LEN_OFF] = ROOT_INFO_LEN;
	le16_store(root + EXT4FS_DX_ROOT_COUNT_OFFSET, (uint16_t)limit);
	le16_store(root + EXT4FS_DX_ROOT_COUNT_OFFSET + DX_COUNT, 1);

	err = ext4fs__dirw_block_append(fs, dir, inode, &lblk, &pblk);
	if (err)
		goto out;
	le32_store(root + EXT4FS_DX_ROOT_COUNT_OFFSET + DX_BLOCK, lblk);
	err = ext4fs__dirw_block_write(fs, dir, inode, lblk, pblk, leaf);
	if (err)
		goto out;
	inode->i_flags |= EXT4FS_INDEX_FL;
	err = ext4fs__dirw_block_write(fs, dir, inode, 0, pblk0, root);
	if (!err)
		err = ext4fs_inode_write(fs, dir, inode);
	if (err)
		inode->i_flags &= ~EXT4FS_INDEX_FL;
out:
	free(leaf);
	return err;
}
