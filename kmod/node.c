// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - this node: identity, peers, log settings and the up/down
 * lifecycle of the log.
 *
 * There is exactly one node per module instance, rdmalog_node below. Its
 * configuration is changed only through rdmalog_node_set_config() and the
 * peer functions (called by netlink.c), each of which validates the whole
 * request first and then applies all of it or nothing.
 *
 * While the log is up, conn.c keeps a connection to every peer (one
 * &struct rdmalog_conn per peer, hanging off &struct rdmalog_peer): it is
 * started by rdmalog_node_up() and rdmalog_node_peer_add(), and stopped,
 * waiting for everything to be released, by rdmalog_node_down(),
 * rdmalog_node_peer_del() and rdmalog_node_exit(). The peers' connection
 * states come from conn.c. repl.c replicates the log of an up period: it
 * is started before the connections and stopped after them, and told of
 * every change of durability, commit timeout and number of peers. The role
 * changes while up only when a backup wins an election
 * (rdmalog_node_promote()): the log stays, everything serving it
 * restarts in the new role.
 */
#include <crypto/algapi.h>
#include <linux/errno.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <asm/page.h>

#include "node.h"
#include "conn.h"
#include "catchup.h"
#include "elect.h"
#include "forward.h"
#include "log.h"
#include "netlink.h"
#include "repl.h"
#include "stats.h"

/**
 * struct rdmalog_peer - a configured peer
 * @list: entry in &rdmalog_node.peers
 * @node_id: the peer's node id, unique among peers and not ours
 * @addr: its address and port; unique among peers
 * @conn: the connection to the peer while the log is up (this object holds
 *	one reference on it), NULL while down; its state is the peer's
 *
 * A peer is created by rdmalog_node_peer_add() and freed by
 * rdmalog_node_peer_del() or rdmalog_node_exit(); it lives on
 * &rdmalog_node.peers and every field is read and written only with
 * &rdmalog_node.config_mutex held. Nobody else holds a pointer to it (conn.c
 * has its own references to @conn, never to the peer).
 */
struct rdmalog_peer {
	struct list_head list;
	u32 node_id;
	struct rdmalog_addr addr;
	struct rdmalog_conn *conn;
};

/**
 * struct rdmalog_node - the node, a singleton
 * @config_mutex: protects every other field. Taken in process context
 *	only. Lock order: the genetlink mutex (netlink doit/dumpit) is taken
 *	before it; the log's internal locks (rdmalog_log_*() calls) and the
 *	netlink multicast path (rdmalog_netlink_notify_*(), which
 *	never calls back into this file) are taken inside it. Events are
 *	sent with it held so they leave in the order the changes were made.
 * @config: the configuration set by the operator
 * @epoch: the epoch of this node's last log as a primary (0: none yet):
 *	each new log of a primary takes one above it and above every epoch
 *	a peer spoke in (rdmalog_conn_epoch_seen()) or the election knows
 *	of (elect.c), and stamps its records with it
 * @up: the log is up; then @log is set
 * @log: the log of the current up period, or NULL while down. The node
 *	holds one reference on it from rdmalog_node_up() to
 *	rdmalog_node_down(); every open descriptor holds its own, taken
 *	through rdmalog_node_get_log(), and so does a trim while it runs.
 * @trim_announced: first LSN sent in the last %RDMALOG_EVENT_TRIMMED of
 *	this up period (1 before any)
 * @peers: list of &struct rdmalog_peer
 * @npeers: entries on @peers, at most %RDMALOG_MAX_PEERS
 * @dur_sent: the durability in force last announced (or implied by UP)
 *	in this up period
 * @dur_req_sent: the requested durability at the same time
 * @dur_work: looks at the durability in force after replication said that
 *	a backup joined or left (it cannot take @config_mutex there: the
 *	node waits for connections to go with it held)
 * @secret: the shared secret, @secret_len bytes (0: none). Write-only:
 *	no reply carries it; the connections key their transform with it
 *	when the log comes up. Wiped when replaced and at module exit
 * @secret_len: its length
 * @deposed_epoch: the epoch led when the election said a primary of a
 *	later one leads our log (atomic; 0: none): @step_down_work steps
 *	down if the node still leads that epoch
 * @step_down_work: see @deposed_epoch; cancelled at module exit
 * @watch_work: a backup with failover auto that may lead looks for its
 *	primary every heartbeat, and stands for election when it had one in
 *	this up period and has seen none for its stand delay
 *	(rdmalog_node_watch_work()); runs while that holds, cancelled at
 *	module exit
 * @primary_seen: jiffies when @watch_work last saw a primary hold our
 *	ring (or this node granted a vote, or lost an election)
 * @had_primary: it saw one in this up period
 * @quorum_seen: (a primary with failover auto) jiffies when @watch_work
 *	last found a majority of the configured nodes connected, itself
 *	counted: after a peer timeout without, it steps down
 * @had_quorum: it had a majority connected in this up period (or role)
 *	since the peers last changed
 * @change: the last change of role while up (since the module loaded)
 * @joining: the configured primary came up, with failover auto and peers,
 *	as a backup, and looks for a log among its peers before it leads
 *	(rdmalog_node_watch_join()); cleared when it leads or joins, and
 *	when the log goes down
 * @join_until: jiffies after which a @joining node leads even though some
 *	peer has not answered
 * @takeover_from: (atomic) the primary that handed the log over to this
 *	node (a TAKEOVER), and @takeover_epoch, the epoch it voted for us in:
 *	@takeover_work stands in it; cancelled at module exit
 * @takeover_epoch: see @takeover_from
 * @takeover_work: see @takeover_from
 * @handing_over: a switchover of this primary is on
 *	(rdmalog_node_switchover()): a step-down meanwhile is its hand-over
 */
struct rdmalog_node {
	struct mutex config_mutex; /* protects all below, see above */
	struct rdmalog_node_config config;
	u64 epoch;
	bool up;
	struct rdmalog_log *log;
	u64 trim_announced;
	struct list_head peers;
	u32 npeers;
	u32 dur_sent;
	u32 dur_req_sent;
	struct work_struct dur_work;
	u8 secret[RDMALOG_MAX_SECRET];
	u8 secret_len;
	atomic64_t deposed_epoch;
	struct work_struct step_down_work;
	struct delayed_work watch_work;
	unsigned long primary_seen;
	bool had_primary;
	unsigned long quorum_seen;
	bool had_quorum;
	struct rdmalog_node_change change;
	bool joining;
	unsigned long join_until;
	atomic_t takeover_from;
	atomic64_t takeover_epoch;
	struct work_struct takeover_work;
	bool handing_over;
};

static void rdmalog_node_dur_work(struct work_struct *work);
static void rdmalog_node_step_down_work(struct work_struct *work);
static void rdmalog_node_takeover_work(struct work_struct *work);
static void rdmalog_node_watch_work(struct work_struct *work);
static void rdmalog_node_watch(void);
static void rdmalog_node_step_down(u32 kind, const char *why);
static int rdmalog_node_stand(u32 why, u32 detect_ms, u32 from,
			      u64 from_epoch, struct netlink_ext_ack *extack);
static int rdmalog_node_lead(u64 epoch, struct netlink_ext_ack *extack);

/* A forwarded append that found no primary tries again this often. */
#define RDMALOG_NODE_FWD_RETRY_MS	20

static struct rdmalog_node rdmalog_node = {
	.config_mutex = __MUTEX_INITIALIZER(rdmalog_node.config_mutex),
	.peers = LIST_HEAD_INIT(rdmalog_node.peers),
	.dur_work = __WORK_INITIALIZER(rdmalog_node.dur_work,
				       rdmalog_node_dur_work),
	.step_down_work = __WORK_INITIALIZER(rdmalog_node.step_down_work,
					     rdmalog_node_step_down_work),
	.takeover_work = __WORK_INITIALIZER(rdmalog_node.takeover_work,
					    rdmalog_node_takeover_work),
	.watch_work = __DELAYED_WORK_INITIALIZER(rdmalog_node.watch_work,
						 rdmalog_node_watch_work, 0),
};

static bool rdmalog_addr_equal(const struct rdmalog_addr *a,
			       const struct rdmalog_addr *b)
{
	return a->len && a->len == b->len && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->len);
}

static bool rdmalog_addr_is_any(const struct rdmalog_addr *a)
{
	return !memchr_inv(a->addr, 0, a->len);
}

/*
 * The durability in force: the requested one while down or when enough
 * backups are in sync, else the strongest they give (appends wait for the
 * requested one meanwhile, up to the commit timeout). Caller holds
 * config_mutex.
 */
static u32 rdmalog_node_effective_durability(u32 requested, u32 *in_sync,
					     u32 *needed)
{
	*in_sync = 0;
	*needed = 0;
	if (!rdmalog_node.up || rdmalog_node.config.role == RDMALOG_ROLE_BACKUP)
		return requested;
	return rdmalog_repl_effective(requested, in_sync, needed);
}

static const char *rdmalog_durability_name(u32 d)
{
	static const char *const names[] = {
		[RDMALOG_DURABLE_ASYNC] = "async",
		[RDMALOG_DURABLE_QUORUM] = "quorum",
		[RDMALOG_DURABLE_ALL] = "all",
	};

	return d < ARRAY_SIZE(names) ? names[d] : "?";
}

