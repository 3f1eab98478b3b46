/*
 * version.h - the one version banner every tool prints.
 *
 * The format is e2fsprogs': "<program> <version> (<release date>)", as in
 * "mke4fs 0.1.0 (28-Nov-2026)".  The version is configure.ac's AC_INIT
 * version and the date its RELEASE_DATE, defined next to it; no tool keeps
 * a date of its own.
 */
#ifndef SUPPORT_VERSION_H
#define SUPPORT_VERSION_H

#include <stdio.h>

/* The release date ("DD-Mon-YYYY"), a static string. */
const char *sup_release_date(void);

/* "<prog> <version> (<date>)\n" to f (the banner printed when a tool starts). */
void sup_version_banner(FILE *f, const char *prog);

/* The banner and then "\tUsing libext4fs <version>\n" (what -V prints). */
void sup_version_full(FILE *f, const char *prog);

#endif
