/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - this node: identity, peers, log settings and the up/down
 * lifecycle of the log. There is one node per module instance.
 */
#ifndef _RDMALOG_NODE_H
#define _RDMALOG_NODE_H

#include <linux/types.h>
#include <linux/in6.h>
#include "../uapi/rdmalog.h"
#include "../uapi/rdmalog_genl.h"
#include "addr.h"
#include "log.h"
#include "repl.h"
#include "catchup.h"
#include "ballot.h"
#include "elect.h"

struct rdmalog_log;
struct netlink_ext_ack;

/* Ring sizes are multiples of this (uapi: RDMALOG_A_CAPACITY). */
#define RDMALOG_CAPACITY_ALIGN		4096
/* Longest commit timeout (uapi: RDMALOG_A_COMMIT_TIMEOUT_MS), one hour. */
#define RDMALOG_MAX_COMMIT_TIMEOUT_MS	3600000U
/**
 * struct rdmalog_node_config - everything an operator sets
 * @node_id: 1 .. RDMALOG_MAX_NODE_ID, 0 when unset
 * @cluster_id: non-zero once set
 * @listen: address and port this node listens on
 * @role: enum rdmalog_role
 * @capacity: ring bytes
 * @max_record: largest payload
 * @durability: enum rdmalog_durability requested
 * @commit_timeout_ms: how long a writer waits for its durability
 * @heartbeat_ms: heartbeat interval to every peer
 * @peer_timeout_ms: silence after which a connected peer is declared dead
 * @auth: a shared secret is set (&enum rdmalog_auth: HMAC_SHA256); the
 *	secret itself never leaves node.c and node_up.c but towards the
 *	connections
 * @failover: &enum rdmalog_failover: with auto, a backup that lost its
 *	primary stands on its own (role.c's watch)
 * @priority: 0 .. RDMALOG_MAX_PRIORITY, higher stands first (role.c's
 *	stand delay; announced in HEARTBEATs)
 * @lead: this node may become the primary in a leader change (promote
 *	and standing on its own are refused without it)
 */
struct rdmalog_node_config {
	u32 node_id;
	u64 cluster_id;
	struct rdmalog_addr listen;
	u32 role;
	u64 capacity;
	u32 max_record;
	u32 durability;
	u32 commit_timeout_ms;
	u32 heartbeat_ms;
	u32 peer_timeout_ms;
	bool auth;
	u32 failover;
	u32 priority;
	bool lead;
};

/**
 * struct rdmalog_peer_info - a snapshot of one configured peer
 * @node_id: the peer's id
 * @addr: its address and port
 * @state: enum rdmalog_peer_state
 * @msg: why the state is what it is; may be empty
 * @reconnects: connections established after the first of the up period
 * @refusals: handshakes refused by either side in the up period
 * @has_remote: a message arrived from the peer; the fields below are set
 * @last_rx_ms: milliseconds since the last message
 * @remote_epoch: the peer's epoch per its last message
 * @remote_first_lsn: the peer's first LSN per its last message
 * @remote_commit_lsn: the peer's commit LSN per its last message
 * @remote_next_lsn: the peer's next LSN per its last message
 * @has_role: a HELLO arrived from the peer; @remote_role is set
 * @remote_role: the peer's &enum rdmalog_role per its last HELLO
 * @has_standing: a HEARTBEAT arrived from the peer; the two below are set
 * @remote_priority: the peer's priority per its last HEARTBEAT
 * @remote_lead: whether the peer may lead, per its last HEARTBEAT
 * @repl: replication to the peer (primary side), while connected
 * @cu: catch-up on the connection to the peer (either side)
 * @sync: &enum rdmalog_peer_sync, this node's judgement of the peer
 * @refusal: &enum rdmalog_refusal while @state is REFUSED
 * @has_vote_path: connected: the three below are set
 * @vote_path: &enum rdmalog_vote_path
 * @vote_why: &enum rdmalog_vote_path_why
 * @ballot_granted: this node granted the peer its ballot word
 */
struct rdmalog_peer_info {
	u32 node_id;
	struct rdmalog_addr addr;
	u32 state;
	char msg[RDMALOG_PEER_MSG_LEN];
	u64 reconnects;
	u64 refusals;
	bool has_remote;
	u64 last_rx_ms;
	u64 remote_epoch;
	u64 remote_first_lsn;
	u64 remote_commit_lsn;
	u64 remote_next_lsn;
	bool has_role;
	u32 remote_role;
	bool has_standing;
	u32 remote_priority;
	bool remote_lead;
	struct rdmalog_repl_peer_info repl;
	struct rdmalog_catchup_info cu;
	u32 sync;
	u32 refusal;
	bool has_vote_path;
	u32 vote_path;
	u32 vote_why;
	bool ballot_granted;
};

