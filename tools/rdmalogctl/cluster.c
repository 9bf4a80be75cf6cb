// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogctl - cluster files (Documentation/cluster-file.rst).
 *
 *   # comment
 *   cluster CLUSTER_ID
 *   log [capacity SIZE] [max-record SIZE] [durability MODE] [commit-timeout MS]
 *   node ID address ADDR [port PORT]
 *   timers [heartbeat MS] [peer-timeout MS]
 *   primary ID
 *
 * Parsing is strict: anything unknown, repeated or out of range is an
 * error naming the file and line, and nothing is applied.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdmalogctl.h"

#define MAX_TOKENS 32
#define COMMIT_TIMEOUT_MAX 3600000

struct parser {
	struct cluster *cl;
	int line;
	int log_line[4];	/* where each log setting was given */
};

static int perr(const struct parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(const struct parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s:%d: ", p->cl->file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* Split @s in place at blanks; a '#' starts a comment. */
static int tokenize(char *s, char **tok, int max)
{
	char *hash = strchr(s, '#');
	int n = 0;

	if (hash)
		*hash = '\0';
	for (;;) {
		s += strspn(s, " \t\r\n\v\f");
		if (!*s)
			return n;
		if (n == max)
			return -1;
		tok[n++] = s;
		s += strcspn(s, " \t\r\n\v\f");
		if (*s)
			*s++ = '\0';
	}
}

const struct cl_node *cluster_node(const struct cluster *cl, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].id == id)
			return &cl->nodes[i];
	return NULL;
}

static int parse_cluster_line(struct parser *p, char **tok, int n)
{
	struct cluster *cl = p->cl;

	if (cl->cluster_line)
		return perr(p, p->line, "duplicate 'cluster' (first at line %d)",
			    cl->cluster_line);
	if (n != 2)
		return perr(p, p->line, "expected 'cluster CLUSTER_ID'");
	if (parse_u64(tok[1], &cl->cluster_id) || !cl->cluster_id)
		return perr(p, p->line,
			    "invalid cluster id '%s' (a non-zero 64-bit number)",
			    tok[1]);
	cl->cluster_line = p->line;
	return 0;
}

static int parse_secret_line(struct parser *p, char **tok, int n)
{
	struct cluster *cl = p->cl;
	char why[300];

	if (cl->secret_line)
		return perr(p, p->line,
			    "duplicate 'secret-file' (first at line %d)",
			    cl->secret_line);
	if (n != 2)
		return perr(p, p->line, "expected 'secret-file FILE'");
	if (strlen(tok[1]) >= sizeof(cl->secret_file))
		return perr(p, p->line, "secret file name too long");
	if (read_secret(tok[1], cl->secret, &cl->secret_len, why, sizeof(why)))
		return perr(p, p->line, "%s", why);
	snprintf(cl->secret_file, sizeof(cl->secret_file), "%s", tok[1]);
	cl->secret_line = p->line;
	return 0;
}

static int parse_log_line(struct parser *p, char **tok, int n)
{
	static const char *const kws[] = {
		"capacity", "max-record", "durability", "commit-timeout", NULL
	};
	struct cluster *cl = p->cl;
	uint64_t v;
	int i, k, d;

	if (n < 2)
		return perr(p, p->line,
			    "expected 'log SETTING VALUE ...' (capacity, max-record, durability, commit-timeout)");
	for (i = 1; i < n; i += 2) {
		for (k = 0; kws[k] && strcmp(tok[i], kws[k]); k++)
			;
		if (!kws[k])
			return perr(p, p->line, "unknown log setting '%s'", tok[i]);
		if (i + 1 >= n)
			return perr(p, p->line, "'%s' needs a value", tok[i]);
		if (p->log_line[k])
			return perr(p, p->line, "duplicate log setting '%s' (first at line %d)",
				    tok[i], p->log_line[k]);
		p->log_line[k] = p->line;
		switch (k) {
		case 0:
			if (parse_size(tok[i + 1], &v))
				return perr(p, p->line, "invalid capacity '%s'",
					    tok[i + 1]);
			if (v % 4096 || v < RDMALOG_MIN_CAPACITY ||
			    v > RDMALOG_MAX_CAPACITY)
				return perr(p, p->line,
					    "capacity %s must be a multiple of 4096 within %lluK..%lluG",
					    tok[i + 1],
					    (unsigned long long)(RDMALOG_MIN_CAPACITY >> 10),
					    (unsigned long long)(RDMALOG_MAX_CAPACITY >> 30));
			cl->capacity = v;
			cl->has_capacity = true;
			break;
		case 1:
			if (parse_size(tok[i + 1], &v) || !v || v > UINT32_MAX)
				return perr(p, p->line, "invalid max-record '%s'",
					    tok[i + 1]);
			cl->max_record = (uint32_t)v;
			cl->has_max_record = true;
			break;
		case 2:
			d = parse_durability(tok[i + 1]);
			if (d < 0)
				return perr(p, p->line,
					    "invalid durability '%s' (async, quorum or all)",
					    tok[i + 1]);
			cl->durability = (uint32_t)d;
			cl->has_durability = true;
			break;
		case 3:
			if (parse_u32_range(tok[i + 1], 1, COMMIT_TIMEOUT_MAX,
					    &cl->commit_timeout_ms))
				return perr(p, p->line,
					    "invalid commit-timeout '%s' (1..%d ms)",
					    tok[i + 1], COMMIT_TIMEOUT_MAX);
			cl->has_commit_timeout = true;
			break;
		}
	}
	return 0;
}

