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
 * Lock rules: &rdmalog_elect.lock protects every field; it is taken in
 * any context (the CQ handlers report what they hear) with BHs off, and
 * nothing else is taken inside it but the transport's atomic announce
 * (rdmalog_conn_set_vote_epoch()), set under it so that announcements
 * never go back.
 */
#include <linux/bitmap.h>
#include <linux/spinlock.h>

#include "../uapi/rdmalog_genl.h"
#include "conn.h"
#include "elect.h"

/**
 * struct rdmalog_elect - the election state, a singleton
 * @lock: protects the fields below (see above)
 * @epoch: &rdmalog_elect_info.epoch
 * @vote_known: &rdmalog_elect_info.vote_known
 * @vote_epoch: &rdmalog_elect_info.vote_epoch
 * @vote_for: &rdmalog_elect_info.vote_for
 * @learned: a majority of the members was heard since the module
 *	loaded; once true, true until unload
 * @members: the configured peers' ids
 * @heard: the ids heard from since the module loaded (any id the
 *	transport took a HELLO or HEARTBEAT from)
 */
struct rdmalog_elect {
	spinlock_t lock; /* see above */
	u64 epoch;
	u64 vote_known;
	u64 vote_epoch;
	u32 vote_for;
	bool learned;
	DECLARE_BITMAP(members, RDMALOG_MAX_NODE_ID + 1);
	DECLARE_BITMAP(heard, RDMALOG_MAX_NODE_ID + 1);
};

static struct rdmalog_elect rdmalog_elect = {
	.lock = __SPIN_LOCK_UNLOCKED(rdmalog_elect.lock),
};

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
	if (!rdmalog_elect.learned && n &&
	    rdmalog_elect_heard_members() >= rdmalog_elect_needed(n))
		rdmalog_elect.learned = true;
}

static bool rdmalog_elect_may_vote(void)
{
	lockdep_assert_held(&rdmalog_elect.lock);
	return rdmalog_elect.learned || !rdmalog_elect_members();
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
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.epoch = max(rdmalog_elect.epoch, epoch);
	spin_unlock_bh(&rdmalog_elect.lock);
}

/**
 * rdmalog_elect_heard() - a peer's HELLO or HEARTBEAT arrived
 * @node_id: the peer (the transport checked it is a configured one)
 * @epoch: the epoch of its message
 * @vote_epoch: the election epoch it announced
 */
void rdmalog_elect_heard(u32 node_id, u64 epoch, u64 vote_epoch)
{
	spin_lock_bh(&rdmalog_elect.lock);
	rdmalog_elect.epoch = max3(rdmalog_elect.epoch, epoch, vote_epoch);
	if (vote_epoch > rdmalog_elect.vote_known) {
		rdmalog_elect.vote_known = vote_epoch;
		rdmalog_conn_set_vote_epoch(vote_epoch);
	}
	if (node_id && node_id <= RDMALOG_MAX_NODE_ID &&
	    !test_bit(node_id, rdmalog_elect.heard)) {
		__set_bit(node_id, rdmalog_elect.heard);
		rdmalog_elect_check_learned();
	}
	spin_unlock_bh(&rdmalog_elect.lock);
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
	info->epoch = rdmalog_elect.epoch;
	info->vote_known = rdmalog_elect.vote_known;
	info->vote_epoch = rdmalog_elect.vote_epoch;
	info->vote_for = rdmalog_elect.vote_for;
	info->learned = rdmalog_elect_may_vote();
	info->heard = rdmalog_elect_heard_members();
	info->needed = rdmalog_elect_needed(n);
	spin_unlock_bh(&rdmalog_elect.lock);
}
