// SPDX-License-Identifier: GPL-2.0
/* rdmalogctl - the node, peer, log, status, stats and monitor objects. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "rdmalogctl.h"

static bool is_help(const char *s)
{
	return !strcmp(s, "help") || !strcmp(s, "-h") || !strcmp(s, "--help");
}

/* Fail on any words left over. */
static int no_more_args(const char *what, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("%s: unexpected argument '%s'", what, argv[0]);
	return EXIT_OK;
}

/* Open the socket, send @msg, report. For commands without output. */
static int simple_request(const char *what, uint8_t cmd,
			  int (*fill)(struct nl_msg *, void *), void *arg)
{
	struct rl_nl nl;
	struct nl_msg *msg;
	int ret, err;

	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	nl.what = what;
	msg = rl_nl_msg(&nl, cmd, false);
	if (!msg || (fill && fill(msg, arg) < 0)) {
		if (msg)
			nlmsg_free(msg);
		rl_nl_close(&nl);
		return rl_nl_report(NULL, what, -ENOMEM);
	}
	err = rl_nl_request(&nl, msg, NULL, NULL);
	if (err)
		ret = rl_nl_report(&nl, what, err);
	else
		out_empty();
	rl_nl_close(&nl);
	return ret;
}

/* Open, GET into @info; prints errors. */
static int get_info(struct rl_nl *nl, const char *what, uint8_t cmd,
		    struct rl_info *info)
{
	int err;

	nl->what = what;
	err = rl_get(nl, cmd, info);
	if (err)
		return rl_nl_report(nl, what, err);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* node */

void usage_node(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " node show\n"
		"       " PROG " node set [ id ID ] [ cluster CLUSTER_ID ] [ address ADDR ]\n"
		"                          [ port PORT ] [ role { primary | backup } ]\n"
		"                          [ heartbeat MS ] [ peer-timeout MS ]\n"
		"                          [ secret-file FILE | secret none ]\n"
		"                          [ failover { auto | manual } ] [ priority N ]\n"
		"                          [ lead { yes | no } ]\n"
		"       " PROG " node up\n"
		"       " PROG " node down\n"
		"       " PROG " node promote\n"
		"       " PROG " node switchover [ id ] ID\n"
		"       " PROG " node help\n"
		"ID is 1..%d; CLUSTER_ID is a non-zero 64-bit number; ADDR is an IPv4 or\n"
		"IPv6 address; PORT is 1..65535. id, cluster, address, port and role can\n"
		"only change while the log is down. heartbeat (%d..%d ms, default %d) is how\n"
		"often every peer is sent a heartbeat; peer-timeout (at least twice the\n"
		"heartbeat, at most %d ms, default %d) how long a connected peer may be\n"
		"silent before it is declared dead. Both may change while up.\n"
		"secret-file reads the cluster's shared secret (1..%d bytes, one line;\n"
		"'-' reads standard input): peers must prove they know it. It is never\n"
		"shown; secret none removes it. It can only change while the log is down.\n"
		"failover (default auto), priority (0..%d, default 0) and lead (default\n"
		"yes) say how a leader change starts and who may stand: with failover\n"
		"auto a backup that lost its primary stands on its own; priority is\n"
		"recorded and shown only.\n"
		"promote makes this backup stand for election in the next epoch; with a\n"
		"majority's votes it leads with the log it holds and returns once its\n"
		"epoch-start record is committed.\n"
		"switchover, on the primary, hands the log over to backup ID: appends\n"
		"pause until ID holds every record, ID is elected with this node's vote,\n"
		"and this node steps down; writers here follow the new primary.\n",
		RDMALOG_MAX_NODE_ID, RDMALOG_MIN_HEARTBEAT_MS,
		RDMALOG_MAX_HEARTBEAT_MS, RDMALOG_DEFAULT_HEARTBEAT_MS,
		RDMALOG_MAX_PEER_TIMEOUT_MS, RDMALOG_DEFAULT_PEER_TIMEOUT_MS,
		RDMALOG_MAX_SECRET, RDMALOG_MAX_PRIORITY);
}

static int fill_switchover(struct nl_msg *msg, void *arg)
{
	return nla_put_u32(msg, RDMALOG_A_NODE_ID, *(uint32_t *)arg);
}

