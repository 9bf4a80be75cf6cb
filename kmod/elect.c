// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the election state of this node.
 *
 * What a node must remember to vote safely lives here, for the lifetime
 * of the module (not of an up period: a vote outlives a "node down"):
 *
 * - the highest epoch it knows of, from its own log and every message;
 * - its vote: at most one per epoch, its epochs only growing;
 * - whether it has *learned*: a node whose module was reloaded has
 *   forgotten its votes, so it votes only once it has heard, since it
 *   was loaded, from a majority of the *other* configured nodes (every
 *   HELLO and HEARTBEAT announces the sender's election epoch). Every
 *   majority that elected anyone shares a node other than this one with
 *   the peers it learned from, and that node reports the epoch
 *   (Documentation/leader-change.rst, "Terms", has the argument).
 *
 * Votes (Documentation/protocol.rst, "Votes"): a candidate's VOTE_REQ
 * is answered by a work item, one at a time (&rdmalog_elect.vote_mutex),
 * because granting may first have to *fence* the primary this node
 * follows: its connection is closed and its queue pair destroyed before
 * the position is read from the ring, so no WRITE of it lands afterwards
 * (rdmalog_conn_fence()), and no primary of a lower epoch is granted the
 * ring again.
 *
 * Lock rules: &rdmalog_elect.lock protects every field; it is taken in
 * any context (the CQ handlers report what they hear) with BHs off, and
 * nothing else is taken inside it but the transport's atomic announce
 * (rdmalog_conn_set_vote_epoch()), set under it so that announcements
 * never go back. &rdmalog_elect.vote_mutex (process context) serializes
 * the votes and protects the up period's @log, @node_id, @role and
 * @fence_ms; it is taken before the lock and dropped while fencing
 * sleeps (the fenced primary's close waits for its own vote work, which
 * may wait for the mutex): every rule is checked again after it.
 */
#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "../uapi/rdmalog_genl.h"
#include "ballot.h"
#include "conn.h"
#include "elect.h"
#include "ep.h"
#include "ballot_mr.h"
#include "inject.h"
#include "proto.h"
#include "stats.h"

/**
 * struct rdmalog_elect - the election state, a singleton
 * @lock: protects the fields below up to @heard (see above)
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

static void rdmalog_elect_beat(struct work_struct *work);

static struct rdmalog_elect rdmalog_elect = {
	.lock = __SPIN_LOCK_UNLOCKED(rdmalog_elect.lock),
	.beat = __DELAYED_WORK_INITIALIZER(rdmalog_elect.beat,
					   rdmalog_elect_beat, 0),
	.vote_mutex = __MUTEX_INITIALIZER(rdmalog_elect.vote_mutex),
	.stand_wq = __WAIT_QUEUE_HEAD_INITIALIZER(rdmalog_elect.stand_wq),
};

void rdmalog_elect_set_deposed(void (*deposed)(u64 epoch))
{
	rdmalog_elect.deposed = deposed;
}

void rdmalog_elect_set_takeover(void (*takeover)(u32 from, u64 vote_epoch))
{
	rdmalog_elect.takeover = takeover;
}

void rdmalog_elect_set_yield(bool yield)
{
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.yield = yield;
	spin_unlock_bh(&rdmalog_elect.lock);
}

/* A majority of @n others; none to hear from with no peer. */
static u32 rdmalog_elect_needed(u32 n)
{
	return n ? n / 2 + 1 : 0;
}

static u32 rdmalog_elect_heard_members(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	return bitmap_weight_and(rdmalog_elect.members, rdmalog_elect.heard,
				 RDMALOG_MAX_NODE_ID + 1);
}

static u32 rdmalog_elect_members(void)
{
	return bitmap_weight(rdmalog_elect.members, RDMALOG_MAX_NODE_ID + 1);
}

/*
 * Becomes (and stays) learned once a majority of the configured peers
 * was heard. Without peers there is nobody to hear and nobody else who
 * can have voted: such a node may vote, but it has learned nothing, so
 * peers configured later must still be heard (rdmalog_elect_may_vote()).
 */
static void rdmalog_elect_check_learned(void)
{
	u32 n = rdmalog_elect_members();

	lockdep_assert_held(&rdmalog_elect.lock);
	if (rdmalog_elect.learned || !n ||
	    rdmalog_elect_heard_members() < rdmalog_elect_needed(n))
		return;
	rdmalog_elect.learned = true;
	/*
	 * A vote this node cast before its module was reloaded is forgotten:
	 * it may have been in any epoch up to the highest it heard of now
	 * (Documentation/leader-change.rst, "Terms"). Votes go above it.
	 */
	if (rdmalog_elect.vote_known > rdmalog_elect.vote_epoch) {
		rdmalog_elect.vote_epoch = rdmalog_elect.vote_known;
		rdmalog_elect.vote_for = 0;
		/* Before any vote it may now cast: in order with them. */
		rdmalog_ballot_floor(rdmalog_elect.vote_epoch);
	}
}

/*
 * From when what a peer says counts towards learning: once every
 * candidacy that may have counted a vote of this node's from before its
 * load ended (@heard_after). With three or more peers, a majority of
 * them may share with the majority that elected someone only nodes that
 * voted by compare-and-swap, whose own announcement of that vote lags it
 * (by at most @fold_wait); with one or two, it includes the candidate,
 * which announces its epoch as it stands. Lock held.
 */
static unsigned long rdmalog_elect_counts_from(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	if (rdmalog_elect_members() >= 3)
		return rdmalog_elect.heard_after + rdmalog_elect.fold_wait;
	return rdmalog_elect.heard_after;
}

static bool rdmalog_elect_may_vote(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	return rdmalog_elect.learned || !rdmalog_elect_members();
}

/* An election epoch is known: announce it from now on, never less. */
static void rdmalog_elect_raise_known(u64 epoch)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	if (epoch > rdmalog_elect.vote_known) {
		rdmalog_elect.vote_known = epoch;
		rdmalog_conn_set_vote_epoch(epoch);
	}
}

/* What the open word's block tells may have changed: beat now. */
static void rdmalog_elect_kick(void)
{
	if (READ_ONCE(rdmalog_elect.hb_ms) && rdmalog_ballot_is_open())
		mod_delayed_work(system_long_wq, &rdmalog_elect.beat, 0);
}

/**
 * rdmalog_elect_found() - a candidate's vote was found in the ballot word
 * @epoch: its epoch
 * @node: the candidate
 * @how: where (&enum rdmalog_ballot_found_how)
 *
 * The vote was cast by compare-and-swap into this node's open word: it
 * is this node's vote now, as one it granted by message would be, and
 * fences every primary below @epoch off the ring. The ballot's found
 * hook: runs under the ballot's mutex, so it takes no mutex.
 */
void rdmalog_elect_found(u64 epoch, u32 node, u32 how)
{
	static const char *const where[] = {
		[RDMALOG_BALLOT_FOUND_CLOSE] = "at closing",
		[RDMALOG_BALLOT_FOUND_BEAT] = "at a heartbeat",
		[RDMALOG_BALLOT_FOUND_SYNC] = "after its loopback failed",
		[RDMALOG_BALLOT_FOUND_TAMPER] = "in its closed word",
		[RDMALOG_BALLOT_FOUND_REVOKE] = "once its word was revoked",
	};
	bool taken = false;

	spin_lock_bh(&rdmalog_elect.lock);
	if (epoch > rdmalog_elect.vote_epoch) {
		rdmalog_elect.vote_epoch = epoch;
		rdmalog_elect.vote_for = node;
		if (how != RDMALOG_BALLOT_FOUND_TAMPER)
			rdmalog_elect.granted_at = jiffies;
		rdmalog_elect_raise_known(epoch);
		/* A candidacy of ours in a lower epoch is lost now. */
		wake_up(&rdmalog_elect.stand_wq);
		taken = true;
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	rdmalog_conn_raise_fence(epoch);
	if (taken)
		pr_info("node %u: voted for node %u in epoch %llu by compare-and-swap (found %s)\n",
			rdmalog_elect.node_id, node, epoch,
			how < ARRAY_SIZE(where) ? where[how] : "");
}

/* The ballot word's hold for a won election ends (@lock held or not). */
static void rdmalog_elect_drop_won_hold(void)
{
	bool was;

	spin_lock_bh(&rdmalog_elect.lock);
	was = rdmalog_elect.won_hold;
	rdmalog_elect.won_hold = false;
	spin_unlock_bh(&rdmalog_elect.lock);
	if (was)
		rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_WON);
}

