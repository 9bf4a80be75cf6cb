// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogctl - apply: make this node match a cluster file.
 *
 * The node's entry is chosen with --node, else by the one node address of
 * the file that belongs to a local interface. The actions are computed
 * from the difference between the file and what the kernel reports, so
 * applying the same file twice does nothing the second time:
 *
 *   1. (log down only) delete peers that clash with our new id/address
 *   2. node set   the identity, role and timers attributes that differ
 *   3. log set    the settings of the file that differ
 *   4. peer del   peers not in the file (or with another address/port)
 *   5. peer add   nodes of the file that are not peers yet
 *   6. node up    unless already up
 *
 * Settings that need the log down are only sent when they differ; if the
 * log is up the kernel refuses them and apply stops with its message.
 * --dry-run marks those actions ("# refused while the log is up") and
 * exits 1 when there is one, as the real run would; --check only parses
 * the file. With -j, a real run that fails still prints its document,
 * with the actions done, the one that failed and the kernel's error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "rdmalogctl.h"

#define MAX_ACTIONS (2 * CL_MAX_NODES + RL_MAX_PEERS_SEEN + 4)

struct action {
	uint8_t cmd;
	bool has[RDMALOG_A_MAX + 1];
	uint32_t node_id, role, max_record, durability, commit_timeout_ms;
	uint32_t heartbeat_ms, peer_timeout_ms;
	uint32_t failover, priority;
	bool lead;
	uint64_t cluster_id, capacity;
	struct rl_addr addr;
	uint16_t port;
	const uint8_t *secret;	/* with has[RDMALOG_A_SECRET]: the cluster's */
	size_t secret_len;
	char text[256];
	bool refused;		/* the kernel refuses it while the log is up */
};

static struct action actions[MAX_ACTIONS];
static unsigned int nactions;

void usage_apply(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [ -j ] apply FILE [ --node ID ] [ --dry-run ]\n"
		"       " PROG " [ -j ] apply --check FILE\n"
		"Configure this node (identity, role, log settings, peers) from the\n"
		"cluster FILE ('-' for standard input) and bring it up. The node is\n"
		"ID, else the node whose address is on a local interface. With\n"
		"--dry-run, print the actions instead of performing them, marking\n"
		"those the kernel refuses while the log is up (exit 1 if any).\n"
		"With --check, only check the file (no node, no kernel).\n"
		"See Documentation/cluster-file.rst for the file format.\n");
}

static struct action *new_action(uint8_t cmd, const char *text)
{
	struct action *a = &actions[nactions++];

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	snprintf(a->text, sizeof(a->text), "%s", text);
	return a;
}

