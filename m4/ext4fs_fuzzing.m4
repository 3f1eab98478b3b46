# EXT4FS_FUZZING
# --------------
# --enable-fuzzing: the libFuzzer targets of tests/fuzz (clang only), built
# with FUZZ_CFLAGS and linked with FUZZ_LDFLAGS; the ENABLE_FUZZING
# conditional tells tests/fuzz/Makefile.am whether to build them.
AC_DEFUN([EXT4FS_FUZZING], [
AC_ARG_ENABLE([fuzzing], [AS_HELP_STRING([--enable-fuzzing], [build libFuzzer targets (needs clang)])],
              [], [enable_fuzzing=no])
AM_CONDITIONAL([ENABLE_FUZZING], [test "x$enable_fuzzing" = xyes])
FUZZ_CFLAGS=""
AS_IF([test "x$enable_fuzzing" = xyes],
      [FUZZ_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined"
       AC_SUBST([FUZZ_LDFLAGS], ["-fsanitize=fuzzer,address,undefined"])])
AC_SUBST([FUZZ_CFLAGS])
])