/*
 * Announce the durability in force (%RDMALOG_EVENT_DURABILITY) when it, or
 * the requested one, differs from what was last announced in this up
 * period; @log: say a change of the one in force in the kernel log too
 * (not right after UP, where replication has not started yet). Caller
 * holds config_mutex.
 */
static void rdmalog_node_durability_check(bool log)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	u32 eff, in_sync, needed;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (!rdmalog_node.up)
		return;
	eff = rdmalog_node_effective_durability(cfg->durability, &in_sync,
						&needed);
	if (eff == rdmalog_node.dur_sent &&
	    cfg->durability == rdmalog_node.dur_req_sent)
		return;
	if (log && eff != rdmalog_node.dur_sent)
		pr_info_ratelimited("node %u: durability in force: %s, requested %s (%u of %u backups in sync)\n",
				    cfg->node_id, rdmalog_durability_name(eff),
				    rdmalog_durability_name(cfg->durability),
				    in_sync, needed);
	rdmalog_node.dur_sent = eff;
	rdmalog_node.dur_req_sent = cfg->durability;
	rdmalog_netlink_notify_durability(cfg->node_id, cfg->durability, eff,
					  in_sync, needed);
}

static void rdmalog_node_dur_work(struct work_struct *work)
{
	mutex_lock(&rdmalog_node.config_mutex);
	rdmalog_node_durability_check(true);
	mutex_unlock(&rdmalog_node.config_mutex);
}

/* Replication: a backup joined or left. Any context. */
static void rdmalog_node_in_sync_changed(void)
{
	schedule_work(&rdmalog_node.dur_work);
}

/* Tell replication what changed. Caller holds config_mutex. */
static void rdmalog_node_repl_policy(void)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;

	if (rdmalog_node.up) {
		rdmalog_repl_set_policy(cfg->durability,
					rdmalog_node.npeers + 1,
					cfg->commit_timeout_ms);
		rdmalog_fwd_set_policy(cfg->role, cfg->commit_timeout_ms);
	}
}

/* The election counts the configured peers (elect.c). */
static void rdmalog_node_elect_members(void)
{
	u32 ids[RDMALOG_MAX_PEERS];
	struct rdmalog_peer *peer;
	u32 n = 0;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		if (n < ARRAY_SIZE(ids))
			ids[n++] = peer->node_id;
	rdmalog_elect_set_members(ids, n);
	/*
	 * A majority of the new membership is what a primary must have had
	 * before losing it counts: a peer just added has not connected.
	 */
	rdmalog_node.had_quorum = false;
	rdmalog_node.quorum_seen = jiffies;
}

static void rdmalog_peer_to_info(const struct rdmalog_peer *peer,
				 struct rdmalog_peer_info *info)
{
	memset(info, 0, sizeof(*info));
	info->node_id = peer->node_id;
	info->addr = peer->addr;
	info->state = RDMALOG_PEER_CONFIGURED;
	if (peer->conn)
		rdmalog_conn_get_info(peer->conn, info);
}

static struct rdmalog_peer *rdmalog_node_find_peer(u32 node_id)
{
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		if (peer->node_id == node_id)
			return peer;
	return NULL;
}

static struct rdmalog_peer *
rdmalog_node_find_peer_addr(const struct rdmalog_addr *addr)
{
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		if (rdmalog_addr_equal(&peer->addr, addr))
			return peer;
	return NULL;
}

/*
 * The election heard a primary of a later epoch lead our log: we lead
 * @epoch no more (elect.c, under its spinlock: only queue the work).
 */
static void rdmalog_node_deposed(u64 epoch)
{
	atomic64_set(&rdmalog_node.deposed_epoch, epoch);
	schedule_work(&rdmalog_node.step_down_work);
}

/*
 * Our primary, @from, hands the log over to us with its vote in
 * @vote_epoch (elect.c, CQ handler context: only queue the work).
 */
static void rdmalog_node_takeover(u32 from, u64 vote_epoch)
{
	atomic64_set(&rdmalog_node.takeover_epoch, vote_epoch);
	atomic_set(&rdmalog_node.takeover_from, from);
	queue_work(system_long_wq, &rdmalog_node.takeover_work);
}

/**
 * rdmalog_node_init() - set the node to its defaults
 *
 * Return: 0.
 */
int rdmalog_node_init(void)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;

	mutex_lock(&rdmalog_node.config_mutex);
	memset(cfg, 0, sizeof(*cfg));
	cfg->node_id = 0;
	cfg->cluster_id = 0;
	cfg->listen.port = RDMALOG_DEFAULT_PORT;
	cfg->role = RDMALOG_ROLE_PRIMARY;
	cfg->capacity = RDMALOG_DEFAULT_CAPACITY;
	cfg->max_record = RDMALOG_DEFAULT_MAX_RECORD;
	cfg->durability = RDMALOG_DURABLE_QUORUM;
	cfg->commit_timeout_ms = RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS;
	cfg->heartbeat_ms = RDMALOG_DEFAULT_HEARTBEAT_MS;
	cfg->peer_timeout_ms = RDMALOG_DEFAULT_PEER_TIMEOUT_MS;
	cfg->failover = RDMALOG_FAILOVER_AUTO;
	cfg->priority = 0;
	cfg->lead = true;
	rdmalog_node.epoch = 0;
	rdmalog_node.up = false;
	rdmalog_node.log = NULL;
	rdmalog_node.npeers = 0;
	atomic64_set(&rdmalog_node.deposed_epoch, 0);
	mutex_unlock(&rdmalog_node.config_mutex);
	rdmalog_elect_set_deposed(rdmalog_node_deposed);
	rdmalog_elect_set_takeover(rdmalog_node_takeover);
	return 0;
}

/*
 * Stop everything that serves the log, which stays as it is: the peer
 * connections are closed and released (this waits), then the election,
 * forwarding and replication of the up period stop.
 */
static void rdmalog_node_stop_serving(void)
{
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_conn_stop();
	rdmalog_elect_stop();
	rdmalog_fwd_stop();
	rdmalog_repl_stop();
	list_for_each_entry(peer, &rdmalog_node.peers, list) {
		rdmalog_conn_put(peer->conn);
		peer->conn = NULL;
	}
}

/*
 * End the current up period: every peer connection is closed and released
 * (this waits), no new descriptor gets the log, blocked and later calls on
 * open descriptors get -ENETDOWN, and the node's reference goes; the
 * memory goes with the last descriptor's.
 */
static void rdmalog_node_stop_log(void)
{
	struct rdmalog_log *log = rdmalog_node.log;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	/* Waiting appends fail at once; the connections go next. */
	rdmalog_log_shutdown(log);
	rdmalog_node_stop_serving();
	rdmalog_node.log = NULL;
	rdmalog_node.up = false;
	rdmalog_node.joining = false;
	rdmalog_log_put(log);
}

/* A peer's memory; its connection is gone (or never was). */
static void rdmalog_peer_free(struct rdmalog_peer *peer)
{
	kfree(peer);
	rdmalog_live_add(RDMALOG_STAT_LIVE_PEERS, -1);
}

/**
 * rdmalog_node_exit() - bring the log down if it is up and free the peers
 *
 * Called after the netlink family is unregistered (so no event is sent)
 * and after the character device is gone (so no descriptor is open).
 */
void rdmalog_node_exit(void)
{
	struct rdmalog_peer *peer, *tmp;

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up)
		rdmalog_node_stop_log();
	list_for_each_entry_safe(peer, tmp, &rdmalog_node.peers, list) {
		list_del(&peer->list);
		rdmalog_peer_free(peer);
	}
	rdmalog_node.npeers = 0;
	memzero_explicit(rdmalog_node.secret, sizeof(rdmalog_node.secret));
	rdmalog_node.secret_len = 0;
	mutex_unlock(&rdmalog_node.config_mutex);
	/* Queued by the endpoints' release; finds the node down. */
	cancel_work_sync(&rdmalog_node.dur_work);
	cancel_work_sync(&rdmalog_node.step_down_work);
	cancel_work_sync(&rdmalog_node.takeover_work);
	cancel_delayed_work_sync(&rdmalog_node.watch_work);
}

/**
 * rdmalog_node_get_config() - copy the current configuration
 * @cfg: filled in
 */
void rdmalog_node_get_config(struct rdmalog_node_config *cfg)
{
	mutex_lock(&rdmalog_node.config_mutex);
	*cfg = rdmalog_node.config;
	mutex_unlock(&rdmalog_node.config_mutex);
}

/* Whether @secret (@len bytes; @len < 0: none given) changes ours. */
static bool rdmalog_node_secret_changes(const u8 *secret, int len)
{
	if (len < 0)
		return false;
	return len != rdmalog_node.secret_len ||
	       crypto_memneq(secret, rdmalog_node.secret, len);
}

