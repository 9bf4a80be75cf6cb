// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the ballot word (Documentation/leader-change.rst,
 * "Compare-and-swap where the device has atomics").
 *
 * This node's vote, kept for the module's lifetime in 8 bytes at the
 * start of a page of its own (candidates will READ the ballot block at
 * %RDMALOG_BALLOT_BLOCK_OFF; the loopback's own atomics return their
 * result at %RDMALOG_BALLOT_RESULT_OFF). An RDMA atomic of rxe, or of an
 * HCA whose atomic_cap is IB_ATOMIC_HCA, is atomic against the device's
 * other atomics only, not against the CPU's stores: so, while an up
 * period runs on a device with atomics, this node changes the word only
 * by atomics posted on a loopback connection, an RC queue pair connected
 * by rdma_cm to the node's own listen address on an ephemeral port
 * (ballot_loop.c), and never with a store. Its value is read the same way
 * (a fetch-and-add of 0): the device, not the CPU, says how it lays the
 * word out in memory.
 *
 * Open and closed: the election opens the word for candidates (with the
 * ballot block at %RDMALOG_BALLOT_BLOCK_OFF written first) only while
 * nothing holds it closed (rdmalog_ballot_hold(): a ring granted to a
 * primary, a VOTE_REQ answered, a candidacy, a won election), and every
 * holder that found it open closes it (rdmalog_ballot_close()) before it
 * acts. A closing compare-and-swap that fails found a vote a candidate
 * cast: it is handed to the election (the found hook) and the close is
 * tried again from it. While the word is closed only this node changes
 * it; a word that changed anyway (a peer's atomic on a closed word) is
 * taken as a vote, conservatively, and no longer used (OFF).
 *
 * This file holds what the word means: the vote put into it
 * (rdmalog_ballot_record(), rdmalog_ballot_floor(), and the sync that a
 * set-up and the work run), its opening and closing, the holds, a vote
 * found in it handed to the election, the CPU's read of it after a
 * revocation, status, and the module's init and exit. The loopback that
 * carries every atomic, its set-up, tear-down and retries, the up period
 * and the page's DMA mapping are ballot_loop.c's.
 *
 * Lock rules (all of them at &struct rdmalog_ballot, ballot_priv.h):
 * &rdmalog_ballot.mutex (process context) serializes every atomic on the
 * loopback; it is taken after the election's vote_mutex, and the found
 * hook runs under it (it takes the election's spinlock and the ring's,
 * never a mutex). &rdmalog_ballot.lock (a spinlock, _bh) protects the
 * holds and @wstate, so that a hold and an opening exclude each other
 * without the mutex, and the owner's copy @word, the vote @want it is to
 * hold and whether it does (@synced).
 */
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/swab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ballot.h"
#include "ballot_priv.h"
#include "inject.h"
#include "proto.h"
#include "stats.h"

/* Votes a closing takes in before it gives up (each one a later epoch). */
#define RDMALOG_BALLOT_CLOSE_TRIES	64

/* The vote's bits of a word: its epoch and the node it went to. */
#define RDMALOG_BALLOT_VOTE_MASK	(~0ULL << RDMALOG_BALLOT_FOR_SHIFT)

struct rdmalog_ballot rdmalog_ballot;

static struct rdmalog_ballot *const b = &rdmalog_ballot;

/*
 * The ballot's work, on a queue of its own: its set-up may wait seconds
 * for its connection, and the transport's flushes of rdmalog_conn_wq
 * (closing connections) must not wait for that.
 */
struct workqueue_struct *rdmalog_ballot_wq;

/* @w opened or closed by its owner: the vote kept, the sequence on. */
static u64 rdmalog_ballot_flip(u64 w, bool open)
{
	return (w & RDMALOG_BALLOT_VOTE_MASK) |
	       (((u64)rdmalog_ballot_seq(w) + 1) & RDMALOG_BALLOT_SEQ_MASK) <<
	       RDMALOG_BALLOT_SEQ_SHIFT | (open ? RDMALOG_BALLOT_OPEN : 0);
}

/* ------------------------------------------------------------------ */
/* What the word holds: votes found in it, the vote put into it */

/*
 * A vote a candidate cast into the word, in @w (found @how): this node's
 * vote is now at least that one; the election takes it. Mutex held.
 */
static void rdmalog_ballot_fold(u64 w, u32 how)
{
	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	if (rdmalog_ballot_epoch(w) > rdmalog_ballot_epoch(b->want))
		b->want = w & RDMALOG_BALLOT_VOTE_MASK;
	spin_unlock_bh(&b->lock);
	rdmalog_stats_inc(RDMALOG_STAT_BALLOT_FOLDS);
	if (b->found)
		b->found(rdmalog_ballot_epoch(w), rdmalog_ballot_for(w), how);
}

/*
 * The word holds @w where only this node could have changed it: a peer's
 * atomic, or a device that does not keep its word. Its vote is taken
 * (conservatively: a vote in a later epoch only refuses more), and the
 * word is no longer used: votes go by message. Mutex held.
 */
static void rdmalog_ballot_tamper(u64 w)
{
	u64 was;

	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	was = b->word;
	spin_unlock_bh(&b->lock);
	pr_warn("ballot word: 0x%016llx where this node left 0x%016llx: compare-and-swap votes off\n",
		w, was);
	rdmalog_stats_inc(RDMALOG_STAT_BALLOT_TAMPERED);
	if (rdmalog_ballot_epoch(w) > rdmalog_ballot_epoch(was))
		rdmalog_ballot_fold(w, RDMALOG_BALLOT_FOUND_TAMPER);
	/* Taken: the CPU's read after the revocation finds nothing new. */
	spin_lock_bh(&b->lock);
	b->word = w;
	spin_unlock_bh(&b->lock);
	rdmalog_ballot_teardown(RDMALOG_BALLOT_OFF,
				"the word changed while closed: votes by message only");
}

/*
 * The loopback was torn down while connections may have been granted the
 * word, and the last of them is gone (@b->maps 0: every registration and
 * mapping of the page released, so no atomic changes it any more): read
 * it with the CPU, and take a vote a candidate cast into it before the
 * revocation (or, for a closed word that changed, as tampering). So a
 * vote cast by compare-and-swap is taken within a heartbeat and an
 * atomic's time while the loopback works, and within the connections'
 * close after it failed, whether or not it is set up again
 * (%RDMALOG_BALLOT_FOLD_MS). Mutex held.
 */
void rdmalog_ballot_read_cpu(void)
{
	u64 raw, w, was, mine;
	u32 layout;

	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	if (!b->unread || b->maps) {
		spin_unlock_bh(&b->lock);
		return;
	}
	was = b->word;
	layout = b->layout;
	spin_unlock_bh(&b->lock);
	/* Unmapped (in the CPU's view): a plain read. */
	raw = READ_ONCE(*(u64 *)(b->va + RDMALOG_BALLOT_WORD_OFF));
	/* (unknown: never opened, rdmalog_ballot_open(): nothing cast) */
	w = layout == RDMALOG_BALLOT_LAYOUT_SWAPPED ? swab64(raw) : raw;
	/*
	 * Its own opening or closing, or another compare-and-swap of its
	 * own, may have run without its completion.
	 */
	mine = rdmalog_ballot_flip(was, !(was & RDMALOG_BALLOT_OPEN));
	if (layout == RDMALOG_BALLOT_LAYOUT_UNKNOWN || w == was || w == mine ||
	    (b->pending && w == b->pending)) {
		/* nothing to take */
	} else if (rdmalog_ballot_is_cast(w, was) ||
		   rdmalog_ballot_is_cast(w, mine)) {
		rdmalog_ballot_fold(w, RDMALOG_BALLOT_FOUND_REVOKE);
	} else {
		rdmalog_ballot_tamper(w);
	}
	/* Taken: only now may a hold find it closed. */
	spin_lock_bh(&b->lock);
	if (layout != RDMALOG_BALLOT_LAYOUT_UNKNOWN)
		b->word = w;
	WRITE_ONCE(b->unread, false);
	spin_unlock_bh(&b->lock);
}

static void rdmalog_ballot_read_work(struct work_struct *work)
{
	mutex_lock(&b->mutex);
	rdmalog_ballot_read_cpu();
	mutex_unlock(&b->mutex);
}

/*
 * Put @b->want into the word: read it, swap it in (closed), read it back.
 * The read-back also proves that this node reads the device's atomics
 * right. A word left open (its loopback failed while open) may hold a
 * vote a candidate cast: taken first. Return: 0; -EPROTO (the device's
 * results do not add up); -EPERM (the word changed while closed: OFF
 * now, rdmalog_ballot_tamper()); or as rdmalog_ballot_post_wait().
 */
int rdmalog_ballot_sync(void)
{
	u64 want, now, old, back, swap;
	int err;

	err = rdmalog_ballot_atomic(false, 0, 0, &now);
	if (err)
		return err;
	spin_lock_bh(&b->lock);
	want = b->want;
	spin_unlock_bh(&b->lock);
	if (!(now & RDMALOG_BALLOT_OPEN) &&
	    rdmalog_ballot_epoch(now) > rdmalog_ballot_epoch(want)) {
		rdmalog_ballot_tamper(now);
		return -EPERM;
	}
	if ((now & RDMALOG_BALLOT_OPEN) &&
	    rdmalog_ballot_epoch(now) > rdmalog_ballot_epoch(want)) {
		rdmalog_ballot_fold(now, RDMALOG_BALLOT_FOUND_SYNC);
		spin_lock_bh(&b->lock);
		want = b->want;
		spin_unlock_bh(&b->lock);
	}
	/* A vote may change @want meanwhile (rdmalog_ballot_record()). */
	swap = now & RDMALOG_BALLOT_OPEN ? rdmalog_ballot_flip(now, false) :
					   now;
	swap = (swap & ~RDMALOG_BALLOT_VOTE_MASK) | want;
	err = rdmalog_ballot_atomic(true, now, swap, &old);
	if (!err)
		err = rdmalog_ballot_atomic(false, 0, 0, &back);
	if (err)
		return err;
	if (old != now || back != swap)
		return -EPROTO;
	spin_lock_bh(&b->lock);
	b->word = swap;
	WRITE_ONCE(b->unread, false);	/* read, and what it held taken */
	WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
	WRITE_ONCE(b->synced, b->want == want);
	spin_unlock_bh(&b->lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The users' side */

/* The vote's bits of a word for a vote for @node in @epoch. */
static u64 rdmalog_ballot_vote_word(u64 epoch, u32 node)
{
	return epoch << RDMALOG_BALLOT_EPOCH_SHIFT |
	       ((u64)node & RDMALOG_BALLOT_FOR_MASK) << RDMALOG_BALLOT_FOR_SHIFT;
}

/* @node's vote in @epoch is the one the word is to hold. */
static void rdmalog_ballot_want(u64 epoch, u32 node)
{
	spin_lock_bh(&b->lock);
	/* Votes only go up; a fold may have put a later one here already. */
	if (epoch > RDMALOG_BALLOT_MAX_EPOCH)
		b->over = true;
	else if (epoch >= rdmalog_ballot_epoch(b->want))
		b->want = rdmalog_ballot_vote_word(epoch, node);
	WRITE_ONCE(b->synced, false);
	spin_unlock_bh(&b->lock);
}

/*
 * Swap the vote wanted into the closed word: one compare-and-swap (the
 * word closed: only this node changes it). Mutex held.
 */
static void rdmalog_ballot_put_want(void)
{
	u64 want, cmp, swap, old;
	bool over;
	int err;

	lockdep_assert_held(&b->mutex);
	if (READ_ONCE(b->state) == RDMALOG_BALLOT_OFF)
		return;
	spin_lock_bh(&b->lock);
	over = b->over;
	spin_unlock_bh(&b->lock);
	if (over) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_OFF,
					"an epoch above what the word holds");
		return;
	}
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY)
		return;	/* the set-up puts it in */
	/* Its callers hold the word closed; never swap into an open one. */
	if (WARN_ON_ONCE(READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_CLOSED))
		rdmalog_ballot_close_locked();
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY)
		return;
	spin_lock_bh(&b->lock);
	want = b->want;
	cmp = b->word;
	spin_unlock_bh(&b->lock);
	swap = (cmp & ~RDMALOG_BALLOT_VOTE_MASK) | want;
	err = rdmalog_ballot_atomic(true, cmp, swap, &old);
	if (!err && old != cmp && old != swap) {
		rdmalog_ballot_tamper(old);
		return;
	}
	if (err) {
		/* Set again at the next set-up; nobody else changes it. */
		pr_warn("ballot word: recording the vote failed (%d): the loopback is set up again\n",
			err);
		rdmalog_ballot_fail("recording a vote failed");
		return;
	}
	spin_lock_bh(&b->lock);
	b->word = swap;
	WRITE_ONCE(b->synced, b->want == want);
	spin_unlock_bh(&b->lock);
}

