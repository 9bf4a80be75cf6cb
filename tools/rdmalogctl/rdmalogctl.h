/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalogctl - configure and inspect rdmalog nodes over generic netlink.
 *
 * Source layout:
 *   main.c     options, object/command dispatch, usage
 *   cmd.c      node, peer, log, status, stats and monitor commands
 *   output.c   human and JSON rendering of what the kernel reports
 *   nl.c       netlink socket, requests, extack error reporting
 *   ../lib/json.c  the JSON writer shared with rdmalogcat, rdmalog-bench
 *   util.c     argument parsers (numbers, sizes, addresses) and names
 *   cluster.c  the cluster file parser
 *   apply.c    the apply command
 */
#ifndef _RDMALOGCTL_H
#define _RDMALOGCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/netlink.h>

#include "json.h"		/* tools/lib: the JSON writer, jw_*() */
#include "rdmalog.h"
#include "rdmalog_genl.h"

/* -DRDMALOG_VERSION: dkms.conf's PACKAGE_VERSION, passed by the Makefile. */
#ifndef RDMALOG_VERSION
#error "RDMALOG_VERSION is not defined: build with the top-level Makefile"
#endif
#define RDMALOGCTL_VERSION	RDMALOG_VERSION
#define PROG			"rdmalogctl"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

/* Exit statuses. */
enum {
	EXIT_OK = 0,
	EXIT_KERNEL = 1,	/* the kernel refused (or netlink failed) */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NOMOD = 3,		/* module not loaded / family not found */
	EXIT_FILE = 4,		/* apply: cluster file unreadable or invalid */
	EXIT_TIMEOUT = 5,	/* wait: the timeout ran out */
};

/* ------------------------------------------------------------------ */
/* Global options (main.c). */

struct options {
	bool json;
	bool pretty;
	bool dry_run;		/* apply */
	bool have_node;		/* apply: --node given */
	uint32_t node;
	bool have_count;	/* monitor: --count given */
	uint64_t count;
	bool now;		/* monitor: --now */
	bool timestamps;	/* monitor: -t */
	bool check;		/* apply: --check */
	bool have_timeout;	/* wait: --timeout given */
	double timeout;		/* seconds */
};

extern struct options opt;

/* Usage error: prints "rdmalogctl: <msg>" and a hint; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------ */
/* Keyword matching (util.c): exact match first, then the first entry of
 * @words (in priority order, NULL-terminated) that @arg is a prefix of.
 * Returns the index or -1.
 */
int match_word(const char *arg, const char *const *words);

/* Argument parsers (util.c); return 0 or -1 (never print). */
int parse_u64(const char *s, uint64_t *v);
int parse_u32_range(const char *s, uint32_t min, uint32_t max, uint32_t *v);
int parse_size(const char *s, uint64_t *v);

/* An IPv4 or IPv6 address as carried in RDMALOG_A_ADDR. */
struct rl_addr {
	uint8_t len;		/* 0 (unset), 4 or 16 */
	uint8_t a[16];
};

int parse_addr(const char *s, struct rl_addr *addr);
const char *addr_str(const struct rl_addr *addr, char *buf, size_t len);
bool addr_eq(const struct rl_addr *x, const struct rl_addr *y);

/* Names of enum values; parse functions return the value or -1. */
const char *role_name(uint32_t role);
const char *auth_name(uint32_t auth);
const char *failover_name(uint32_t failover);
/*
 * The shared secret in @file ("-": standard input): its bytes, without one
 * trailing newline, 1..RDMALOG_MAX_SECRET. Return 0, or -1 with @why set.
 */
int read_secret(const char *file, uint8_t *buf, size_t *len, char *why,
		size_t why_len);
int parse_role(const char *s);
int parse_failover(const char *s);
const char *durability_name(uint32_t d);
int parse_durability(const char *s);
const char *peer_state_name(uint32_t st);
const char *catchup_name(uint32_t cs);
const char *peer_sync_name(uint32_t s);
const char *refusal_name(uint32_t r);
const char *event_name(uint32_t ev);
const char *change_name(uint32_t c);
const char *ballot_name(uint32_t b);
const char *vote_path_name(uint32_t v);
const char *vote_why_name(uint32_t w);
const char *change_text(uint32_t c);
const char *stat_name(unsigned int stat, char *buf, size_t len);