/* What may not change while the log is up. */
static int rdmalog_node_check_busy(const struct rdmalog_node_config *cfg,
				   const struct rdmalog_node_config *cur,
				   const u8 *secret, int secret_len,
				   struct netlink_ext_ack *extack)
{
	if (!rdmalog_node.up)
		return 0;
	if (rdmalog_node_secret_changes(secret, secret_len)) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the shared secret while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->node_id != cur->node_id) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the node id while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->cluster_id != cur->cluster_id) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the cluster id while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->listen.len != cur->listen.len ||
	    memcmp(cfg->listen.addr, cur->listen.addr, sizeof(cfg->listen.addr))) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the listen address while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->listen.port != cur->listen.port) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the port while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->capacity != cur->capacity) {
		NL_SET_ERR_MSG(extack,
			       "cannot change capacity while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->max_record != cur->max_record) {
		NL_SET_ERR_MSG(extack,
			       "cannot change max record while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	if (cfg->role != cur->role) {
		NL_SET_ERR_MSG(extack,
			       "cannot change the role while the log is up; run 'rdmalogctl node down' first");
		return -EBUSY;
	}
	return 0;
}

/* Identity against the peers: our id and address are not a peer's. */
static int rdmalog_node_check_peers(const struct rdmalog_node_config *cfg,
				    const struct rdmalog_node_config *cur,
				    struct netlink_ext_ack *extack)
{
	if (cfg->node_id != cur->node_id && cfg->node_id &&
	    rdmalog_node_find_peer(cfg->node_id)) {
		NL_SET_ERR_MSG(extack,
			       "node id is already a configured peer's; remove that peer first");
		return -EINVAL;
	}
	if (!rdmalog_addr_equal(&cfg->listen, &cur->listen) &&
	    rdmalog_node_find_peer_addr(&cfg->listen)) {
		NL_SET_ERR_MSG(extack,
			       "listen address and port are a configured peer's");
		return -EINVAL;
	}
	return 0;
}

/**
 * rdmalog_node_set_config() - replace the whole configuration
 * @cfg: the new configuration: the current one (rdmalog_node_get_config())
 *	with the settings to change overlaid (@cfg->auth is ignored)
 * @secret: the new shared secret, @secret_len bytes (0: none); with
 *	@secret_len < 0 the secret stays as it is
 * @secret_len: its length, at most %RDMALOG_MAX_SECRET, or -1
 * @extack: where to say why it failed; may be NULL
 *
 * Validates every setting and their combination, refuses to change the
 * identity, address or ring geometry while the log is up, then applies all
 * of it and sends %RDMALOG_EVENT_NODE_CHANGED and/or
 * %RDMALOG_EVENT_LOG_CHANGED for what actually changed.
 *
 * Return: 0, -EINVAL for an invalid setting, -EBUSY for a setting that
 * cannot change while up. Nothing changes on error.
 */
int rdmalog_node_set_config(const struct rdmalog_node_config *cfg,
			    const u8 *secret, int secret_len,
			    struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cur = &rdmalog_node.config;
	struct rdmalog_node_config new = *cfg;
	bool node_changed, log_changed, watch;
	int err;

	/* Compare and store addresses with their unused bytes zeroed. */
	if (new.listen.len < sizeof(new.listen.addr))
		memset(new.listen.addr + new.listen.len, 0,
		       sizeof(new.listen.addr) - new.listen.len);

	mutex_lock(&rdmalog_node.config_mutex);
	/* "Not while up" first: no point in discussing the value then. */
	err = rdmalog_node_check_busy(&new, cur, secret, secret_len, extack);
	if (err)
		goto out_unlock;
	err = rdmalog_config_check(&new, cur, extack);
	if (err)
		goto out_unlock;
	if (secret_len > RDMALOG_MAX_SECRET) {
		NL_SET_ERR_MSG(extack, "the shared secret is at most 64 bytes");
		err = -EINVAL;
		goto out_unlock;
	}
	err = rdmalog_node_check_peers(&new, cur, extack);
	if (err)
		goto out_unlock;

	node_changed = new.node_id != cur->node_id ||
		       new.cluster_id != cur->cluster_id ||
		       new.listen.len != cur->listen.len ||
		       memcmp(new.listen.addr, cur->listen.addr,
			      sizeof(new.listen.addr)) ||
		       new.listen.port != cur->listen.port ||
		       new.role != cur->role ||
		       new.heartbeat_ms != cur->heartbeat_ms ||
		       new.peer_timeout_ms != cur->peer_timeout_ms ||
		       new.failover != cur->failover ||
		       new.priority != cur->priority ||
		       new.lead != cur->lead;
	log_changed = new.capacity != cur->capacity ||
		      new.max_record != cur->max_record ||
		      new.durability != cur->durability ||
		      new.commit_timeout_ms != cur->commit_timeout_ms;
	if (secret_len >= 0) {
		memzero_explicit(rdmalog_node.secret,
				 sizeof(rdmalog_node.secret));
		memcpy(rdmalog_node.secret, secret, secret_len);
		rdmalog_node.secret_len = secret_len;
	}
	new.auth = rdmalog_node.secret_len > 0;
	node_changed |= new.auth != cur->auth;
	watch = new.failover != cur->failover || new.lead != cur->lead;
	*cur = new;
	if (rdmalog_node.up) {
		rdmalog_conn_set_timers(cur->heartbeat_ms, cur->peer_timeout_ms);
		rdmalog_conn_set_role(cur->role);
		rdmalog_node_repl_policy();
		rdmalog_elect_set_yield(cur->failover == RDMALOG_FAILOVER_AUTO);
		if (watch)
			rdmalog_node_watch();
	}

	if (node_changed)
		rdmalog_netlink_notify_node(RDMALOG_EVENT_NODE_CHANGED, cur,
					    rdmalog_node.epoch);
	if (log_changed)
		rdmalog_netlink_notify_node(RDMALOG_EVENT_LOG_CHANGED, cur,
					    rdmalog_node.epoch);
	rdmalog_node_durability_check(true);
out_unlock:
	mutex_unlock(&rdmalog_node.config_mutex);
	return err;
}

/**
 * rdmalog_node_peer_add() - configure a peer
 * @info: its node id, address and port (@info->state is ignored)
 * @extack: where to say why it failed; may be NULL
 *
 * Return: 0; -EINVAL for a malformed peer or our own id or address;
 * -EEXIST if its id or its address and port are a peer's already; -ENOSPC
 * past %RDMALOG_MAX_PEERS; -ENOMEM.
 */
int rdmalog_node_peer_add(const struct rdmalog_peer_info *info,
			  struct netlink_ext_ack *extack)
{
	struct rdmalog_peer_info added;
	struct rdmalog_peer *peer;
	struct rdmalog_addr addr;
	int err;

	if (!info->node_id || info->node_id > RDMALOG_MAX_NODE_ID) {
		NL_SET_ERR_MSG(extack, "peer node id must be 1 .. 255");
		return -EINVAL;
	}
	if (info->addr.len != 4 && info->addr.len != 16) {
		NL_SET_ERR_MSG(extack,
			       "peer address must be 4 (IPv4) or 16 (IPv6) bytes");
		return -EINVAL;
	}
	if (!info->addr.port) {
		NL_SET_ERR_MSG(extack, "peer port must be 1 .. 65535");
		return -EINVAL;
	}
	addr = info->addr;
	memset(addr.addr + addr.len, 0, sizeof(addr.addr) - addr.len);
	if (rdmalog_addr_is_any(&addr)) {
		NL_SET_ERR_MSG(extack,
			       "peer address must not be the wildcard address");
		return -EINVAL;
	}

	/* Allocated before locking; freed below if the peer is refused. */
	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return -ENOMEM;
	rdmalog_live_add(RDMALOG_STAT_LIVE_PEERS, 1);
	peer->node_id = info->node_id;
	peer->addr = addr;

	mutex_lock(&rdmalog_node.config_mutex);
	if (peer->node_id == rdmalog_node.config.node_id) {
		NL_SET_ERR_MSG(extack, "a peer cannot have this node's id");
		err = -EINVAL;
		goto out_free;
	}
	if (rdmalog_addr_equal(&peer->addr, &rdmalog_node.config.listen)) {
		NL_SET_ERR_MSG(extack,
			       "peer address and port are this node's listen address");
		err = -EINVAL;
		goto out_free;
	}
	if (rdmalog_node_find_peer(peer->node_id)) {
		NL_SET_ERR_MSG(extack, "a peer with this node id exists");
		err = -EEXIST;
		goto out_free;
	}
	if (rdmalog_node_find_peer_addr(&peer->addr)) {
		NL_SET_ERR_MSG(extack,
			       "a peer with this address and port exists");
		err = -EEXIST;
		goto out_free;
	}
	if (rdmalog_node.npeers >= RDMALOG_MAX_PEERS) {
		NL_SET_ERR_MSG(extack, "too many peers (at most 15)");
		err = -ENOSPC;
		goto out_free;
	}
	if (rdmalog_node.up) {
		/* Our reference, dropped when the log goes down. */
		peer->conn = rdmalog_conn_create(peer->node_id, &peer->addr);
		if (!peer->conn) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	list_add_tail(&peer->list, &rdmalog_node.peers);
	rdmalog_node.npeers++;
	rdmalog_node_elect_members();
	rdmalog_node_repl_policy();
	rdmalog_peer_to_info(peer, &added);
	if (peer->conn)
		added.state = RDMALOG_PEER_CONNECTING;
	rdmalog_netlink_notify_peer(RDMALOG_EVENT_PEER_ADDED,
				    rdmalog_node.config.node_id, &added);
	rdmalog_node_durability_check(true);
	/* After PEER_ADDED, so that its state events come later. */
	if (peer->conn)
		rdmalog_conn_activate(peer->conn);
	mutex_unlock(&rdmalog_node.config_mutex);
	return 0;

out_free:
	mutex_unlock(&rdmalog_node.config_mutex);
	rdmalog_peer_free(peer);
	return err;
}

/**
 * rdmalog_node_peer_del() - forget a peer
 * @node_id: its node id
 * @extack: where to say why it failed; may be NULL
 *
 * Return: 0, or -ENOENT if no peer has @node_id.
 */
int rdmalog_node_peer_del(u32 node_id, struct netlink_ext_ack *extack)
{
	struct rdmalog_peer_info removed;
	struct rdmalog_peer *peer;

	mutex_lock(&rdmalog_node.config_mutex);
	peer = rdmalog_node_find_peer(node_id);
	if (!peer) {
		mutex_unlock(&rdmalog_node.config_mutex);
		NL_SET_ERR_MSG(extack, "no peer with this node id");
		return -ENOENT;
	}
	list_del(&peer->list);
	rdmalog_node.npeers--;
	rdmalog_node_elect_members();
	rdmalog_node_repl_policy();
	if (peer->conn) {
		/* Waits until the connection is gone. */
		rdmalog_conn_remove(peer->conn);
		rdmalog_conn_put(peer->conn);
		peer->conn = NULL;
	}
	rdmalog_peer_to_info(peer, &removed);
	rdmalog_netlink_notify_peer(RDMALOG_EVENT_PEER_REMOVED,
				    rdmalog_node.config.node_id, &removed);
	rdmalog_node_durability_check(true);
	mutex_unlock(&rdmalog_node.config_mutex);
	rdmalog_peer_free(peer);
	return 0;
}

/**
 * rdmalog_node_peer_get() - a snapshot of one peer
 * @node_id: its node id
 * @info: filled in
 *
 * Return: 0, or -ENOENT if no peer has @node_id.
 */
int rdmalog_node_peer_get(u32 node_id, struct rdmalog_peer_info *info)
{
	struct rdmalog_peer *peer;
	int err = -ENOENT;

	mutex_lock(&rdmalog_node.config_mutex);
	peer = rdmalog_node_find_peer(node_id);
	if (peer) {
		rdmalog_peer_to_info(peer, info);
		err = 0;
	}
	mutex_unlock(&rdmalog_node.config_mutex);
	return err;
}

static u32 rdmalog_node_peers_locked(struct rdmalog_peer_info *infos, u32 max)
{
	struct rdmalog_peer *peer;
	u32 n = 0;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list) {
		if (n == max)
			break;
		rdmalog_peer_to_info(peer, &infos[n++]);
	}
	return n;
}

/*
 * The connections' events (&struct rdmalog_conn_events): announced on
 * netlink as they are. A connection's lock may be held: no config_mutex.
 */
static void rdmalog_node_peer_event(u32 node_id, enum rdmalog_event event,
				    const struct rdmalog_peer_info *info,
				    u64 first_lsn)
{
	if (event == RDMALOG_EVENT_LOG_RESET)
		rdmalog_netlink_notify_log_reset(node_id, first_lsn, info);
	else
		rdmalog_netlink_notify_peer(event, node_id, info);
}

static const struct rdmalog_conn_events rdmalog_node_conn_events = {
	.peer = rdmalog_node_peer_event,
};

/**
 * rdmalog_node_peers() - a consistent snapshot of all peers
 * @infos: array of @max entries, filled in the order peers were added
 * @max: its size; %RDMALOG_MAX_PEERS holds them all
 *
 * Return: the number of entries filled.
 */
u32 rdmalog_node_peers(struct rdmalog_peer_info *infos, u32 max)
{
	u32 n;

	mutex_lock(&rdmalog_node.config_mutex);
	n = rdmalog_node_peers_locked(infos, max);
	mutex_unlock(&rdmalog_node.config_mutex);
	return n;
}

/* Start the connections of an up period of @log. */
static int rdmalog_node_start_conns(struct rdmalog_log *log,
				    struct netlink_ext_ack *extack)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_conn_params cp = {
		.events = &rdmalog_node_conn_events,
		.local = {
			.node_id = cfg->node_id,
			.cluster_id = cfg->cluster_id,
			.listen = cfg->listen,
			.capacity = cfg->capacity,
			.max_record = cfg->max_record,
			.epoch = rdmalog_node.epoch,
		},
		.secret = rdmalog_node.secret,
		.secret_len = rdmalog_node.secret_len,
		.role = cfg->role,
		.heartbeat_ms = cfg->heartbeat_ms,
		.peer_timeout_ms = cfg->peer_timeout_ms,
		.log = log,
	};
	struct rdmalog_peer *peer;
	int err;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_catchup_clear_note();
	err = rdmalog_conn_start(&cp);
	if (err) {
		NL_SET_ERR_MSG(extack, "cannot start the peer connections");
		return err;
	}
	list_for_each_entry(peer, &rdmalog_node.peers, list) {
		/* Our reference, dropped by rdmalog_node_stop_log(). */
		peer->conn = rdmalog_conn_create(peer->node_id, &peer->addr);
		if (!peer->conn) {
			NL_SET_ERR_MSG(extack,
				       "out of memory for the peer connections");
			err = -ENOMEM;
			goto err_put;
		}
	}
	return 0;

err_put:
	list_for_each_entry(peer, &rdmalog_node.peers, list) {
		rdmalog_conn_put(peer->conn);
		peer->conn = NULL;
	}
	rdmalog_conn_stop();
	return err;
}