static int node_switchover(int argc, char **argv)
{
	uint32_t id;

	if (argc > 1 && !strcmp(argv[0], "id")) {
		argc--;
		argv++;
	}
	if (argc < 1)
		return usage_error("node switchover: which node? (try '" PROG
				   " node help')");
	if (parse_u32_range(argv[0], 1, RDMALOG_MAX_NODE_ID, &id))
		return usage_error("node switchover: invalid node id '%s' (1..%d)",
				   argv[0], RDMALOG_MAX_NODE_ID);
	if (argc > 1)
		return usage_error("node switchover: unexpected argument '%s'",
				   argv[1]);
	return simple_request("node switchover", RDMALOG_CMD_SWITCHOVER,
			      fill_switchover, &id);
}

struct node_set {
	bool has_id, has_cluster, has_addr, has_port, has_role;
	bool has_heartbeat, has_peer_timeout, has_secret;
	bool has_failover, has_priority, has_lead;
	uint32_t id, role, port, heartbeat, peer_timeout;
	uint32_t failover, priority;
	uint8_t lead;
	uint8_t secret[RDMALOG_MAX_SECRET];
	size_t secret_len;
	uint64_t cluster;
	struct rl_addr addr;
};

static int fill_node_set(struct nl_msg *msg, void *arg)
{
	struct node_set *ns = arg;

	if (ns->has_id && nla_put_u32(msg, RDMALOG_A_NODE_ID, ns->id) < 0)
		return -1;
	if (ns->has_cluster &&
	    nla_put_u64(msg, RDMALOG_A_CLUSTER_ID, ns->cluster) < 0)
		return -1;
	if (ns->has_addr &&
	    nla_put(msg, RDMALOG_A_ADDR, ns->addr.len, ns->addr.a) < 0)
		return -1;
	if (ns->has_port &&
	    nla_put_u16(msg, RDMALOG_A_PORT, (uint16_t)ns->port) < 0)
		return -1;
	if (ns->has_role && nla_put_u32(msg, RDMALOG_A_ROLE, ns->role) < 0)
		return -1;
	if (ns->has_heartbeat &&
	    nla_put_u32(msg, RDMALOG_A_HEARTBEAT_MS, ns->heartbeat) < 0)
		return -1;
	if (ns->has_peer_timeout &&
	    nla_put_u32(msg, RDMALOG_A_PEER_TIMEOUT_MS, ns->peer_timeout) < 0)
		return -1;
	if (ns->has_secret &&
	    nla_put(msg, RDMALOG_A_SECRET, ns->secret_len, ns->secret) < 0)
		return -1;
	if (ns->has_failover &&
	    nla_put_u32(msg, RDMALOG_A_FAILOVER, ns->failover) < 0)
		return -1;
	if (ns->has_priority &&
	    nla_put_u32(msg, RDMALOG_A_PRIORITY, ns->priority) < 0)
		return -1;
	if (ns->has_lead && nla_put_u8(msg, RDMALOG_A_LEAD, ns->lead) < 0)
		return -1;
	return 0;
}

/* The value after keyword argv[0], or a usage error. */
#define NEED_VALUE(what, argc, argv)					\
	do {								\
		if ((argc) < 2)						\
			return usage_error("%s: '%s' needs a value",	\
					   what, (argv)[0]);		\
	} while (0)

#define ONCE(what, flag, kw)						\
	do {								\
		if (flag)						\
			return usage_error("%s: '%s' given twice",	\
					   what, kw);			\
	} while (0)