/* "64M", "1G", else the number of bytes. */
const char *size_str(uint64_t v, char *buf, size_t len);
/* Approximate, for amounts that change: "512B", "12.3MiB". */
const char *human_size(uint64_t v, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Everything a reply or an event may carry (nl.c parses it). */

struct rl_peer {
	bool has_id, has_addr, has_port, has_state;
	uint32_t id;
	struct rl_addr addr;
	uint16_t port;
	uint32_t state;
	/* The connection (RDMALOG_PEER_A_MSG and later). */
	bool has_msg, has_reconnects, has_refusals, has_last_rx;
	bool has_epoch, has_first_lsn, has_commit_lsn, has_next_lsn;
	char msg[256];
	uint64_t reconnects, refusals, last_rx_ms;
	uint64_t epoch, first_lsn, commit_lsn, next_lsn;
	/* Replication to the peer (RDMALOG_PEER_A_REPLICATING and later). */
	bool has_replicating, has_bytes_sent, has_records_sent;
	bool has_acked_lsn, has_lag, has_repl_errors;
	bool replicating;
	uint64_t bytes_sent, records_sent, acked_lsn, lag, repl_errors;
	/* Catch-up with the peer (RDMALOG_PEER_A_CATCHUP and later). */
	bool has_catchup, has_catchup_left, has_catchup_rate;
	bool has_catchup_bytes;
	uint32_t catchup;	/* enum rdmalog_catchup_state */
	uint64_t catchup_left, catchup_rate, catchup_bytes;
	/* The judgement (RDMALOG_PEER_A_SYNC, _REFUSAL). */
	bool has_sync, has_refusal;
	uint32_t sync;		/* enum rdmalog_peer_sync */
	uint32_t refusal;	/* enum rdmalog_refusal */
	/* Its role per its HELLO (RDMALOG_PEER_A_ROLE). */
	bool has_role;
	uint32_t role;
	/* Its candidacy per its HEARTBEAT (RDMALOG_PEER_A_PRIORITY, _LEAD). */
	bool has_priority, has_lead;
	uint32_t priority;
	uint8_t lead;
	/* How a candidacy asks it (RDMALOG_PEER_A_VOTE_PATH and on). */
	bool has_vote_path, has_vote_why, has_ballot_granted;
	uint32_t vote_path;	/* enum rdmalog_vote_path */
	uint32_t vote_why;	/* enum rdmalog_vote_path_why */
	uint8_t ballot_granted;
};

#define RL_MAX_PEERS_SEEN	256
#define RL_MAX_STATS		64

struct rl_info {
	bool has[RDMALOG_A_MAX + 1];	/* indexed by enum rdmalog_attr */
	uint32_t node_id;
	uint64_t cluster_id;
	struct rl_addr addr;
	uint16_t port;
	uint32_t role;
	uint64_t epoch;
	uint64_t capacity;
	uint32_t max_record;
	uint32_t durability;
	uint32_t durability_effective;
	uint32_t commit_timeout_ms;
	uint32_t heartbeat_ms;
	uint32_t peer_timeout_ms;
	bool up;
	uint64_t lsn, first_lsn, commit_lsn, next_lsn, used;
	uint32_t openers;
	bool durability_degraded;
	uint32_t backups_in_sync, backups_needed;
	uint64_t log_id, log_epoch;
	uint32_t auth;			/* enum rdmalog_auth */
	uint32_t failover;		/* enum rdmalog_failover */
	uint32_t priority;
	bool lead;
	uint32_t primary;
	uint64_t primary_epoch;
	/* The election state (RDMALOG_A_ELECT_EPOCH .. LEARN_NEEDED). */
	uint64_t elect_epoch;
	uint64_t vote_epoch;
	uint32_t vote_for;
	bool learned;
	uint32_t learn_heard;
	uint32_t learn_needed;
	uint32_t learn_wait_ms;
	/* The ballot word (RDMALOG_A_BALLOT ..). */
	uint32_t ballot;		/* enum rdmalog_ballot_state */
	uint64_t ballot_word;
	char ballot_msg[128];
	/* The last change of role (RDMALOG_A_CHANGE ..). */
	uint32_t change;
	uint64_t change_epoch, change_ago_ms;
	uint32_t change_detect_ms, change_elect_ms, change_fence_ms;
	uint32_t change_reconcile_ms;
	char status_msg[512];
	uint32_t event;
	struct rl_peer peer;			/* RDMALOG_A_PEER */
	unsigned int npeers;			/* RDMALOG_A_PEERS */
	struct rl_peer peers[RL_MAX_PEERS_SEEN];
	bool stat_has[RL_MAX_STATS];		/* RDMALOG_A_STATS */
	uint64_t stats[RL_MAX_STATS];
};

/* ------------------------------------------------------------------ */
/* Netlink (nl.c). */

struct nl_sock;
struct nl_msg;

struct rl_nl {
	struct nl_sock *sk;
	int family;
	const char *what;		/* command, for warnings */
	/* The last error the kernel reported. */
	int err;			/* positive errno */
	char extack[512];		/* NLMSGERR_ATTR_MSG, may be empty */
	char errattr[64];		/* attribute named by OFFS/MISS_TYPE */
	/*
	 * rl_nl_monitor(): also resync this often (ms; 0: only at start and
	 * after lost events), for states no event announces.
	 */
	long resync_ms;
};

/*
 * Open a socket and resolve the family. Returns EXIT_OK, or prints why
 * and returns EXIT_NOMOD (family absent) or EXIT_KERNEL.
 */
int rl_nl_open(struct rl_nl *nl);
/* Same, but quiet when the family is absent (returns EXIT_NOMOD). */
int rl_nl_open_quiet(struct rl_nl *nl);
void rl_nl_close(struct rl_nl *nl);

/* A new request for @cmd; @dump adds NLM_F_DUMP. NULL on ENOMEM. */
struct nl_msg *rl_nl_msg(struct rl_nl *nl, uint8_t cmd, bool dump);

typedef int (*rl_reply_cb)(struct nlmsghdr *nlh, void *arg);

/*
 * Send @msg (consumed), call @cb for every reply message, wait for the
 * ACK or the end of the dump. Returns 0 or a negative errno (the kernel's;
 * nl->extack/errattr then say why).
 */
int rl_nl_request(struct rl_nl *nl, struct nl_msg *msg, rl_reply_cb cb,
		  void *arg);

/*
 * Print "rdmalogctl: <what>: <extack> [attribute X] (<strerror>)" for
 * @err (negative errno) plus a CAP_NET_ADMIN hint on EPERM; returns
 * EXIT_KERNEL.
 */
int rl_nl_report(struct rl_nl *nl, const char *what, int err);

/* Parse a genetlink message of our family into @info (zeroed first). */
int rl_parse(struct nlmsghdr *nlh, struct rl_info *info);

/* Convenience: send a bodyless GET and parse the reply into @info. */
int rl_get(struct rl_nl *nl, uint8_t cmd, struct rl_info *info);
/* Dump all peers into @info->peers. */
int rl_get_peers(struct rl_nl *nl, struct rl_info *info, uint32_t node_id);

/*
 * Join the events group (and nlctrl's, to see the family go) and hand
 * every event to @cb until it returns non-zero or SIGINT/SIGTERM arrives.
 * @resync, when not NULL, is called once after joining (@lost false) and
 * again after events were lost to a receive buffer overrun (@lost true);
 * it returns 0 to go on, > 0 to stop with EXIT_OK, < 0 for an exit status
 * -ret. @timeout_ms < 0: none; when it runs out, EXIT_TIMEOUT. When the
 * family goes away (module unloaded), prints why and returns EXIT_NOMOD.
 * Returns an exit status.
 */
int rl_nl_monitor(struct rl_nl *nl, int (*cb)(struct rl_info *, void *),
		  int (*resync)(void *arg, bool lost), void *arg,
		  long timeout_ms);


/* ------------------------------------------------------------------ */
/* Output (output.c). */

void out_node_json(const char *key, const struct rl_info *in);
void out_log_json(const char *key, const struct rl_info *in);
void out_peer_json(const char *key, const struct rl_peer *p);
void out_peers_table(const struct rl_peer *peers, unsigned int n,
		     const char *indent);
void out_status(const struct rl_info *st, const struct rl_info *node);
void out_stats(const struct rl_info *in);
void out_node(const struct rl_info *in);
void out_log(const struct rl_info *in);
void out_event(const struct rl_info *ev);

/* ------------------------------------------------------------------ */
/* Commands (cmd.c, apply.c). argv[0] is the first word after the object
 * (or after the command for objects that have commands).
 */
int do_node(int argc, char **argv);
int do_peer(int argc, char **argv);
int do_log(int argc, char **argv);
int do_status(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_monitor(int argc, char **argv);
int do_apply(int argc, char **argv);
int do_wait(int argc, char **argv);

void usage_node(FILE *f);
void usage_peer(FILE *f);
void usage_log(FILE *f);
void usage_status(FILE *f);
void usage_stats(FILE *f);
void usage_monitor(FILE *f);
void usage_apply(FILE *f);
void usage_wait(FILE *f);
/* A monitor's separator between the state (--now) and the changes. */
void out_separator(void);

/* Print "{}" in JSON mode (commands that only change state). */
void out_empty(void);

/* ------------------------------------------------------------------ */
/* Cluster files (cluster.c). */

#define CL_MAX_NODES	(RDMALOG_MAX_PEERS + 1)

struct cl_node {
	uint32_t id;
	struct rl_addr addr;
	uint16_t port;
	uint32_t priority;	/* 0 unless given */
	bool no_lead;
	int line;
};

struct cluster {
	const char *file;
	uint64_t cluster_id;
	int cluster_line;
	bool has_capacity, has_max_record, has_durability, has_commit_timeout;
	uint64_t capacity;
	uint32_t max_record;
	uint32_t durability;
	uint32_t commit_timeout_ms;
	bool has_heartbeat, has_peer_timeout;
	uint32_t heartbeat_ms;
	uint32_t peer_timeout_ms;
	int timers_line[2];	/* where heartbeat, peer-timeout were given */
	unsigned int nnodes;
	struct cl_node nodes[CL_MAX_NODES];
	uint32_t primary;
	int primary_line;
	bool has_failover;
	uint32_t failover;
	int failover_line;
	/* secret-file: the shared secret, read when the file is loaded */
	int secret_line;
	char secret_file[256];
	uint8_t secret[RDMALOG_MAX_SECRET];
	size_t secret_len;
};

/* Parse @file; on error print "file:line: why" and return -1. */
int cluster_load(const char *file, struct cluster *cl);
const struct cl_node *cluster_node(const struct cluster *cl, uint32_t id);

#endif /* _RDMALOGCTL_H */