/*
 * Start serving @log in the configured role: replication, forwarding and
 * the election, then the connections (not yet activated). On error
 * nothing is left started.
 */
static int rdmalog_node_start_serving(struct rdmalog_log *log,
				      struct netlink_ext_ack *extack)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_repl_params rp = {};
	struct rdmalog_fwd_params fp = {};
	int err;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rp.log = log;
	rp.role = cfg->role;
	rp.durability = cfg->durability;
	rp.nr_nodes = rdmalog_node.npeers + 1;
	rp.commit_timeout_ms = cfg->commit_timeout_ms;
	rp.in_sync_changed = rdmalog_node_in_sync_changed;
	rdmalog_repl_start(&rp);
	fp.log = log;
	fp.role = cfg->role;
	fp.commit_timeout_ms = cfg->commit_timeout_ms;
	rdmalog_fwd_start(&fp);
	/* Fencing waits for the old primary's queue pair a peer timeout. */
	rdmalog_elect_set_yield(cfg->failover == RDMALOG_FAILOVER_AUTO);
	rdmalog_elect_start(log, cfg->node_id, cfg->role, cfg->peer_timeout_ms);
	err = rdmalog_node_start_conns(log, extack);
	if (err) {
		rdmalog_elect_stop();
		rdmalog_fwd_stop();
		rdmalog_repl_stop();
	}
	return err;
}

/*
 * Whether this node watches: with failover auto, a backup that may lead
 * for the loss of its primary, a primary for the loss of its majority;
 * and a configured primary joining (rdmalog_node_watch_join()).
 */
static bool rdmalog_node_watches(void)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;

	if (!rdmalog_node.up)
		return false;
	/* Joining goes on to its end whatever failover is set to now. */
	if (rdmalog_node.joining)
		return true;
	if (cfg->failover != RDMALOG_FAILOVER_AUTO)
		return false;
	return cfg->role == RDMALOG_ROLE_PRIMARY || cfg->lead;
}

/* Start watching, if it should and does not already. */
static void rdmalog_node_watch(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (!rdmalog_node_watches())
		return;
	rdmalog_node.primary_seen = jiffies;
	rdmalog_node.quorum_seen = jiffies;
	rdmalog_node.had_quorum = false;
	queue_delayed_work(system_long_wq, &rdmalog_node.watch_work,
			   msecs_to_jiffies(rdmalog_node.config.heartbeat_ms));
}

/*
 * How long a backup waits, after it last saw its primary, before it
 * stands: two heartbeats, and four more for each configured node of a
 * lower id (any of which may be standing first), so that candidates
 * rarely collide. Its primary is declared lost by the transport after
 * the peer timeout of silence (or at once when it closes).
 */
static unsigned long rdmalog_node_stand_delay(void)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_peer *peer;
	u32 rank = 0;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		if (peer->node_id < cfg->node_id)
			rank++;
	return msecs_to_jiffies(cfg->heartbeat_ms * (2 + 4 * rank));
}

/* A majority of the configured nodes is connected, this one counted. */
static bool rdmalog_node_reaches_majority(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	return rdmalog_conn_nr_live() + 1 >= (rdmalog_node.npeers + 1) / 2 + 1;
}

/*
 * A primary with failover auto must not lead into a partition: once it
 * had a majority of the configured nodes connected (itself counted) and
 * then has not had one for a peer timeout, it steps down, and its writers are told
 * (-ENOTCONN for the records waiting, forwarding for later ones). The
 * side of the partition with the majority elects a primary meanwhile.
 */
