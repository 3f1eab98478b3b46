# EXT4FS_WARNINGS
# ---------------
# The warning set every file is built with, in WARN_CFLAGS; --enable-werror
# makes the warnings errors (CI and scripts/test.sh build that way).
AC_DEFUN([EXT4FS_WARNINGS], [
AC_ARG_ENABLE([werror], [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
              [], [enable_werror=no])
WARN_CFLAGS="-Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter"
AS_IF([test "x$enable_werror" = xyes], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])
AC_SUBST([WARN_CFLAGS])
])