static void append(struct action *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void append(struct action *a, const char *fmt, ...)
{
	size_t len = strlen(a->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->text + len, sizeof(a->text) - len, fmt, ap);
	va_end(ap);
}

static int fill_action(struct nl_msg *msg, const struct action *a)
{
	int r = 0;

	if (a->has[RDMALOG_A_NODE_ID])
		r |= nla_put_u32(msg, RDMALOG_A_NODE_ID, a->node_id);
	if (a->has[RDMALOG_A_CLUSTER_ID])
		r |= nla_put_u64(msg, RDMALOG_A_CLUSTER_ID, a->cluster_id);
	if (a->has[RDMALOG_A_ADDR])
		r |= nla_put(msg, RDMALOG_A_ADDR, a->addr.len, a->addr.a);
	if (a->has[RDMALOG_A_PORT])
		r |= nla_put_u16(msg, RDMALOG_A_PORT, a->port);
	if (a->has[RDMALOG_A_ROLE])
		r |= nla_put_u32(msg, RDMALOG_A_ROLE, a->role);
	if (a->has[RDMALOG_A_CAPACITY])
		r |= nla_put_u64(msg, RDMALOG_A_CAPACITY, a->capacity);
	if (a->has[RDMALOG_A_MAX_RECORD])
		r |= nla_put_u32(msg, RDMALOG_A_MAX_RECORD, a->max_record);
	if (a->has[RDMALOG_A_DURABILITY])
		r |= nla_put_u32(msg, RDMALOG_A_DURABILITY, a->durability);
	if (a->has[RDMALOG_A_COMMIT_TIMEOUT_MS])
		r |= nla_put_u32(msg, RDMALOG_A_COMMIT_TIMEOUT_MS,
				 a->commit_timeout_ms);
	if (a->has[RDMALOG_A_HEARTBEAT_MS])
		r |= nla_put_u32(msg, RDMALOG_A_HEARTBEAT_MS, a->heartbeat_ms);
	if (a->has[RDMALOG_A_PEER_TIMEOUT_MS])
		r |= nla_put_u32(msg, RDMALOG_A_PEER_TIMEOUT_MS,
				 a->peer_timeout_ms);
	if (a->has[RDMALOG_A_SECRET])
		r |= nla_put(msg, RDMALOG_A_SECRET, a->secret_len, a->secret);
	if (a->has[RDMALOG_A_FAILOVER])
		r |= nla_put_u32(msg, RDMALOG_A_FAILOVER, a->failover);
	if (a->has[RDMALOG_A_PRIORITY])
		r |= nla_put_u32(msg, RDMALOG_A_PRIORITY, a->priority);
	if (a->has[RDMALOG_A_LEAD])
		r |= nla_put_u8(msg, RDMALOG_A_LEAD, a->lead);
	return r ? -1 : 0;
}

/* The file's node whose address is on a local interface. */
static int find_local_node(const struct cluster *cl, uint32_t *id)
{
	struct ifaddrs *ifa, *i;
	unsigned int n, found = 0;
	char ids[128] = "";

	if (getifaddrs(&ifa) < 0) {
		fprintf(stderr, PROG ": apply: getifaddrs: %s\n", strerror(errno));
		return EXIT_FILE;
	}
	for (n = 0; n < cl->nnodes; n++) {
		const struct cl_node *nd = &cl->nodes[n];
		bool local = false;

		for (i = ifa; i && !local; i = i->ifa_next) {
			if (!i->ifa_addr)
				continue;
			if (i->ifa_addr->sa_family == AF_INET && nd->addr.len == 4)
				local = !memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr,
						nd->addr.a, 4);
			else if (i->ifa_addr->sa_family == AF_INET6 &&
				 nd->addr.len == 16)
				local = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
						nd->addr.a, 16);
		}
		if (local) {
			size_t len = strlen(ids);

			snprintf(ids + len, sizeof(ids) - len, "%s%u",
				 found ? ", " : "", nd->id);
			*id = nd->id;
			found++;
		}
	}
	freeifaddrs(ifa);
	if (found == 1)
		return EXIT_OK;
	if (!found)
		fprintf(stderr,
			PROG ": apply: %s: no node of the file has an address of this host; use --node ID\n",
			cl->file);
	else
		fprintf(stderr,
			PROG ": apply: %s: several nodes (%s) have addresses of this host; use --node ID\n",
			cl->file, ids);
	return EXIT_FILE;
}

struct state {
	bool known;		/* false: module absent (dry run) */
	struct rl_info node, log, status;
};

static bool peer_wanted(const struct cluster *cl, const struct cl_node *self,
			const struct rl_peer *p)
{
	const struct cl_node *nd;

	if (!p->has_id || p->id == self->id)
		return false;
	nd = cluster_node(cl, p->id);
	return nd && p->has_addr && addr_eq(&nd->addr, &p->addr) &&
	       p->has_port && p->port == nd->port;
}

static bool peer_clashes(const struct cl_node *self, const struct rl_peer *p)
{
	return (p->has_id && p->id == self->id) ||
	       (p->has_addr && addr_eq(&p->addr, &self->addr));
}