static void rdmalog_node_watch_quorum(unsigned long now)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (rdmalog_node_reaches_majority()) {
		rdmalog_node.quorum_seen = now;
		rdmalog_node.had_quorum = true;
		return;
	}
	/* Coming up, its backups may not be there yet. */
	if (!rdmalog_node.had_quorum ||
	    time_before(now, rdmalog_node.quorum_seen +
			msecs_to_jiffies(rdmalog_node.config.peer_timeout_ms)))
		return;
	rdmalog_node_step_down(RDMALOG_CHANGE_CUT_OFF,
			       "cut off from a majority of the configured nodes for the peer timeout");
}

/*
 * The configured primary came up as a backup (rdmalog_node_up()): a peer
 * that leads, or serves or follows a log, means the cluster has a log
 * already, and it joins it as a backup for good (a primary brings it the
 * log; with none, the backups that hold it elect one). When every peer
 * answered without a log, or after two peer timeouts with no peer
 * holding one, it leads a new log as the configured primary does with
 * failover manual. It never leads an empty log while a peer it reaches
 * holds one.
 */
static void rdmalog_node_watch_join(unsigned long now)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_node_change *ch = &rdmalog_node.change;
	struct rdmalog_conn_census c;
	struct rdmalog_elect_info ei;
	u64 epoch;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_conn_census(&c);
	rdmalog_elect_get_info(&ei);
	epoch = max3(rdmalog_node.epoch, rdmalog_conn_epoch_seen(), ei.epoch);
	if (c.with_log || rdmalog_conn_has_primary()) {
		rdmalog_node.joining = false;
		pr_info("node %u: a peer %s (epoch %llu): joins it as a backup\n",
			cfg->node_id, c.primaries ? "leads the log" :
			"holds a log", epoch);
		memset(ch, 0, sizeof(*ch));
		ch->why = RDMALOG_CHANGE_JOINED;
		ch->epoch = epoch;
		ch->done_ns = ktime_get_boottime_ns();
		return;
	}
	if (c.heard < rdmalog_node.npeers &&
	    time_before(now, rdmalog_node.join_until))
		return;
	pr_info("node %u: %u of %u peers answered, none holds a log: leads a new one\n",
		cfg->node_id, c.heard, rdmalog_node.npeers);
	rdmalog_node.joining = false;
	/* A log of no records: nothing to reconcile, no epoch-start record. */
	rdmalog_node_lead(epoch + 1, NULL);
}

/*
 * A backup with failover auto: once it had a primary in this up period
 * and has seen none for its stand delay (counted again from any vote it
 * granted: the winner needs a moment to connect), it stands for election
 * as "node promote" does. Losing restarts the count.
 */
static void rdmalog_node_watch_work(struct work_struct *work)
{
	unsigned long now = jiffies, granted, silent = 0;
	struct rdmalog_conn_census census;
	bool stand = false;
	u32 id = 0;
	int err;

	mutex_lock(&rdmalog_node.config_mutex);
	if (!rdmalog_node_watches())
		goto out_unlock;
	if (rdmalog_node.joining) {
		rdmalog_node_watch_join(now);
		goto out_requeue;
	}
	if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		rdmalog_node_watch_quorum(now);
		goto out_requeue;
	}
	rdmalog_conn_census(&census);
	if (rdmalog_conn_has_primary()) {
		rdmalog_node.primary_seen = now;
		rdmalog_node.had_primary = true;
	} else if (census.primaries || !rdmalog_node_reaches_majority()) {
		/*
		 * A connected peer says it leads (it is about to take our
		 * ring), or we are cut off from a majority: a node that cannot
		 * reach one cannot win, and its candidacy would fence it
		 * against the primary the others keep (or elect); one that
		 * just came back must first see whether they have one. The
		 * count starts again from here.
		 */
		rdmalog_node.primary_seen = now;
	} else {
		granted = rdmalog_elect_granted_at();
		if (granted && time_after(granted, rdmalog_node.primary_seen))
			rdmalog_node.primary_seen = granted;
		silent = now - rdmalog_node.primary_seen;
		stand = rdmalog_node.had_primary &&
			silent >= rdmalog_node_stand_delay();
	}
	id = rdmalog_node.config.node_id;
out_requeue:
	/* Not after a step-down that left the log down. */
	if (rdmalog_node_watches())
		queue_delayed_work(system_long_wq, &rdmalog_node.watch_work,
				   msecs_to_jiffies(rdmalog_node.config.heartbeat_ms));
out_unlock:
	mutex_unlock(&rdmalog_node.config_mutex);
	if (!stand)
		return;
	pr_info("node %u: no primary for %u ms: stands for election\n", id,
		jiffies_to_msecs(silent));
	err = rdmalog_node_stand(RDMALOG_CHANGE_STOOD, jiffies_to_msecs(silent),
				 0, 0, NULL);
	if (err) {
		pr_info("node %u: did not become the primary: %d\n", id, err);
		mutex_lock(&rdmalog_node.config_mutex);
		rdmalog_node.primary_seen = jiffies;
		mutex_unlock(&rdmalog_node.config_mutex);
	}
}

/*
 * After the event that starts serving (UP, ROLE), which implies the
 * requested durability and every peer CONNECTING: the durability in
 * force is announced if it is not that one, and the peers connect.
 */
static void rdmalog_node_serve(void)
{
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	/* UP implies the requested durability; say at once if it is not. */
	rdmalog_node.dur_sent = rdmalog_node.config.durability;
	rdmalog_node.dur_req_sent = rdmalog_node.config.durability;
	rdmalog_node_durability_check(false);
	/*
	 * After UP, which implies that every peer is CONNECTING (and DOWN
	 * that every peer is CONFIGURED again): PEER_STATE events report the
	 * changes in between.
	 */
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		rdmalog_conn_activate(peer->conn);
	rdmalog_node.had_primary = false;
	rdmalog_node_watch();
}

/**
 * rdmalog_node_up() - allocate the ring and start serving
 * @extack: where to say why it failed; may be NULL
 *
 * Also starts listening for and connecting to the peers (in the
 * background: the peers' states tell how that goes).
 *
 * Return: 0; -EALREADY if up; -EINVAL if the node id is unset; the error
 * of rdmalog_log_create() (-ENOMEM) or of starting the connections
 * otherwise.
 */
int rdmalog_node_up(struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log_params params = {};
	struct rdmalog_log *log;
	bool join = false;
	int err = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is already up");
		err = -EALREADY;
		goto out_unlock;
	}
	if (!rdmalog_node.config.node_id) {
		NL_SET_ERR_MSG(extack, "set the node id first");
		err = -EINVAL;
		goto out_unlock;
	}

	params.capacity = cfg->capacity;
	params.max_record = cfg->max_record;
	/*
	 * With failover auto the configured primary only leads first: a
	 * peer may hold the log already (this node rebooted, or its module
	 * was reloaded, and another leads or is being elected). It comes up
	 * as a backup and leads only once it finds no log among its peers
	 * (rdmalog_node_watch_join()).
	 */
	if (cfg->role == RDMALOG_ROLE_PRIMARY &&
	    cfg->failover == RDMALOG_FAILOVER_AUTO && rdmalog_node.npeers) {
		cfg->role = RDMALOG_ROLE_BACKUP;
		join = true;
	}
	params.backup = cfg->role == RDMALOG_ROLE_BACKUP;
	if (cfg->role == RDMALOG_ROLE_PRIMARY) {
		/*
		 * A new log: a new identity, and an epoch above every one
		 * this node used or heard of. A backup's log takes both from
		 * the first primary that gives it records.
		 */
		struct rdmalog_elect_info ei;

		rdmalog_elect_get_info(&ei);
		rdmalog_node.epoch = max3(rdmalog_node.epoch,
					  rdmalog_conn_epoch_seen(),
					  ei.epoch) + 1;
		params.epoch = rdmalog_node.epoch;
		rdmalog_elect_note_epoch(params.epoch);
		params.id = get_random_u64() ?: 1;
	}
	log = rdmalog_log_create(&params);
	if (IS_ERR(log)) {
		err = PTR_ERR(log);
		if (err == -ENOMEM)
			NL_SET_ERR_MSG(extack,
				       "cannot allocate the ring; try a smaller capacity");
		else
			NL_SET_ERR_MSG(extack,
				       "cannot create the log with these settings");
		goto out_unlock;
	}
	err = rdmalog_node_start_serving(log, extack);
	if (err) {
		rdmalog_log_put(log);
		goto out_unlock;
	}

	/* The node's reference, dropped by rdmalog_node_stop_log(). */
	rdmalog_node.log = log;
	rdmalog_node.up = true;
	rdmalog_node.trim_announced = 1;
	if (join) {
		rdmalog_node.joining = true;
		rdmalog_node.join_until = jiffies +
			msecs_to_jiffies(2 * cfg->peer_timeout_ms);
		pr_info("node %u: the configured primary: looks for a log among its peers before it leads\n",
			cfg->node_id);
	}
	pr_info_ratelimited("node %u up: capacity %llu, max record %u, epoch %llu\n",
			    rdmalog_node.config.node_id,
			    rdmalog_node.config.capacity,
			    rdmalog_node.config.max_record, rdmalog_node.epoch);
	rdmalog_netlink_notify_node(RDMALOG_EVENT_UP, &rdmalog_node.config,
				    rdmalog_node.epoch);
	rdmalog_node_serve();
