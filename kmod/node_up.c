// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the up/down lifecycle of the log, and what serves it while it
 * is up.
 *
 * While the log is up, conn.c keeps a connection to every peer (one
 * &struct rdmalog_conn per peer, hanging off &struct rdmalog_peer): it is
 * started by rdmalog_node_up() and rdmalog_node_peer_add(), and stopped,
 * waiting for everything to be released, by rdmalog_node_down(),
 * rdmalog_node_peer_del() and rdmalog_node_exit(). The peers' connection
 * states come from conn.c. repl.c replicates the log of an up period: it
 * is started before the connections and stopped after them, and told of
 * every change of durability, commit timeout and number of peers. The role
 * changes while up (a backup wins an election, a primary steps down or
 * hands the log over) are role.c's, and the log stays through them (but
 * for a step-down that cannot serve it again: the log goes down). A
 * backup that wins keeps its up period: the listener, the ballot word's
 * loopback and the connections stay (an old primary that still held its
 * ring lost its connection when this node stood and fenced it), and
 * replication, forwarding and the election run on and take the new role;
 * a kept connection whose peer knew this node as a backup is told by
 * LEAD, one that cannot be kept is closed (its peer reconnects and reads
 * the role in our HELLO), and the node watches from scratch. A primary
 * that steps down (deposed, cut off, handed over) still restarts
 * everything serving the log in the new role: its connections, listener
 * and loopback are closed and released, replication, forwarding, the
 * election and the connections start again as a backup's, and the peers
 * reconnect. The node's state is in node_priv.h.
 *
 * Here: rdmalog_node_up() creates the log and starts serving it
 * (replication, forwarding, the election, then the connections, whose
 * events go out on netlink as they come), rdmalog_node_down() stops all
 * of it and drops the node's reference on the log. For role.c, a
 * step-down restarts what serves the log through
 * rdmalog_node_stop_serving(), _start_serving() and _serve(); a backup
 * that leads keeps it through rdmalog_node_change_role() (the modules'
 * new role; then role.c appends its epoch-start record and ends the
 * change with rdmalog_conn_role_end(): per connection a LEAD, or a close
 * where it cannot be kept) and _serve_kept() (the durability announced,
 * the watch restarted). The peers, the configuration and the durability
 * in force are node.c's.
 *
 * Locks: everything here runs in process context with the node's
 * config_mutex held (node_priv.h states its rules), taken by
 * rdmalog_node_up() and _down() and asserted by the rest; under it the
 * connections, the election, forwarding, replication and the log take
 * their own (conn.c's stop waits for every endpoint to be released with
 * it held), and events are sent so that they leave in order. Two
 * callbacks run without it: replication's in_sync_changed (any context:
 * it only queues &rdmalog_node.dur_work)
 * and the connections' events (a connection's lock may be held: they
 * must not take config_mutex).
 */
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/random.h>
#include <linux/workqueue.h>

#include "node_priv.h"
#include "catchup.h"
#include "conn.h"
#include "elect.h"
#include "forward.h"
#include "log.h"
#include "netlink.h"
#include "repl.h"

/* Replication: a backup joined or left. Any context. */
static void rdmalog_node_in_sync_changed(void)
{
	schedule_work(&rdmalog_node.dur_work);
}

/*
 * Stop everything that serves the log, which stays as it is: the peer
 * connections are closed and released (this waits), then the election,
 * forwarding and replication of the up period stop.
 */
void rdmalog_node_stop_serving(void)
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
void rdmalog_node_stop_log(void)
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
		},
		.epoch = rdmalog_node.epoch,
		.secret = rdmalog_node.secret,
		.secret_len = rdmalog_node.secret_len,
		.role = cfg->role,
		.heartbeat_ms = cfg->heartbeat_ms,
		.peer_timeout_ms = cfg->peer_timeout_ms,
		.priority = cfg->priority,
		.lead = cfg->lead,
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
int rdmalog_node_start_serving(struct rdmalog_log *log,
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
	rdmalog_elect_start(log, cfg->node_id, cfg->role, cfg->peer_timeout_ms,
			    cfg->heartbeat_ms);
	err = rdmalog_node_start_conns(log, extack);
	if (err) {
		rdmalog_elect_stop();
		rdmalog_fwd_stop();
		rdmalog_repl_stop();
	}
	return err;
}

/* UP and ROLE imply the requested durability; say at once if it is not. */
static void rdmalog_node_announce_durability(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node.dur_sent = rdmalog_node.config.durability;
	rdmalog_node.dur_req_sent = rdmalog_node.config.durability;
	rdmalog_node_durability_check(false);
}

/*
 * After the event that starts serving (UP, ROLE), which implies the
 * requested durability and every peer CONNECTING: the durability in
 * force is announced if it is not that one, and the peers connect.
 * @changed_role: it serves in a new role (the peers are up: it just
 * closed their connections), and knocks at once where it accepts.
 */
void rdmalog_node_serve(bool changed_role)
{
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node_announce_durability();
	/*
	 * After UP, which implies that every peer is CONNECTING (and DOWN
	 * that every peer is CONFIGURED again): PEER_STATE events report the
	 * changes in between.
	 */
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		rdmalog_conn_activate(peer->conn, changed_role);
	rdmalog_node.had_primary = false;
	rdmalog_node.last_primary = 0;
	rdmalog_node_watch();
}

/**
 * rdmalog_node_change_role() - serve on in @role, the connections kept
 * @role: &enum rdmalog_role
 * @epoch: the node's epoch in it
 *
 * Between rdmalog_conn_role_begin() and the log's change of role
 * (rdmalog_log_lead()) on one side, and rdmalog_conn_role_end() (which
 * the caller calls next: a new primary appends its epoch-start record in
 * between, for its LEADs to name), the ROLE event and
 * rdmalog_node_serve_kept() on the other: replication (the commit rule
 * first, before anything is appended in the new role), forwarding and
 * the election take @role, then the node. Caller holds config_mutex.
 */
void rdmalog_node_change_role(u32 role, u64 epoch)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_repl_set_role(role, cfg->commit_timeout_ms);
	rdmalog_fwd_set_policy(role, cfg->commit_timeout_ms);
	rdmalog_elect_set_role(role);
	rdmalog_catchup_clear_note();
	/* rdmalog_node_append() reads it without the mutex. */
	WRITE_ONCE(cfg->role, role);
	rdmalog_node.epoch = epoch;
}

/*
 * After the ROLE event of a change that kept the connections (no peer
 * is implied CONNECTING: the kept ones stay CONNECTED, the closed ones
 * said so): the durability in force is announced if it is not the
 * requested one, and the node watches from scratch.
 */
void rdmalog_node_serve_kept(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node_announce_durability();
	rdmalog_node.had_primary = false;
	rdmalog_node.last_primary = 0;
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
	rdmalog_node_serve(false);
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