static void add_peer_del(const struct rl_peer *p)
{
	struct action *a = new_action(RDMALOG_CMD_PEER_DEL, "peer del");

	a->has[RDMALOG_A_NODE_ID] = true;
	a->node_id = p->id;
	append(a, " id %u", p->id);
}

static void plan(const struct cluster *cl, const struct cl_node *self,
		 const struct state *s)
{
	const struct rl_info *node = &s->node, *log = &s->log;
	const struct rl_info *st = &s->status;
	uint32_t role = cl->primary == self->id ? RDMALOG_ROLE_PRIMARY :
						  RDMALOG_ROLE_BACKUP;
	bool up = s->known && st->up;
	bool deleted[RL_MAX_PEERS_SEEN] = { false };
	char buf[INET6_ADDRSTRLEN], sz[32];
	struct action *a;
	unsigned int i, j;
	bool found;

	nactions = 0;

	/* 1. While down, clear peers in the way of our new identity. */
	for (i = 0; !up && i < st->npeers; i++) {
		if (!peer_wanted(cl, self, &st->peers[i]) &&
		    peer_clashes(self, &st->peers[i])) {
			add_peer_del(&st->peers[i]);
			deleted[i] = true;
		}
	}

	/* 2. node set */
	a = new_action(RDMALOG_CMD_NODE_SET, "node set");
	if (!node->has[RDMALOG_A_NODE_ID] || node->node_id != self->id) {
		a->has[RDMALOG_A_NODE_ID] = true;
		a->node_id = self->id;
		append(a, " id %u", self->id);
	}
	if (!node->has[RDMALOG_A_CLUSTER_ID] || node->cluster_id != cl->cluster_id) {
		a->has[RDMALOG_A_CLUSTER_ID] = true;
		a->cluster_id = cl->cluster_id;
		append(a, " cluster %llu", (unsigned long long)cl->cluster_id);
	}
	if (!node->has[RDMALOG_A_ADDR] || !addr_eq(&node->addr, &self->addr)) {
		a->has[RDMALOG_A_ADDR] = true;
		a->addr = self->addr;
		append(a, " address %s", addr_str(&self->addr, buf, sizeof(buf)));
	}
	if (!node->has[RDMALOG_A_PORT] || node->port != self->port) {
		a->has[RDMALOG_A_PORT] = true;
		a->port = self->port;
		append(a, " port %u", self->port);
	}
	/*
	 * With failover auto the file's primary only leads first: while the
	 * log is up, the elections own the role, and a node that stepped
	 * down or joined as a backup keeps the role it has.
	 */
	if ((!node->has[RDMALOG_A_ROLE] || node->role != role) &&
	    !(up && (cl->has_failover ? cl->failover : node->failover) ==
		    RDMALOG_FAILOVER_AUTO)) {
		a->has[RDMALOG_A_ROLE] = true;
		a->role = role;
		append(a, " role %s", role_name(role));
	}
	if (cl->has_heartbeat && (!node->has[RDMALOG_A_HEARTBEAT_MS] ||
				  node->heartbeat_ms != cl->heartbeat_ms)) {
		a->has[RDMALOG_A_HEARTBEAT_MS] = true;
		a->heartbeat_ms = cl->heartbeat_ms;
		append(a, " heartbeat %u", cl->heartbeat_ms);
	}
	if (cl->has_peer_timeout &&
	    (!node->has[RDMALOG_A_PEER_TIMEOUT_MS] ||
	     node->peer_timeout_ms != cl->peer_timeout_ms)) {
		a->has[RDMALOG_A_PEER_TIMEOUT_MS] = true;
		a->peer_timeout_ms = cl->peer_timeout_ms;
		append(a, " peer-timeout %u", cl->peer_timeout_ms);
	}
	/*
	 * Failover as the file says, or left; priority and lead as the
	 * node's line says, defaults included (a module that does not know
	 * them is asked only for other values than the defaults).
	 */
	if (cl->has_failover && (!node->has[RDMALOG_A_FAILOVER] ||
				 node->failover != cl->failover)) {
		a->has[RDMALOG_A_FAILOVER] = true;
		a->failover = cl->failover;
		append(a, " failover %s", failover_name(cl->failover));
	}
	if (node->has[RDMALOG_A_PRIORITY] ? node->priority != self->priority :
	    self->priority != 0) {
		a->has[RDMALOG_A_PRIORITY] = true;
		a->priority = self->priority;
		append(a, " priority %u", self->priority);
	}
	if (node->has[RDMALOG_A_LEAD] ? node->lead != !self->no_lead :
	    self->no_lead) {
		a->has[RDMALOG_A_LEAD] = true;
		a->lead = !self->no_lead;
		append(a, " lead %s", self->no_lead ? "no" : "yes");
	}
	/*
	 * The secret cannot be read back: it is sent whenever the file has
	 * one (the same one again is no change, even while up); without
	 * secret-file the node keeps what it has.
	 */
	if (cl->secret_line) {
		a->has[RDMALOG_A_SECRET] = true;
		a->secret = cl->secret;
		a->secret_len = cl->secret_len;
		append(a, " secret-file %s", cl->secret_file);
	}
	if (!strcmp(a->text, "node set"))
		nactions--;
	else
		a->refused = up && ((a->has[RDMALOG_A_SECRET] &&
				     node->has[RDMALOG_A_AUTH] &&
				     node->auth == RDMALOG_AUTH_NONE) ||
				    a->has[RDMALOG_A_NODE_ID] ||
				    a->has[RDMALOG_A_CLUSTER_ID] ||
				    a->has[RDMALOG_A_ADDR] ||
				    a->has[RDMALOG_A_PORT] ||
				    a->has[RDMALOG_A_ROLE]);

	/* 3. log set */
	a = new_action(RDMALOG_CMD_LOG_SET, "log set");
	if (cl->has_capacity && (!log->has[RDMALOG_A_CAPACITY] ||
				 log->capacity != cl->capacity)) {
		a->has[RDMALOG_A_CAPACITY] = true;
		a->capacity = cl->capacity;
		append(a, " capacity %s", size_str(cl->capacity, sz, sizeof(sz)));
	}
	if (cl->has_max_record && (!log->has[RDMALOG_A_MAX_RECORD] ||
				   log->max_record != cl->max_record)) {
		a->has[RDMALOG_A_MAX_RECORD] = true;
		a->max_record = cl->max_record;
		append(a, " max-record %s", size_str(cl->max_record, sz, sizeof(sz)));
	}
	if (cl->has_durability && (!log->has[RDMALOG_A_DURABILITY] ||
				   log->durability != cl->durability)) {
		a->has[RDMALOG_A_DURABILITY] = true;
		a->durability = cl->durability;
		append(a, " durability %s", durability_name(cl->durability));
	}
	if (cl->has_commit_timeout &&
	    (!log->has[RDMALOG_A_COMMIT_TIMEOUT_MS] ||
	     log->commit_timeout_ms != cl->commit_timeout_ms)) {
		a->has[RDMALOG_A_COMMIT_TIMEOUT_MS] = true;
		a->commit_timeout_ms = cl->commit_timeout_ms;
		append(a, " commit-timeout %u", cl->commit_timeout_ms);
	}
	if (!strcmp(a->text, "log set"))
		nactions--;
	else
		a->refused = up && (a->has[RDMALOG_A_CAPACITY] ||
				    a->has[RDMALOG_A_MAX_RECORD]);

	/* 4. peer del */
	for (i = 0; i < st->npeers; i++)
		if (!deleted[i] && !peer_wanted(cl, self, &st->peers[i]) &&
		    st->peers[i].has_id)
			add_peer_del(&st->peers[i]);

	/* 5. peer add */
	for (j = 0; j < cl->nnodes; j++) {
		const struct cl_node *nd = &cl->nodes[j];

		if (nd->id == self->id)
			continue;
		found = false;
		for (i = 0; i < st->npeers && !found; i++)
			found = st->peers[i].has_id && st->peers[i].id == nd->id &&
				peer_wanted(cl, self, &st->peers[i]);
		if (found)
			continue;
		a = new_action(RDMALOG_CMD_PEER_ADD, "peer add");
		a->has[RDMALOG_A_NODE_ID] = true;
		a->node_id = nd->id;
		a->has[RDMALOG_A_ADDR] = true;
		a->addr = nd->addr;
		a->has[RDMALOG_A_PORT] = true;
		a->port = nd->port;
		append(a, " id %u address %s port %u", nd->id,
		       addr_str(&nd->addr, buf, sizeof(buf)), nd->port);
	}

	/* 6. node up */
	if (!up)
		new_action(RDMALOG_CMD_UP, "node up");
}