static int node_set(int argc, char **argv)
{
	static const char *const kws[] = {
		"id", "cluster", "address", "port", "role", "heartbeat",
		"peer-timeout", "secret-file", "secret", "failover",
		"priority", "lead", NULL
	};
	const char *what = "node set";
	struct node_set ns = { 0 };
	char why[256];
	int k, r;

	if (!argc)
		return usage_error("node set: nothing to set (see '" PROG " node help')");
	while (argc > 0) {
		k = match_word(argv[0], kws);
		if (k < 0)
			return usage_error("node set: unknown keyword '%s'", argv[0]);
		NEED_VALUE(what, argc, argv);
		switch (k) {
		case 0:
			ONCE(what, ns.has_id, "id");
			if (parse_u32_range(argv[1], 1, RDMALOG_MAX_NODE_ID, &ns.id))
				return usage_error("node set: invalid id '%s' (1..%d)",
						   argv[1], RDMALOG_MAX_NODE_ID);
			ns.has_id = true;
			break;
		case 1:
			ONCE(what, ns.has_cluster, "cluster");
			if (parse_u64(argv[1], &ns.cluster) || !ns.cluster)
				return usage_error("node set: invalid cluster id '%s' (non-zero 64-bit number)",
						   argv[1]);
			ns.has_cluster = true;
			break;
		case 2:
			ONCE(what, ns.has_addr, "address");
			if (parse_addr(argv[1], &ns.addr))
				return usage_error("node set: invalid address '%s' (IPv4 or IPv6)",
						   argv[1]);
			ns.has_addr = true;
			break;
		case 3:
			ONCE(what, ns.has_port, "port");
			if (parse_u32_range(argv[1], 1, 65535, &ns.port))
				return usage_error("node set: invalid port '%s' (1..65535)",
						   argv[1]);
			ns.has_port = true;
			break;
		case 4:
			ONCE(what, ns.has_role, "role");
			r = parse_role(argv[1]);
			if (r < 0)
				return usage_error("node set: invalid role '%s' (primary or backup)",
						   argv[1]);
			ns.role = (uint32_t)r;
			ns.has_role = true;
			break;
		case 5:
			ONCE(what, ns.has_heartbeat, "heartbeat");
			if (parse_u32_range(argv[1], RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_HEARTBEAT_MS, &ns.heartbeat))
				return usage_error("node set: invalid heartbeat '%s' (%d..%d ms)",
						   argv[1], RDMALOG_MIN_HEARTBEAT_MS,
						   RDMALOG_MAX_HEARTBEAT_MS);
			ns.has_heartbeat = true;
			break;
		case 6:
			ONCE(what, ns.has_peer_timeout, "peer-timeout");
			if (parse_u32_range(argv[1], 2 * RDMALOG_MIN_HEARTBEAT_MS,
					    RDMALOG_MAX_PEER_TIMEOUT_MS,
					    &ns.peer_timeout))
				return usage_error("node set: invalid peer-timeout '%s' (%d..%d ms)",
						   argv[1], 2 * RDMALOG_MIN_HEARTBEAT_MS,
						   RDMALOG_MAX_PEER_TIMEOUT_MS);
			ns.has_peer_timeout = true;
			break;
		case 7:
			ONCE(what, ns.has_secret, "secret");
			if (read_secret(argv[1], ns.secret, &ns.secret_len, why,
					sizeof(why)))
				return usage_error("node set: %s", why);
			ns.has_secret = true;
			break;
		case 8:
			ONCE(what, ns.has_secret, "secret");
			/* Never on the command line: ps shows it to everyone. */
			if (strcmp(argv[1], "none"))
				return usage_error("node set: 'secret' takes only 'none'; give the secret in a file with 'secret-file FILE'");
			ns.secret_len = 0;
			ns.has_secret = true;
			break;
		case 9:
			ONCE(what, ns.has_failover, "failover");
			r = parse_failover(argv[1]);
			if (r < 0)
				return usage_error("node set: invalid failover '%s' (auto or manual)",
						   argv[1]);
			ns.failover = (uint32_t)r;
			ns.has_failover = true;
			break;
		case 10:
			ONCE(what, ns.has_priority, "priority");
			if (parse_u32_range(argv[1], 0, RDMALOG_MAX_PRIORITY,
					    &ns.priority))
				return usage_error("node set: invalid priority '%s' (0..%d)",
						   argv[1], RDMALOG_MAX_PRIORITY);
			ns.has_priority = true;
			break;
		case 11:
			ONCE(what, ns.has_lead, "lead");
			if (!strcmp(argv[1], "yes"))
				ns.lead = 1;
			else if (!strcmp(argv[1], "no"))
				ns.lead = 0;
			else
				return usage_error("node set: invalid lead '%s' (yes or no)",
						   argv[1]);
			ns.has_lead = true;
			break;
		}
		argc -= 2;
		argv += 2;
	}
	r = simple_request(what, RDMALOG_CMD_NODE_SET, fill_node_set, &ns);
	memset(ns.secret, 0, sizeof(ns.secret));
	return r;
}

static int node_show(int argc, char **argv)
{
	static struct rl_info info;
	struct rl_nl nl;
	int ret = no_more_args("node show", argc, argv);

	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	ret = get_info(&nl, "node show", RDMALOG_CMD_NODE_GET, &info);
	if (!ret)
		out_node(&info);
	rl_nl_close(&nl);
	return ret;
}

