# EXT4FS_SANITIZERS
# -----------------
# --enable-sanitizers: AddressSanitizer and UndefinedBehaviorSanitizer in
# SAN_CFLAGS.  Undefined behaviour aborts (no recovery) so that a test run
# cannot pass over it.
AC_DEFUN([EXT4FS_SANITIZERS], [
AC_ARG_ENABLE([sanitizers], [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer])],
              [], [enable_sanitizers=no])
SAN_CFLAGS=""
AS_IF([test "x$enable_sanitizers" = xyes],
      [SAN_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"])
AC_SUBST([SAN_CFLAGS])
])