void rdmalog_ballot_record(u64 epoch, u32 node)
{
	rdmalog_ballot_want(epoch, node);
	/*
	 * The set-up may hold the mutex for seconds; a vote does not wait
	 * for it (the word is closed: only this node changes it). Its work
	 * puts the vote into the word.
	 */
	if (!mutex_trylock(&b->mutex)) {
		mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
		return;
	}
	rdmalog_ballot_put_want();
	mutex_unlock(&b->mutex);
}

static void rdmalog_ballot_record_work(struct work_struct *work)
{
	mutex_lock(&b->mutex);
	/*
	 * Put in meanwhile by another path, or even opened since (with the
	 * vote in, then a floor): the work closes it first and syncs.
	 */
	if (READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_CLOSED)
		mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
	else if (!READ_ONCE(b->synced))
		rdmalog_ballot_put_want();
	mutex_unlock(&b->mutex);
}

void rdmalog_ballot_record_soon(u64 epoch, u32 node)
{
	rdmalog_ballot_want(epoch, node);
	queue_work(rdmalog_ballot_wq, &b->record_work);
}

void rdmalog_ballot_floor(u64 epoch)
{
	spin_lock_bh(&b->lock);
	if (epoch > RDMALOG_BALLOT_MAX_EPOCH) {
		b->over = true;
	} else if (epoch > rdmalog_ballot_epoch(b->want)) {
		b->want = rdmalog_ballot_vote_word(epoch, 0);
		WRITE_ONCE(b->synced, false);
	}
	spin_unlock_bh(&b->lock);
	/* Set up or not: the work syncs it, or the set-up does. */
	mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
}