int do_node(int argc, char **argv)
{
	static const char *const cmds[] = {
		"show", "set", "up", "down", "list", "help", "promote",
		"switchover", NULL
	};
	int ret;

	if (argc < 1)
		return node_show(0, argv);
	switch (match_word(argv[0], cmds)) {
	case 0:
	case 4:
		return node_show(argc - 1, argv + 1);
	case 1:
		return node_set(argc - 1, argv + 1);
	case 2:
		ret = no_more_args("node up", argc - 1, argv + 1);
		return ret ? ret : simple_request("node up", RDMALOG_CMD_UP,
						  NULL, NULL);
	case 3:
		ret = no_more_args("node down", argc - 1, argv + 1);
		return ret ? ret : simple_request("node down", RDMALOG_CMD_DOWN,
						  NULL, NULL);
	case 5:
		usage_node(stdout);
		return EXIT_OK;
	case 6:
		ret = no_more_args("node promote", argc - 1, argv + 1);
		return ret ? ret : simple_request("node promote",
						  RDMALOG_CMD_PROMOTE, NULL,
						  NULL);
	case 7:
		return node_switchover(argc - 1, argv + 1);
	}
	if (is_help(argv[0])) {
		usage_node(stdout);
		return EXIT_OK;
	}
	return usage_error("node: unknown command '%s' (try '" PROG " node help')",
			   argv[0]);
}

/* ------------------------------------------------------------------ */
/* peer */

void usage_peer(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " peer add id ID address ADDR [ port PORT ]\n"
		"       " PROG " peer del id ID\n"
		"       " PROG " peer show [ id ID ]\n"
		"       " PROG " peer help\n"
		"PORT defaults to %d. At most %d peers.\n",
		RDMALOG_DEFAULT_PORT, RDMALOG_MAX_PEERS);
}

struct peer_args {
	bool has_id, has_addr, has_port;
	uint32_t id, port;
	struct rl_addr addr;
};

static int parse_peer_args(const char *what, int argc, char **argv,
			   struct peer_args *pa, bool allow_addr)
{
	static const char *const kws[] = { "id", "address", "port", NULL };
	int k;

	memset(pa, 0, sizeof(*pa));
	while (argc > 0) {
		k = match_word(argv[0], kws);
		if (k < 0 || (!allow_addr && k > 0))
			return usage_error("%s: unknown keyword '%s'", what, argv[0]);
		NEED_VALUE(what, argc, argv);
		switch (k) {
		case 0:
			ONCE(what, pa->has_id, "id");
			if (parse_u32_range(argv[1], 1, RDMALOG_MAX_NODE_ID, &pa->id))
				return usage_error("%s: invalid id '%s' (1..%d)", what,
						   argv[1], RDMALOG_MAX_NODE_ID);
			pa->has_id = true;
			break;
		case 1:
			ONCE(what, pa->has_addr, "address");
			if (parse_addr(argv[1], &pa->addr))
				return usage_error("%s: invalid address '%s' (IPv4 or IPv6)",
						   what, argv[1]);
			pa->has_addr = true;
			break;
		case 2:
			ONCE(what, pa->has_port, "port");
			if (parse_u32_range(argv[1], 1, 65535, &pa->port))
				return usage_error("%s: invalid port '%s' (1..65535)",
						   what, argv[1]);
			pa->has_port = true;
			break;
		}
		argc -= 2;
		argv += 2;
	}
	return EXIT_OK;
}

static int fill_peer(struct nl_msg *msg, void *arg)
{
	struct peer_args *pa = arg;

	if (pa->has_id && nla_put_u32(msg, RDMALOG_A_NODE_ID, pa->id) < 0)
		return -1;
	if (pa->has_addr &&
	    nla_put(msg, RDMALOG_A_ADDR, pa->addr.len, pa->addr.a) < 0)
		return -1;
	if (pa->has_port &&
	    nla_put_u16(msg, RDMALOG_A_PORT, (uint16_t)pa->port) < 0)
		return -1;
	return 0;
}

static int peer_add(int argc, char **argv)
{
	struct peer_args pa;
	int ret = parse_peer_args("peer add", argc, argv, &pa, true);

	if (ret)
		return ret;
	if (!pa.has_id || !pa.has_addr)
		return usage_error("peer add: 'id' and 'address' are required");
	if (!pa.has_port) {
		pa.port = RDMALOG_DEFAULT_PORT;
		pa.has_port = true;
	}
	return simple_request("peer add", RDMALOG_CMD_PEER_ADD, fill_peer, &pa);
}

static int peer_del(int argc, char **argv)
{
	struct peer_args pa;
	int ret = parse_peer_args("peer del", argc, argv, &pa, false);

	if (ret)
		return ret;
	if (!pa.has_id)
		return usage_error("peer del: 'id' is required");
	return simple_request("peer del", RDMALOG_CMD_PEER_DEL, fill_peer, &pa);
}

