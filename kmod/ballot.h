/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the ballot word: this node's vote in 8 bytes that, where the
 * device has atomics, only RDMA atomics change (ballot.c, and its
 * loopback in ballot_loop.c; Documentation/leader-change.rst,
 * "Compare-and-swap where the device has atomics").
 */
#ifndef _RDMALOG_BALLOT_H
#define _RDMALOG_BALLOT_H

#include <linux/bits.h>
#include <linux/types.h>

#include "../uapi/rdmalog_genl.h"

struct ib_device;
struct sockaddr_storage;

/*
 * The word: the epoch of the vote (bits 63..32), the node voted for
 * (31..24; node ids are at most 255), the count of the owner's openings
 * and closings (23..1), and whether candidates may compare-and-swap it
 * (bit 0).
 */
#define RDMALOG_BALLOT_EPOCH_SHIFT	32
#define RDMALOG_BALLOT_FOR_SHIFT	24
#define RDMALOG_BALLOT_FOR_MASK		0xffULL
#define RDMALOG_BALLOT_SEQ_SHIFT	1
#define RDMALOG_BALLOT_SEQ_MASK		0x7fffffULL
#define RDMALOG_BALLOT_OPEN		BIT_ULL(0)
/* The highest epoch the word holds; a vote above it is not kept there. */
#define RDMALOG_BALLOT_MAX_EPOCH	0xffffffffULL

static inline u64 rdmalog_ballot_epoch(u64 w)
{
	return w >> RDMALOG_BALLOT_EPOCH_SHIFT;
}

static inline u32 rdmalog_ballot_for(u64 w)
{
	return (w >> RDMALOG_BALLOT_FOR_SHIFT) & RDMALOG_BALLOT_FOR_MASK;
}

static inline u32 rdmalog_ballot_seq(u64 w)
{
	return (w >> RDMALOG_BALLOT_SEQ_SHIFT) & RDMALOG_BALLOT_SEQ_MASK;
}

/* The word of a vote for @node in @epoch, as cast into an open word @w. */
static inline u64 rdmalog_ballot_cast(u64 w, u64 epoch, u32 node)
{
	return epoch << RDMALOG_BALLOT_EPOCH_SHIFT |
	       ((u64)node & RDMALOG_BALLOT_FOR_MASK) << RDMALOG_BALLOT_FOR_SHIFT |
	       (w & (RDMALOG_BALLOT_SEQ_MASK << RDMALOG_BALLOT_SEQ_SHIFT)) |
	       RDMALOG_BALLOT_OPEN;
}

/*
 * @w is a vote a candidate cast into the open word @was: the sequence and
 * the open bit kept, a later epoch (only candidates change an open word,
 * and each only to an epoch above the one it read).
 */
static inline bool rdmalog_ballot_is_cast(u64 w, u64 was)
{
	return (was & RDMALOG_BALLOT_OPEN) && (w & RDMALOG_BALLOT_OPEN) &&
	       rdmalog_ballot_seq(w) == rdmalog_ballot_seq(was) &&
	       rdmalog_ballot_epoch(w) > rdmalog_ballot_epoch(was);
}

/**
 * struct rdmalog_ballot_info - a snapshot for status
 * @state: &enum rdmalog_ballot_state (uapi)
 * @word: the word's value after the owner's last atomic on it (what it
 *	read, or what its compare-and-swap put there); a vote recorded
 *	since may not be in it yet
 * @ops: atomics the owner posted on the loopback since the module loaded
 * @msg: why it is not READY ("" when it is)
 */
struct rdmalog_ballot_info {
	u32 state;
	u64 word;
	u64 ops;
	char msg[96];
};

/**
 * enum rdmalog_ballot_hold_why - what keeps the word closed
 * (rdmalog_ballot_hold(): Documentation/leader-change.rst, "Closed for
 * whole operations")
 * @RDMALOG_BALLOT_HOLD_GRANT: our ring is granted to a primary, or a
 *	grant waits for the word to close (one per connection)
 * @RDMALOG_BALLOT_HOLD_ANSWER: a VOTE_REQ is being answered
 * @RDMALOG_BALLOT_HOLD_STAND: this node stands for election (a pre-vote,
 *	a candidacy, and a stand on its own from its pre-vote to the end of
 *	the candidacy after it)
 * @RDMALOG_BALLOT_HOLD_WON: it won and does not lead yet
 * @__RDMALOG_BALLOT_HOLD_NR: how many
 */
enum rdmalog_ballot_hold_why {
	RDMALOG_BALLOT_HOLD_GRANT,
	RDMALOG_BALLOT_HOLD_ANSWER,
	RDMALOG_BALLOT_HOLD_STAND,
	RDMALOG_BALLOT_HOLD_WON,
	__RDMALOG_BALLOT_HOLD_NR,
};