static int parse_timers_line(struct parser *p, char **tok, int n)
{
	static const char *const kws[] = { "heartbeat", "peer-timeout", NULL };
	struct cluster *cl = p->cl;
	int i, k;

	if (n < 2)
		return perr(p, p->line,
			    "expected 'timers SETTING VALUE ...' (heartbeat, peer-timeout)");
	for (i = 1; i < n; i += 2) {
		for (k = 0; kws[k] && strcmp(tok[i], kws[k]); k++)
			;
		if (!kws[k])
			return perr(p, p->line, "unknown timers setting '%s'",
				    tok[i]);
		if (i + 1 >= n)
			return perr(p, p->line, "'%s' needs a value", tok[i]);
		if (cl->timers_line[k])
			return perr(p, p->line,
				    "duplicate timers setting '%s' (first at line %d)",
				    tok[i], cl->timers_line[k]);
		cl->timers_line[k] = p->line;
		if (k == 0) {
			if (parse_u32_range(tok[i + 1], RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_HEARTBEAT_MS,
					    &cl->heartbeat_ms))
				return perr(p, p->line,
					    "invalid heartbeat '%s' (%d..%d ms)",
					    tok[i + 1], RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_HEARTBEAT_MS);
			cl->has_heartbeat = true;
		} else {
			if (parse_u32_range(tok[i + 1],
					    2 * RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_PEER_TIMEOUT_MS,
					    &cl->peer_timeout_ms))
				return perr(p, p->line,
					    "invalid peer-timeout '%s' (%d..%d ms)",
					    tok[i + 1], 2 * RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_PEER_TIMEOUT_MS);
			cl->has_peer_timeout = true;
		}
	}
	return 0;
}

static int parse_node_line(struct parser *p, char **tok, int n)
{
	struct cluster *cl = p->cl;
	struct cl_node nd = { .port = RDMALOG_DEFAULT_PORT, .line = p->line };
	bool has_addr = false, has_port = false, has_prio = false;
	char buf[64];
	unsigned int j;
	uint32_t port;
	int i;

	if (n < 2 || parse_u32_range(tok[1], 1, RDMALOG_MAX_NODE_ID, &nd.id))
		return perr(p, p->line, "expected 'node ID address ADDR [port PORT] [priority N] [no-lead]' with ID 1..%d",
			    RDMALOG_MAX_NODE_ID);
	for (i = 2; i < n; i += 2) {
		if (!strcmp(tok[i], "no-lead")) {
			if (nd.no_lead)
				return perr(p, p->line, "'no-lead' given twice");
			nd.no_lead = true;
			i--;	/* a word without a value */
			continue;
		}
		if (i + 1 >= n)
			return perr(p, p->line, "'%s' needs a value", tok[i]);
		if (!strcmp(tok[i], "address")) {
			if (has_addr)
				return perr(p, p->line, "'address' given twice");
			if (parse_addr(tok[i + 1], &nd.addr))
				return perr(p, p->line,
					    "invalid address '%s' (IPv4 or IPv6)",
					    tok[i + 1]);
			has_addr = true;
		} else if (!strcmp(tok[i], "port")) {
			if (has_port)
				return perr(p, p->line, "'port' given twice");
			if (parse_u32_range(tok[i + 1], 1, 65535, &port))
				return perr(p, p->line,
					    "invalid port '%s' (1..65535)",
					    tok[i + 1]);
			nd.port = (uint16_t)port;
			has_port = true;
		} else if (!strcmp(tok[i], "priority")) {
			if (has_prio)
				return perr(p, p->line, "'priority' given twice");
			if (parse_u32_range(tok[i + 1], 0, RDMALOG_MAX_PRIORITY,
					    &nd.priority))
				return perr(p, p->line,
					    "invalid priority '%s' (0..%d)",
					    tok[i + 1], RDMALOG_MAX_PRIORITY);
			has_prio = true;
		} else {
			return perr(p, p->line, "unknown node setting '%s'", tok[i]);
		}
	}
	if (!has_addr)
		return perr(p, p->line, "node %u has no address", nd.id);
	for (j = 0; j < cl->nnodes; j++) {
		if (cl->nodes[j].id == nd.id)
			return perr(p, p->line, "duplicate node id %u (first at line %d)",
				    nd.id, cl->nodes[j].line);
		if (addr_eq(&cl->nodes[j].addr, &nd.addr))
			return perr(p, p->line,
				    "duplicate address %s (node %u at line %d)",
				    addr_str(&nd.addr, buf, sizeof(buf)),
				    cl->nodes[j].id, cl->nodes[j].line);
	}
	if (cl->nnodes >= CL_MAX_NODES)
		return perr(p, p->line, "too many nodes (at most %d)",
			    CL_MAX_NODES);
	cl->nodes[cl->nnodes++] = nd;
	return 0;
}