static int peer_show(int argc, char **argv)
{
	static struct rl_info info;
	const char *what = "peer show";
	struct peer_args pa;
	struct rl_nl nl;
	unsigned int i;
	int ret, err;

	ret = parse_peer_args(what, argc, argv, &pa, false);
	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	nl.what = what;
	err = rl_get_peers(&nl, &info, pa.has_id ? pa.id : 0);
	rl_nl_close(&nl);
	if (err)
		return rl_nl_report(&nl, what, err);

	if (opt.json) {
		jw_begin_arr(NULL);
		for (i = 0; i < info.npeers; i++)
			out_peer_json(NULL, &info.peers[i]);
		jw_end_arr();
		jw_finish();
	} else {
		out_peers_table(info.peers, info.npeers, "");
	}
	return EXIT_OK;
}

int do_peer(int argc, char **argv)
{
	static const char *const cmds[] = {
		"show", "add", "del", "delete", "list", "help", NULL
	};

	if (argc < 1)
		return peer_show(0, argv);
	switch (match_word(argv[0], cmds)) {
	case 0:
	case 4:
		return peer_show(argc - 1, argv + 1);
	case 1:
		return peer_add(argc - 1, argv + 1);
	case 2:
	case 3:
		return peer_del(argc - 1, argv + 1);
	case 5:
		usage_peer(stdout);
		return EXIT_OK;
	}
	if (is_help(argv[0])) {
		usage_peer(stdout);
		return EXIT_OK;
	}
	return usage_error("peer: unknown command '%s' (try '" PROG " peer help')",
			   argv[0]);
}

/* ------------------------------------------------------------------ */
/* log */

void usage_log(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " log show\n"
		"       " PROG " log set [ capacity SIZE ] [ max-record SIZE ]\n"
		"                        [ durability { async | quorum | all } ]\n"
		"                        [ commit-timeout MS ]\n"
		"       " PROG " log trim LSN\n"
		"       " PROG " log help\n"
		"SIZE is a number of bytes with an optional K, M, G or T suffix (powers\n"
		"of 1024). capacity and max-record can only change while the log is down.\n");
}

struct log_set {
	bool has_capacity, has_max_record, has_durability, has_timeout;
	uint64_t capacity;
	uint32_t max_record, durability, timeout;
};

static int fill_log_set(struct nl_msg *msg, void *arg)
{
	struct log_set *ls = arg;

	if (ls->has_capacity &&
	    nla_put_u64(msg, RDMALOG_A_CAPACITY, ls->capacity) < 0)
		return -1;
	if (ls->has_max_record &&
	    nla_put_u32(msg, RDMALOG_A_MAX_RECORD, ls->max_record) < 0)
		return -1;
	if (ls->has_durability &&
	    nla_put_u32(msg, RDMALOG_A_DURABILITY, ls->durability) < 0)
		return -1;
	if (ls->has_timeout &&
	    nla_put_u32(msg, RDMALOG_A_COMMIT_TIMEOUT_MS, ls->timeout) < 0)
		return -1;
	return 0;
}

static int log_set(int argc, char **argv)
{
	static const char *const kws[] = {
		"capacity", "max-record", "durability", "commit-timeout", NULL
	};
	const char *what = "log set";
	struct log_set ls = { 0 };
	uint64_t v;
	int k, d;

	if (!argc)
		return usage_error("log set: nothing to set (see '" PROG " log help')");
	while (argc > 0) {
		k = match_word(argv[0], kws);
		if (k < 0)
			return usage_error("log set: unknown keyword '%s'", argv[0]);
		NEED_VALUE(what, argc, argv);
		switch (k) {
		case 0:
			ONCE(what, ls.has_capacity, "capacity");
			if (parse_size(argv[1], &ls.capacity) || !ls.capacity)
				return usage_error("log set: invalid capacity '%s'", argv[1]);
			ls.has_capacity = true;
			break;
		case 1:
			ONCE(what, ls.has_max_record, "max-record");
			if (parse_size(argv[1], &v) || !v || v > UINT32_MAX)
				return usage_error("log set: invalid max-record '%s'", argv[1]);
			ls.max_record = (uint32_t)v;
			ls.has_max_record = true;
			break;
		case 2:
			ONCE(what, ls.has_durability, "durability");
			d = parse_durability(argv[1]);
			if (d < 0)
				return usage_error("log set: invalid durability '%s' (async, quorum or all)",
						   argv[1]);
			ls.durability = (uint32_t)d;
			ls.has_durability = true;
			break;
		case 3:
			ONCE(what, ls.has_timeout, "commit-timeout");
			if (parse_u32_range(argv[1], 1, UINT32_MAX, &ls.timeout))
				return usage_error("log set: invalid commit-timeout '%s' (milliseconds)",
						   argv[1]);
			ls.has_timeout = true;
			break;
		}
		argc -= 2;
		argv += 2;
	}
	return simple_request(what, RDMALOG_CMD_LOG_SET, fill_log_set, &ls);
}