/**
 * rdmalog_elect_set_members() - the configured peers
 * @ids: their node ids, each 1 .. %RDMALOG_MAX_NODE_ID
 * @n: how many
 *
 * Learning counts these only; with none this node has learned at once
 * (nobody else can have voted).
 */
void rdmalog_elect_set_members(const u32 *ids, u32 n)
{
	u32 i;

	spin_lock_bh(&rdmalog_elect.lock);
	bitmap_zero(rdmalog_elect.members, RDMALOG_MAX_NODE_ID + 1);
	for (i = 0; i < n; i++)
		if (ids[i] && ids[i] <= RDMALOG_MAX_NODE_ID)
			__set_bit(ids[i], rdmalog_elect.members);
	rdmalog_elect_check_learned();
	spin_unlock_bh(&rdmalog_elect.lock);
}

/**
 * rdmalog_elect_note_epoch() - this node's own log is in @epoch
 * @epoch: the epoch
 */
void rdmalog_elect_note_epoch(u64 epoch)
{
	bool rose;

	spin_lock_bh(&rdmalog_elect.lock);
	rose = epoch > rdmalog_elect.log_epoch;
	rdmalog_elect.log_epoch = max(rdmalog_elect.log_epoch, epoch);
	spin_unlock_bh(&rdmalog_elect.lock);
	if (rose)
		rdmalog_elect_kick();
}

/**
 * rdmalog_elect_heard() - a peer's HELLO or HEARTBEAT arrived
 * @node_id: the peer (the transport checked it is a configured one)
 * @epoch: the epoch of its message
 * @vote_epoch: the election epoch it announced
 * @primary_log_id: the log it leads, if its HELLO said primary (else 0)
 */