out_unlock:
	if (join && err)
		cfg->role = RDMALOG_ROLE_PRIMARY;
	mutex_unlock(&rdmalog_node.config_mutex);
	return err;
}

/**
 * rdmalog_node_down() - stop serving and drop the node's log
 * @extack: where to say why it failed; may be NULL
 *
 * Descriptors opened on the log keep their references and get -ENETDOWN.
 *
 * Return: 0, or -EALREADY if down.
 */
int rdmalog_node_down(struct netlink_ext_ack *extack)
{
	int err = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	if (!rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is already down");
		err = -EALREADY;
		goto out_unlock;
	}
	rdmalog_node_stop_log();
	pr_info_ratelimited("node %u down\n", rdmalog_node.config.node_id);
	rdmalog_netlink_notify_node(RDMALOG_EVENT_DOWN, &rdmalog_node.config,
				    rdmalog_node.epoch);
out_unlock:
	mutex_unlock(&rdmalog_node.config_mutex);
	return err;
}

/*
 * A change of role stopped serving the log and could not start again
 * (out of memory): nothing serves it, so it goes down as by "node down".
 */
static void rdmalog_node_drop_log(void)
{
	struct rdmalog_log *log = rdmalog_node.log;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	pr_warn("node %u: cannot serve its log in its new role: down\n",
		rdmalog_node.config.node_id);
	rdmalog_log_shutdown(log);
	rdmalog_node.log = NULL;
	rdmalog_node.up = false;
	rdmalog_log_put(log);
	rdmalog_netlink_notify_node(RDMALOG_EVENT_DOWN, &rdmalog_node.config,
				    rdmalog_node.epoch);
}

/*
 * The primary steps down (@why: for the kernel log) and serves the same
 * log as a backup. Its uncommitted records go (their appends fail with
 * -ENOTCONN: a new primary may commit them); its committed ones stay, and
 * the primary that leads next judges it by them (it joins, or catches
 * up). As it led, it counts as having had a primary: with failover auto
 * it stands again if none appears.
 */
static void rdmalog_node_step_down(u32 kind, const char *why)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log *log = rdmalog_node.log;
	u64 n;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node_stop_serving();
	n = rdmalog_log_step_down(log);
	cfg->role = RDMALOG_ROLE_BACKUP;
	if (rdmalog_node_start_serving(log, NULL)) {
		rdmalog_node_drop_log();
		return;
	}
	pr_info("node %u: %s: steps down from epoch %llu to a backup, %llu uncommitted record%s removed\n",
		cfg->node_id, why, rdmalog_node.epoch, n, n == 1 ? "" : "s");
	memset(&rdmalog_node.change, 0, sizeof(rdmalog_node.change));
	rdmalog_node.change.why = kind;
	rdmalog_node.change.epoch = rdmalog_node.epoch;
	rdmalog_node.change.done_ns = ktime_get_boottime_ns();
	rdmalog_netlink_notify_node(RDMALOG_EVENT_ROLE, cfg,
				    rdmalog_node.epoch);
	rdmalog_node_serve();
	rdmalog_node.had_primary = true;
}

/*
 * We were the primary of an epoch a later primary of our log deposed
 * (rdmalog_node_deposed()): if we still lead it, step down.
 */
static void rdmalog_node_step_down_work(struct work_struct *work)
{
	u64 epoch = atomic64_read(&rdmalog_node.deposed_epoch);

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up &&
	    rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY &&
	    rdmalog_node.epoch == epoch) {
		if (rdmalog_node.handing_over)
			rdmalog_node_step_down(RDMALOG_CHANGE_HANDED_OVER,
					       "handed the log over");
		else
			rdmalog_node_step_down(RDMALOG_CHANGE_DEPOSED,
					       "a later epoch leads its log, or is being elected");
	}
	mutex_unlock(&rdmalog_node.config_mutex);
}

/*
 * A backup won the election of @epoch: it leads now, with the log it
 * holds. Everything that served it as a backup stops (the log is not
 * shut down: open descriptors keep it), the records it holds beyond its
 * commit point are published uncommitted, and it serves as the primary
 * of @epoch. If the log cannot lead (a primary of a later epoch reached
 * it meanwhile), it serves on as a backup.
 */
static int rdmalog_node_lead(u64 epoch, struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log *log = rdmalog_node.log;
	struct rdmalog_log_held held;
	int err, err2;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node_stop_serving();
	err = rdmalog_log_lead(log, epoch, get_random_u64() ?: 1, &held);
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "a primary of a later epoch took this node's log meanwhile");
	} else {
		cfg->role = RDMALOG_ROLE_PRIMARY;
		rdmalog_node.epoch = epoch;
		rdmalog_elect_note_epoch(epoch);
	}
	err2 = rdmalog_node_start_serving(log, err ? NULL : extack);
	if (err2) {
		rdmalog_node_drop_log();
		return err2;
	}
	if (!err) {
		pr_info("node %u: leads epoch %llu from LSN %llu\n",
			cfg->node_id, epoch, held.lsn + 1);
		rdmalog_netlink_notify_node(RDMALOG_EVENT_ROLE, cfg, epoch);
	}
	rdmalog_node_serve();
	return err;
}

/*
 * rdmalog_node_stand() - stand for election and lead on a win
 * @why: &enum rdmalog_change: PROMOTED (the operator), STOOD (the watch),
 *	TOOK_OVER (its primary handed the log over)
 * @detect_ms: STOOD: how long ago it lost its primary's connection
 * @from: TOOK_OVER: that primary, whose vote in @from_epoch counts
 * @from_epoch: see @from
 * @extack: where to say why it failed; may be NULL
 *
 * The election runs without config_mutex (the node's events and the
 * device's GET_STATE go on; netlink commands wait, genetlink runs one at
 * a time); the change of role takes it, if the up period it stood in is
 * still on. Returns once the epoch-start record is committed.
 *
 * Return: 0; -ENETDOWN (down, or went down meanwhile); -EALREADY (the
 * primary); -EPERM (configured not to lead); those of
 * rdmalog_elect_stand(); -ESTALE (won, but a primary of a later epoch
 * took the log meanwhile: it stays a backup); after the change of role,
 * those of rdmalog_log_append_epoch_start() (-ETIMEDOUT: it leads, but
 * its epoch-start record was not committed within the commit timeout).
 */
static int rdmalog_node_stand(u32 why, u32 detect_ms, u32 from,
			      u64 from_epoch, struct netlink_ext_ack *extack)
{
	u32 durability = 0, in_sync, needed, id, ms, pre_ms = 0;
	struct rdmalog_elect_result res;
	unsigned long wait = jiffies;
	struct rdmalog_log *log;
	ktime_t t_won;
	int err = 0;
	u64 lsn;

	mutex_lock(&rdmalog_node.config_mutex);
	if (!rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is down");
		err = -ENETDOWN;
	} else if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "this node is the primary");
		err = -EALREADY;
	} else if (!rdmalog_node.config.lead) {
		NL_SET_ERR_MSG(extack, "this node is configured not to lead");
		err = -EPERM;
	}
	log = rdmalog_node.log;
	id = rdmalog_node.config.node_id;
	if (!err)
		rdmalog_log_get(log);
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		return err;

	/*
	 * On its own, it first asks whether it would win: a node that only
	 * lost touch with a primary the others still follow changes nothing.
	 * The operator's promote deposes a live primary on purpose.
	 */
	if (why == RDMALOG_CHANGE_STOOD) {
		err = rdmalog_elect_stand(&res, true, 0, 0);
		pre_ms = res.elect_ms;
	}
	if (!err) {
		err = rdmalog_elect_stand(&res, false, from, from_epoch);
		res.elect_ms += pre_ms;
	}
	if (err) {
		/* Static text, as NL_SET_ERR_MSG() sets (it takes literals). */
		if (extack && res.msg)
			extack->_msg = res.msg;
		goto out_put;
	}
	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.log != log) {
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = -ENETDOWN;
	} else if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "this node is the primary");
		err = -EALREADY;
	} else {
		err = rdmalog_node_lead(res.epoch, extack);
		if (err == -EINVAL)
			err = -ESTALE;
	}
	if (!err) {
		struct rdmalog_node_change *ch = &rdmalog_node.change;

		ch->why = why;
		ch->epoch = res.epoch;
		ch->detect_ms = detect_ms;
		ch->elect_ms = res.elect_ms;
		ch->fence_ms = res.fence_ms;
		ch->reconcile_ms = 0;
		ch->done_ns = ktime_get_boottime_ns();
	}
	t_won = ktime_get();
	durability = rdmalog_node.config.durability;
	wait = jiffies + msecs_to_jiffies(rdmalog_node.config.peer_timeout_ms);
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		goto out_put;
	/*
	 * The backups reconnect to their new primary: give them a peer
	 * timeout to join before the record's commit timeout runs.
	 */
	while (rdmalog_repl_effective(durability, &in_sync, &needed) !=
	       durability && time_before(jiffies, wait) &&
	       !rdmalog_log_is_dead(log))
		msleep(20);
	/*
	 * A ring too full for the record waits for a trim; but with no
	 * adopted record waiting for its commit there is nothing to
	 * reconcile, and the new primary leads without one (appends wait for
	 * the trim as they would anyway).
	 */
	err = rdmalog_log_append_epoch_start(log, true, &lsn);
	if (err == -EAGAIN && !rdmalog_log_adopted_pending(log)) {
		pr_info("node %u: epoch %llu: no room in the ring for an epoch-start record, and nothing to reconcile: leads without one\n",
			id, res.epoch);
		err = 0;
		lsn = 0;
	} else if (err == -EAGAIN) {
		err = rdmalog_log_append_epoch_start(log, false, &lsn);
	}
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "it leads, but its epoch-start record was not committed");
		goto out_put;
	}
	ms = ktime_ms_delta(ktime_get(), t_won);
	if (lsn)
		pr_info("node %u: epoch %llu: its first record, LSN %llu, is committed: election %u ms (fencing %u ms), reconciliation %u ms\n",
			id, res.epoch, lsn, res.elect_ms, res.fence_ms, ms);
	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.log == log && rdmalog_node.change.epoch == res.epoch) {
		rdmalog_node.change.reconcile_ms = ms;
		rdmalog_node.change.done_ns = ktime_get_boottime_ns();
	}
	mutex_unlock(&rdmalog_node.config_mutex);
