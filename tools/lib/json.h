/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON writer of rdmalogctl, rdmalogcat and rdmalog-bench (json.c):
 * one document at a time, to stdout, compact or pretty (two-space
 * indent). The caller nests begin/end calls correctly; a NULL key means
 * "inside an array".
 *
 * Strings: valid UTF-8 is written as it is (JSON's escapes for '"', '\\'
 * and control characters aside). Bytes that are not part of valid UTF-8
 * are written as U+FFFD by json_escape() (C strings: names, messages),
 * and as "\u00XX" (XX the byte in hex) by json_escape_bytes() and
 * jw_bytes() (payloads), so that a reader recovers them as the code
 * points U+0080..U+00FF; jw_hex() gives the exact bytes.
 */
#ifndef _RDMALOG_JSON_H
#define _RDMALOG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Indented output; set before the first jw_ call of a document. */
extern bool jw_pretty;

void jw_begin_obj(const char *key);
void jw_end_obj(void);
void jw_begin_arr(const char *key);
void jw_end_arr(void);
void jw_str(const char *key, const char *val);
/* @len bytes of @buf (NULs included) as a string, see above. */
void jw_bytes(const char *key, const void *buf, size_t len);
/* @len bytes of @buf as a string of lowercase hex digits. */
void jw_hex(const char *key, const void *buf, size_t len);
void jw_u64(const char *key, uint64_t val);
/* @prec digits after the point, or %g for a negative @prec; not finite: null. */
void jw_double(const char *key, double val, int prec);
void jw_bool(const char *key, bool val);
void jw_null(const char *key);
/* End the document: newline and flush. */
void jw_finish(void);

/* Write the C string @s as a JSON string literal (quotes included) to @f. */
void json_escape(FILE *f, const char *s);
/* The same for @len bytes of @buf, invalid UTF-8 as "\u00XX". */
void json_escape_bytes(FILE *f, const void *buf, size_t len);
/* Whether @len bytes of @buf are valid UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF; NUL counts as valid).
 */
bool json_utf8_valid(const void *buf, size_t len);

#endif /* _RDMALOG_JSON_H */
