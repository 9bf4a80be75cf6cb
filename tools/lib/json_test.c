// SPDX-License-Identifier: GPL-2.0
/*
 * json_test - the JSON writer's strings (json.h), checked on the host
 * (make toolcheck): UTF-8 passes through, other bytes become \u00XX in
 * payloads and U+FFFD in C strings, JSON's own escapes, compact and
 * pretty documents. Prints "ok N - ..." lines; exit 1 on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

static int failed, n;

/* Run @fn with stdout captured, compare with @want. */
static void check(const char *name, void (*fn)(void), const char *want)
{
	char buf[4096];
	size_t len;
	FILE *f = tmpfile();
	int saved;

	if (!f) {
		perror("tmpfile");
		exit(1);
	}
	fflush(stdout);
	saved = dup(1);
	dup2(fileno(f), 1);
	fn();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	n++;
	if (strcmp(buf, want)) {
		printf("not ok %d - %s\n#   got:  %s#   want: %s", n, name, buf,
		       want);
		failed = 1;
	} else {
		printf("ok %d - %s\n", n, name);
	}
}

static void utf8(void)
{
	static const char p[] = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80";

	jw_begin_obj(NULL);
	jw_bytes("data", p, sizeof(p) - 1);
	jw_end_obj();
	jw_finish();
}

static void binary(void)
{
	static const char p[] = "a\xff\xc3(\xed\xa0\x80\xc0\xaf\x00z";

	jw_begin_obj(NULL);
	jw_bytes("data", p, sizeof(p) - 1);
	jw_bool("valid", json_utf8_valid(p, sizeof(p) - 1));
	jw_hex("data_hex", p, sizeof(p) - 1);
	jw_end_obj();
	jw_finish();
}

static void cstring(void)
{
	jw_begin_obj(NULL);
	jw_str("msg", "\"q\" \\ \n\t\x01\x7f caf\xc3\xa9 \xff");
	jw_end_obj();
	jw_finish();
}

static void truncated(void)
{
	/* A sequence cut off by the payload's end is not UTF-8. */
	jw_begin_arr(NULL);
	jw_bytes(NULL, "\xe2\x82\xac", 2);
	jw_bool(NULL, json_utf8_valid("\xe2\x82\xac", 2));
	jw_bool(NULL, json_utf8_valid("\xe2\x82\xac", 3));
	jw_end_arr();
	jw_finish();
}

static void pretty(void)
{
	jw_pretty = true;
	jw_begin_obj(NULL);
	jw_u64("a", 1);
	jw_begin_arr("b");
	jw_null(NULL);
	jw_double(NULL, 2.5, 1);
	jw_end_arr();
	jw_begin_obj("c");
	jw_end_obj();
	jw_end_obj();
	jw_finish();
	jw_pretty = false;
}

int main(void)
{
	check("valid UTF-8 passes through", utf8,
	      "{\"data\":\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"}\n");
	check("invalid bytes as \\u00XX, with data_hex", binary,
	      "{\"data\":\"a\\u00ff\\u00c3(\\u00ed\\u00a0\\u0080\\u00c0\\u00af\\u0000z\","
	      "\"valid\":false,\"data_hex\":\"61ffc328eda080c0af007a\"}\n");
	check("C strings: escapes, U+FFFD", cstring,
	      "{\"msg\":\"\\\"q\\\" \\\\ \\n\\t\\u0001\\u007f caf\xc3\xa9 \\ufffd\"}\n");
	check("a cut-off sequence is not UTF-8", truncated,
	      "[\"\\u00e2\\u0082\",false,true]\n");
	check("pretty", pretty,
	      "{\n  \"a\": 1,\n  \"b\": [\n    null,\n    2.5\n  ],\n  \"c\": {}\n}\n");
	printf("1..%d\n", n);
	return failed;
}