out_put:
	rdmalog_log_put(log);
	return err;
}

int rdmalog_node_promote(struct netlink_ext_ack *extack)
{
	return rdmalog_node_stand(RDMALOG_CHANGE_PROMOTED, 0, 0, 0, extack);
}

/* Our primary handed the log over (rdmalog_node_takeover()): stand. */
static void rdmalog_node_takeover_work(struct work_struct *work)
{
	u64 epoch = atomic64_read(&rdmalog_node.takeover_epoch);
	u32 from = atomic_read(&rdmalog_node.takeover_from);
	int err;

	pr_info("node %u: node %u hands the log over: stands in epoch %llu\n",
		READ_ONCE(rdmalog_node.config.node_id), from, epoch);
	err = rdmalog_node_stand(RDMALOG_CHANGE_TOOK_OVER, 0, from, epoch,
				 NULL);
	if (err)
		pr_info("node %u: did not take over from node %u: %d\n",
			READ_ONCE(rdmalog_node.config.node_id), from, err);
}

/* The switchover's wait for the hand-over: how it stands now. */
static int rdmalog_node_handover_state(struct rdmalog_log *log,
				       struct rdmalog_peer *target,
				       u64 *next_lsn)
{
	struct rdmalog_peer_info pi = {};
	struct rdmalog_log_state st;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (rdmalog_node.log != log)
		return -ENETDOWN;
	if (rdmalog_node.config.role != RDMALOG_ROLE_PRIMARY)
		return 1;	/* stepped down: handed over */
	rdmalog_log_get_state(log, &st);
	*next_lsn = st.next_lsn;
	rdmalog_conn_get_info(target->conn, &pi);
	if (!pi.repl.joined)
		return -ENOTCONN;
	/* Every record committed, and held by the target. */
	return st.commit_lsn == st.next_lsn && pi.repl.held_lsn >= st.next_lsn ?
	       0 : -EINPROGRESS;
}

/**
 * rdmalog_node_switchover() - hand the log over to a backup (the primary)
 * @target: the backup's node id
 * @extack: where to say why it failed; may be NULL
 *
 * Planned maintenance: this primary pauses its appends (writers wait; a
 * non-blocking one gets -EAGAIN), waits until every record is committed
 * and held by @target, votes for @target in the next epoch and sends it
 * a TAKEOVER; @target stands in that epoch with the vote counted, fences
 * us, wins and leads, and we step down once we hear of it. Our paused
 * writers then fail over to forwarding (node.c's append), so they see a
 * pause, not an error. Sleeps; without config_mutex while it waits.
 *
 * Return: 0 once this node stepped down; -ENETDOWN (down, or went down);
 * -EINVAL (not the primary, or @target is this node); -ENOENT (@target
 * is not a configured peer); -ENOTCONN (@target does not replicate from
 * this node); -ETIMEDOUT (@target did not hold every record within the
 * commit timeout, or did not take over within three peer timeouts: the
 * appends resume here); those of rdmalog_elect_hand_over().
 */
int rdmalog_node_switchover(u32 target, struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	unsigned long deadline, start = jiffies;
	struct rdmalog_peer *peer = NULL, *p;
	u32 drain_ms = 0, id;
	struct rdmalog_log *log;
	u64 next = 0, epoch;
	int state, err = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	list_for_each_entry(p, &rdmalog_node.peers, list)
		if (p->node_id == target)
			peer = p;
	if (!rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is down");
		err = -ENETDOWN;
	} else if (cfg->role != RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "only the primary hands the log over");
		err = -EINVAL;
	} else if (target == cfg->node_id) {
		NL_SET_ERR_MSG(extack, "this node is the primary already");
		err = -EINVAL;
	} else if (!peer) {
		NL_SET_ERR_MSG(extack, "no such peer");
		err = -ENOENT;
	} else if (rdmalog_node.handing_over) {
		NL_SET_ERR_MSG(extack, "a switchover is on already");
		err = -EBUSY;
	}
	if (err) {
		mutex_unlock(&rdmalog_node.config_mutex);
		return err;
	}
	log = rdmalog_node.log;
	id = cfg->node_id;
	rdmalog_log_get(log);
	rdmalog_node.handing_over = true;
	rdmalog_log_pause(log, true, false);
	deadline = jiffies + msecs_to_jiffies(cfg->commit_timeout_ms);
	pr_info("node %u: switchover to node %u: appends paused\n", id, target);

	/* Drain: the peers (and @peer) stay, netlink commands wait for us. */
	for (;;) {
		state = rdmalog_node_handover_state(log, peer, &next);
		if (state != -EINPROGRESS || time_after(jiffies, deadline))
			break;
		mutex_unlock(&rdmalog_node.config_mutex);
		usleep_range(2000, 5000);
		mutex_lock(&rdmalog_node.config_mutex);
	}
	if (state == -EINPROGRESS) {
		NL_SET_ERR_MSG(extack,
			       "the node did not hold every record within the commit timeout");
		err = -ETIMEDOUT;
	} else if (state == -ENOTCONN) {
		NL_SET_ERR_MSG(extack, "the node does not replicate from this one");
		err = -ENOTCONN;
	} else if (state == 1) {
		NL_SET_ERR_MSG(extack, "this node stepped down meanwhile");
		err = -EINVAL;
	} else if (state) {
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = state;
	}
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		goto out_resume;
	drain_ms = jiffies_to_msecs(jiffies - start);

	/*
	 * From here its writers and the FWDs it serves are refused as by a
	 * primary that stepped down: they go to the next primary, and the
	 * backups forward nothing more to this one before it closes.
	 */
	rdmalog_log_pause(log, true, true);
	err = rdmalog_elect_hand_over(target, next, &epoch);
	if (err) {
		NL_SET_ERR_MSG(extack, "could not hand the log over to the node");
		goto out_resume;
	}

	/* It stands, fences us and leads; we step down when we hear it. */
	deadline = jiffies + 3 * msecs_to_jiffies(cfg->peer_timeout_ms);
	for (;;) {
		mutex_lock(&rdmalog_node.config_mutex);
		state = rdmalog_node_handover_state(log, peer, &next);
		mutex_unlock(&rdmalog_node.config_mutex);
		if (state == 1 || state == -ENETDOWN ||
		    time_after(jiffies, deadline))
			break;
		usleep_range(5000, 10000);
	}
	if (state == -ENETDOWN) {
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = -ENETDOWN;
	} else if (state != 1) {
		NL_SET_ERR_MSG(extack, "the node did not take over in time");
		err = -ETIMEDOUT;
	}
	if (!err)
		pr_info("node %u: handed the log over to node %u (epoch %llu) at LSN %llu: appends paused %u ms, draining %u ms\n",
			id, target, epoch, next,
			jiffies_to_msecs(jiffies - start), drain_ms);
out_resume:
	mutex_lock(&rdmalog_node.config_mutex);
	rdmalog_node.handing_over = false;
	rdmalog_log_pause(log, false, false);
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		pr_info("node %u: switchover to node %u failed (%d): appends resume\n",
			id, target, err);
	rdmalog_log_put(log);
	return err;
}

/**
 * rdmalog_node_trim() - discard the records below @lsn
 * @lsn: becomes the oldest retained LSN; at or below it already: no-op
 * @extack: where to say why it failed; may be NULL
 *
 * The trim itself runs on a reference to the log that was up, without
 * config_mutex (it needs none: it is one section under the log's lock).
 * %RDMALOG_EVENT_TRIMMED is then sent, under config_mutex, when that log
 * is still the node's and its first LSN moved past the last one
 * announced, so the FIRST_LSN of successive events only grows.
 *
 * Return: 0; -ENETDOWN when down (or when it went down meanwhile);
 * -ERANGE when @lsn is above the commit LSN.
 */
