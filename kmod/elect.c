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
 * Here as well: the heartbeat of the election (rdmalog_elect_beat(): the
 * ballot word opened or closed), the up period's start, change of role
 * and stop, and a primary handing its log over (rdmalog_elect_hand_over(),
 * a TAKEOVER). This node standing for election, and the answers to its
 * candidacy, are candidacy.c's.
 *
 * Lock rules: kmod/elect_priv.h states them, above &struct rdmalog_elect,
 * the state this file shares with candidacy.c. Here: the answer to a
 * VOTE_REQ (rdmalog_elect_work()), the beat, the up period's start,
 * change of role and stop, and the hand-over take
 * &rdmalog_elect.vote_mutex (the lock under it), and the answer and the
 * hand-over drop the mutex to fence; everything else takes at most
 * &rdmalog_elect.lock, in any context (the CQ handlers report what they
 * hear; the ballot's found hook runs under the ballot's mutex).
 */
#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "../uapi/rdmalog_genl.h"
#include "ballot.h"
#include "conn.h"
#include "elect.h"
#include "elect_priv.h"
#include "ep.h"
#include "inject.h"
#include "proto.h"
#include "stats.h"

static void rdmalog_elect_beat(struct work_struct *work);

struct rdmalog_elect rdmalog_elect = {
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

u32 rdmalog_elect_members(void)
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

bool rdmalog_elect_may_vote(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	return rdmalog_elect.learned || !rdmalog_elect_members();
}

/* An election epoch is known: announce it from now on, never less. */
void rdmalog_elect_raise_known(u64 epoch)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	if (epoch > rdmalog_elect.vote_known) {
		rdmalog_elect.vote_known = epoch;
		rdmalog_conn_set_vote_epoch(epoch);
	}
}

/**
 * rdmalog_elect_unheld() - nothing holds the ballot word closed any more
 *
 * The ballot's unheld hook (a primary's grant of the ring ended, an
 * answer or a candidacy is over): beat now, which opens the word if this
 * node may be voted for, instead of up to a heartbeat later. Any context.
 */
void rdmalog_elect_unheld(void)
{
	if (READ_ONCE(rdmalog_elect.hb_ms))
		mod_delayed_work(system_long_wq, &rdmalog_elect.beat, 0);
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
 * holds the ring, so it does not change. A word opened now has its block
 * announced in a HEARTBEAT to every peer at once.
 */
static void rdmalog_elect_beat(struct work_struct *work)
{
	struct rdmalog_ballot_block_in in = {};
	struct rdmalog_log_held held;
	bool may, opened = false;

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
		opened = rdmalog_ballot_open(&in) > 0;
	} else {
		rdmalog_ballot_close();
	}
	queue_delayed_work(system_long_wq, &rdmalog_elect.beat,
			   msecs_to_jiffies(rdmalog_elect.hb_ms));
out:
	mutex_unlock(&rdmalog_elect.vote_mutex);
	/*
	 * Its block to the peers now, not at their next heartbeat: a
	 * candidate that knows it reads our word alone.
	 */
	if (opened)
		rdmalog_conn_beat_now();
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

void rdmalog_pos_to_wire(const struct rdmalog_log_held *h,
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

const char *const rdmalog_vote_why[__RDMALOG_VOTE_MAX] = {
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

/*
 * The rules a vote is granted by (Documentation/protocol.rst, "Votes"),
 * but fencing: a request of @cand for @epoch (@pre: a pre-vote), that
 * continues @log_id at @pos, judged by @v. Return: &enum
 * rdmalog_vote_reason.
 */
u32 rdmalog_vote_rules(const struct rdmalog_vote_view *v, u64 epoch,
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
	/* As a voter does; without vote_mutex (see elect_priv.h). */
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