static int log_show(int argc, char **argv)
{
	static struct rl_info info;
	struct rl_nl nl;
	int ret = no_more_args("log show", argc, argv);

	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	ret = get_info(&nl, "log show", RDMALOG_CMD_LOG_GET, &info);
	if (!ret)
		out_log(&info);
	rl_nl_close(&nl);
	return ret;
}

static int fill_trim(struct nl_msg *msg, void *arg)
{
	return nla_put_u64(msg, RDMALOG_A_LSN, *(uint64_t *)arg);
}

static int log_trim(int argc, char **argv)
{
	uint64_t lsn;

	if (argc > 1 && !strcmp(argv[0], "lsn")) {
		argc--;
		argv++;
	}
	if (argc < 1)
		return usage_error("log trim: LSN is required");
	if (parse_u64(argv[0], &lsn))
		return usage_error("log trim: invalid LSN '%s'", argv[0]);
	if (argc > 1)
		return usage_error("log trim: unexpected argument '%s'", argv[1]);
	return simple_request("log trim", RDMALOG_CMD_TRIM, fill_trim, &lsn);
}

int do_log(int argc, char **argv)
{
	static const char *const cmds[] = {
		"show", "set", "trim", "list", "help", NULL
	};

	if (argc < 1)
		return log_show(0, argv);
	switch (match_word(argv[0], cmds)) {
	case 0:
	case 3:
		return log_show(argc - 1, argv + 1);
	case 1:
		return log_set(argc - 1, argv + 1);
	case 2:
		return log_trim(argc - 1, argv + 1);
	case 4:
		usage_log(stdout);
		return EXIT_OK;
	}
	if (is_help(argv[0])) {
		usage_log(stdout);
		return EXIT_OK;
	}
	return usage_error("log: unknown command '%s' (try '" PROG " log help')",
			   argv[0]);
}

/* ------------------------------------------------------------------ */
/* status, stats */

void usage_status(FILE *f)
{
	fprintf(f, "Usage: " PROG " status\n"
		"Node identity, log state and indices, durability, peers.\n");
}

int do_status(int argc, char **argv)
{
	static struct rl_info st, node;
	struct rl_nl nl;
	int ret;

	if (argc > 0 && is_help(argv[0])) {
		usage_status(stdout);
		return EXIT_OK;
	}
	ret = no_more_args("status", argc, argv);
	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	ret = get_info(&nl, "status", RDMALOG_CMD_STATUS_GET, &st);
	if (!ret && !st.has[RDMALOG_A_ADDR])
		ret = get_info(&nl, "status", RDMALOG_CMD_NODE_GET, &node);
	if (!ret)
		out_status(&st, &node);
	rl_nl_close(&nl);
	return ret;
}

void usage_stats(FILE *f)
{
	fprintf(f, "Usage: " PROG " stats\n"
		"Counters since the module was loaded.\n");
}

int do_stats(int argc, char **argv)
{
	static struct rl_info info;
	struct rl_nl nl;
	int ret;

	if (argc > 0 && is_help(argv[0])) {
		usage_stats(stdout);
		return EXIT_OK;
	}
	ret = no_more_args("stats", argc, argv);
	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	ret = get_info(&nl, "stats", RDMALOG_CMD_STATS_GET, &info);
	if (!ret)
		out_stats(&info);
	rl_nl_close(&nl);
	return ret;
}

/* ------------------------------------------------------------------ */
/* monitor */

void usage_monitor(FILE *f)
{
	fprintf(f, "Usage: " PROG " [ -j ] [ -t ] monitor [ --now ] [ --count N ]\n"
		"Print one line (one JSON object with -j) per event until SIGINT or\n"
		"SIGTERM, or until N events were printed. --now first prints the\n"
		"current state as 'exists' events (the node, then each peer) and a\n"
		"separator ('exists -', JSON event 'exists_done'), and prints it again\n"
		"after events were lost. -t prefixes each event with the time.\n"
		"Exits 3 when the module is unloaded.\n");
}