int rdmalog_node_trim(u64 lsn, struct netlink_ext_ack *extack)
{
	struct rdmalog_log_state st;
	struct rdmalog_log *log;
	int err;

	log = rdmalog_node_get_log();
	if (!log) {
		NL_SET_ERR_MSG(extack, "the log is down");
		return -ENETDOWN;
	}
	err = rdmalog_log_trim(log, lsn);
	if (err < 0) {
		/*
		 * Linux 6.1 has no formatted extack message, and a shared
		 * buffer could change under netlink_ack(); the commit LSN is
		 * in STATUS_GET.
		 */
		if (err == -ERANGE)
			NL_SET_ERR_MSG(extack,
				       "cannot trim past the commit point; see the commit LSN in 'rdmalogctl status'");
		else if (err == -ENETDOWN)
			NL_SET_ERR_MSG(extack, "the log is down");
		goto out_put;
	}
	err = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.log == log) {
		rdmalog_log_get_state(log, &st);
		if (st.first_lsn > rdmalog_node.trim_announced) {
			rdmalog_node.trim_announced = st.first_lsn;
			rdmalog_netlink_notify_trimmed(rdmalog_node.config.node_id,
						       st.first_lsn);
		}
	}
	mutex_unlock(&rdmalog_node.config_mutex);
out_put:
	rdmalog_log_put(log);
	return err;
}

/*
 * The primary @st's node knows of while up: itself, or the connected peer
 * that said it is in its HELLO (of several, the one of the highest epoch).
 */
static void rdmalog_node_find_primary(struct rdmalog_node_status *st)
{
	const struct rdmalog_peer_info *p;
	u32 i;

	if (!st->up)
		return;
	if (st->config.role == RDMALOG_ROLE_PRIMARY) {
		st->primary = st->config.node_id;
		st->primary_epoch = st->log.epoch;
		return;
	}
	for (i = 0; i < st->npeers; i++) {
		p = &st->peers[i];
		if (p->state != RDMALOG_PEER_CONNECTED || !p->has_role ||
		    p->remote_role != RDMALOG_ROLE_PRIMARY || !p->has_remote)
			continue;
		if (!st->primary || p->remote_epoch > st->primary_epoch) {
			st->primary = p->node_id;
			st->primary_epoch = p->remote_epoch;
		}
	}
}

/**
 * rdmalog_node_get_status() - a consistent snapshot of node, log and peers
 * @st: filled in
 */
void rdmalog_node_get_status(struct rdmalog_node_status *st)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	u32 in_sync, needed;

	memset(st, 0, sizeof(*st));
	mutex_lock(&rdmalog_node.config_mutex);
	st->up = rdmalog_node.up;
	st->config = *cfg;
	st->epoch = rdmalog_node.epoch;
	st->durability_effective =
		rdmalog_node_effective_durability(cfg->durability, &in_sync,
						  &needed);
	st->in_sync = in_sync;
	st->needed = needed;
	if (st->durability_effective != cfg->durability)
		snprintf(st->msg, sizeof(st->msg),
			 "durability %s needs %u backup%s in sync, %u %s: appends wait up to %u ms for it, then fail",
			 cfg->durability == RDMALOG_DURABLE_ALL ? "all" :
			 "quorum", needed, needed == 1 ? "" : "s", in_sync,
			 in_sync == 1 ? "is" : "are", cfg->commit_timeout_ms);
	else if (!cfg->node_id)
		strscpy(st->msg, "node id not set", sizeof(st->msg));
	else if (!rdmalog_node.up)
		strscpy(st->msg, "log is down", sizeof(st->msg));
	else if (rdmalog_node.joining)
		strscpy(st->msg,
			"the configured primary: a backup until it finds no log among its peers",
			sizeof(st->msg));
	if (rdmalog_node.up) {
		char note[224];

		/*
		 * A listener that could not be set up is worth saying, and
		 * so is a restart of the log by its primary.
		 */
		rdmalog_conn_status_msg(note, sizeof(note));
		if (note[0] && st->msg[0])
			strlcat(st->msg, "; ", sizeof(st->msg));
		strlcat(st->msg, note, sizeof(st->msg));
		rdmalog_catchup_status_msg(note, sizeof(note));
		if (note[0] && st->msg[0])
			strlcat(st->msg, "; ", sizeof(st->msg));
		strlcat(st->msg, note, sizeof(st->msg));
		rdmalog_log_get_state(rdmalog_node.log, &st->log);
	} else {
		st->log.capacity = cfg->capacity;
		st->log.max_record = cfg->max_record;
		st->log.epoch = rdmalog_node.epoch;
	}
	st->npeers = rdmalog_node_peers_locked(st->peers, RDMALOG_MAX_PEERS);
	st->change = rdmalog_node.change;
	mutex_unlock(&rdmalog_node.config_mutex);
	rdmalog_node_find_primary(st);
	rdmalog_elect_get_info(&st->elect);
}

/**
 * rdmalog_node_get_log() - the log that is up, referenced
 *
 * Return: the log with a reference the caller drops with rdmalog_log_put(),
 * or NULL when the node is down.
 */
struct rdmalog_log *rdmalog_node_get_log(void)
{
	struct rdmalog_log *log = NULL;

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up) {
		log = rdmalog_node.log;
		rdmalog_log_get(log);
	}
	mutex_unlock(&rdmalog_node.config_mutex);
	return log;
}

/**
 * rdmalog_node_fill_state() - fill a &struct rdmalog_state
 * @st: filled in completely (version set, reserved zeroed)
 *
 * While down, the flags lack %RDMALOG_STATE_UP, the LSNs and @used are 0,
 * and capacity and max_record are the configured ones.
 */
void rdmalog_node_fill_state(struct rdmalog_state *st)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log_state ls;
	u32 in_sync, needed;

	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up) {
		rdmalog_log_get_state(rdmalog_node.log, &ls);
		st->flags |= RDMALOG_STATE_UP;
		st->first_lsn = ls.first_lsn;
		st->commit_lsn = ls.commit_lsn;
		st->next_lsn = ls.next_lsn;
		st->capacity = ls.capacity;
		st->used = ls.used;
		st->max_record = ls.max_record;
		/* Of its records: on a backup, its primary's. */
		st->epoch = ls.epoch;
	} else {
		st->capacity = cfg->capacity;
		st->max_record = cfg->max_record;
		st->epoch = rdmalog_node.epoch;
	}
	if (rdmalog_node_effective_durability(cfg->durability, &in_sync,
					      &needed) != cfg->durability)
		st->flags |= RDMALOG_STATE_DURABILITY_DEGRADED;
	st->node_id = cfg->node_id;
	st->role = cfg->role;
	st->durability = cfg->durability;
	mutex_unlock(&rdmalog_node.config_mutex);
}

/**
 * rdmalog_node_append() - append through this node
 * @log: the log the caller's descriptor holds (referenced)
 * @from: the payload
 * @nonblock: do not wait for ring space (or a send slot)
 * @lsn: out: the record's LSN
 *
 * A backup forwards the record to the primary (forward.c); every other
 * role appends to @log. A backup that reaches no primary (a leader change
 * or a configured primary joining is under way, or its connection is
 * being made again) waits for one up to the commit timeout, retrying
 * every %RDMALOG_NODE_FWD_RETRY_MS, unless @nonblock: nothing was sent
 * before -EHOSTUNREACH, so nothing is appended twice; if this node leads
 * meanwhile, the record is appended here. A primary that steps down
 * before the record is in its ring (its log says -EROFS: the writer
 * waited for space, say), or a forward to a peer that no longer leads
 * (-EROFS), goes the same way; with @nonblock the former is -EAGAIN.
 *
 * Return: see rdmalog_log_append() and rdmalog_fwd_append();
 * -ERESTARTSYS when a signal came while it waited for a primary (nothing
 * was appended: restarted, or -EINTR).
 */
int rdmalog_node_append(struct rdmalog_log *log, struct iov_iter *from,
			bool nonblock, u64 *lsn)
{
	size_t len = iov_iter_count(from);
	unsigned long deadline = 0;
	bool local;
	u32 ms;
	int err;

	for (;;) {
		/* The role changes only with a leader change; the log stays. */
		if (READ_ONCE(rdmalog_node.config.role) ==
		    RDMALOG_ROLE_BACKUP) {
			if (rdmalog_log_is_dead(log))
				return -ENETDOWN;
			/* -EROFS: the peer asked no longer leads */
			err = rdmalog_fwd_append(from, nonblock, lsn);
			if (err != -EHOSTUNREACH && err != -EROFS)
				return err;
			local = false;
		} else {
			err = rdmalog_log_append(log, from, nonblock, lsn);
			if (err != -EROFS)
				return err;
			local = true;
		}
		/* Nothing was appended: wait for a primary, and again. */
		if (nonblock)
			return local ? -EAGAIN : err;
		ms = READ_ONCE(rdmalog_node.config.commit_timeout_ms);
		if (!deadline)
			deadline = jiffies + msecs_to_jiffies(ms);
		else if (time_after(jiffies, deadline))
			return local ? -EHOSTUNREACH : err;
		iov_iter_revert(from, len - iov_iter_count(from));
		if (msleep_interruptible(RDMALOG_NODE_FWD_RETRY_MS))
			return -ERESTARTSYS;
	}
}
