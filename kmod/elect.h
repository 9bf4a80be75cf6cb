/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the election state of this node: the epochs it knows of, its
 * vote, and whether it has learned enough since its module was loaded to
 * vote at all (Documentation/leader-change.rst, "Terms").
 */
#ifndef _RDMALOG_ELECT_H
#define _RDMALOG_ELECT_H

#include <linux/types.h>
#include <linux/workqueue.h>

#include "log.h"

struct rdmalog_ep;
union rdmalog_msg_any;

/**
 * struct rdmalog_elect_info - a snapshot of the election state
 * @epoch: the highest epoch this node knows of: its own log's, any
 *	peer's message's, any election epoch a peer reported or it voted in
 * @vote_epoch: the epoch of its vote; 0: none since the module loaded
 * @vote_for: the node it voted for in @vote_epoch (0 with no vote)
 * @learned: it may vote: it has heard from a majority of the other
 *	configured nodes since the module loaded (then, for the module's
 *	lifetime), or it has no peer configured
 * @heard: configured peers it has heard from since the module loaded
 * @needed: configured peers it must hear from to learn: a majority of
 *	them (0 with no peer)
 * @wait_ms: not learned: how long until what it hears counts (0: it
 *	counts now)
 */
struct rdmalog_elect_info {
	u64 epoch;
	u64 vote_epoch;
	u32 vote_for;
	bool learned;
	u32 heard;
	u32 needed;
	u32 wait_ms;
};

/**
 * struct rdmalog_elect_ep - a connection's election state
 * @work: answers the peer's VOTE_REQ (process context: fencing sleeps);
 *	holds a reference on the endpoint while queued or running
 * @pending: bit 0: a VOTE_REQ waits for its answer (set by the CQ
 *	handler, cleared by @work); at most one per connection
 * @epoch: the epoch the peer stands for
 * @flags: its request's flags (%RDMALOG_VOTE_F_PRE: a pre-vote)
 * @log_id: the log it would continue
 * @pos: its position
 *
 * Written by the CQ handler while @pending is clear, read by @work while
 * it is set.
 */
struct rdmalog_elect_ep {
	struct work_struct work;
	unsigned long pending;
	u64 epoch;
	u32 flags;
	u64 log_id;
	struct rdmalog_log_held pos;
};

/**
 * struct rdmalog_elect_result - how a candidacy went
 * @epoch: the epoch stood for (0: it did not stand)
 * @held: the position it stood with (after fencing its primary)
 * @asked: connected peers it asked
 * @granted: votes it got, its own included
 * @refused: peers that refused
 * @needed: votes it needed: a majority of the configured nodes
 * @why: the refusals' reasons, bits of &enum rdmalog_vote_reason
 * @msg: on failure, why, for the operator (static text)
 * @fence_ms: how long it spent fencing its own primary
 */
struct rdmalog_elect_result {
	u64 epoch;
	struct rdmalog_log_held held;
	u32 asked;
	u32 granted;
	u32 refused;
	u32 needed;
	u32 why;
	const char *msg;
	u32 fence_ms;
};

int rdmalog_elect_stand(struct rdmalog_elect_result *res, bool pre,
			u32 from, u64 from_epoch);
int rdmalog_elect_hand_over(u32 target, u64 next_lsn, u64 *epochp);
/* After a win: it leads now (or does not): votes and candidacies again. */
void rdmalog_elect_won_done(void);

/*
 * How long after its first up period starts a node counts what it hears
 * towards learning (&rdmalog_elect_info.learned): the longest a candidacy
 * that may have counted its vote from before the load still collects
 * votes (its own fencing, then twice the fencing time and a second, each
 * up to @fence_ms, the peer timeout), and a second of slack. Nodes are
 * assumed to share their peer timeout (the cluster file sets it).
 */
#define RDMALOG_ELECT_LEARN_WAIT(fence_ms)	(3 * (fence_ms) + 2000)

/*
 * The up period: votes are judged against @log (referenced until stop),
 * as node @node_id in @role; fencing waits up to @fence_ms for the old
 * primary's queue pair; every @hb_ms the ballot word is read while open,
 * and opened or closed (rdmalog_elect_beat()). Stop runs after every
 * connection is gone.
 */
void rdmalog_elect_start(struct rdmalog_log *log, u32 node_id, u32 role,
			 u32 fence_ms, u32 hb_ms);
void rdmalog_elect_stop(void);
/*
 * The node's role changes while up, its connections kept: as
 * rdmalog_elect_start() for @role (a primary leads its log's epoch; a
 * won election is over and the ballot word's hold for it ends), without
 * a new up period. Process context, the node's config_mutex held.
 */
void rdmalog_elect_set_role(u32 role);
/* A connection's state: init before use, stop before its release. */
void rdmalog_elect_ep_init(struct rdmalog_ep *ep);
void rdmalog_elect_ep_stop(struct rdmalog_ep *ep);
/* VOTE_REQ and VOTE (msg.c's table). CQ handler context. */
const char *rdmalog_elect_rx_vote_req(struct rdmalog_ep *ep,
				      const union rdmalog_msg_any *m, u32 len);
const char *rdmalog_elect_rx_vote(struct rdmalog_ep *ep,
				  const union rdmalog_msg_any *m, u32 len);
const char *rdmalog_elect_rx_takeover(struct rdmalog_ep *ep,
				      const union rdmalog_msg_any *m, u32 len);

/*
 * The configured peers, @n ids: whom @learned counts. The node calls it
 * whenever its peers change; process context.
 */
void rdmalog_elect_set_members(const u32 *ids, u32 n);
/* This node's own log is in @epoch (the node, as it comes up). */
void rdmalog_elect_note_epoch(u64 epoch);
/*
 * A HELLO or HEARTBEAT of peer @node_id arrived, in @epoch, announcing
 * the election epoch @vote_epoch; @primary_log_id: the log the peer leads
 * (0: it is not a primary). Any context.
 */
void rdmalog_elect_heard(u32 node_id, u64 epoch, u64 vote_epoch,
			 u64 primary_log_id);
/*
 * Who is told that this node, the primary of @epoch, was deposed: a
 * primary of a later epoch leads its log (or, yielding, a later election
 * epoch was announced). Called at most once per up
 * period as a primary, in any context with the election's spinlock held:
 * it may only queue work. Set once at module init by the node (elect.c
 * never calls it by name).
 */
void rdmalog_elect_set_deposed(void (*deposed)(u64 epoch));
/*
 * Who is told that this node's primary, @from, hands the log over to it
 * with its vote in @vote_epoch (a TAKEOVER). CQ handler context: it may
 * only queue work. Set once at module init by the node.
 */
void rdmalog_elect_set_takeover(void (*takeover)(u32 from, u64 vote_epoch));
/*
 * Whether this node, as a primary, yields to a later election epoch it
 * hears of (is deposed as by a later primary): the node's failover auto.
 */
void rdmalog_elect_set_yield(bool yield);
void rdmalog_elect_get_info(struct rdmalog_elect_info *info);
/*
 * The ballot's found hook (ballot.h: rdmalog_ballot_set_found()), set by
 * the node at init: a vote a candidate cast into this node's word.
 */
void rdmalog_elect_found(u64 epoch, u32 node, u32 how);
/* The ballot's unheld hook (rdmalog_ballot_set_unheld()), set likewise. */
void rdmalog_elect_unheld(void);
/* When it last granted a peer its vote or pre-vote (jiffies; 0: never). */
unsigned long rdmalog_elect_granted_at(void);

#endif /* _RDMALOG_ELECT_H */