/* ------------------------------------------------------------------ */
/* Open and closed */

void rdmalog_ballot_set_found(void (*found)(u64 epoch, u32 node, u32 how))
{
	b->found = found;
}

bool rdmalog_ballot_hold(u32 why)
{
	bool closed;

	spin_lock_bh(&b->lock);
	WRITE_ONCE(b->holds, b->holds + 1);
	b->hold_n[why]++;
	/* Revoked and not read yet: it may hold a vote (the close says). */
	closed = b->wstate == RDMALOG_BALLOT_W_CLOSED && !b->unread;
	spin_unlock_bh(&b->lock);
	return closed;
}

void rdmalog_ballot_set_unheld(void (*unheld)(void))
{
	b->unheld = unheld;
}

void rdmalog_ballot_unhold(u32 why)
{
	bool last = false;

	spin_lock_bh(&b->lock);
	if (!WARN_ON_ONCE(!b->hold_n[why])) {
		b->hold_n[why]--;
		WRITE_ONCE(b->holds, b->holds - 1);
		last = !b->holds;
	}
	spin_unlock_bh(&b->lock);
	/* Not at the next heartbeat: a candidate may be reading it now. */
	if (last && b->unheld)
		b->unheld();
}

bool rdmalog_ballot_is_open(void)
{
	bool open;

	spin_lock_bh(&b->lock);
	open = b->wstate != RDMALOG_BALLOT_W_CLOSED;
	spin_unlock_bh(&b->lock);
	return open;
}