static int parse_primary_line(struct parser *p, char **tok, int n)
{
	struct cluster *cl = p->cl;

	if (cl->primary_line)
		return perr(p, p->line, "duplicate 'primary' (first at line %d)",
			    cl->primary_line);
	if (n != 2 ||
	    parse_u32_range(tok[1], 1, RDMALOG_MAX_NODE_ID, &cl->primary))
		return perr(p, p->line, "expected 'primary ID' with ID 1..%d",
			    RDMALOG_MAX_NODE_ID);
	cl->primary_line = p->line;
	return 0;
}

static int parse_failover_line(struct parser *p, char **tok, int n)
{
	struct cluster *cl = p->cl;
	int r;

	if (cl->failover_line)
		return perr(p, p->line, "duplicate 'failover' (first at line %d)",
			    cl->failover_line);
	r = n == 2 ? parse_failover(tok[1]) : -1;
	if (r < 0)
		return perr(p, p->line, "expected 'failover auto' or 'failover manual'");
	cl->failover = (uint32_t)r;
	cl->has_failover = true;
	cl->failover_line = p->line;
	return 0;
}

int cluster_load(const char *file, struct cluster *cl)
{
	struct parser p = { .cl = cl };
	char *line = NULL, *tok[MAX_TOKENS];
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int n, ret = 0;

	memset(cl, 0, sizeof(*cl));
	cl->file = file;
	f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return -1;
	}
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		p.line++;
		if (strlen(line) != (size_t)len) {
			ret = perr(&p, p.line, "NUL byte in line");
			break;
		}
		n = tokenize(line, tok, MAX_TOKENS);
		if (n < 0)
			ret = perr(&p, p.line, "too many words");
		else if (n == 0)
			continue;
		else if (!strcmp(tok[0], "cluster"))
			ret = parse_cluster_line(&p, tok, n);
		else if (!strcmp(tok[0], "log"))
			ret = parse_log_line(&p, tok, n);
		else if (!strcmp(tok[0], "node"))
			ret = parse_node_line(&p, tok, n);
		else if (!strcmp(tok[0], "primary"))
			ret = parse_primary_line(&p, tok, n);
		else if (!strcmp(tok[0], "timers"))
			ret = parse_timers_line(&p, tok, n);
		else if (!strcmp(tok[0], "secret-file"))
			ret = parse_secret_line(&p, tok, n);
		else if (!strcmp(tok[0], "failover"))
			ret = parse_failover_line(&p, tok, n);
		else
			ret = perr(&p, p.line, "unknown keyword '%s'", tok[0]);
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, PROG ": %s: read error\n", file);
		ret = -1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (ret)
		return ret;

	/* Whole-file checks, reported at the end of the file. */
	if (!p.line)
		p.line = 1;
	if (!cl->cluster_line)
		return perr(&p, p.line, "missing 'cluster CLUSTER_ID'");
	if (!cl->nnodes)
		return perr(&p, p.line, "no 'node' lines");
	if (!cl->primary_line)
		return perr(&p, p.line, "missing 'primary ID'");
	if (!cluster_node(cl, cl->primary))
		return perr(&p, cl->primary_line,
			    "primary %u is not a node of the cluster", cl->primary);
	if (cl->has_capacity && cl->has_max_record &&
	    cl->max_record > cl->capacity / 4)
		return perr(&p, p.log_line[1],
			    "max-record %u exceeds a quarter of the capacity (%llu)",
			    cl->max_record, (unsigned long long)(cl->capacity / 4));
	if (cl->has_heartbeat && cl->has_peer_timeout &&
	    cl->peer_timeout_ms < 2 * cl->heartbeat_ms)
		return perr(&p, cl->timers_line[1],
			    "peer-timeout %u is less than twice the heartbeat (%u)",
			    cl->peer_timeout_ms, cl->heartbeat_ms);
	return 0;
}
