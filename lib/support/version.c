/* version.c - the tools' version banner (see version.h). */
#include "config.h"
#include "support/version.h"

const char *sup_release_date(void)
{
	return RELEASE_DATE;
}

void sup_version_banner(FILE *f, const char *prog)
{
	fprintf(f, "%s %s (%s)\n", prog, PACKAGE_VERSION, RELEASE_DATE);
}

void sup_version_full(FILE *f, const char *prog)
{
	sup_version_banner(f, prog);
	fprintf(f, "\tUsing libext4fs %s\n", PACKAGE_VERSION);
}