/*
 * Close an open word: compare-and-swap it from the copy to the copy
 * closed (the sequence on). A failure that returns a vote a candidate
 * cast takes it in (the found hook) and tries again from it; anything
 * else changed the word behind this node (rdmalog_ballot_tamper()). A
 * failed atomic tears the loopback down (no connection is granted the
 * word yet: it is out of every candidate's reach; the next set-up reads
 * and closes it). Mutex held.
 */
static void rdmalog_ballot_close_from(u64 expect)
{
	u64 cmp, from, swap, old;
	int i, err;

	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	if (b->wstate != RDMALOG_BALLOT_W_OPEN) {
		spin_unlock_bh(&b->lock);
		return;
	}
	WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSING);
	cmp = b->word;
	spin_unlock_bh(&b->lock);
	/*
	 * A vote we were told of (@expect, a cast into @cmp): closed from it
	 * first, one atomic where the close from @cmp would fail on it and
	 * return it. A word without it, as if that atomic had not run: it
	 * changed nothing.
	 */
	from = expect && rdmalog_ballot_is_cast(expect, cmp) ? expect : cmp;
	for (i = 0; i < RDMALOG_BALLOT_CLOSE_TRIES; i++) {
		swap = rdmalog_ballot_flip(from, false);
		err = rdmalog_ballot_atomic(true, from, swap, &old);
		if (err) {
			rdmalog_ballot_fail("closing the word failed");
			return;
		}
		if (old == from || old == swap) {
			if (from != cmp)
				rdmalog_ballot_fold(from,
						    RDMALOG_BALLOT_FOUND_CLOSE);
			spin_lock_bh(&b->lock);
			b->word = swap;
			WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
			spin_unlock_bh(&b->lock);
			return;
		}
		if (old != cmp) {
			if (!rdmalog_ballot_is_cast(old, cmp))
				break;
			rdmalog_ballot_fold(old, RDMALOG_BALLOT_FOUND_CLOSE);
			spin_lock_bh(&b->lock);
			b->word = old;
			spin_unlock_bh(&b->lock);
			cmp = old;
		}
		from = cmp;
	}
	rdmalog_ballot_tamper(old);
}

