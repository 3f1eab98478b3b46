/*
 * json.h - a small streaming JSON writer shared by the tools (debug4fs -j,
 * mke4fs --json, e4fsck --json).
 *
 * Values are written straight to a stdio stream as they are given; the
 * writer only remembers whether the next value at the current level needs
 * a comma, so nesting has no depth limit.  The caller is responsible for
 * balancing begin/end calls and for giving keys inside objects (and NULL
 * keys inside arrays or for the top-level value).  Nothing is allocated;
 * write errors are left in the stream (check ferror() on it).
 */
#ifndef SUPPORT_JSON_H
#define SUPPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;            /* not owned: the caller opens and closes it */
	unsigned depth;     /* containers open now */
	int need_comma;     /* a value was written at the current level */
};

/* Start a document on f. */
void json_init(struct json *j, FILE *f);

/* Open or close an object or array; key is NULL inside arrays and at the top. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);

/*
 * Scalars.  Strings are escaped: quote, backslash and control characters,
 * and every byte outside printable ASCII as \u00XX (names are raw bytes,
 * not UTF-8).  json_string() with a NULL value writes null.
 */
void json_string(struct json *j, const char *key, const char *value);
void json_string_len(struct json *j, const char *key, const char *value, size_t len);
void json_uint(struct json *j, const char *key, uint64_t value);
void json_int(struct json *j, const char *key, int64_t value);
void json_double(struct json *j, const char *key, double value);  /* fixed, 6 decimals */
void json_bool(struct json *j, const char *key, int value);
void json_null(struct json *j, const char *key);

/* End the document with a newline (after the top-level value); j may start another. */
void json_finish(struct json *j);

#endif
