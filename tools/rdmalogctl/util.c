// SPDX-License-Identifier: GPL-2.0
/* rdmalogctl - argument parsers and enum names. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdmalogctl.h"

int match_word(const char *arg, const char *const *words)
{
	size_t n = strlen(arg);
	int i;

	if (!n)
		return -1;
	for (i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	for (i = 0; words[i]; i++)
		if (!strncmp(arg, words[i], n))
			return i;
	return -1;
}

/* Decimal, or hexadecimal with 0x; no sign, no blanks, no overflow. */
int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int base = 10, d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			return -1;
		if (x > (UINT64_MAX - d) / base)
			return -1;
		x = x * base + d;
	}
	*v = x;
	return 0;
}

int parse_u32_range(const char *s, uint32_t min, uint32_t max, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(s, &x) || x < min || x > max)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* N, NK, NM, NG, NT (powers of 1024, case-insensitive, "iB" allowed). */
int parse_size(const char *s, uint64_t *v)
{
	char num[32];
	size_t n = 0;
	unsigned int shift = 0;
	uint64_t x;

	while (isdigit((unsigned char)s[n]))
		n++;
	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_u64(num, &x))
		return -1;
	s += n;
	if (*s) {
		switch (toupper((unsigned char)*s)) {
		case 'K':
			shift = 10;
			break;
		case 'M':
			shift = 20;
			break;
		case 'G':
			shift = 30;
			break;
		case 'T':
			shift = 40;
			break;
		default:
			return -1;
		}
		s++;
		if (*s && strcmp(s, "iB") && strcmp(s, "ib"))
			return -1;
	}
	if (shift && x > (UINT64_MAX >> shift))
		return -1;
	*v = x << shift;
	return 0;
}

int parse_addr(const char *s, struct rl_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, s, addr->a) == 1) {
		addr->len = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr->a) == 1) {
		addr->len = 16;
		return 0;
	}
	return -1;
}

const char *addr_str(const struct rl_addr *addr, char *buf, size_t len)
{
	if (addr->len == 4 && inet_ntop(AF_INET, addr->a, buf, len))
		return buf;
	if (addr->len == 16 && inet_ntop(AF_INET6, addr->a, buf, len))
		return buf;
	snprintf(buf, len, addr->len ? "invalid" : "-");
	return buf;
}

bool addr_eq(const struct rl_addr *x, const struct rl_addr *y)
{
	return x->len == y->len && !memcmp(x->a, y->a, x->len);
}

static const char *const roles[] = {
	[RDMALOG_ROLE_NONE] = "none",
	[RDMALOG_ROLE_PRIMARY] = "primary",
	[RDMALOG_ROLE_BACKUP] = "backup",
	NULL,
};

const char *role_name(uint32_t role)
{
	return role <= RDMALOG_ROLE_BACKUP ? roles[role] : "unknown";
}

const char *failover_name(uint32_t failover)
{
	switch (failover) {
	case RDMALOG_FAILOVER_AUTO:
		return "auto";
	case RDMALOG_FAILOVER_MANUAL:
		return "manual";
	default:
		return "unknown";
	}
}

const char *auth_name(uint32_t auth)
{
	switch (auth) {
	case RDMALOG_AUTH_NONE:
		return "none";
	case RDMALOG_AUTH_HMAC_SHA256:
		return "hmac-sha256";
	default:
		return "unknown";
	}
}

int read_secret(const char *file, uint8_t *buf, size_t *len, char *why,
		size_t why_len)
{
	uint8_t tmp[RDMALOG_MAX_SECRET + 2];
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	size_t n;
	int err;

	if (!f) {
		snprintf(why, why_len, "cannot open %s: %s", file,
			 strerror(errno));
		return -1;
	}
	n = fread(tmp, 1, sizeof(tmp), f);
	err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		snprintf(why, why_len, "cannot read %s", file);
		return -1;
	}
	/* One line of text as written by echo: without its newline. */
	if (n && tmp[n - 1] == '\n')
		n--;
	if (!n || n > RDMALOG_MAX_SECRET) {
		snprintf(why, why_len,
			 "%s: a shared secret is 1..%d bytes (one line)", file,
			 RDMALOG_MAX_SECRET);
		memset(tmp, 0, sizeof(tmp));
		return -1;
	}
	memcpy(buf, tmp, n);
	memset(tmp, 0, sizeof(tmp));
	*len = n;
	return 0;
}

int parse_role(const char *s)
{
	if (!strcmp(s, "primary"))
		return RDMALOG_ROLE_PRIMARY;
	if (!strcmp(s, "backup"))
		return RDMALOG_ROLE_BACKUP;
	return -1;
}