void rdmalog_ballot_close_locked(void)
{
	rdmalog_ballot_close_from(0);
}

int rdmalog_ballot_close_expecting(u64 epoch, u32 node)
{
	u64 expect = 0;
	int err;

	/*
	 * Closed: nothing to wait for (a set-up may hold the mutex for
	 * seconds, and the word is closed while it runs).
	 */
	if (READ_ONCE(b->wstate) == RDMALOG_BALLOT_W_CLOSED &&
	    !READ_ONCE(b->unread))
		return 0;
	mutex_lock(&b->mutex);
	if (epoch && epoch <= RDMALOG_BALLOT_MAX_EPOCH &&
	    node <= RDMALOG_BALLOT_FOR_MASK) {
		spin_lock_bh(&b->lock);
		expect = rdmalog_ballot_cast(b->word, epoch, node);
		spin_unlock_bh(&b->lock);
	}
	rdmalog_ballot_close_from(expect);
	/* A failed close revoked it: read now if nothing reaches it. */
	rdmalog_ballot_read_cpu();
	err = READ_ONCE(b->unread) ? -EBUSY : 0;
	mutex_unlock(&b->mutex);
	return err;
}

int rdmalog_ballot_close(void)
{
	return rdmalog_ballot_close_expecting(0, 0);
}

static void rdmalog_ballot_close_work(struct work_struct *work)
{
	rdmalog_ballot_close();
}

void rdmalog_ballot_close_soon(void)
{
	if (READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_CLOSED ||
	    READ_ONCE(b->unread))
		queue_work(rdmalog_ballot_wq, &b->close_work);
}

