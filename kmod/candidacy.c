// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - this node standing for election (Documentation/protocol.rst,
 * "Votes" and "Standing and leading"; Documentation/leader-change.rst,
 * "Compare-and-swap where the device has atomics").
 *
 * rdmalog_elect_stand() takes the epoch one above every epoch the node
 * knows of and its own vote in it, fences the primary it follows as a
 * voter would, and asks every connected peer: through the peer's ballot
 * word where it granted us one (the word and its block read and judged
 * by the voters' rules, as the peer would judge a VOTE_REQ, then our
 * vote cast by compare-and-swap: the rdmalog_elect_cas_*() steps, driven
 * by the stand's wait loop), else by a VOTE_REQ, whose VOTE is counted
 * here too (rdmalog_elect_rx_vote()). A pre-vote asks the same question
 * and changes nothing.
 *
 * The election state, the voters' rules (rdmalog_vote_rules()) and the
 * epochs are elect.c's; the two files share kmod/elect_priv.h.
 *
 * Lock rules: kmod/elect_priv.h states them, above &struct rdmalog_elect.
 * Here: a candidacy takes &rdmalog_elect.vote_mutex only to choose its
 * epoch and record its own vote (the ballot word held closed first), and
 * fences and waits for the answers without it; the answers, a VOTE in
 * the CQ handler or what a peer's ballot word said in the standing task,
 * are counted under &rdmalog_elect.lock (rdmalog_elect_count()). A win is
 * taken under the lock too, with the ballot's hold for it (the ballot's
 * spinlock inside). A candidacy is exclusive (@standing): @seen, @nseen
 * and @seen_epoch are touched by the standing task only. Each peer asked
 * through its word is referenced until the candidacy ends
 * (rdmalog_elect_cas_end()).
 */
#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "../uapi/rdmalog_genl.h"
#include "ballot.h"
#include "ballot_mr.h"
#include "conn.h"
#include "elect.h"
#include "elect_priv.h"
#include "ep.h"
#include "inject.h"
#include "proto.h"
#include "stats.h"

/* ------------------------------------------------------------------ */
/* The answers */

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
	if (!epoch || epoch > rdmalog_elect.stood) {
		/* Dropped: nothing of it is used, its epochs neither. */
		err = "VOTE that answers no VOTE_REQ of ours";
	} else {
		rdmalog_elect_raise_known(le64_to_cpu(v->vote_epoch));
		rdmalog_elect_count(peer, epoch, flags & RDMALOG_VOTE_F_PRE,
				    reason);
	}
	spin_unlock_bh(&rdmalog_elect.lock);
	return err;
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
	RDMALOG_ELECT_CAS_WORD,		/* its word read, its block announced */
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
 * @blk: the block read with it (or announced, RDMALOG_ELECT_CAS_WORD)
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

/* A read of a peer's ballot word posted (@word_only: its block announced). */
static void rdmalog_elect_cas_read_stats(bool word_only)
{
	rdmalog_stats_inc(RDMALOG_STAT_CAS_READS);
	if (!word_only)
		rdmalog_stats_inc(RDMALOG_STAT_CAS_BLOCK_READS);
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
		bool ann;
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
		/*
		 * The word alone where the peer's HEARTBEAT told the block of
		 * its open word: if the read finds it open with that block's
		 * sequence, that is the block in force, as a read of it would
		 * return (Documentation/protocol.rst, "By compare-and-swap").
		 */
		x = &c->cas[c->ncas];
		ann = by_cas && rdmalog_ballot_mr_announced(eps[i], &x->blk);
		if (by_cas &&
		    !rdmalog_ballot_mr_read(eps[i], &rdmalog_elect.stand_wq,
					    ann)) {
			rdmalog_elect_cas_read_stats(ann);
			c->ncas++;
			x->ep = eps[i];	/* its reference: the candidacy's */
			x->peer = eps[i]->conn->peer_id;
			x->grant = rdmalog_ballot_mr_grant(eps[i]);
			x->step = ann ? RDMALOG_ELECT_CAS_WORD :
					RDMALOG_ELECT_CAS_READ;
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

/* Read @x's word and block again, or ask by message if that fails. */
static void rdmalog_elect_cas_reread(struct rdmalog_elect_cand *c,
				     struct rdmalog_elect_cas *x)
{
	if (rdmalog_ballot_mr_read(x->ep, &rdmalog_elect.stand_wq, false)) {
		rdmalog_elect_cas_fall_back(c, x,
					    "its ballot word cannot be read");
		return;
	}
	rdmalog_elect_cas_read_stats(false);
	x->step = RDMALOG_ELECT_CAS_READ;
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
		if (x->step == RDMALOG_ELECT_CAS_WORD &&
		    !rdmalog_elect_block_ok(x, w)) {
			if (!(w & RDMALOG_BALLOT_OPEN)) {
				rdmalog_elect_cas_fall_back(c, x,
							    "its ballot word is closed");
				continue;
			}
			/* Not the announced block's opening: read the block. */
			rdmalog_elect_cas_reread(c, x);
			continue;
		}
		if (x->step != RDMALOG_ELECT_CAS_SWAP) {
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
			rdmalog_elect_cas_reread(c, x);
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
	 * vote a candidate cast into it counts against this candidacy. A
	 * pre-vote, which chooses nothing, does not wait for the close: it
	 * runs meanwhile, and the candidacy after it waits for it.
	 */
	if (pre) {
		busy = false;
		if (!rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_STAND))
			rdmalog_ballot_close_soon();
	} else {
		busy = !rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_STAND) &&
		       rdmalog_ballot_close();
	}
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
	/*
	 * Its own vote goes into its closed word meanwhile: nobody else
	 * changes that word, and it opens only once the vote is in.
	 */
	if (!err && !pre)
		rdmalog_ballot_record_soon(epoch, self);
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