void rdmalog_elect_heard(u32 node_id, u64 epoch, u64 vote_epoch,
			 u64 primary_log_id)
{
	bool rose;

	spin_lock_bh(&rdmalog_elect.lock);
	rose = epoch > rdmalog_elect.log_epoch;
	rdmalog_elect.log_epoch = max(rdmalog_elect.log_epoch, epoch);
	/*
	 * A primary of a later epoch leads our log: a majority elected it
	 * (a new log of a configured primary has another id), so ours
	 * commits nothing more. Step down.
	 */
	if (rdmalog_elect.lead_epoch && epoch > rdmalog_elect.lead_epoch &&
	    primary_log_id == rdmalog_elect.lead_log_id) {
		pr_info("node %u hears node %u lead its log in epoch %llu, above its own %llu\n",
			rdmalog_elect.node_id, node_id, epoch,
			rdmalog_elect.lead_epoch);
		if (rdmalog_elect.deposed)
			rdmalog_elect.deposed(rdmalog_elect.lead_epoch);
		rdmalog_elect.lead_epoch = 0;
	}
	/*
	 * Yielding (failover auto): a later election epoch is announced, so
	 * some node stood, and fenced itself against us: a node whose fence
	 * is above our epoch never takes our records again. Step down, and
	 * let the next election, in a later epoch still, settle it (Raft's
	 * rule for a leader that sees a higher term).
	 */
	if (rdmalog_elect.lead_epoch && rdmalog_elect.yield &&
	    vote_epoch > rdmalog_elect.lead_epoch) {
		pr_info("node %u hears of election epoch %llu from node %u, above its own %llu\n",
			rdmalog_elect.node_id, vote_epoch, node_id,
			rdmalog_elect.lead_epoch);
		if (rdmalog_elect.deposed)
			rdmalog_elect.deposed(rdmalog_elect.lead_epoch);
		rdmalog_elect.lead_epoch = 0;
	}
	rdmalog_elect_raise_known(vote_epoch);
	/* Only what was said after every candidacy of before the load ended. */
	if (node_id && node_id <= RDMALOG_MAX_NODE_ID &&
	    rdmalog_elect.heard_after &&
	    time_after_eq(jiffies, rdmalog_elect_counts_from()) &&
	    !test_bit(node_id, rdmalog_elect.heard)) {
		__set_bit(node_id, rdmalog_elect.heard);
		rdmalog_elect_check_learned();
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	/* The open word's block tells a log epoch no longer the highest. */
	if (rose)
		rdmalog_elect_kick();
}

/**
 * rdmalog_elect_granted_at() - when this node last granted a peer its vote
 *
 * Return: jiffies then, 0 if never since the module loaded.
 */
unsigned long rdmalog_elect_granted_at(void)
{
	unsigned long t;

	spin_lock_bh(&rdmalog_elect.lock);
	t = rdmalog_elect.granted_at;
	spin_unlock_bh(&rdmalog_elect.lock);
	return t;
}

/**
 * rdmalog_elect_get_info() - a consistent snapshot
 * @info: filled
 */
void rdmalog_elect_get_info(struct rdmalog_elect_info *info)
{
	u32 n;

	spin_lock_bh(&rdmalog_elect.lock);
	n = rdmalog_elect_members();
	info->epoch = max(rdmalog_elect.log_epoch, rdmalog_elect.vote_known);
	info->vote_epoch = rdmalog_elect.vote_epoch;
	info->vote_for = rdmalog_elect.vote_for;
	info->learned = rdmalog_elect_may_vote();
	info->heard = rdmalog_elect_heard_members();
	info->needed = rdmalog_elect_needed(n);
	info->wait_ms = 0;
	if (!info->learned && rdmalog_elect.heard_after &&
	    time_before(jiffies, rdmalog_elect_counts_from()))
		info->wait_ms = jiffies_to_msecs(rdmalog_elect_counts_from() -
						 jiffies) ?: 1;
	spin_unlock_bh(&rdmalog_elect.lock);
}

/* ------------------------------------------------------------------ */
/* Votes */

/*
 * Whether this node may be voted for by compare-and-swap now: a learned
 * backup that neither stands nor won nor leads (the ballot adds: and no
 * primary holds its ring, nothing else holds the word closed). Lock held.
 */
static bool rdmalog_elect_may_open(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	return rdmalog_elect.role == RDMALOG_ROLE_BACKUP &&
	       !rdmalog_elect.standing && !rdmalog_elect.won &&
	       !rdmalog_elect.lead_epoch && rdmalog_elect_may_vote() &&
	       rdmalog_elect.vote_epoch <= RDMALOG_BALLOT_MAX_EPOCH;
}

/*
 * Every heartbeat of the up period: take in a vote a candidate cast into
 * the open ballot word, then open it (again, with a new block if what it
 * tells changed: the highest log epoch known, the log) or close it, as
 * the node now may or may not be voted for by compare-and-swap. The
 * block tells the position as it is: while the word is open no primary
 * holds the ring, so it does not change.
 */
static void rdmalog_elect_beat(struct work_struct *work)
{
	struct rdmalog_ballot_block_in in = {};
	struct rdmalog_log_held held;
	bool may;

	rdmalog_inject_delay(RDMALOG_INJ_ELECT_BEAT);
	mutex_lock(&rdmalog_elect.vote_mutex);
	if (!rdmalog_elect.log)
		goto out;
	rdmalog_ballot_beat();
	rdmalog_log_held(rdmalog_elect.log, &held);
	spin_lock_bh(&rdmalog_elect.lock);
	may = rdmalog_elect_may_open();
	in.log_epoch = max(rdmalog_elect.log_epoch, held.epoch);
	spin_unlock_bh(&rdmalog_elect.lock);
	if (may) {
		in.node_id = rdmalog_elect.node_id;
		in.log_id = rdmalog_log_id(rdmalog_elect.log);
		in.pos_epoch = held.epoch;
		in.pos_gen = held.gen;
		in.pos_lsn = held.lsn;
		rdmalog_ballot_open(&in);
	} else {
		rdmalog_ballot_close();
	}
	queue_delayed_work(system_long_wq, &rdmalog_elect.beat,
			   msecs_to_jiffies(rdmalog_elect.hb_ms));
out:
	mutex_unlock(&rdmalog_elect.vote_mutex);
}

void rdmalog_elect_start(struct rdmalog_log *log, u32 node_id, u32 role,
			 u32 fence_ms, u32 hb_ms)
{
	u32 fold_ms = RDMALOG_BALLOT_FOLD_MS(fence_ms);
	struct rdmalog_log_state st;

	rdmalog_log_get(log);
	rdmalog_log_get_state(log, &st);
	mutex_lock(&rdmalog_elect.vote_mutex);
	rdmalog_elect.log = log;
	rdmalog_elect.node_id = node_id;
	rdmalog_elect.role = role;
	rdmalog_elect.fence_ms = fence_ms;
	WRITE_ONCE(rdmalog_elect.hb_ms, hb_ms ?: 1000);
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.lead_epoch = role == RDMALOG_ROLE_PRIMARY ? st.epoch : 0;
	rdmalog_elect.lead_log_id = st.id;
	/* It leads now, or never will the epoch it won. */
	rdmalog_elect.won = 0;
	if (!rdmalog_elect.heard_after) {
		rdmalog_elect.heard_after =
			(jiffies + msecs_to_jiffies(RDMALOG_ELECT_LEARN_WAIT(fence_ms))) ?: 1;
		/* the connections granted a word close as fencing does */
		rdmalog_elect.fold_wait = msecs_to_jiffies(fold_ms);
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	queue_delayed_work(system_long_wq, &rdmalog_elect.beat,
			   msecs_to_jiffies(rdmalog_elect.hb_ms));
	mutex_unlock(&rdmalog_elect.vote_mutex);
	rdmalog_elect_drop_won_hold();
}

void rdmalog_elect_set_role(u32 role)
{
	struct rdmalog_log_state st = {};

	mutex_lock(&rdmalog_elect.vote_mutex);
	if (rdmalog_elect.log)
		rdmalog_log_get_state(rdmalog_elect.log, &st);
	rdmalog_elect.role = role;
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.lead_epoch = role == RDMALOG_ROLE_PRIMARY ? st.epoch : 0;
	rdmalog_elect.lead_log_id = st.id;
	/* It leads now, or never will the epoch it won. */
	rdmalog_elect.won = 0;
	spin_unlock_bh(&rdmalog_elect.lock);
	mutex_unlock(&rdmalog_elect.vote_mutex);
	rdmalog_elect_drop_won_hold();
}

void rdmalog_elect_stop(void)
{
	struct rdmalog_log *log;

	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.lead_epoch = 0;
	spin_unlock_bh(&rdmalog_elect.lock);
	mutex_lock(&rdmalog_elect.vote_mutex);
	log = rdmalog_elect.log;
	rdmalog_elect.log = NULL;
	WRITE_ONCE(rdmalog_elect.hb_ms, 0);
	mutex_unlock(&rdmalog_elect.vote_mutex);
	/* It takes vote_mutex, and sees no log now: it does not re-arm. */
	cancel_delayed_work_sync(&rdmalog_elect.beat);
	if (log)
		rdmalog_log_put(log);
}

static void rdmalog_pos_to_wire(const struct rdmalog_log_held *h,
				struct rdmalog_pos_wire *w)
{
	w->epoch = cpu_to_le64(h->epoch);
	w->lsn = cpu_to_le64(h->lsn);
	w->gen = cpu_to_le32(h->gen);
}

/* Positions compare by epoch, then generation, then LSN. */
static bool rdmalog_pos_below(const struct rdmalog_log_held *a,
			      const struct rdmalog_log_held *b)
{
	if (a->epoch != b->epoch)
		return a->epoch < b->epoch;
	if (a->gen != b->gen)
		return a->gen < b->gen;
	return a->lsn < b->lsn;
}

static const char *const rdmalog_vote_why[__RDMALOG_VOTE_MAX] = {
	[RDMALOG_VOTE_GRANTED]		= "granted",
	[RDMALOG_VOTE_NOT_LEARNED]	= "not heard from a majority of its peers since loaded",
	[RDMALOG_VOTE_VOTED]		= "voted for another node in this epoch or a later one",
	[RDMALOG_VOTE_STALE]		= "an epoch not above every log's it knows of",
	[RDMALOG_VOTE_BEHIND]		= "its log is behind ours",
	[RDMALOG_VOTE_OTHER_LOG]	= "it continues another log",
	[RDMALOG_VOTE_LEADING]		= "this node is the primary",
	[RDMALOG_VOTE_BUSY]		= "busy: fencing the primary, or its ballot word revoked",
	[RDMALOG_VOTE_HAS_PRIMARY]	= "this node follows a live primary",
};

/* rdmalog_elect_judge(): every rule before fencing holds; fence first. */
#define RDMALOG_ELECT_FENCE_FIRST	__RDMALOG_VOTE_MAX

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

/*
 * The rules a vote is granted by (Documentation/protocol.rst, "Votes"),
 * but fencing: a request of @cand for @epoch (@pre: a pre-vote), that
 * continues @log_id at @pos, judged by @v. Return: &enum
 * rdmalog_vote_reason.
 */
static u32 rdmalog_vote_rules(const struct rdmalog_vote_view *v, u64 epoch,
			      u32 cand, bool pre, u64 log_id,
			      const struct rdmalog_log_held *pos)
{
	if (!v->may)
		return RDMALOG_VOTE_NOT_LEARNED;
	/* It won an epoch and is about to lead it. */
	if (v->won)
		return RDMALOG_VOTE_LEADING;
	if (epoch < v->vote_epoch ||
	    (epoch == v->vote_epoch && v->vote_for != cand))
		return RDMALOG_VOTE_VOTED;
	/* A primary may lead this epoch already. */
	if (epoch <= v->log_epoch)
		return RDMALOG_VOTE_STALE;
	/* A primary votes only for the node it hands the log over to. */
	if (v->primary &&
	    (pre || epoch != v->vote_epoch || v->vote_for != cand))
		return RDMALOG_VOTE_LEADING;
	if (pre && v->has_primary)
		return RDMALOG_VOTE_HAS_PRIMARY;
	if (v->log_id && v->log_id != log_id && v->pos.lsn)
		return RDMALOG_VOTE_OTHER_LOG;
	/*
	 * Our position only grows while our primary writes: one already
	 * above the candidate's refuses without fencing anyone.
	 */
	if (rdmalog_pos_below(pos, &v->pos))
		return RDMALOG_VOTE_BEHIND;
	return RDMALOG_VOTE_GRANTED;
}

/*
 * Judge @ee's request from node @cand; on a grant the vote is recorded
 * (and announced) before the answer leaves. @mine: our position, as
 * answered. Until @fenced_epoch (the epoch our ring is fenced below) is
 * the request's, a request that passes every earlier rule is answered
 * %RDMALOG_ELECT_FENCE_FIRST: the caller fences without vote_mutex (the
 * fenced holder's close waits for its own vote work, which may wait for
 * the mutex) and asks again, when every rule is checked anew. A pre-vote
 * (%RDMALOG_VOTE_F_PRE) is judged by the same rules but fences, records
 * and announces nothing, and is refused while @has_primary (we follow a
 * primary on a live connection: ours is not lost). vote_mutex held.
 */
static u32 rdmalog_elect_judge(const struct rdmalog_elect_ep *ee, u32 cand,
			       struct rdmalog_log_held *mine, u64 fenced_epoch,
			       bool has_primary)
{
	bool pre = ee->flags & RDMALOG_VOTE_F_PRE;
	struct rdmalog_log *log = rdmalog_elect.log;
	struct rdmalog_vote_view v = {};
	u32 reason;

	memset(mine, 0, sizeof(*mine));
	if (!log)
		return RDMALOG_VOTE_LEADING;	/* not reached: no connection */
	rdmalog_log_held(log, mine);
	v.pos = *mine;
	v.log_id = rdmalog_log_id(log);
	v.primary = rdmalog_elect.role == RDMALOG_ROLE_PRIMARY;
	v.has_primary = has_primary;
	spin_lock_bh(&rdmalog_elect.lock);
	v.may = rdmalog_elect_may_vote();
	v.won = rdmalog_elect.won;
	v.vote_epoch = rdmalog_elect.vote_epoch;
	v.vote_for = rdmalog_elect.vote_for;
	v.log_epoch = max(rdmalog_elect.log_epoch, mine->epoch);
	spin_unlock_bh(&rdmalog_elect.lock);

	reason = rdmalog_vote_rules(&v, ee->epoch, cand, pre, ee->log_id,
				    &ee->pos);
	if (reason != RDMALOG_VOTE_GRANTED)
		return reason;
	if (pre) {
		spin_lock_bh(&rdmalog_elect.lock);
		rdmalog_elect.granted_at = jiffies;
		spin_unlock_bh(&rdmalog_elect.lock);
		return RDMALOG_VOTE_GRANTED;
	}
	/*
	 * Once fenced below the request's epoch, no primary of a lower one
	 * holds our ring or is granted it again: the ring no longer grows.
	 */
	if (fenced_epoch < ee->epoch)
		return RDMALOG_ELECT_FENCE_FIRST;

	spin_lock_bh(&rdmalog_elect.lock);
	if (rdmalog_elect.won) {
		/* It won meanwhile (the check above ran before the fencing). */
		spin_unlock_bh(&rdmalog_elect.lock);
		return RDMALOG_VOTE_LEADING;
	}
	rdmalog_elect.vote_epoch = ee->epoch;
	rdmalog_elect.vote_for = cand;
	rdmalog_elect.granted_at = jiffies;
	rdmalog_elect_raise_known(ee->epoch);
	/* A candidacy of ours in a lower epoch is lost now. */
	wake_up(&rdmalog_elect.stand_wq);
	spin_unlock_bh(&rdmalog_elect.lock);
	rdmalog_ballot_record(ee->epoch, cand);
	return RDMALOG_VOTE_GRANTED;
}

static void rdmalog_elect_work(struct work_struct *work)
{
	struct rdmalog_elect_ep *ee = container_of(work, struct rdmalog_elect_ep,
						   work);
	struct rdmalog_ep *ep = container_of(ee, struct rdmalog_ep, elect);
	u32 cand = ep->conn->peer_id, reason, fenced = 0, fence_ms;
	bool pre = ee->flags & RDMALOG_VOTE_F_PRE, live = false, busy;
	struct rdmalog_msg_vote m = {};
	struct rdmalog_log_held mine;
	int err;

	rdmalog_inject_delay(RDMALOG_INJ_ELECT_ANSWER);
	/* Before vote_mutex: it takes the transport's locks. */
	if (pre)
		live = rdmalog_conn_has_primary();
	mutex_lock(&rdmalog_elect.vote_mutex);
	/*
	 * The ballot word closed for the whole answer, fencing included: a
	 * vote a candidate cast into it is ours first, and judged by.
	 */
	busy = !rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_ANSWER) &&
	       rdmalog_ballot_close();
	/* Revoked, not read: its vote is not known (the word may hold one). */
	reason = busy ? RDMALOG_VOTE_BUSY :
			rdmalog_elect_judge(ee, cand, &mine, 0, live);
	if (reason == RDMALOG_ELECT_FENCE_FIRST) {
		fence_ms = rdmalog_elect.fence_ms;
		mutex_unlock(&rdmalog_elect.vote_mutex);
		err = rdmalog_conn_fence(ee->epoch, fence_ms, &fenced);
		mutex_lock(&rdmalog_elect.vote_mutex);
		reason = err ? RDMALOG_VOTE_BUSY :
			       rdmalog_elect_judge(ee, cand, &mine, ee->epoch,
						   false);
	}
	spin_lock_bh(&rdmalog_elect.lock);
	m.vote_epoch = cpu_to_le64(rdmalog_elect.vote_epoch);
	m.vote_for = cpu_to_le32(rdmalog_elect.vote_for);
	spin_unlock_bh(&rdmalog_elect.lock);
	if (reason == RDMALOG_VOTE_GRANTED)
		pr_info("node %u: %s node %u in epoch %llu%s (holding epoch %llu, generation %u, LSN %llu)\n",
			rdmalog_elect.node_id,
			pre ? "would vote for" : "voted for", cand, ee->epoch,
			fenced ? ", its primary fenced" : "", mine.epoch,
			mine.gen, mine.lsn);
	else
		pr_info("node %u: refused node %u a %s in epoch %llu: %s\n",
			rdmalog_elect.node_id, cand, pre ? "pre-vote" : "vote",
			ee->epoch, rdmalog_vote_why[reason]);
	mutex_unlock(&rdmalog_elect.vote_mutex);

	m.epoch = cpu_to_le64(ee->epoch);
	m.reason = cpu_to_le32(reason);
	m.flags = cpu_to_le32(ee->flags);
	rdmalog_pos_to_wire(&mine, &m.pos);
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_VOTE, 2);
	if (err && err != -ENOTCONN)
		rdmalog_ep_error(ep, "cannot send a VOTE: %d", err);
	rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_ANSWER);
	clear_bit(0, &ee->pending);
	rdmalog_ep_put(ep);
}