/* The block @in tells for sequence @seq, as candidates read it. */
static void rdmalog_ballot_fill_block(struct rdmalog_ballot_block *blk,
				      const struct rdmalog_ballot_block_in *in,
				      u32 seq)
{
	memset(blk, 0, sizeof(*blk));
	blk->magic = cpu_to_le32(RDMALOG_BALLOT_MAGIC);
	blk->seq = cpu_to_le32(seq);
	blk->node_id = cpu_to_le32(in->node_id);
	blk->log_id = cpu_to_le64(in->log_id);
	blk->log_epoch = cpu_to_le64(in->log_epoch);
	blk->pos.epoch = cpu_to_le64(in->pos_epoch);
	blk->pos.lsn = cpu_to_le64(in->pos_lsn);
	blk->pos.gen = cpu_to_le32(in->pos_gen);
}

/* Write the block for the word's next sequence @seq. Mutex held. */
static void rdmalog_ballot_write_block(const struct rdmalog_ballot_block_in *in,
				       u32 seq)
{
	struct rdmalog_ballot_block *blk = b->va + RDMALOG_BALLOT_BLOCK_OFF;

	lockdep_assert_held(&b->mutex);
	ib_dma_sync_single_for_cpu(b->ibdev, b->dma + RDMALOG_BALLOT_BLOCK_OFF,
				   sizeof(*blk), DMA_BIDIRECTIONAL);
	rdmalog_ballot_fill_block(blk, in, seq);
	/* In memory before the opening's atomic makes it count. */
	ib_dma_sync_single_for_device(b->ibdev,
				      b->dma + RDMALOG_BALLOT_BLOCK_OFF,
				      sizeof(*blk), DMA_BIDIRECTIONAL);
}

bool rdmalog_ballot_announce(struct rdmalog_ballot_block *blk)
{
	bool open;

	spin_lock_bh(&b->lock);
	open = b->wstate == RDMALOG_BALLOT_W_OPEN;
	if (open)
		rdmalog_ballot_fill_block(blk, &b->blk,
					  rdmalog_ballot_seq(b->word));
	spin_unlock_bh(&b->lock);
	/* Test only: a block of an earlier opening, which no read matches. */
	if (open && rdmalog_inject_fail(RDMALOG_INJ_FAIL_BALLOT_ANNOUNCE))
		blk->seq = cpu_to_le32(le32_to_cpu(blk->seq) - 1);
	return open;
}

int rdmalog_ballot_open(const struct rdmalog_ballot_block_in *in)
{
	u64 cmp, swap, old;
	bool same, held;
	int err = 0;

	/* Not without the mutex, as rdmalog_ballot_close(). */
	if (READ_ONCE(b->wstate) == RDMALOG_BALLOT_W_CLOSED &&
	    (READ_ONCE(b->state) != RDMALOG_BALLOT_READY ||
	     !READ_ONCE(b->synced) || READ_ONCE(b->holds)))
		return -EAGAIN;
	mutex_lock(&b->mutex);
	spin_lock_bh(&b->lock);
	same = b->wstate == RDMALOG_BALLOT_W_OPEN &&
	       !memcmp(&b->blk, in, sizeof(*in));
	spin_unlock_bh(&b->lock);
	if (same)
		goto out;
	/*
	 * Held, so not to be opened again: its holder closes it (as the
	 * beat, it leaves the word's atomics to that close).
	 */
	if (READ_ONCE(b->holds)) {
		err = -EBUSY;
		goto out;
	}
	/* A block that changed is closed out first (a vote cast on it kept). */
	rdmalog_ballot_close_locked();
	spin_lock_bh(&b->lock);
	if (!b->running || b->state != RDMALOG_BALLOT_READY || !b->synced ||
	    b->layout == RDMALOG_BALLOT_LAYOUT_UNKNOWN) {
		/* (unknown: not readable after a revocation; never open) */
		err = -EAGAIN;
	} else if (b->wstate != RDMALOG_BALLOT_W_CLOSED || b->holds) {
		err = -EBUSY;
	} else {
		/* No hold starts as closed from here until it is open. */
		WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_OPENING);
		cmp = b->word;
	}
	spin_unlock_bh(&b->lock);
	if (err)
		goto out;

	swap = rdmalog_ballot_flip(cmp, true);
	rdmalog_ballot_write_block(in, rdmalog_ballot_seq(swap));
	err = rdmalog_ballot_atomic(true, cmp, swap, &old);
	if (err) {
		rdmalog_ballot_fail("opening the word failed");
		goto out;
	}
	if (old != cmp && old != swap) {
		spin_lock_bh(&b->lock);
		WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
		spin_unlock_bh(&b->lock);
		rdmalog_ballot_tamper(old);
		err = -EPROTO;
		goto out;
	}
	spin_lock_bh(&b->lock);
	b->word = swap;
	WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_OPEN);
	b->blk = *in;
	held = b->holds;
	spin_unlock_bh(&b->lock);
	rdmalog_stats_inc(RDMALOG_STAT_BALLOT_OPENS);
	/* A hold that came while it opened found it not closed: close now. */
	if (held)
		rdmalog_ballot_close_locked();
	else
		err = 1;
