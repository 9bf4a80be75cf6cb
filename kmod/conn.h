/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - connections to the peers: rdma_cm listener, one RC connection
 * per peer, handshake, control messages, heartbeats and reconnection.
 *
 * The node (node.c, node_up.c) drives it: rdmalog_conn_start() when the
 * log comes up, one &struct rdmalog_conn per configured peer (created,
 * activated, removed), rdmalog_conn_stop() when the log goes down.
 * Everything here is called in process context and may sleep; the node
 * calls it with its config_mutex held. conn.c never calls the node by
 * name: what it tells its owner goes through &struct rdmalog_conn_events.
 */
#ifndef _RDMALOG_CONN_H
#define _RDMALOG_CONN_H

#include <linux/types.h>
#include "addr.h"
#include "../uapi/rdmalog_genl.h"

struct rdmalog_peer_info;

struct rdmalog_conn;
struct rdmalog_log;

/**
 * struct rdmalog_conn_local - this node, as the connections present it
 * @node_id: our id
 * @cluster_id: our cluster id
 * @listen: address and port to listen on (len 0: the IPv4 wildcard) and
 *	the source address of outgoing connections
 * @capacity: ring capacity; peers must agree
 * @max_record: largest record payload (announced in HELLO)
 * @auth: a shared secret is set: peers must prove it (auth.c)
 *
 * Part of the up period's parameters, and copied into every conn:
 * immutable while it exists, read without locks. Our epoch is not here:
 * a change of role changes it while the connections stay
 * (&rdmalog_conn_params.epoch).
 */
struct rdmalog_conn_local {
	u32 node_id;
	u64 cluster_id;
	struct rdmalog_addr listen;
	u64 capacity;
	u32 max_record;
	bool auth;
};

/**
 * struct rdmalog_conn_events - what the connections tell their owner
 * @peer: @event about a peer (@info, filled as for status): PEER_STATE
 *	(a displayed state changed; called under that connection's lock),
 *	PEER_JOINED, PEER_DIVERGED, or LOG_RESET (our log restarted at
 *	@first_lsn from @info's log; @first_lsn is 0 for the others).
 *	@node_id is ours. Process context; may sleep (GFP_KERNEL), must not
 *	take the node's config_mutex (a connection's lock may be held, and
 *	node.c takes those under it) nor call into conn.c
 */
struct rdmalog_conn_events {
	void (*peer)(u32 node_id, enum rdmalog_event event,
		     const struct rdmalog_peer_info *info, u64 first_lsn);
};

/**
 * struct rdmalog_conn_params - what the connections of one up period use
 * @local: this node, as the connections present it
 * @epoch: our epoch when the up period starts: in the header of every
 *	message we send, in our handshake, and the floor of a primary's data
 *	we take; a change of role that keeps the connections changes it
 *	(rdmalog_conn_role_end())
 * @secret: the shared secret, @secret_len bytes (0: none); read by
 *	rdmalog_conn_start() only (it keys a transform), not kept
 * @secret_len: its length
 * @role: &enum rdmalog_role (announced in HELLO)
 * @heartbeat_ms: heartbeat interval
 * @peer_timeout_ms: silence after which a peer is declared dead
 * @priority: our priority as a candidate, announced in HEARTBEATs
 * @lead: whether we may lead, announced in HEARTBEATs
 * @log: the log whose indices heartbeats carry; conn.c takes its own
 *	reference for the up period
 * @events: where events go (static; set in every up period)
 */
struct rdmalog_conn_params {
	struct rdmalog_conn_local local;
	u64 epoch;
	const struct rdmalog_conn_events *events;
	const u8 *secret;
	u32 secret_len;
	u32 role;
	u32 heartbeat_ms;
	u32 peer_timeout_ms;
	u32 priority;
	bool lead;
	struct rdmalog_log *log;
};

int rdmalog_conn_init(void);
void rdmalog_conn_exit(void);

/* Start listening (in the background, retried until it works). */
int rdmalog_conn_start(const struct rdmalog_conn_params *p);
/*
 * Stop everything started since rdmalog_conn_start(): every connection of
 * every activated peer is closed, the listener destroyed; returns when no
 * work item, rdma_cm id, queue pair or buffer of ours is left. The peers'
 * objects stay until their owner puts them.
 */
void rdmalog_conn_stop(void);

/*
 * The highest epoch a peer spoke in since the module loaded: a primary's
 * new log takes a higher one (node_up.c).
 */
u64 rdmalog_conn_epoch_seen(void);
/* A primary holds our ring on a live connection (a backup's). */
bool rdmalog_conn_has_primary(void);
/* Which peer that primary is (0: none). */
u32 rdmalog_conn_primary_id(void);
/* How many peers are connected now. */
u32 rdmalog_conn_nr_live(void);

/**
 * struct rdmalog_conn_census - the connected peers, as their HELLOs said
 * @heard: peers connected whose HELLO arrived
 * @primaries: of those, the ones that said they are a primary
 * @with_log: of those, the ones serving or following a log (a non-zero
 *	log id)
 */
struct rdmalog_conn_census {
	u32 heard;
	u32 primaries;
	u32 with_log;
};

void rdmalog_conn_census(struct rdmalog_conn_census *c);

/* Settings that may change while up. */
void rdmalog_conn_set_timers(u32 heartbeat_ms, u32 peer_timeout_ms);
void rdmalog_conn_set_role(u32 role);
/*
 * A change of role that keeps the connections (role.c, node_up.c): begin
 * stops every grant of our ring until the end, and fails (-EBUSY, nothing
 * changed) when a primary holds it; end sets our role and epoch, and
 * makes each connection that is not closing fit the role (kernel-doc in
 * conn_role.c). Process context, no conn lock held; end sleeps.
 */
int rdmalog_conn_role_begin(void);
void rdmalog_conn_role_end(u32 role, u64 epoch, u32 *leads, u32 *closed);
void rdmalog_conn_set_standing(u32 priority, bool lead);
void rdmalog_conn_set_vote_epoch(u64 epoch);
int rdmalog_conn_fence(u64 epoch, unsigned int timeout_ms, u32 *peer);
void rdmalog_conn_raise_fence(u64 epoch);

/*
 * The connection object of one peer, with one reference for the caller.
 * Not connecting until activated. NULL when memory is short.
 */
struct rdmalog_conn *rdmalog_conn_create(u32 peer_id,
					 const struct rdmalog_addr *addr);
/*
 * Start connecting (or waiting to be connected), in state CONNECTING
 * (no event: the caller's UP or PEER_ADDED says so).
 */
void rdmalog_conn_activate(struct rdmalog_conn *conn, bool knock_now);
/* Close and forget the connection; returns when it is all gone. */
void rdmalog_conn_remove(struct rdmalog_conn *conn);
/* Drop the caller's reference. NULL is ignored. */
void rdmalog_conn_put(struct rdmalog_conn *conn);
/* Fill the connection fields of @info (state, message, counters, ...). */
void rdmalog_conn_get_info(struct rdmalog_conn *conn,
			   struct rdmalog_peer_info *info);

/* A note on the listener for the node's status message; "" when fine. */
void rdmalog_conn_status_msg(char *buf, size_t len);

#endif /* _RDMALOG_CONN_H */