static int read_state(struct rl_nl *nl, struct state *s)
{
	static const struct {
		uint8_t cmd;
		const char *what;
	} gets[] = {
		{ RDMALOG_CMD_NODE_GET, "apply: node show" },
		{ RDMALOG_CMD_LOG_GET, "apply: log show" },
		{ RDMALOG_CMD_STATUS_GET, "apply: status" },
	};
	struct rl_info *dst[] = { &s->node, &s->log, &s->status };
	unsigned int i;
	int err;

	for (i = 0; i < 3; i++) {
		nl->what = gets[i].what;
		err = rl_get(nl, gets[i].cmd, dst[i]);
		if (err)
			return rl_nl_report(nl, gets[i].what, err);
	}
	s->known = true;
	return EXIT_OK;
}

/* apply --check: the file parsed; say so. */
static int check_only(const char *file, const struct cluster *cl)
{
	if (opt.json) {
		jw_begin_obj(NULL);
		jw_str("file", file);
		jw_bool("ok", true);
		jw_u64("cluster_id", cl->cluster_id);
		jw_u64("nodes", cl->nnodes);
		jw_u64("primary", cl->primary);
		jw_end_obj();
		jw_finish();
	} else {
		printf("%s: ok: cluster %llu, %u nodes, primary %u\n", file,
		       (unsigned long long)cl->cluster_id, cl->nnodes,
		       cl->primary);
	}
	return EXIT_OK;
}