void rdmalog_elect_ep_init(struct rdmalog_ep *ep)
{
	INIT_WORK(&ep->elect.work, rdmalog_elect_work);
	ep->elect.pending = 0;
}

void rdmalog_elect_ep_stop(struct rdmalog_ep *ep)
{
	/* A queued answer holds a reference; one running finishes first. */
	if (cancel_work_sync(&ep->elect.work)) {
		clear_bit(0, &ep->elect.pending);
		rdmalog_ep_put(ep);
	}
}

const char *rdmalog_elect_rx_vote_req(struct rdmalog_ep *ep,
				      const union rdmalog_msg_any *m, u32 len)
{
	const struct rdmalog_msg_vote_req *r = &m->vote_req;
	struct rdmalog_elect_ep *ee = &ep->elect;

	if (!le64_to_cpu(r->epoch))
		return "VOTE_REQ for epoch 0";
	if (r->pos.reserved || r->reserved ||
	    le32_to_cpu(r->flags) & ~RDMALOG_VOTE_F_PRE)
		return "VOTE_REQ with reserved bits set";
	if (test_and_set_bit(0, &ee->pending))
		return "VOTE_REQ before the previous one was answered";
	rdmalog_stats_inc(RDMALOG_STAT_VOTE_REQS_RECEIVED);
	ee->epoch = le64_to_cpu(r->epoch);
	ee->flags = le32_to_cpu(r->flags);
	ee->log_id = le64_to_cpu(r->log_id);
	ee->pos.epoch = le64_to_cpu(r->pos.epoch);
	ee->pos.lsn = le64_to_cpu(r->pos.lsn);
	ee->pos.gen = le32_to_cpu(r->pos.gen);
	rdmalog_ep_get(ep);
	if (!queue_work(system_long_wq, &ee->work)) {
		/* not reached: pending was clear, so the work was idle */
		clear_bit(0, &ee->pending);
		rdmalog_ep_put(ep);
	}
	return NULL;
}

/*
 * Peer @peer answered the candidacy for @epoch (@pre: a pre-vote) with
 * @reason, by message or by its ballot word: counted once per peer, and
 * only while that candidacy runs (else a late answer to an earlier one:
 * nothing to count). Lock held.
 */