/**
 * enum rdmalog_ballot_found_how - where the owner found a vote that a
 * candidate cast into its open word by compare-and-swap
 * @RDMALOG_BALLOT_FOUND_CLOSE: its closing compare-and-swap failed on it
 * @RDMALOG_BALLOT_FOUND_BEAT: its read of the word every heartbeat
 * @RDMALOG_BALLOT_FOUND_SYNC: the word as a new loopback found it
 * @RDMALOG_BALLOT_FOUND_TAMPER: the word changed while closed (only this
 *	node may change it then): taken as a vote, conservatively, and the
 *	word is no longer used
 * @RDMALOG_BALLOT_FOUND_REVOKE: the CPU's read of the word once its
 *	loopback failed and every connection granted it was closed
 */
enum rdmalog_ballot_found_how {
	RDMALOG_BALLOT_FOUND_CLOSE,
	RDMALOG_BALLOT_FOUND_BEAT,
	RDMALOG_BALLOT_FOUND_SYNC,
	RDMALOG_BALLOT_FOUND_TAMPER,
	RDMALOG_BALLOT_FOUND_REVOKE,
};

/**
 * struct rdmalog_ballot_block_in - what the ballot block tells candidates
 * while the word is open (&struct rdmalog_ballot_block, proto.h)
 * @node_id: this node
 * @log_id: the log it holds (0: none yet)
 * @log_epoch: the highest epoch of a log it knows of
 * @pos_epoch: the epoch of the last record it holds
 * @pos_gen: that record's truncation generation
 * @pos_lsn: its LSN
 */
struct rdmalog_ballot_block_in {
	u32 node_id;
	u64 log_id;
	u64 log_epoch;
	u64 pos_epoch;
	u32 pos_gen;
	u64 pos_lsn;
};

/*
 * How long after a candidate cast a vote into the open word its owner
 * takes it (the found hook) at the latest, with the peer timeout @f_ms
 * (shared by the nodes, as the learn wait assumes): a heartbeat (at most
 * half the peer timeout on any node), then its read and an opening's
 * atomic (each up to %RDMALOG_BALLOT_OP_MS); or, the loopback failed,
 * the connections granted the word close (within the peer timeout, as
 * fencing assumes) and the CPU reads it (rdmalog_ballot_read_cpu()).
 * Until then what the owner announces may lack that vote (elect.c: the
 * learn wait).
 */
#define RDMALOG_BALLOT_OP_MS		5000
#define RDMALOG_BALLOT_FOLD_MS(f_ms) \
	((f_ms) * 3 / 2 + 2 * RDMALOG_BALLOT_OP_MS)

int rdmalog_ballot_init(void);
void rdmalog_ballot_exit(void);
/* Tried again this long after a failure (uapi: RDMALOG_BALLOT_FAILED). */
#define RDMALOG_BALLOT_RETRY_MS		2000

/*
 * The up period on the device of @addr (the listen address; its port is
 * ignored): set up the loopback in the background. Process context.
 */
void rdmalog_ballot_start(const struct sockaddr_storage *addr);
/* End of the up period: tear the loopback down. Process context; sleeps. */
void rdmalog_ballot_stop(void);
/* @ibdev goes: tear down what uses it (the ib_client's .remove). */
void rdmalog_ballot_device_removed(struct ib_device *ibdev);
/* A device appeared: try again now. */
void rdmalog_ballot_device_added(void);
/*
 * This node's vote is now @node in @epoch: put it into the word (by the
 * loopback's compare-and-swap when READY, else at the next set-up).
 * Process context; sleeps; the election's vote_mutex held.
 */
void rdmalog_ballot_record(u64 epoch, u32 node);
/*
 * As rdmalog_ballot_record(), without waiting for the atomic: a work of
 * the ballot's queue puts the vote in. Until it did, the word is not
 * synced and does not open. For a candidate, whose own vote nobody but
 * itself may find in its closed word meanwhile. Any context but a hard
 * interrupt.
 */
void rdmalog_ballot_record_soon(u64 epoch, u32 node);
/*
 * This node has learned (elect.c): its vote is now nobody in @epoch, the
 * highest election epoch it heard of. Recorded into the word by the work
 * (or the next set-up); an @epoch above what the word holds turns it OFF.
 * Any context; the election's lock may be held.
 */
void rdmalog_ballot_floor(u64 epoch);
void rdmalog_ballot_get_info(struct rdmalog_ballot_info *info);

/*
 * Who is told of a vote found in the word (rdmalog_ballot_found_how),
 * with its epoch and the node it went to: the election takes it as a
 * vote this node granted. Called under the ballot's mutex, never under
 * its spinlock. Set once at module init (ballot.c and ballot_loop.c
 * never call the election by name).
 */