struct mon_ctx {
	uint64_t seen;
	struct rl_nl q;		/* requests, apart from the event socket */
	bool q_open;
};

static int monitor_cb(struct rl_info *ev, void *arg)
{
	struct mon_ctx *c = arg;

	out_event(ev);
	++c->seen;
	return opt.have_count && c->seen >= opt.count;
}

/* Open the request socket of @c once; an exit status on failure. */
static int mon_query_open(struct mon_ctx *c)
{
	int ret;

	if (c->q_open)
		return EXIT_OK;
	ret = rl_nl_open(&c->q);
	if (!ret)
		c->q_open = true;
	return ret;
}

/* --now: the state as "exists" events, then the separator. */
static int monitor_now(void *arg, bool lost)
{
	static struct rl_info st, one;
	struct mon_ctx *c = arg;
	unsigned int i;
	int err;

	(void)lost;
	err = mon_query_open(c);
	if (err)
		return -err;
	c->q.what = "monitor: status";
	err = rl_get(&c->q, RDMALOG_CMD_STATUS_GET, &st);
	if (err)
		return -rl_nl_report(&c->q, "monitor: status", err);
	st.has[RDMALOG_A_EVENT] = false;
	st.has[RDMALOG_A_PEERS] = false;
	out_event(&st);
	for (i = 0; i < st.npeers; i++) {
		memset(&one, 0, sizeof(one));
		one.has[RDMALOG_A_NODE_ID] = st.has[RDMALOG_A_NODE_ID];
		one.node_id = st.node_id;
		one.has[RDMALOG_A_PEER] = true;
		one.peer = st.peers[i];
		out_event(&one);
	}
	out_separator();
	return 0;
}

int do_monitor(int argc, char **argv)
{
	static struct mon_ctx c;
	struct rl_nl nl;
	int ret;

	if (argc > 0 && is_help(argv[0])) {
		usage_monitor(stdout);
		return EXIT_OK;
	}
	/* "count N" works as well as "--count N", "now" as "--now". */
	while (argc > 0) {
		if (argc >= 2 && !strcmp(argv[0], "count")) {
			if (opt.have_count)
				return usage_error("monitor: count given twice");
			if (parse_u64(argv[1], &opt.count) || !opt.count)
				return usage_error("monitor: invalid count '%s'",
						   argv[1]);
			opt.have_count = true;
			argc -= 2;
			argv += 2;
		} else if (!strcmp(argv[0], "now")) {
			opt.now = true;
			argc--;
			argv++;
		} else {
			break;
		}
	}
	ret = no_more_args("monitor", argc, argv);
	if (ret)
		return ret;
	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	nl.what = "monitor";
	ret = rl_nl_monitor(&nl, monitor_cb, opt.now ? monitor_now : NULL, &c,
			    -1);
	if (c.q_open)
		rl_nl_close(&c.q);
	rl_nl_close(&nl);
	return ret;
}

/* ------------------------------------------------------------------ */
/* wait */

void usage_wait(FILE *f)
{
	fprintf(f, "Usage: " PROG " wait { up | connected [ ID ] | in-sync [ ID ] | durable |\n"
		"                  primary } [ --timeout SECONDS ]\n"
		"Return once the state is reached: the log is up; it is up and peer ID\n"
		"(or every peer) is connected; it is up and this node (the primary)\n"
		"judges peer ID (or every peer) in sync; it is up and the requested\n"
		"durability is in force; it is up and knows its primary (itself, or a\n"
		"connected peer that says it is). Follows the events, re-reading the status at\n"
		"start and after each one. Exit status: 0 reached, 5 timeout,\n"
		"3 module not loaded or unloaded meanwhile, 2 usage, 1 netlink error.\n");
}

enum wait_what { W_UP, W_CONNECTED, W_IN_SYNC, W_DURABLE, W_PRIMARY };

struct wait_ctx {
	enum wait_what what;
	uint32_t peer;		/* 0: every peer */
	struct rl_nl q;
	bool q_open;
	int err;		/* an exit status from a failed status read */
};

static bool wait_peer_ok(const struct wait_ctx *w, const struct rl_peer *p)
{
	if (w->what == W_CONNECTED)
		return p->has_state && p->state == RDMALOG_PEER_CONNECTED;
	return p->has_sync && p->sync == RDMALOG_PEER_SYNC_IN_SYNC;
}