static void rdmalog_elect_count(u32 peer, u64 epoch, bool pre, u32 reason)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	if (epoch != rdmalog_elect.standing || !pre != !rdmalog_elect.pre ||
	    peer > RDMALOG_MAX_NODE_ID ||
	    !test_bit(peer, rdmalog_elect.members) ||
	    test_bit(peer, rdmalog_elect.granted) ||
	    test_bit(peer, rdmalog_elect.refused))
		return;
	if (reason == RDMALOG_VOTE_GRANTED) {
		__set_bit(peer, rdmalog_elect.granted);
	} else {
		__set_bit(peer, rdmalog_elect.refused);
		rdmalog_elect.why |= BIT(reason);
	}
	wake_up(&rdmalog_elect.stand_wq);
}

const char *rdmalog_elect_rx_vote(struct rdmalog_ep *ep,
				  const union rdmalog_msg_any *m, u32 len)
{
	const struct rdmalog_msg_vote *v = &m->vote;
	u32 reason = le32_to_cpu(v->reason), peer = ep->conn->peer_id;
	u32 flags = le32_to_cpu(v->flags);
	u64 epoch = le64_to_cpu(v->epoch);
	const char *err = NULL;

	if (reason >= __RDMALOG_VOTE_MAX)
		return "VOTE with an unknown reason";
	if (v->pos.reserved || v->reserved || flags & ~RDMALOG_VOTE_F_PRE)
		return "VOTE with reserved bits set";
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect_raise_known(le64_to_cpu(v->vote_epoch));
	if (!epoch || epoch > rdmalog_elect.stood)
		err = "VOTE that answers no VOTE_REQ of ours";
	else
		rdmalog_elect_count(peer, epoch, flags & RDMALOG_VOTE_F_PRE,
				    reason);
	spin_unlock_bh(&rdmalog_elect.lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Handing over (switchover) */

/**
 * rdmalog_elect_won_done() - the node led the epoch it won, or gave it up
 *
 * Until then (rdmalog_elect_stand() returned 0) this node grants no vote
 * and does not stand; the up period it leads in clears it too.
 */
void rdmalog_elect_won_done(void)
{
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.won = 0;
	spin_unlock_bh(&rdmalog_elect.lock);
	rdmalog_elect_drop_won_hold();
}

/**
 * rdmalog_elect_hand_over() - the primary votes for @target and tells it
 * @target: the backup that takes over: the node checked it holds every
 *	record, and paused its appends
 * @next_lsn: the primary's next LSN, for the record
 * @epochp: out: the epoch it voted in
 *
 * The vote is cast as any other: one above every epoch this node knows
 * of, recorded and announced, and this node fenced at it (a primary
 * holds no ring: nothing to wait for). The TAKEOVER carries it, and
 * @target stands in that epoch with it counted. This node goes on
 * leading, its appends paused, until it hears of the new primary (or of
 * the later epoch, yielding) and steps down.
 *
 * The vote is spent once cast: when sending the TAKEOVER fails, this
 * node has voted in that epoch and votes in it for nobody else (the
 * next switchover or election runs in a later one).
 *
 * Return: 0; -ENOTCONN (@target is not connected: no vote cast);
 * -ENETDOWN (down); -EINVAL (not the primary); -EAGAIN (it has not
 * learned); the error of sending the TAKEOVER (the vote is spent).
 */
int rdmalog_elect_hand_over(u32 target, u64 next_lsn, u64 *epochp)
{
	struct rdmalog_ep *eps[RDMALOG_MAX_PEERS], *ep = NULL;
	struct rdmalog_msg_takeover m = {};
	u32 n, i, self = 0, fence_ms = 0, fenced;
	u64 epoch = 0;
	int err = 0;

	/* The target's endpoint first: no vote is spent on a lost peer. */
	n = rdmalog_conn_live_eps(eps, ARRAY_SIZE(eps));
	for (i = 0; i < n; i++) {
		if (!ep && eps[i]->conn->peer_id == target)
			ep = eps[i];
		else
			rdmalog_ep_put(eps[i]);
	}
	if (!ep)
		return -ENOTCONN;

	mutex_lock(&rdmalog_elect.vote_mutex);
	if (!rdmalog_elect.log)
		err = -ENETDOWN;
	else if (rdmalog_elect.role != RDMALOG_ROLE_PRIMARY)
		err = -EINVAL;
	self = rdmalog_elect.node_id;
	fence_ms = rdmalog_elect.fence_ms;
	spin_lock_bh(&rdmalog_elect.lock);
	if (!err && !rdmalog_elect_may_vote())
		err = -EAGAIN;
	if (!err) {
		epoch = max3(rdmalog_elect.log_epoch, rdmalog_elect.vote_known,
			     rdmalog_elect.vote_epoch) + 1;
		rdmalog_elect.vote_epoch = epoch;
		rdmalog_elect.vote_for = target;
		rdmalog_elect.granted_at = jiffies;
		rdmalog_elect_raise_known(epoch);
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	if (!err)
		rdmalog_ballot_record(epoch, target);
	mutex_unlock(&rdmalog_elect.vote_mutex);
	if (err)
		goto out_put;
	*epochp = epoch;
	/* As a voter does; without vote_mutex (see the top of this file). */
	rdmalog_conn_fence(epoch, fence_ms, &fenced);

	m.vote_epoch = cpu_to_le64(epoch);
	m.next_lsn = cpu_to_le64(next_lsn);
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_TAKEOVER, 2);
	if (!err)
		pr_info("node %u: hands the log over to node %u at LSN %llu: voted for it in epoch %llu\n",
			self, target, next_lsn, epoch);
out_put:
	rdmalog_ep_put(ep);
	return err;
}

const char *rdmalog_elect_rx_takeover(struct rdmalog_ep *ep,
				      const union rdmalog_msg_any *m, u32 len)
{
	u64 epoch = le64_to_cpu(m->takeover.vote_epoch);

	if (!epoch)
		return "TAKEOVER with vote epoch 0";
	if (rdmalog_elect.takeover)
		rdmalog_elect.takeover(ep->conn->peer_id, epoch);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Standing */

/*
 * This node's own vote went, in the epoch it stands for or a later one,
 * to another candidate: its candidacy is lost. Lock held.
 */
static bool rdmalog_elect_voted_away(u32 self)
{
	u64 e = rdmalog_elect.standing;

	lockdep_assert_held(&rdmalog_elect.lock);
	return rdmalog_elect.vote_epoch > e ||
	       (rdmalog_elect.vote_epoch == e && rdmalog_elect.vote_for != self);
}

/*
 * Whether the candidacy is decided: a majority granted (this node's own
 * vote included), or so many of the @reach nodes that can answer (those
 * asked, and itself) refused that no majority is left, or this node
 * meanwhile voted for another candidate in its epoch or a later one.
 */
static bool rdmalog_elect_decided(u32 needed, u32 reach, u32 self)
{
	u32 yes, no;
	bool ret;

	spin_lock_bh(&rdmalog_elect.lock);
	yes = 1 + bitmap_weight_and(rdmalog_elect.granted,
				    rdmalog_elect.members,
				    RDMALOG_MAX_NODE_ID + 1);
	no = bitmap_weight_and(rdmalog_elect.refused, rdmalog_elect.members,
			       RDMALOG_MAX_NODE_ID + 1);
	ret = yes >= needed || reach - min(no, reach) < needed ||
	      rdmalog_elect_voted_away(self);
	spin_unlock_bh(&rdmalog_elect.lock);
	return ret;
}

/* Why a majority refused, in the words of its most telling reason. */
static const char *rdmalog_elect_refusal_msg(u32 why)
{
	if (why & BIT(RDMALOG_VOTE_BEHIND))
		return "refused by a majority: a voter holds more of the log than this node";
	if (why & BIT(RDMALOG_VOTE_LEADING))
		return "refused by a majority: a voter is the primary";
	if (why & BIT(RDMALOG_VOTE_HAS_PRIMARY))
		return "refused by a majority: a voter follows a live primary";
	if (why & BIT(RDMALOG_VOTE_OTHER_LOG))
		return "refused by a majority: a voter holds another log";
	if (why & BIT(RDMALOG_VOTE_NOT_LEARNED))
		return "refused by a majority: a voter reloaded has not learned the epoch";
	if (why & BIT(RDMALOG_VOTE_BUSY))
		return "refused by a majority: a voter was busy (fencing, or its word revoked)";
	return "refused by a majority: a voter voted in this epoch or knows a later one";
}

/* A compare-and-swap on one peer's word is tried this often, at most. */
#define RDMALOG_ELECT_CAS_TRIES		4

/* Where a candidacy stands with one peer's ballot word. */
enum {
	RDMALOG_ELECT_CAS_READ,		/* its word and block being read */
	RDMALOG_ELECT_CAS_SWAP,		/* our compare-and-swap posted */
	RDMALOG_ELECT_CAS_DONE,		/* counted, asked by message, or lost */
};

/**
 * struct rdmalog_elect_cas - a candidacy on one peer's ballot word
 * @ep: the connection (referenced for the candidacy)
 * @peer: its node id
 * @step: RDMALOG_ELECT_CAS_*
 * @tries: compare-and-swaps that found the word changed
 * @word: the word as read (or as a failed compare-and-swap returned it)
 * @swap: what our compare-and-swap puts there
 * @blk: the block read with it
 * @seen: @word and @blk are the pre-vote's (&rdmalog_elect.seen), not
 *	read in this candidacy
 * @granted: (a pre-vote) the word grants it
 * @grant: the grant @word was read under (rdmalog_ballot_mr_grant())
 */
struct rdmalog_elect_cas {
	struct rdmalog_ep *ep;
	u32 peer;
	u32 step;
	u32 tries;
	u64 word;
	u64 swap;
	struct rdmalog_ballot_block blk;
	bool seen;
	bool granted;
	u64 grant;
};

/**
 * struct rdmalog_elect_cand - a candidacy: what it asks, and how
 * @epoch: the epoch it stands for
 * @self: this node
 * @pre: a pre-vote
 * @held: its position
 * @req: its VOTE_REQ
 * @cas: the peers asked through their ballot word (NULL: none can be)
 * @ncas: how many
 * @deadline: jiffies after which nothing is judged, swapped or counted
 */
struct rdmalog_elect_cand {
	u64 epoch;
	u32 self;
	bool pre;
	unsigned long deadline;
	struct rdmalog_log_held held;
	struct rdmalog_msg_vote_req req;
	struct rdmalog_elect_cas *cas;
	u32 ncas;
};

/* Send @c's VOTE_REQ on @ep. Return: it was sent. */
static bool rdmalog_elect_send_req(struct rdmalog_ep *ep,
				   struct rdmalog_elect_cand *c)
{
	int err = rdmalog_ep_send(ep, &c->req, sizeof(c->req),
				  RDMALOG_MSG_VOTE_REQ, 2);

	if (err && err != -ENOTCONN)
		rdmalog_ep_error(ep, "cannot send a VOTE_REQ: %d", err);
	return !err;
}

static void rdmalog_elect_cas_judge(struct rdmalog_elect_cand *c,
				    struct rdmalog_elect_cas *x, u64 w);

/*
 * What @c's pre-vote saw in the ballot word @ep holds the grant of: the
 * entry, or NULL when there is none to go on (the word is to be read).
 */
static const struct rdmalog_elect_seen *
rdmalog_elect_seen_for(const struct rdmalog_elect_cand *c,
		       struct rdmalog_ep *ep)
{
	u64 grant = rdmalog_ballot_mr_grant(ep);
	u32 i;

	if (c->pre || !grant || rdmalog_elect.seen_epoch != c->epoch)
		return NULL;
	for (i = 0; i < rdmalog_elect.nseen; i++)
		if (rdmalog_elect.seen[i].peer == ep->conn->peer_id &&
		    rdmalog_elect.seen[i].grant == grant)
			return &rdmalog_elect.seen[i];
	return NULL;
}

/* A pre-vote won: keep what it saw in the words that granted it. */
static void rdmalog_elect_seen_keep(const struct rdmalog_elect_cand *c)
{
	u32 i, n = 0;

	for (i = 0; i < c->ncas && n < ARRAY_SIZE(rdmalog_elect.seen); i++) {
		const struct rdmalog_elect_cas *x = &c->cas[i];

		if (!x->granted)
			continue;
		rdmalog_elect.seen[n].peer = x->peer;
		rdmalog_elect.seen[n].grant = x->grant;
		rdmalog_elect.seen[n].word = x->word;
		rdmalog_elect.seen[n].blk = x->blk;
		n++;
	}
	rdmalog_elect.nseen = n;
	rdmalog_elect.seen_epoch = n ? c->epoch : 0;
}

/*
 * Ask every connected peer for its vote: through its ballot word where
 * it granted us one (on devices with atomics: a read of the word and the
 * block, then a compare-and-swap), else by a VOTE_REQ.
 */
static u32 rdmalog_elect_ask(struct rdmalog_elect_cand *c, u64 log_id,
			     u32 flags)
{
	struct rdmalog_ep *eps[RDMALOG_MAX_PEERS];
	u32 n, i, asked = 0;

	c->req.epoch = cpu_to_le64(c->epoch);
	c->req.log_id = cpu_to_le64(log_id);
	c->req.flags = cpu_to_le32(flags);
	rdmalog_pos_to_wire(&c->held, &c->req.pos);
	n = rdmalog_conn_live_eps(eps, ARRAY_SIZE(eps));
	for (i = 0; i < n; i++) {
		const struct rdmalog_elect_seen *seen;
		struct rdmalog_elect_cas *x;
		bool by_cas = c->cas && c->epoch <= RDMALOG_BALLOT_MAX_EPOCH &&
			      rdmalog_ballot_mr_usable(eps[i]);

		seen = by_cas ? rdmalog_elect_seen_for(c, eps[i]) : NULL;
		if (seen) {
			/* Straight to the compare-and-swap, on what it saw. */
			x = &c->cas[c->ncas++];
			x->ep = eps[i];	/* its reference: the candidacy's */
			x->peer = seen->peer;
			x->grant = seen->grant;
			x->blk = seen->blk;
			x->seen = true;
			rdmalog_elect_cas_judge(c, x, seen->word);
			asked++;
			continue;
		}
		if (by_cas &&
		    !rdmalog_ballot_mr_read(eps[i], &rdmalog_elect.stand_wq)) {
			rdmalog_stats_inc(RDMALOG_STAT_CAS_READS);
			x = &c->cas[c->ncas++];
			x->ep = eps[i];	/* its reference: the candidacy's */
			x->peer = eps[i]->conn->peer_id;
			x->grant = rdmalog_ballot_mr_grant(eps[i]);
			x->step = RDMALOG_ELECT_CAS_READ;
			asked++;
			continue;
		}
		if (rdmalog_elect_send_req(eps[i], c))
			asked++;
		rdmalog_ep_put(eps[i]);
	}
	return asked;
}

/* An operation on a peer's word completed and waits to be judged. */
static bool rdmalog_elect_cas_ready(const struct rdmalog_elect_cand *c)
{
	u32 i;

	for (i = 0; i < c->ncas; i++)
		if (c->cas[i].step != RDMALOG_ELECT_CAS_DONE &&
		    !test_bit(RDMALOG_EP_CAS_BUSY, &c->cas[i].ep->flags))
			return true;
	return false;
}

/*
 * @x's word cannot be used after all (closed, another block, or its
 * races): ask by message.
 */
static void rdmalog_elect_cas_fall_back(struct rdmalog_elect_cand *c,
					struct rdmalog_elect_cas *x,
					const char *why)
{
	pr_debug("node %u: asks node %u by message in epoch %llu: %s\n",
		 c->self, x->peer, c->epoch, why);
	rdmalog_elect_send_req(x->ep, c);
	x->step = RDMALOG_ELECT_CAS_DONE;
}

/* @x's block is the one in force while its word @w is open. */
static bool rdmalog_elect_block_ok(const struct rdmalog_elect_cas *x, u64 w)
{
	const struct rdmalog_ballot_block *blk = &x->blk;

	return (w & RDMALOG_BALLOT_OPEN) &&
	       le32_to_cpu(blk->magic) == RDMALOG_BALLOT_MAGIC &&
	       le32_to_cpu(blk->seq) == rdmalog_ballot_seq(w) &&
	       le32_to_cpu(blk->node_id) == x->peer && !blk->flags &&
	       !blk->reserved && !blk->pos.reserved;
}

/*
 * Judge @x's word @w (with its block) by the voters' rules, as the peer
 * would judge our VOTE_REQ: count a refusal or a pre-vote, or cast our
 * vote by compare-and-swap.
 */
static void rdmalog_elect_cas_judge(struct rdmalog_elect_cand *c,
				    struct rdmalog_elect_cas *x, u64 w)
{
	const struct rdmalog_ballot_block *blk = &x->blk;
	struct rdmalog_vote_view v = {
		/* open: learned, and neither won, nor leads, nor follows */
		.may = true,
		.vote_epoch = rdmalog_ballot_epoch(w),
		.vote_for = rdmalog_ballot_for(w),
		.log_epoch = le64_to_cpu(blk->log_epoch),
		.log_id = le64_to_cpu(blk->log_id),
		.pos.epoch = le64_to_cpu(blk->pos.epoch),
		.pos.lsn = le64_to_cpu(blk->pos.lsn),
		.pos.gen = le32_to_cpu(blk->pos.gen),
	};
	u32 reason;

	x->word = w;
	reason = rdmalog_vote_rules(&v, c->epoch, c->self, c->pre,
				    le64_to_cpu(c->req.log_id), &c->held);
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect_raise_known(v.vote_epoch);
	if (reason != RDMALOG_VOTE_GRANTED || c->pre)
		rdmalog_elect_count(x->peer, c->epoch, c->pre, reason);
	spin_unlock_bh(&rdmalog_elect.lock);
	if (reason != RDMALOG_VOTE_GRANTED) {
		rdmalog_stats_inc(RDMALOG_STAT_CAS_REFUSED);
		pr_info("node %u: node %u's ballot word refuses it a %s in epoch %llu: %s\n",
			c->self, x->peer, c->pre ? "pre-vote" : "vote",
			c->epoch, rdmalog_vote_why[reason]);
		x->step = RDMALOG_ELECT_CAS_DONE;
		return;
	}
	if (c->pre) {
		/* A pre-vote reads only: nothing is cast. */
		rdmalog_stats_inc(RDMALOG_STAT_CAS_VOTES);
		x->granted = true;
		x->step = RDMALOG_ELECT_CAS_DONE;
		return;
	}
	rdmalog_inject_delay(RDMALOG_INJ_ELECT_CAS);
	if (time_after_eq(jiffies, c->deadline)) {
		/* Too late to count: cast nothing (the vote stays the peer's). */
		x->step = RDMALOG_ELECT_CAS_DONE;
		return;
	}
	x->swap = rdmalog_ballot_cast(w, c->epoch, c->self);
	if (rdmalog_ballot_mr_cas(x->ep, w, x->swap,
				  &rdmalog_elect.stand_wq)) {
		x->step = RDMALOG_ELECT_CAS_DONE;	/* lost: unanswered */
		return;
	}
	x->step = RDMALOG_ELECT_CAS_SWAP;
}

/* Take what completed on the peers' words. Process context. */
static void rdmalog_elect_cas_steps(struct rdmalog_elect_cand *c)
{
	struct rdmalog_elect_cas *x;
	u64 w = 0, old = 0;
	u32 i;
	int err;

	for (i = 0; i < c->ncas; i++) {
		x = &c->cas[i];
		if (x->step == RDMALOG_ELECT_CAS_DONE)
			continue;
		err = rdmalog_ballot_mr_result(x->ep, &w, &old,
					       x->step == RDMALOG_ELECT_CAS_READ ?
					       &x->blk : NULL);
		if (err == -EINPROGRESS)
			continue;
		if (err) {
			/* Its connection is being closed: not answered. */
			x->step = RDMALOG_ELECT_CAS_DONE;
			continue;
		}
		if (x->step == RDMALOG_ELECT_CAS_READ) {
			if (!rdmalog_elect_block_ok(x, w))
				rdmalog_elect_cas_fall_back(c, x,
							    "its ballot word is closed");
			else
				rdmalog_elect_cas_judge(c, x, w);
			continue;
		}
		/* An atomic retried by the device may return its own swap. */
		if (old == x->word || old == x->swap) {
			rdmalog_stats_inc(RDMALOG_STAT_CAS_VOTES);
			spin_lock_bh(&rdmalog_elect.lock);
			rdmalog_elect_count(x->peer, c->epoch, false,
					    RDMALOG_VOTE_GRANTED);
			spin_unlock_bh(&rdmalog_elect.lock);
			pr_info("node %u: node %u voted for it in epoch %llu by compare-and-swap\n",
				c->self, x->peer, c->epoch);
			x->step = RDMALOG_ELECT_CAS_DONE;
			continue;
		}
		/* Another candidate's vote, on the same block: judged again. */
		if (rdmalog_ballot_is_cast(old, x->word) &&
		    ++x->tries < RDMALOG_ELECT_CAS_TRIES) {
			rdmalog_stats_inc(RDMALOG_STAT_CAS_RACES);
			rdmalog_elect_cas_judge(c, x, old);
		} else if (x->seen) {
			/* What the pre-vote saw is gone: read it now. */
			x->seen = false;
			if (rdmalog_ballot_mr_read(x->ep, &rdmalog_elect.stand_wq)) {
				rdmalog_elect_cas_fall_back(c, x,
							    "its ballot word cannot be read");
			} else {
				rdmalog_stats_inc(RDMALOG_STAT_CAS_READS);
				x->step = RDMALOG_ELECT_CAS_READ;
			}
		} else {
			rdmalog_stats_inc(RDMALOG_STAT_CAS_RACES);
			rdmalog_elect_cas_fall_back(c, x,
						    "its ballot word changed");
		}
	}
}

/* The candidacy is over: what is still posted completes uncounted. */
static void rdmalog_elect_cas_end(struct rdmalog_elect_cand *c)
{
	u32 i;

	for (i = 0; i < c->ncas; i++)
		rdmalog_ep_put(c->cas[i].ep);
	kfree(c->cas);
	c->cas = NULL;
	c->ncas = 0;
}

/**
 * rdmalog_elect_stand() - stand for election in the next epoch
 * @res: out: the epoch stood for, the position it stood with, the votes
 *	and the reasons of the refusals
 * @pre: only a pre-vote: ask whether it would win, changing nothing
 * @from: 0, or the primary that handed the log over to this node (its
 *	TAKEOVER) with its vote in @from_epoch
 * @from_epoch: see @from
 *
 * The node takes the epoch one above every epoch it knows of, votes for
 * itself (its vote in that epoch is spent), fences the primary it follows
 * as a voter would, and asks every connected peer; it wins once a
 * majority of the configured nodes, itself included, granted. With @pre
 * it asks the same question with %RDMALOG_VOTE_F_PRE and neither votes,
 * fences nor announces anything: the peers that still follow a live
 * primary refuse, so a node that merely lost touch (it was paused, or cut
 * off) does not make the others' primary yield. Process context; sleeps
 * up to twice the fencing time and a second (@pre: the fencing time).
 * With @from, it stands in @from_epoch with @from's vote counted, if it
 * knows of no later epoch and has not voted in it (else as without).
 *
 * Return: 0 (won: @res->epoch is this node's to lead; @pre: it would
 * win), -ENETDOWN (not up), -EALREADY (the primary), -EAGAIN (it has not
 * learned yet: it may neither vote nor stand), -EBUSY (it could not
 * fence its primary in time, or it stands already), -ECONNREFUSED (too
 * many refused, @res->why says why; or it voted for another candidate
 * meanwhile), -ETIMEDOUT (too few answered), -EINTR (a signal).
 */
int rdmalog_elect_stand(struct rdmalog_elect_result *res, bool pre,
			u32 from, u64 from_epoch)
{
	u32 nodes, needed, self, fence_ms, fenced = 0;
	struct rdmalog_elect_cand c = {};
	struct rdmalog_log *log;
	bool away = false, busy;
	ktime_t t0;
	long left;
	u64 epoch, id;
	int err = 0;

	memset(res, 0, sizeof(*res));
	mutex_lock(&rdmalog_elect.vote_mutex);
	log = rdmalog_elect.log;
	if (!log)
		err = -ENETDOWN;
	else if (rdmalog_elect.role == RDMALOG_ROLE_PRIMARY)
		err = -EALREADY;
	if (err) {
		mutex_unlock(&rdmalog_elect.vote_mutex);
		res->msg = err == -ENETDOWN ? "the log is down" :
					      "this node is the primary";
		return err;
	}
	rdmalog_log_get(log);
	self = rdmalog_elect.node_id;
	fence_ms = rdmalog_elect.fence_ms;
	/*
	 * The ballot word closed before the epoch is chosen, until the
	 * candidacy ends (a win keeps it closed until the node leads): a
	 * vote a candidate cast into it counts against this candidacy.
	 */
	busy = !rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_STAND) &&
	       rdmalog_ballot_close();
	spin_lock_bh(&rdmalog_elect.lock);
	if (busy) {
		/* Its own vote is not known: the word may hold another's. */
		err = -EBUSY;
		res->msg = "its ballot word is being revoked (its loopback failed)";
	} else if (rdmalog_elect.standing) {
		err = -EBUSY;
		res->msg = "it stands for election already";
	} else if (rdmalog_elect.won) {
		err = -EBUSY;
		res->msg = "it won an election and is about to lead";
	} else if (!rdmalog_elect_may_vote()) {
		err = -EAGAIN;
		res->msg = "it has not heard from a majority of its peers since loaded";
	} else {
		epoch = max3(rdmalog_elect.log_epoch, rdmalog_elect.vote_known,
			     rdmalog_elect.vote_epoch) + 1;
		if (from && from_epoch + 1 >= epoch &&
		    from_epoch > rdmalog_elect.log_epoch &&
		    from_epoch > rdmalog_elect.vote_epoch &&
		    test_bit(from, rdmalog_elect.members))
			epoch = from_epoch;
		else
			from = 0;
		if (!pre) {
			rdmalog_elect.vote_epoch = epoch;
			rdmalog_elect.vote_for = self;
			rdmalog_elect_raise_known(epoch);
		}
		rdmalog_elect.standing = epoch;
		rdmalog_elect.pre = pre;
		rdmalog_elect.stood = max(rdmalog_elect.stood, epoch);
		bitmap_zero(rdmalog_elect.granted, RDMALOG_MAX_NODE_ID + 1);
		bitmap_zero(rdmalog_elect.refused, RDMALOG_MAX_NODE_ID + 1);
		if (from)
			__set_bit(from, rdmalog_elect.granted);
		rdmalog_elect.why = 0;
	}
	nodes = rdmalog_elect_members() + 1;
	spin_unlock_bh(&rdmalog_elect.lock);
	if (!err && !pre)
		rdmalog_ballot_record(epoch, self);
	mutex_unlock(&rdmalog_elect.vote_mutex);
	if (err)
		goto out_unhold;
	needed = nodes / 2 + 1;
	res->epoch = epoch;
	res->needed = needed;
	t0 = ktime_get();

	/* As a voter does: nothing of an older primary lands any more. */
	if (!pre) {
		err = rdmalog_conn_fence(epoch, fence_ms, &fenced);
		res->fence_ms = ktime_ms_delta(ktime_get(), t0);
		if (err) {
			err = -EBUSY;
			res->msg = "could not fence the primary it follows in time";
			rdmalog_elect.seen_epoch = 0;	/* the next stand's no more */
			goto out_clear;
		}
	}
	rdmalog_log_held(log, &res->held);
	id = rdmalog_log_id(log);
	pr_info("node %u: %s epoch %llu (holding epoch %llu, generation %u, LSN %llu)%s\n",
		self, pre ? "asks whether it would win" : "stands for",
		epoch, res->held.epoch, res->held.gen, res->held.lsn,
		fenced ? ", its primary fenced" : "");
	c.epoch = epoch;
	c.self = self;
	c.pre = pre;
	c.held = res->held;
	/* Without it, every peer is asked by message. */
	c.cas = kcalloc(RDMALOG_MAX_PEERS, sizeof(*c.cas), GFP_KERNEL);
	c.deadline = jiffies + msecs_to_jiffies(pre ? fence_ms :
						2 * fence_ms + 1000);
	res->asked = rdmalog_elect_ask(&c, id, pre ? RDMALOG_VOTE_F_PRE : 0);
	/* What a pre-vote read serves its very next candidacy's ask only. */
	rdmalog_elect.seen_epoch = 0;
	/*
	 * Until decided or the deadline: the answers by message are counted
	 * as they come (rdmalog_elect_rx_vote()), the operations on the
	 * peers' ballot words here, as they complete. Nothing is swapped
	 * or counted after the deadline: a compare-and-swap that completes
	 * later spends that peer's vote for nothing.
	 */
	for (;;) {
		left = wait_event_interruptible_timeout(rdmalog_elect.stand_wq,
							rdmalog_elect_decided(needed,
									      res->asked + 1,
									      self) ||
							rdmalog_elect_cas_ready(&c),
							max_t(long, c.deadline - jiffies, 0));
		if (left <= 0 ||
		    rdmalog_elect_decided(needed, res->asked + 1, self))
			break;
		/* Past it, nothing more is judged, swapped or counted. */
		if (time_after_eq(jiffies, c.deadline))
			break;
		rdmalog_elect_cas_steps(&c);
	}
	spin_lock_bh(&rdmalog_elect.lock);
	res->granted = 1 + bitmap_weight_and(rdmalog_elect.granted,
					     rdmalog_elect.members,
					     RDMALOG_MAX_NODE_ID + 1);
	res->refused = bitmap_weight_and(rdmalog_elect.refused,
					 rdmalog_elect.members,
					 RDMALOG_MAX_NODE_ID + 1);
	res->why = rdmalog_elect.why;
	away = rdmalog_elect_voted_away(self);
	/* Under the lock with the check: no vote goes elsewhere after it. */
	if (!pre && !away && res->granted >= needed) {
		rdmalog_elect.won = epoch;
		/* Closed (the stand's hold) until it leads: a hold of its own. */
		if (!rdmalog_elect.won_hold) {
			rdmalog_elect.won_hold = true;
			rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_WON);
		}
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	if (pre && res->granted >= needed)
		rdmalog_elect_seen_keep(&c);
	rdmalog_elect_cas_end(&c);
	res->elect_ms = ktime_ms_delta(ktime_get(), t0);
	if (away) {
		err = -ECONNREFUSED;
		res->msg = "it voted for another candidate meanwhile";
	} else if (res->granted >= needed) {
		err = 0;
	} else if (left < 0) {
		err = -EINTR;
		res->msg = "interrupted";
	} else if (res->asked + 1 < needed) {
		err = -ETIMEDOUT;
		res->msg = "too few of the configured nodes are connected";
	} else if (res->asked + 1 - min(res->refused, res->asked) < needed) {
		err = -ECONNREFUSED;
		res->msg = rdmalog_elect_refusal_msg(res->why);
	} else {
		err = -ETIMEDOUT;
		res->msg = "too few of the configured nodes answered in time";
	}
	pr_info("node %u: %s%s epoch %llu: %u of %u votes, %u needed, %u refused%s\n",
		self, err ? "lost" : "won", pre ? " the pre-vote of" : "",
		epoch, res->granted, nodes, needed, res->refused,
		away ? ", voted for another" : "");
out_clear:
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.standing = 0;
	rdmalog_elect.pre = false;
	spin_unlock_bh(&rdmalog_elect.lock);
out_unhold:
	rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_STAND);
	rdmalog_log_put(log);
	return err;
}