#define REFUSED_NOTE "# refused while the log is up: needs 'node down'"

/*
 * The JSON document of a run: @done actions were performed (all of them
 * on success); @failed, when not NULL, is the one the kernel refused with
 * @nl's error.
 */
static void apply_json(const char *file, uint32_t id, unsigned int done,
		       const struct action *failed, const struct rl_nl *nl)
{
	unsigned int i;
	bool refused = false;

	jw_begin_obj(NULL);
	jw_str("file", file);
	jw_u64("node_id", id);
	jw_bool("dry_run", opt.dry_run);
	jw_bool("changed", done > 0);
	jw_begin_arr("actions");
	for (i = 0; i < done; i++)
		jw_str(NULL, actions[i].text);
	jw_end_arr();
	if (opt.dry_run) {
		jw_begin_arr("refused");
		for (i = 0; i < done; i++) {
			if (actions[i].refused) {
				jw_str(NULL, actions[i].text);
				refused = true;
			}
		}
		jw_end_arr();
		jw_bool("would_fail", refused);
	}
	if (failed) {
		jw_str("failed", failed->text);
		jw_begin_obj("error");
		jw_u64("errno", nl->err);
		jw_str("strerror", strerror(nl->err));
		jw_str("message", nl->extack);
		if (nl->errattr[0])
			jw_str("attribute", nl->errattr);
		else
			jw_null("attribute");
		jw_end_obj();
	}
	jw_end_obj();
	jw_finish();
}