int parse_failover(const char *s)
{
	if (!strcmp(s, "auto"))
		return RDMALOG_FAILOVER_AUTO;
	if (!strcmp(s, "manual"))
		return RDMALOG_FAILOVER_MANUAL;
	return -1;
}

static const char *const durabilities[] = {
	[RDMALOG_DURABLE_ASYNC] = "async",
	[RDMALOG_DURABLE_QUORUM] = "quorum",
	[RDMALOG_DURABLE_ALL] = "all",
	NULL,
};

const char *durability_name(uint32_t d)
{
	return d <= RDMALOG_DURABLE_ALL ? durabilities[d] : "unknown";
}

int parse_durability(const char *s)
{
	int i;

	for (i = 0; durabilities[i]; i++)
		if (!strcmp(s, durabilities[i]))
			return i;
	return -1;
}

const char *peer_state_name(uint32_t st)
{
	static const char *const names[] = {
		[RDMALOG_PEER_CONFIGURED] = "configured",
		[RDMALOG_PEER_CONNECTING] = "connecting",
		[RDMALOG_PEER_CONNECTED] = "connected",
		[RDMALOG_PEER_DISCONNECTED] = "disconnected",
		[RDMALOG_PEER_REFUSED] = "refused",
	};

	return st < ARRAY_SIZE(names) ? names[st] : "unknown";
}

const char *catchup_name(uint32_t cs)
{
	static const char *const names[] = {
		[RDMALOG_CATCHUP_NONE] = "none",
		[RDMALOG_CATCHUP_PULLING] = "pulling",
		[RDMALOG_CATCHUP_SERVING] = "serving",
	};

	return cs < ARRAY_SIZE(names) ? names[cs] : "unknown";
}

