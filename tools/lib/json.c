// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog tools - a tiny JSON writer: objects, arrays, strings, numbers,
 * booleans and null, compact or pretty, to stdout. Shared by rdmalogctl,
 * rdmalogcat and rdmalog-bench; json.h says how strings are written.
 */
#include <math.h>
#include <string.h>

#include "json.h"

#define JW_MAX_DEPTH 32

bool jw_pretty;

static struct {
	int depth;
	unsigned int count[JW_MAX_DEPTH];	/* members written per level */
} jw;

static void jw_indent(int depth)
{
	int i;

	putchar('\n');
	for (i = 0; i < depth; i++)
		fputs("  ", stdout);
}

/* Separator, indentation and key before a value. */
static void jw_prefix(const char *key)
{
	if (jw.depth > 0) {
		if (jw.depth <= JW_MAX_DEPTH && jw.count[jw.depth - 1]++)
			putchar(',');
		if (jw_pretty)
			jw_indent(jw.depth);
	}
	if (key) {
		json_escape(stdout, key);
		fputs(jw_pretty ? ": " : ":", stdout);
	}
}

static void jw_open(const char *key, char c)
{
	jw_prefix(key);
	putchar(c);
	if (jw.depth < JW_MAX_DEPTH)
		jw.count[jw.depth] = 0;
	jw.depth++;
}

static void jw_close(char c)
{
	jw.depth--;
	if (jw_pretty && jw.depth < JW_MAX_DEPTH && jw.count[jw.depth])
		jw_indent(jw.depth);
	putchar(c);
}

void jw_begin_obj(const char *key)
{
	jw_open(key, '{');
}

void jw_end_obj(void)
{
	jw_close('}');
}

void jw_begin_arr(const char *key)
{
	jw_open(key, '[');
}

void jw_end_arr(void)
{
	jw_close(']');
}

void jw_str(const char *key, const char *val)
{
	jw_prefix(key);
	json_escape(stdout, val);
}

void jw_bytes(const char *key, const void *buf, size_t len)
{
	jw_prefix(key);
	json_escape_bytes(stdout, buf, len);
}

void jw_hex(const char *key, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	jw_prefix(key);
	putchar('"');
	for (i = 0; i < len; i++)
		printf("%02x", p[i]);
	putchar('"');
}

void jw_u64(const char *key, uint64_t val)
{
	jw_prefix(key);
	printf("%llu", (unsigned long long)val);
}

void jw_double(const char *key, double val, int prec)
{
	jw_prefix(key);
	if (!isfinite(val))
		fputs("null", stdout);
	else if (prec < 0)
		printf("%g", val);
	else
		printf("%.*f", prec, val);
}

void jw_bool(const char *key, bool val)
{
	jw_prefix(key);
	fputs(val ? "true" : "false", stdout);
}

void jw_null(const char *key)
{
	jw_prefix(key);
	fputs("null", stdout);
}

void jw_finish(void)
{
	putchar('\n');
	fflush(stdout);
	jw.depth = 0;
}

/*
 * Length of the valid UTF-8 sequence at @s, of at most @left bytes, or 0
 * if it is not one.
 */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > left)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool json_utf8_valid(const void *buf, size_t len)
{
	const unsigned char *s = buf;
	size_t n;

	while (len) {
		n = utf8_len(s, len);
		if (!n)
			return false;
		s += n;
		len -= n;
	}
	return true;
}

/* @invalid: what to write for a byte that is not valid UTF-8, or NULL. */
static void escape(FILE *f, const unsigned char *s, size_t len,
		   const char *invalid)
{
	size_t n;

	putc('"', f);
	while (len) {
		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s, len);
			if (!n) {
				if (invalid)
					fputs(invalid, f);
				else
					fprintf(f, "\\u%04x", *s);
				break;
			}
			fwrite(s, 1, n, f);
			s += n;
			len -= n;
			continue;
		}
		s++;
		len--;
	}
	putc('"', f);
}

void json_escape(FILE *f, const char *s)
{
	/* Not UTF-8: the replacement character. */
	escape(f, (const unsigned char *)s, strlen(s), "\\ufffd");
}

void json_escape_bytes(FILE *f, const void *buf, size_t len)
{
	escape(f, buf, len, NULL);
}