void rdmalog_ballot_set_found(void (*found)(u64 epoch, u32 node, u32 how));
/*
 * Keep the word closed for an operation (@why, &enum
 * rdmalog_ballot_hold_why) until rdmalog_ballot_unhold(@why): no opening
 * starts meanwhile. Any context (a spinlock only). Return: true when
 * the word is closed now (and stays so); false: it is open or changing,
 * and the caller runs rdmalog_ballot_close() before it relies on it.
 */
bool rdmalog_ballot_hold(u32 why);
void rdmalog_ballot_unhold(u32 why);
/*
 * Who is told that the last hold ended (rdmalog_ballot_unhold()): the
 * election opens the word then rather than at its next heartbeat, so a
 * candidate that stands right after this node lost its primary finds it
 * open. Called in the context of the unhold, with no ballot lock held.
 * Set once at module init.
 */
void rdmalog_ballot_set_unheld(void (*unheld)(void));
/*
 * Close the word if it is open, taking into the vote (the found hook) a
 * vote a candidate cast into it. Process context; sleeps (an atomic on
 * the loopback). Return: 0, the word closed (or out of every candidate's
 * reach, and read: the loopback failed); -EBUSY: the loopback failed and
 * connections granted the word are still being closed: a vote may be in
 * it that this node has not taken yet, so the caller must not act as if
 * it knew its vote (answer BUSY, grant nothing, not stand).
 */
int rdmalog_ballot_close(void);
/*
 * Start rdmalog_ballot_close() on the ballot's queue and return: for a
 * holder that acts on nothing the word holds before the next
 * rdmalog_ballot_close() (a pre-vote), which then waits for this one or
 * finds the word closed. Any context but a hard interrupt.
 */
void rdmalog_ballot_close_soon(void);
/*
 * As rdmalog_ballot_close(), when this node was told (a LEAD) that @node
 * won @epoch, maybe with a vote cast into the word: closed from that
 * vote, by one atomic where rdmalog_ballot_close() takes two (the first
 * fails on the vote and returns it); any other word as there.
 */
int rdmalog_ballot_close_expecting(u64 epoch, u32 node);
/*
 * Open the word for candidates with the block @in: only while it is
 * READY, holds this node's vote, and nothing holds it closed; an open
 * word whose block differs is closed and opened again. The election's
 * vote_mutex held; sleeps. Return: 1 (opened now: its block is to be
 * announced, rdmalog_ballot_announce()); 0 (open already, with that
 * block); -EAGAIN (not ready or not
 * synced); -EBUSY (held: closed, or open and left to its holder's
 * close); -EIO, -ETIMEDOUT (the loopback failed:
 * set up again); -EPROTO (the word was changed behind this node: no
 * longer used).
 */
int rdmalog_ballot_open(const struct rdmalog_ballot_block_in *in);
/*
 * Every heartbeat while the word is open: read it, and take a vote cast
 * into it since (the found hook); not while a hold is taken, whose
 * holder's close takes that vote in. Process context; sleeps.
 */
void rdmalog_ballot_beat(void);
struct rdmalog_ballot_block;
/*
 * While the word is open: its block as candidates read it (with the
 * word's sequence), for this node's HEARTBEATs, and true. Else false and
 * @blk untouched. Any context.
 */
bool rdmalog_ballot_announce(struct rdmalog_ballot_block *blk);
/* The word is open (status; tests). */
bool rdmalog_ballot_is_open(void);

struct rdmalog_ballot_map;
/*
 * The ballot page's mapping on @ibdev, referenced, with its DMA address
 * in *@dma: while the word is READY on @ibdev (its loopback's device),
 * else NULL. For a connection that registers the word for a peer: all
 * atomics on the word go to one address. Any context (a spinlock).
 */
struct rdmalog_ballot_map *rdmalog_ballot_map_get(struct ib_device *ibdev,
						  u64 *dma);
/* Process context: the last put unmaps the page. */
void rdmalog_ballot_map_put(struct rdmalog_ballot_map *map);
/*
 * The transport's hooks, set once at init: @ready, the word became READY
 * (grant it on the live connections; process context, no ballot lock
 * held); @revoke, the word is out of this node's reach (its loopback
 * failed, or it turned OFF): close every connection that registered it
 * from @map (under the ballot's mutex; it may take the connections'
 * locks, and must not wait for a connection to close).
 */
void rdmalog_ballot_set_grant_hooks(void (*ready)(void),
				    void (*revoke)(const struct rdmalog_ballot_map *map));

#endif /* _RDMALOG_BALLOT_H */