/**
 * struct rdmalog_node_change - the last change of role while up
 * @why: &enum rdmalog_change; NONE: none since the module loaded
 * @epoch: the epoch led after (a win) or until (a step-down)
 * @done_ns: boottime when it was complete
 * @detect_ms: STOOD: from the loss of its primary's connection to standing
 * @elect_ms: PROMOTED, STOOD: from standing to a majority's votes
 * @fence_ms: the part of @elect_ms spent fencing its own primary
 * @reconcile_ms: PROMOTED, STOOD: from the votes to the epoch-start
 *	record committed
 */
struct rdmalog_node_change {
	u32 why;
	u64 epoch;
	u64 done_ns;
	u32 detect_ms;
	u32 elect_ms;
	u32 fence_ms;
	u32 reconcile_ms;
};

/**
 * struct rdmalog_node_status - a consistent snapshot for STATUS_GET and
 * the GET_STATE ioctl
 * @up: the log is up
 * @config: the configuration
 * @epoch: current epoch
 * @durability_effective: enum rdmalog_durability in force
 * @in_sync: backups in sync (primary, while up)
 * @needed: backups the requested durability needs (primary, while up)
 * @primary: the primary this node knows of while up (itself, or a
 *	connected peer that said so in its HELLO), 0 for none
 * @primary_epoch: @primary's epoch
 * @msg: human-readable note on the state (may be empty)
 * @elect: the election state (for the module's lifetime, up or down)
 * @change: the last change of role while up
 * @log: log indices, valid when @up
 * @npeers: entries in @peers
 * @peers: the configured peers
 */
struct rdmalog_node_status {
	bool up;
	struct rdmalog_node_config config;
	u64 epoch;
	u32 durability_effective;
	u32 in_sync;
	u32 needed;
	u32 primary;
	u64 primary_epoch;
	char msg[256];
	struct rdmalog_elect_info elect;
	struct rdmalog_ballot_info ballot;
	struct rdmalog_node_change change;
	struct rdmalog_log_state log;
	u32 npeers;
	struct rdmalog_peer_info peers[RDMALOG_MAX_PEERS];
};

/*
 * config.c: each setting of @cfg on its own (ranges and forms); @cur, the
 * configuration in force, words the reason where the order of changes
 * matters. Return: 0, or -EINVAL with the reason in @extack.
 */
int rdmalog_config_check(const struct rdmalog_node_config *cfg,
			 const struct rdmalog_node_config *cur,
			 struct netlink_ext_ack *extack);

int rdmalog_node_init(void);
void rdmalog_node_exit(void);

/* Configuration; each validates, applies all or nothing, and says why. */
void rdmalog_node_get_config(struct rdmalog_node_config *cfg);
int rdmalog_node_set_config(void (*overlay)(struct rdmalog_node_config *cfg,
					    const void *arg),
			    const void *arg, const u8 *secret, int secret_len,
			    struct netlink_ext_ack *extack);
int rdmalog_node_peer_add(const struct rdmalog_peer_info *peer,
			  struct netlink_ext_ack *extack);
int rdmalog_node_peer_del(u32 node_id, struct netlink_ext_ack *extack);
int rdmalog_node_peer_get(u32 node_id, struct rdmalog_peer_info *peer);
u32 rdmalog_node_peers(struct rdmalog_peer_info *peers, u32 max);

int rdmalog_node_up(struct netlink_ext_ack *extack);
int rdmalog_node_down(struct netlink_ext_ack *extack);
int rdmalog_node_promote(struct netlink_ext_ack *extack);
int rdmalog_node_switchover(u32 target, struct netlink_ext_ack *extack);
int rdmalog_node_trim(u64 lsn, struct netlink_ext_ack *extack);
void rdmalog_node_get_status(struct rdmalog_node_status *st);

/* For the character device. */
int rdmalog_node_append(struct rdmalog_log *log, struct iov_iter *from,
			bool nonblock, u64 *lsn);
struct rdmalog_log *rdmalog_node_get_log(void);
void rdmalog_node_fill_state(struct rdmalog_state *st);

#endif /* _RDMALOG_NODE_H */