const char *peer_sync_name(uint32_t s)
{
	static const char *const names[] = {
		[RDMALOG_PEER_SYNC_UNKNOWN] = "unknown",
		[RDMALOG_PEER_SYNC_IN_SYNC] = "in_sync",
		[RDMALOG_PEER_SYNC_BEHIND] = "behind",
		[RDMALOG_PEER_SYNC_CATCHING_UP] = "catching_up",
		[RDMALOG_PEER_SYNC_DIVERGED] = "diverged",
		[RDMALOG_PEER_SYNC_REFUSED] = "refused",
	};

	return s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *refusal_name(uint32_t r)
{
	static const char *const names[] = {
		[RDMALOG_REFUSAL_OTHER] = "other",
		[RDMALOG_REFUSAL_BAD_HANDSHAKE] = "bad_handshake",
		[RDMALOG_REFUSAL_VERSION] = "version",
		[RDMALOG_REFUSAL_CLUSTER_ID] = "cluster_id",
		[RDMALOG_REFUSAL_UNKNOWN_PEER] = "unknown_peer",
		[RDMALOG_REFUSAL_ADDR_MISMATCH] = "address_mismatch",
		[RDMALOG_REFUSAL_NODE_ID] = "node_id",
		[RDMALOG_REFUSAL_CAPACITY] = "capacity",
		[RDMALOG_REFUSAL_DIRECTION] = "direction",
		[RDMALOG_REFUSAL_BAD_PARAMS] = "bad_params",
		[RDMALOG_REFUSAL_AUTH] = "auth",
		[RDMALOG_REFUSAL_SECOND_PRIMARY] = "second_primary",
	};

	return r < ARRAY_SIZE(names) ? names[r] : "other";
}

/* enum rdmalog_change, for JSON and for people. */
const char *change_name(uint32_t c)
{
	static const char *const names[] = {
		[RDMALOG_CHANGE_PROMOTED] = "promoted",
		[RDMALOG_CHANGE_STOOD] = "stood",
		[RDMALOG_CHANGE_DEPOSED] = "deposed",
		[RDMALOG_CHANGE_CUT_OFF] = "cut_off",
		[RDMALOG_CHANGE_JOINED] = "joined",
		[RDMALOG_CHANGE_TOOK_OVER] = "took_over",
		[RDMALOG_CHANGE_HANDED_OVER] = "handed_over",
	};

	return c < ARRAY_SIZE(names) && names[c] ? names[c] : "unknown";
}

/* enum rdmalog_vote_path, for JSON and the VOTE column. */
const char *vote_path_name(uint32_t v)
{
	static const char *const names[] = {
		[RDMALOG_VOTE_PATH_NONE] = "none",
		[RDMALOG_VOTE_PATH_CAS] = "cas",
		[RDMALOG_VOTE_PATH_MESSAGES] = "messages",
	};

	return v < ARRAY_SIZE(names) && names[v] ? names[v] : "unknown";
}

/* enum rdmalog_vote_path_why */
const char *vote_why_name(uint32_t w)
{
	static const char *const names[] = {
		[RDMALOG_VOTE_WHY_NONE] = "none",
		[RDMALOG_VOTE_WHY_NO_ATOMICS] = "no_atomics",
		[RDMALOG_VOTE_WHY_PEER_NO_ATOMICS] = "peer_no_atomics",
		[RDMALOG_VOTE_WHY_NOT_GRANTED] = "not_granted",
	};

	return w < ARRAY_SIZE(names) && names[w] ? names[w] : "unknown";
}

const char *ballot_name(uint32_t b)
{
	static const char *const names[] = {
		[RDMALOG_BALLOT_DOWN] = "down",
		[RDMALOG_BALLOT_NONE] = "none",
		[RDMALOG_BALLOT_CONNECTING] = "connecting",
		[RDMALOG_BALLOT_READY] = "ready",
		[RDMALOG_BALLOT_FAILED] = "failed",
		[RDMALOG_BALLOT_OFF] = "off",
	};

	return b < ARRAY_SIZE(names) && names[b] ? names[b] : "unknown";
}

const char *change_text(uint32_t c)
{
	static const char *const texts[] = {
		[RDMALOG_CHANGE_PROMOTED] = "promoted: won an election an operator started",
		[RDMALOG_CHANGE_STOOD] = "won an election it started (its primary was lost)",
		[RDMALOG_CHANGE_DEPOSED] = "stepped down: a later epoch leads or is being elected",
		[RDMALOG_CHANGE_CUT_OFF] = "stepped down: cut off from a majority",
		[RDMALOG_CHANGE_JOINED] = "joined as a backup: a peer held the log already",
		[RDMALOG_CHANGE_TOOK_OVER] = "took over: its primary handed the log over (switchover)",
		[RDMALOG_CHANGE_HANDED_OVER] = "stepped down: handed the log over (switchover)",
	};

	return c < ARRAY_SIZE(texts) && texts[c] ? texts[c] : "unknown";
}

const char *event_name(uint32_t ev)
{
	static const char *const names[] = {
		[RDMALOG_EVENT_UNSPEC] = "unknown",
		[RDMALOG_EVENT_UP] = "up",
		[RDMALOG_EVENT_DOWN] = "down",
		[RDMALOG_EVENT_NODE_CHANGED] = "node_changed",
		[RDMALOG_EVENT_LOG_CHANGED] = "log_changed",
		[RDMALOG_EVENT_PEER_ADDED] = "peer_added",
		[RDMALOG_EVENT_PEER_REMOVED] = "peer_removed",
		[RDMALOG_EVENT_PEER_STATE] = "peer_state",
		[RDMALOG_EVENT_TRIMMED] = "trimmed",
		[RDMALOG_EVENT_PEER_JOINED] = "peer_joined",
		[RDMALOG_EVENT_LOG_RESET] = "log_reset",
		[RDMALOG_EVENT_DURABILITY] = "durability",
		[RDMALOG_EVENT_PEER_DIVERGED] = "peer_diverged",
		[RDMALOG_EVENT_ROLE] = "role",
	};

	/* Bounded by the table, not by the uapi: an event added there
	 * before it is named here prints as "unknown".
	 */
	return ev < ARRAY_SIZE(names) && names[ev] ? names[ev] : "unknown";
}

const char *stat_name(unsigned int stat, char *buf, size_t len)
{
	static const char *const names[] = {
		[RDMALOG_STAT_APPENDS] = "appends",
		[RDMALOG_STAT_APPEND_BYTES] = "append_bytes",
		[RDMALOG_STAT_APPEND_ERRORS] = "append_errors",
		[RDMALOG_STAT_READS] = "reads",
		[RDMALOG_STAT_READ_BYTES] = "read_bytes",
		[RDMALOG_STAT_CRC_ERRORS] = "crc_errors",
		[RDMALOG_STAT_TRIMS] = "trims",
		[RDMALOG_STAT_TRIMMED_RECORDS] = "trimmed_records",
		[RDMALOG_STAT_WRITER_WAITS] = "writer_waits",
		[RDMALOG_STAT_READER_WAITS] = "reader_waits",
		[RDMALOG_STAT_CONNECTS] = "connects",
		[RDMALOG_STAT_DISCONNECTS] = "disconnects",
		[RDMALOG_STAT_CONNECT_FAILURES] = "connect_failures",
		[RDMALOG_STAT_REFUSALS_SENT] = "refusals_sent",
		[RDMALOG_STAT_REFUSALS_RECEIVED] = "refusals_received",
		[RDMALOG_STAT_HEARTBEAT_TIMEOUTS] = "heartbeat_timeouts",
		[RDMALOG_STAT_MSGS_SENT] = "msgs_sent",
		[RDMALOG_STAT_MSGS_RECEIVED] = "msgs_received",
		[RDMALOG_STAT_BAD_MSGS] = "bad_msgs",
		[RDMALOG_STAT_COMPLETION_ERRORS] = "completion_errors",
		[RDMALOG_STAT_SEND_STALLS] = "send_stalls",
		[RDMALOG_STAT_COMMIT_TIMEOUTS] = "commit_timeouts",
		[RDMALOG_STAT_TRUNCATED_RECORDS] = "truncated_records",
		[RDMALOG_STAT_REPL_WRITES] = "repl_writes",
		[RDMALOG_STAT_REPL_BYTES] = "repl_bytes",
		[RDMALOG_STAT_REPL_BATCHES] = "repl_batches",
		[RDMALOG_STAT_APPLIED_RECORDS] = "applied_records",
		[RDMALOG_STAT_FWD_SENT] = "fwd_sent",
		[RDMALOG_STAT_FWD_SERVED] = "fwd_served",
		[RDMALOG_STAT_FWD_ERRORS] = "fwd_errors",
		[RDMALOG_STAT_CATCHUPS] = "catchups",
		[RDMALOG_STAT_CATCHUP_BYTES] = "catchup_bytes",
		[RDMALOG_STAT_LOG_RESETS] = "log_resets",
		[RDMALOG_STAT_JOINS] = "joins",
		[RDMALOG_STAT_LIVE_LOGS] = "live_logs",
		[RDMALOG_STAT_LIVE_RING_PAGES] = "live_ring_pages",
		[RDMALOG_STAT_LIVE_CONNS] = "live_conns",
		[RDMALOG_STAT_LIVE_EPS] = "live_eps",
		[RDMALOG_STAT_LIVE_QPS] = "live_qps",
		[RDMALOG_STAT_LIVE_MRS] = "live_mrs",
		[RDMALOG_STAT_LIVE_FWD_REQS] = "live_fwd_reqs",
		[RDMALOG_STAT_LIVE_FWD_BUFS] = "live_fwd_bufs",
		[RDMALOG_STAT_LIVE_PEERS] = "live_peers",
		[RDMALOG_STAT_BALLOT_OPENS] = "ballot_opens",
		[RDMALOG_STAT_BALLOT_FOLDS] = "ballot_folds",
		[RDMALOG_STAT_BALLOT_TAMPERED] = "ballot_tampered",
		[RDMALOG_STAT_BALLOT_GRANTS] = "ballot_grants",
		[RDMALOG_STAT_VOTE_REQS_RECEIVED] = "vote_reqs_received",
		[RDMALOG_STAT_CAS_VOTES] = "cas_votes",
		[RDMALOG_STAT_CAS_REFUSED] = "cas_refused",
		[RDMALOG_STAT_CAS_RACES] = "cas_races",
		[RDMALOG_STAT_CAS_READS] = "cas_reads",
		[RDMALOG_STAT_LEADS_RECEIVED] = "leads_received",
		[RDMALOG_STAT_LEADS_SENT] = "leads_sent",
		[RDMALOG_STAT_CAS_BLOCK_READS] = "cas_block_reads",
		[RDMALOG_STAT_NOTIFIES_SENT] = "notifies_sent",
		[RDMALOG_STAT_APPLY_RUNS] = "apply_runs",
		[RDMALOG_STAT_WAITS_SENT] = "waits_sent",
		[RDMALOG_STAT_APPEND_OVERLAPS] = "append_overlaps",
		[RDMALOG_STAT_APPEND_RETRIES] = "append_retries",
		[RDMALOG_STAT_POLLED_COMPLETIONS] = "polled_completions",
	};

	if (stat < ARRAY_SIZE(names) && names[stat])
		return names[stat];
	snprintf(buf, len, "stat_%u", stat);
	return buf;
}

const char *size_str(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "TGMK";
	int i;

	for (i = 0; units[i]; i++) {
		unsigned int shift = 10 * (4 - i);

		if (v && !(v & ((1ULL << shift) - 1))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> shift), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

const char *human_size(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = {
		"KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	double d = (double)v;
	unsigned int i = 0;

	if (v < 1024) {
		snprintf(buf, len, "%lluB", (unsigned long long)v);
		return buf;
	}
	d /= 1024;
	/* Up a unit before "1024.0" could be printed. */
	while (d >= 1023.95 && i + 1 < ARRAY_SIZE(units)) {
		d /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f%s", d, units[i]);
	return buf;
}
