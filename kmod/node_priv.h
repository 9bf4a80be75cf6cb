/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the node's state, shared by node.c (configuration, peers,
 * the durability in force, status), node_up.c (the up/down lifecycle,
 * what serves the log while up) and role.c (the changes of role while
 * up: watching, joining, standing, leading, stepping down, switchover).
 * Nothing else includes it: everyone else goes through node.h.
 */
#ifndef _RDMALOG_NODE_PRIV_H
#define _RDMALOG_NODE_PRIV_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "../uapi/rdmalog_genl.h"
#include "node.h"

struct rdmalog_log;

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
 *	only. Lock order: netlink's callbacks hold no lock of ours when they
 *	take it (the family is parallel_ops); the log's internal locks
 *	(rdmalog_log_*() calls) and the
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
 *	module exit. It and @takeover_work run on system_highpri_wq: a
 *	leader change's steps go ahead of this node's tasks (they sleep
 *	while they wait for their peers, as works there may)
 * @primary_seen: jiffies when @watch_work last saw a primary hold our
 *	ring (or this node granted a vote, or lost an election)
 * @had_primary: it saw one in this up period
 * @last_primary: the node id of the last primary @watch_work saw hold
 *	our ring since this node last started serving (0: none): the stand
 *	delay does not count it while it is not connected
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
	u32 last_primary;
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

/* The node, defined in node.c. */
extern struct rdmalog_node rdmalog_node;

/* A forwarded append that found no primary tries again this often. */
#define RDMALOG_NODE_FWD_RETRY_MS	20

/* node.c */
/* The configured peer @node_id, or NULL; config_mutex held. */
struct rdmalog_peer *rdmalog_node_find_peer(u32 node_id);
/*
 * Announce the durability in force (DURABILITY) if it or the requested
 * one changed since last announced in this up period; @log: say a change
 * of the one in force in the kernel log too. config_mutex held.
 */
void rdmalog_node_durability_check(bool log);

/* node_up.c: what serves the log of an up period, in either role. */
void rdmalog_node_stop_serving(void);
int rdmalog_node_start_serving(struct rdmalog_log *log,
			       struct netlink_ext_ack *extack);
void rdmalog_node_serve(bool changed_role);
/* A change of role that keeps the connections (kernel-doc in node_up.c). */
void rdmalog_node_change_role(u32 role, u64 epoch);
void rdmalog_node_serve_kept(void);
/*
 * End the up period (rdmalog_node_down(), rdmalog_node_exit()): the log
 * shut down, what serves it stopped (this waits), the node's reference
 * dropped. config_mutex held, the node up.
 */
void rdmalog_node_stop_log(void);

/* role.c */
void rdmalog_node_role_init(void);
void rdmalog_node_watch(void);
void rdmalog_node_step_down_work(struct work_struct *work);
void rdmalog_node_takeover_work(struct work_struct *work);
void rdmalog_node_watch_work(struct work_struct *work);

#endif /* _RDMALOG_NODE_PRIV_H */
