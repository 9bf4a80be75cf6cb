/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the election state, private to the election's two files:
 * elect.c (the state and what feeds it, the voters' rules and their
 * answers to VOTE_REQs, the heartbeat of the election, the up period,
 * the hand-over) and candidacy.c (this node standing for election, and
 * the answers to its candidacy). Nothing else includes it; the rest of
 * the module sees elect.h.
 *
 * elect.c defines &rdmalog_elect and every function declared here.
 * candidacy.c owns @standing, @pre, @stood, @granted, @refused and @why
 * (set as it stands, and as it counts the answers) and @seen, @nseen and
 * @seen_epoch, and sets @won and @won_hold when it wins; elect.c reads
 * @standing and @won (no ballot word opened meanwhile, and after a win
 * no vote granted), clears @won and @won_hold, and wakes @stand_wq when
 * its vote goes to another candidate.
 *
 * Lock rules: &rdmalog_elect.lock (a spinlock) protects every field but
 * the up period's, from @log to @beat (@vote_mutex's, below), the
 * standing task's @seen, @nseen and @seen_epoch, the callbacks @deposed
 * and @takeover (set at init) and @stand_wq (a wait queue); it is taken
 * in any context (the CQ handlers report what they hear) with BHs off.
 * Of the module's own locks only the ballot word's spinlock,
 * &rdmalog_ballot.lock, is taken inside it: by rdmalog_ballot_floor()
 * when the node learns, and by rdmalog_ballot_hold() of
 * %RDMALOG_BALLOT_HOLD_WON at a win. Also under it: the transport's
 * atomic announce (rdmalog_conn_set_vote_epoch(), set under it so that
 * announcements never go back), @stand_wq's wake-ups, and the node's
 * @deposed callback (which only queues the node's step-down work).
 * &rdmalog_elect.vote_mutex (process context) serializes the votes and
 * protects the up period's @log, @node_id, @role and @fence_ms; it is
 * taken before the lock and dropped while fencing sleeps (the fenced
 * primary's close waits for its own vote work, which may wait for the
 * mutex): every rule is checked again after it.
 */
#ifndef _RDMALOG_ELECT_PRIV_H
#define _RDMALOG_ELECT_PRIV_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "../uapi/rdmalog_genl.h"
#include "log.h"
#include "proto.h"

/**
 * struct rdmalog_elect - the election state, a singleton
 * @lock: protects the fields below up to @vote_mutex but @stand_wq,
 *	@deposed and @takeover, and then @won_hold and @fold_wait (see above)
 * @log_epoch: the highest epoch of a log this node knows of: its own, or
 *	one a peer's message was sent in (a vote is only for an epoch above)
 * @vote_known: the highest election epoch it knows of: its own vote's or
 *	one a peer announced (what its HELLOs and HEARTBEATs announce). The
 *	highest epoch known, &rdmalog_elect_info.epoch, is the larger of the
 *	two
 * @vote_epoch: &rdmalog_elect_info.vote_epoch
 * @vote_for: &rdmalog_elect_info.vote_for
 * @learned: a majority of the members was heard since @heard_after;
 *	once true, true until unload. When it turns true the vote is raised
 *	to (@vote_known, nobody): this node votes only above every election
 *	epoch it heard of
 * @heard_after: jiffies from which a HELLO or HEARTBEAT counts towards
 *	@learned: the first up period's start plus the longest a candidacy
 *	counts votes (%RDMALOG_ELECT_LEARN_WAIT); 0 before the first up
 *	period
 * @members: the configured peers' ids
 * @heard: the ids heard from since @heard_after (any id the transport
 *	took a HELLO or HEARTBEAT from)
 * @standing: the epoch this node stands for now (0: it does not); set
 *	and cleared by rdmalog_elect_stand() only
 * @pre: the candidacy of @standing is a pre-vote (it asks whether it
 *	would win, and nothing is recorded or announced)
 * @won: the epoch it won and does not lead yet (0: none): from the win
 *	until the up period it leads starts (or the change of role fails)
 *	it grants no vote and does not stand again, so that it never votes
 *	in a later epoch and then leads its own
 * @stood: the highest epoch it ever stood for, pre-votes included: a VOTE
 *	of no epoch above it is an answer, late or not, to one of its
 *	requests
 * @granted: the configured peers that granted it their vote in
 *	@standing
 * @refused: those that refused, and @why, the reasons (bits of &enum
 *	rdmalog_vote_reason)
 * @why: see @refused
 * @stand_wq: rdmalog_elect_stand() waits here for the answers
 * @lead_epoch: while this node is up as a primary, the epoch it leads
 *	(0 otherwise); cleared once @deposed was told
 * @lead_log_id: the log it leads then
 * @deposed: the node's callback, set at init: told (under @lock) that a
 *	primary of a later epoch leads its log
 * @takeover: the node's callback, set at init: told (CQ handler context)
 *	that its primary hands the log over to it, with its vote in an epoch
 * @granted_at: jiffies when it last granted a peer its vote or pre-vote
 *	(0: never)
 * @yield: a primary steps down when it hears of a later election epoch
 *	(failover auto; rdmalog_elect_set_yield())
 * @vote_mutex: see above
 * @log: the up period's log, referenced; NULL while down
 * @node_id: this node's id in the up period
 * @role: its &enum rdmalog_role
 * @fence_ms: how long fencing waits for the old primary's queue pair
 * @hb_ms: the heartbeat interval: how often @beat runs
 * @beat: every heartbeat of the up period, under @vote_mutex: reads the
 *	ballot word while it is open, and opens it when this node may be
 *	voted for by compare-and-swap (rdmalog_elect_beat())
 * @won_hold: the ballot word is held closed for the won election (from
 *	the win until rdmalog_elect_won_done() or the next up period); under
 *	@lock
 * @seen: what the last pre-vote found in its peers' ballot words (the
 *	words that granted it, with their blocks and the grant they were
 *	read under), kept only when it won, for the candidacy right after it
 *	in @seen_epoch: that one compares-and-swaps those words from what was
 *	read instead of reading them again, on the same grant only (a new
 *	connection may be to a reloaded peer, whose word can hold the same
 *	value over another block). A word that changed meanwhile fails the
 *	compare and is read again. Every candidacy clears them once it asked;
 *	only the standing task touches them (a candidacy is exclusive:
 *	@standing)
 * @nseen: entries in @seen
 * @seen_epoch: see @seen (0: none)
 * @fold_wait: (jiffies, under @lock, set with @heard_after) how much
 *	later than @heard_after what a peer says counts towards @learned
 *	with three or more peers: a peer may announce a vote cast into its
 *	ballot word that late (%RDMALOG_BALLOT_FOLD_MS; see
 *	rdmalog_elect_counts_from())
 */
struct rdmalog_elect {
	spinlock_t lock; /* see above */
	u64 log_epoch;
	u64 vote_known;
	u64 vote_epoch;
	u32 vote_for;
	bool learned;
	unsigned long heard_after;
	DECLARE_BITMAP(members, RDMALOG_MAX_NODE_ID + 1);
	DECLARE_BITMAP(heard, RDMALOG_MAX_NODE_ID + 1);
	u64 standing;
	bool pre;
	u64 won;
	u64 stood;
	DECLARE_BITMAP(granted, RDMALOG_MAX_NODE_ID + 1);
	DECLARE_BITMAP(refused, RDMALOG_MAX_NODE_ID + 1);
	u32 why;
	wait_queue_head_t stand_wq;
	u64 lead_epoch;
	u64 lead_log_id;
	void (*deposed)(u64 epoch);
	void (*takeover)(u32 from, u64 vote_epoch);
	unsigned long granted_at;
	bool yield;

	struct mutex vote_mutex; /* see above */
	struct rdmalog_log *log;
	u32 node_id;
	u32 role;
	u32 fence_ms;
	u32 hb_ms;
	struct delayed_work beat;
	bool won_hold;
	struct rdmalog_elect_seen {
		u32 peer;
		u64 grant;
		u64 word;
		struct rdmalog_ballot_block blk;
	} seen[RDMALOG_MAX_PEERS];
	u32 nseen;
	u64 seen_epoch;
	unsigned long fold_wait;
};

/* The election state, defined in elect.c. */
extern struct rdmalog_elect rdmalog_elect;

/**
 * struct rdmalog_vote_view - what a voter's rules judge a request by: its
 * own state (rdmalog_elect_judge()), or what a candidate read in its open
 * ballot word and block (the compare-and-swap path)
 * @may: it has learned (&rdmalog_elect_info.learned)
 * @won: it won an epoch it does not lead yet
 * @primary: it is the primary
 * @has_primary: it follows a primary on a live connection
 * @vote_epoch: its vote's epoch
 * @vote_for: and the node it went to (0: nobody)
 * @log_epoch: the highest epoch of a log it knows of
 * @log_id: the log it holds (0: none yet)
 * @pos: its position
 */
struct rdmalog_vote_view {
	bool may;
	bool won;
	bool primary;
	bool has_primary;
	u64 vote_epoch;
	u32 vote_for;
	u64 log_epoch;
	u64 log_id;
	struct rdmalog_log_held pos;
};

/* elect.c */
/* How many peers are configured (&rdmalog_elect.members); lock held. */
u32 rdmalog_elect_members(void);
/* This node may vote: it has learned, or has no peer; lock held. */
bool rdmalog_elect_may_vote(void);
/* An election epoch is known: announce it from now on; lock held. */
void rdmalog_elect_raise_known(u64 epoch);
/* A position in its wire format (VOTE_REQ, VOTE). */
void rdmalog_pos_to_wire(const struct rdmalog_log_held *h,
			 struct rdmalog_pos_wire *w);
/* The operator's text of each &enum rdmalog_vote_reason. */
extern const char *const rdmalog_vote_why[__RDMALOG_VOTE_MAX];
/*
 * The rules a vote is granted by, but fencing: @cand's request for @epoch
 * (@pre: a pre-vote), continuing @log_id at @pos, judged by @v (a voter's
 * own state, or what a candidate read in its ballot word). Return: &enum
 * rdmalog_vote_reason.
 */
u32 rdmalog_vote_rules(const struct rdmalog_vote_view *v, u64 epoch,
		       u32 cand, bool pre, u64 log_id,
		       const struct rdmalog_log_held *pos);

#endif /* _RDMALOG_ELECT_PRIV_H */
