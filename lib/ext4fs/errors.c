/* errors.c - messages for libext4fs error codes. */
#include "config.h"
#include <string.h>
#include "ext4fs/errors.h"

static const char *const library_messages[EXT4FS_ERRIDX_COUNT_] = {
#define EXT4FS_ERR_MSG_(name, msg) msg,
	EXT4FS_ERROR_TABLE(EXT4FS_ERR_MSG_)
#undef EXT4FS_ERR_MSG_
};

int ext4fs_is_library_error(int err)
{
	return err <= -(EXT4FS_ERR_BASE + 1) &&
	       err > -(EXT4FS_ERR_BASE + 1 + EXT4FS_ERRIDX_COUNT_);
}

const char *ext4fs_strerror(int err)
{
	if (err == 0)
		return "Success";
	if (ext4fs_is_library_error(err))
		return library_messages[-err - EXT4FS_ERR_BASE - 1];
	if (err < 0 && err > -EXT4FS_ERR_BASE)
		return strerror(-err);
	return "Unknown error";
}
