/* json.c - streaming JSON writer (see json.h). */
#include "config.h"
#include <inttypes.h>
#include <string.h>
#include "support/json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma = 0;
}

static void put_escaped(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			/* Control bytes and bytes that are not ASCII (names are raw bytes) are escaped. */
			if (c < 0x20 || c >= 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static void prefix(struct json *j, const char *key)
{
	if (j->need_comma)
		fputc(',', j->f);
	j->need_comma = 1;
	if (key) {
		put_escaped(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void open_nested(struct json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	j->depth++;
	j->need_comma = 0;
}

static void close_nested(struct json *j, char c)
{
	/* The container just closed is a value of the level around it. */
	if (j->depth > 0)
		j->depth--;
	j->need_comma = 1;
	fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key) { open_nested(j, key, '{'); }
void json_object_end(struct json *j) { close_nested(j, '}'); }
void json_array_begin(struct json *j, const char *key) { open_nested(j, key, '['); }
void json_array_end(struct json *j) { close_nested(j, ']'); }

void json_string_len(struct json *j, const char *key, const char *value, size_t len)
{
	prefix(j, key);
	put_escaped(j->f, value, len);
}

void json_string(struct json *j, const char *key, const char *value)
{
	if (!value) {
		json_null(j, key);
		return;
	}
	json_string_len(j, key, value, strlen(value));
}

void json_uint(struct json *j, const char *key, uint64_t value)
{
	prefix(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

void json_int(struct json *j, const char *key, int64_t value)
{
	prefix(j, key);
	fprintf(j->f, "%" PRId64, value);
}

void json_double(struct json *j, const char *key, double value)
{
	prefix(j, key);
	fprintf(j->f, "%.6f", value);
}

void json_bool(struct json *j, const char *key, int value)
{
	prefix(j, key);
	fputs(value ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
	j->depth = 0;
	j->need_comma = 0;
}
