# EXT4FS_CMOCKA
# -------------
# The unit tests need CMocka.  --with-cmocka (the default, "check") uses it
# when pkg-config finds it; --with-cmocka=yes makes its absence an error;
# --without-cmocka leaves the unit tests out.  Sets the HAVE_CMOCKA
# conditional and CMOCKA_CFLAGS / CMOCKA_LIBS.
AC_DEFUN([EXT4FS_CMOCKA], [
AC_ARG_WITH([cmocka], [AS_HELP_STRING([--without-cmocka], [do not build the unit tests])],
            [], [with_cmocka=check])
have_cmocka=no
AS_IF([test "x$with_cmocka" != xno],
      [PKG_CHECK_MODULES([CMOCKA], [cmocka], [have_cmocka=yes],
        [AS_IF([test "x$with_cmocka" = xyes], [AC_MSG_ERROR([cmocka not found])])])])
AM_CONDITIONAL([HAVE_CMOCKA], [test "x$have_cmocka" = xyes])
])
