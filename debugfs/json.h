/*
 * json.h - a small streaming JSON writer for debug4fs -j.
 * Keeps track of nesting so commas and quoting are always right.
 */
#ifndef DEBUG4FS_JSON_H
#define DEBUG4FS_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	int need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
void json_object_begin(struct json *j, const char *key);  /* key NULL inside arrays / at top */
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *value);
void json_string_len(struct json *j, const char *key, const char *value, size_t len);
void json_uint(struct json *j, const char *key, uint64_t value);
void json_int(struct json *j, const char *key, int64_t value);
void json_double(struct json *j, const char *key, double value);  /* fixed, 6 decimals */
void json_bool(struct json *j, const char *key, int value);
void json_null(struct json *j, const char *key);
/* End the document with a newline (after the top-level value). */
void json_finish(struct json *j);

#endif
