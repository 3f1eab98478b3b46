# EXT4FS_SSE42_TARGET
# -------------------
# crc32c chooses its SSE4.2 implementation at run time, so the compiler only
# has to accept __attribute__((target("sse4.2"))) on one function; the
# whole build is not compiled for SSE4.2.  Defines HAVE_SSE42_TARGET_ATTR.
AC_DEFUN([EXT4FS_SSE42_TARGET], [
AC_CACHE_CHECK([for the sse4.2 target attribute], [ext4fs_cv_sse42_attr],
  [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <nmmintrin.h>
__attribute__((target("sse4.2"))) static unsigned f(unsigned c, unsigned char b) { return _mm_crc32_u8(c, b); }]],
                     [[return (int)f(0, 1);]])],
     [ext4fs_cv_sse42_attr=yes], [ext4fs_cv_sse42_attr=no])])
AS_IF([test "x$ext4fs_cv_sse42_attr" = xyes],
      [AC_DEFINE([HAVE_SSE42_TARGET_ATTR], [1], [compiler accepts target("sse4.2")])])
])
