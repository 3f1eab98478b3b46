/* array.c - growing an array by doubling (see array.h). */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include "ext4fs/array.h"

void *ext4fs_array_grow(void *items, size_t *cap, size_t need, size_t item_size, size_t first)
{
	size_t n;

	if (need <= *cap)
		return items;
	if (*cap)
		n = *cap > SIZE_MAX / 2 ? 0 : *cap * 2;
	else
		n = first ? first : 1;
	while (n && n < need)
		n = n > SIZE_MAX / 2 ? 0 : n * 2;
	if (!n || !item_size || n > SIZE_MAX / item_size)
		return NULL;
	void *grown = realloc(items, n * item_size);
	if (!grown)
		return NULL;
	*cap = n;
	return grown;
}