out:
	mutex_unlock(&b->mutex);
	return err;
}

void rdmalog_ballot_beat(void)
{
	u64 now, was;
	int err;

	/*
	 * Held: its holder closes it now, and takes a vote in it at that
	 * close (one atomic, where a read first would add one to its path).
	 */
	if (READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_OPEN ||
	    READ_ONCE(b->holds))
		return;
	mutex_lock(&b->mutex);
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY ||
	    READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_OPEN ||
	    READ_ONCE(b->holds))
		goto out;
	err = rdmalog_ballot_atomic(false, 0, 0, &now);
	if (err) {
		rdmalog_ballot_fail("reading the open word failed");
		goto out;
	}
	spin_lock_bh(&b->lock);
	was = b->word;
	spin_unlock_bh(&b->lock);
	if (now == was)
		goto out;
	if (!rdmalog_ballot_is_cast(now, was)) {
		spin_lock_bh(&b->lock);
		WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
		spin_unlock_bh(&b->lock);
		rdmalog_ballot_tamper(now);
		goto out;
	}
	rdmalog_ballot_fold(now, RDMALOG_BALLOT_FOUND_BEAT);
	spin_lock_bh(&b->lock);
	b->word = now;
	spin_unlock_bh(&b->lock);
out:
	mutex_unlock(&b->mutex);
}

void rdmalog_ballot_get_info(struct rdmalog_ballot_info *info)
{
	/* Not the mutex: an atomic on the loopback may hold it seconds. */
	spin_lock_bh(&b->lock);
	info->word = b->held;
	info->ops = b->ops;
	info->state = b->state;
	strscpy(info->msg, b->msg, sizeof(info->msg));
	spin_unlock_bh(&b->lock);
}

int rdmalog_ballot_init(void)
{
	mutex_init(&b->mutex);
	spin_lock_init(&b->lock);
	init_waitqueue_head(&b->wq);
	init_completion(&b->done);
	INIT_DELAYED_WORK(&b->work, rdmalog_ballot_work);
	INIT_WORK(&b->read_work, rdmalog_ballot_read_work);
	INIT_WORK(&b->record_work, rdmalog_ballot_record_work);
	INIT_WORK(&b->close_work, rdmalog_ballot_close_work);
	b->cqe.done = rdmalog_ballot_done;
	b->state = RDMALOG_BALLOT_DOWN;
	rdmalog_ballot_wq = alloc_workqueue("rdmalog_ballot", WQ_UNBOUND, 1);
	if (!rdmalog_ballot_wq)
		return -ENOMEM;
	b->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!b->page) {
		destroy_workqueue(rdmalog_ballot_wq);
		return -ENOMEM;
	}
	b->va = page_address(b->page);
	return 0;
}

void rdmalog_ballot_exit(void)
{
	/* The up period stopped: nothing is left but the work and the page. */
	destroy_workqueue(rdmalog_ballot_wq);
	__free_page(b->page);
	mutex_destroy(&b->mutex);
}