int do_apply(int argc, char **argv)
{
	static struct cluster cl;
	static struct state s;
	const struct cl_node *self;
	const char *file;
	struct rl_nl nl = { 0 };
	uint32_t self_id = 0;
	unsigned int i;
	int ret, err;
	char what[300];

	if (argc > 0 && !strcmp(argv[0], "help")) {
		usage_apply(stdout);
		return EXIT_OK;
	}
	if (argc < 1)
		return usage_error("apply: FILE is required");
	if (argc > 1)
		return usage_error("apply: unexpected argument '%s'", argv[1]);
	file = argv[0];

	if (cluster_load(file, &cl))
		return EXIT_FILE;
	if (opt.check)
		return check_only(file, &cl);
	if (opt.have_node) {
		if (!cluster_node(&cl, opt.node)) {
			fprintf(stderr, PROG ": apply: %s: node %u is not in the file\n",
				file, opt.node);
			return EXIT_FILE;
		}
		self_id = opt.node;
	} else {
		ret = find_local_node(&cl, &self_id);
		if (ret)
			return ret;
	}
	self = cluster_node(&cl, self_id);

	memset(&s, 0, sizeof(s));
	ret = rl_nl_open_quiet(&nl);
	if (ret == EXIT_NOMOD && opt.dry_run) {
		fprintf(stderr,
			PROG ": apply: rdmalog module not loaded; listing every action for an unconfigured node\n");
	} else if (ret == EXIT_NOMOD) {
		fprintf(stderr,
			PROG ": rdmalog module not loaded (genl family '%s' not found)\n",
			RDMALOG_GENL_NAME);
		return ret;
	} else if (ret) {
		return ret;
	} else {
		ret = read_state(&nl, &s);
		if (!ret && !s.node.has[RDMALOG_A_PORT]) {
			/* PORT is always there for CAP_NET_ADMIN */
			fprintf(stderr,
				PROG ": apply: needs CAP_NET_ADMIN: without it the kernel does not show the cluster id and addresses to compare the file with\n");
			ret = EXIT_KERNEL;
		}
		if (ret) {
			rl_nl_close(&nl);
			return ret;
		}
	}

	plan(&cl, self, &s);

	for (i = 0; i < nactions && !opt.dry_run; i++) {
		struct action *a = &actions[i];
		struct nl_msg *msg = rl_nl_msg(&nl, a->cmd, false);

		snprintf(what, sizeof(what), "apply: %s", a->text);
		nl.what = what;
		if (!msg || fill_action(msg, a) < 0) {
			if (msg)
				nlmsg_free(msg);
			rl_nl_close(&nl);
			return rl_nl_report(NULL, what, -ENOMEM);
		}
		err = rl_nl_request(&nl, msg, NULL, NULL);
		if (err) {
			ret = rl_nl_report(&nl, what, err);
			if (opt.json)
				apply_json(file, self->id, i, a, &nl);
			rl_nl_close(&nl);
			return ret;
		}
		if (!opt.json)
			printf("%s\n", a->text);
	}
	rl_nl_close(&nl);

	ret = EXIT_OK;
	for (i = 0; opt.dry_run && i < nactions; i++)
		if (actions[i].refused)
			ret = EXIT_KERNEL;
	if (opt.json) {
		apply_json(file, self->id, nactions, NULL, NULL);
	} else if (opt.dry_run) {
		for (i = 0; i < nactions; i++)
			printf("%s%s%s\n", actions[i].text,
			       actions[i].refused ? "   " : "",
			       actions[i].refused ? REFUSED_NOTE : "");
		if (!nactions)
			printf("node %u: nothing to do\n", self->id);
	} else if (!nactions) {
		printf("node %u: already up to date\n", self->id);
	}
	if (ret)
		fprintf(stderr,
			PROG ": apply: --dry-run: the kernel would refuse some actions while the log is up\n");
	return ret;
}
