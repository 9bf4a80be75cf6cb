// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - this node: identity, peers, log settings, the durability in
 * force, status, trims, and where an append goes.
 *
 * There is exactly one node per module instance, rdmalog_node below. Its
 * configuration is changed only through rdmalog_node_set_config() and the
 * peer functions (called by netlink.c), each of which validates the whole
 * request first and then applies all of it or nothing.
 *
 * The up/down lifecycle of the log, and what serves it while it is up
 * (the connections, replication, forwarding, the election), are
 * node_up.c's; its top comment says what starts and stops them, and in
 * which order. The node's state is in node_priv.h, with the rules of its
 * lock, config_mutex: what here reads or writes that state takes it or
 * is called with it held, but for rdmalog_node_append(), which reads the
 * role and the commit timeout with READ_ONCE.
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
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <asm/page.h>

#include "node_priv.h"
#include "ballot.h"
#include "conn.h"
#include "catchup.h"
#include "elect.h"
#include "forward.h"
#include "log.h"
#include "netlink.h"
#include "repl.h"
#include "stats.h"

static void rdmalog_node_dur_work(struct work_struct *work);

struct rdmalog_node rdmalog_node = {
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
void rdmalog_node_durability_check(bool log)
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

struct rdmalog_peer *rdmalog_node_find_peer(u32 node_id)
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
	rdmalog_node_role_init();
	return 0;
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
 * rdmalog_node_set_config() - change the configuration
 * @overlay: sets the settings to change on its @cfg, a copy of the
 *	current configuration (@cfg->auth is ignored); called once, under
 *	config_mutex, so it sees the configuration the change applies to
 * @arg: @overlay's
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
int rdmalog_node_set_config(void (*overlay)(struct rdmalog_node_config *cfg,
					    const void *arg),
			    const void *arg, const u8 *secret, int secret_len,
			    struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cur = &rdmalog_node.config;
	struct rdmalog_node_config new;
	bool node_changed, log_changed, watch;
	int err;

	mutex_lock(&rdmalog_node.config_mutex);
	new = *cur;
	overlay(&new, arg);
	/* Compare and store addresses with their unused bytes zeroed. */
	if (new.listen.len < sizeof(new.listen.addr))
		memset(new.listen.addr + new.listen.len, 0,
		       sizeof(new.listen.addr) - new.listen.len);

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
		rdmalog_conn_set_standing(cur->priority, cur->lead);
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
		rdmalog_conn_activate(peer->conn, false);
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

/*
 * A backup shows what its primary told it (the notice block), not what it
 * last needed: before a snapshot. No lock held (it may sleep).
 */
static void rdmalog_node_refresh(void)
{
	struct rdmalog_log *log = rdmalog_node_get_log();

	if (!log)
		return;
	rdmalog_log_refresh(log);
	rdmalog_log_put(log);
}

/**
 * rdmalog_node_get_status() - a consistent snapshot of node, log and peers
 * @st: filled in
 */
void rdmalog_node_get_status(struct rdmalog_node_status *st)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	u32 in_sync, needed;

	rdmalog_node_refresh();

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
	rdmalog_ballot_get_info(&st->ballot);
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

	rdmalog_node_refresh();
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