/* Read the status; 1 when the state is reached, 0 if not, < 0: -status. */
static int wait_check(struct wait_ctx *w)
{
	static struct rl_info st;
	unsigned int i;
	bool found = false;
	int err;

	if (!w->q_open) {
		err = rl_nl_open(&w->q);
		if (err)
			return -err;
		w->q_open = true;
	}
	w->q.what = "wait: status";
	err = rl_get(&w->q, RDMALOG_CMD_STATUS_GET, &st);
	if (err == -ENOENT || err == -EOPNOTSUPP) {
		fprintf(stderr, PROG ": wait: the rdmalog genl family went away (module unloaded)\n");
		return -EXIT_NOMOD;
	}
	if (err)
		return -rl_nl_report(&w->q, "wait: status", err);
	if (!st.up)
		return 0;
	switch (w->what) {
	case W_UP:
		return 1;
	case W_DURABLE:
		return st.has[RDMALOG_A_DURABILITY_EFFECTIVE] &&
		       st.durability_effective == st.durability;
	case W_PRIMARY:
		return st.has[RDMALOG_A_PRIMARY];
	case W_CONNECTED:
	case W_IN_SYNC:
		for (i = 0; i < st.npeers; i++) {
			const struct rl_peer *p = &st.peers[i];

			if (w->peer && (!p->has_id || p->id != w->peer))
				continue;
			found = true;
			if (!wait_peer_ok(w, p))
				return 0;
		}
		/* A named peer that is not configured (yet): not reached. */
		return w->peer ? found : 1;
	}
	return 0;
}

static int wait_resync(void *arg, bool lost)
{
	int r = wait_check(arg);

	(void)lost;
	return r;
}

static int wait_event_cb(struct rl_info *ev, void *arg)
{
	struct wait_ctx *w = arg;
	int r;

	(void)ev;
	r = wait_check(w);
	if (r < 0) {
		w->err = -r;
		return 1;
	}
	return r;
}

int do_wait(int argc, char **argv)
{
	static const char *const words[] = {
		"up", "connected", "in-sync", "durable", "primary", "help", NULL
	};
	static struct wait_ctx w;
	struct rl_nl nl;
	long tmo = -1;
	int k, ret;

	if (argc < 1)
		return usage_error("wait: what to wait for? (up, connected, in-sync, durable, primary)");
	k = match_word(argv[0], words);
	if (k == 5 || is_help(argv[0])) {
		usage_wait(stdout);
		return EXIT_OK;
	}
	if (k < 0)
		return usage_error("wait: unknown state '%s' (try '" PROG " wait help')",
				   argv[0]);
	w.what = (enum wait_what)k;
	argc--;
	argv++;
	if (argc > 0 && (w.what == W_CONNECTED || w.what == W_IN_SYNC) &&
	    strcmp(argv[0], "timeout")) {
		if (!strcmp(argv[0], "id") && argc > 1) {
			argc--;
			argv++;
		}
		if (parse_u32_range(argv[0], 1, RDMALOG_MAX_NODE_ID, &w.peer))
			return usage_error("wait: invalid peer id '%s' (1..%d)",
					   argv[0], RDMALOG_MAX_NODE_ID);
		argc--;
		argv++;
	}
	if (argc >= 2 && !strcmp(argv[0], "timeout")) {
		char *end;

		if (opt.have_timeout)
			return usage_error("wait: timeout given twice");
		opt.timeout = strtod(argv[1], &end);
		if (end == argv[1] || *end || !(opt.timeout >= 0) ||
		    opt.timeout > 31536000)
			return usage_error("wait: invalid timeout '%s' (seconds)",
					   argv[1]);
		opt.have_timeout = true;
		argc -= 2;
		argv += 2;
	}
	ret = no_more_args("wait", argc, argv);
	if (ret)
		return ret;
	if (opt.have_timeout)
		tmo = (long)(opt.timeout * 1000.0 + 0.5);

	ret = rl_nl_open(&nl);
	if (ret)
		return ret;
	nl.what = "wait";
	/* A peer's role arrives in its HELLO, which no event announces. */
	if (w.what == W_PRIMARY)
		nl.resync_ms = 500;
	ret = rl_nl_monitor(&nl, wait_event_cb, wait_resync, &w, tmo);
	if (!ret && w.err)
		ret = w.err;
	if (ret == EXIT_TIMEOUT)
		fprintf(stderr, PROG ": wait: timed out\n");
	if (w.q_open)
		rl_nl_close(&w.q);
	rl_nl_close(&nl);
	if (!ret)
		out_empty();
	return ret;
}
