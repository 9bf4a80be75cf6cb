/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - private to the ballot word's two files: ballot.c (what the
 * word means: the vote put into it, its opening for candidates and its
 * closing, the holds that keep it closed, a vote found in it) and
 * ballot_loop.c (the loopback queue pair that every atomic of this node
 * on the word goes through: its set-up, tear-down and retries, the up
 * period, and the page's DMA mapping). Nothing else includes it; the
 * rest of the module sees ballot.h. The lock rules are at &struct
 * rdmalog_ballot.
 */
#ifndef _RDMALOG_BALLOT_PRIV_H
#define _RDMALOG_BALLOT_PRIV_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ballot.h"

struct page;
struct rdma_cm_id;

/* Where things are in the ballot page. */
#define RDMALOG_BALLOT_WORD_OFF		0
#define RDMALOG_BALLOT_BLOCK_OFF	64
#define RDMALOG_BALLOT_RESULT_OFF	128
/* A word of the loopback's own: how the device lays an atomic's word out. */
#define RDMALOG_BALLOT_PROBE_OFF	192
/* What the loopback's registration covers: the word up to the probe. */
#define RDMALOG_BALLOT_LOOP_LEN		256

/* How the device lays the word out in memory, as the CPU reads it. */
enum {
	RDMALOG_BALLOT_LAYOUT_UNKNOWN,
	RDMALOG_BALLOT_LAYOUT_NATIVE,
	RDMALOG_BALLOT_LAYOUT_SWAPPED,	/* byte-swapped */
};

/* Where the word stands for candidates (&rdmalog_ballot.wstate). */
enum {
	RDMALOG_BALLOT_W_CLOSED,	/* only this node changes it */
	RDMALOG_BALLOT_W_OPENING,	/* its opening compare-and-swap runs */
	RDMALOG_BALLOT_W_OPEN,		/* candidates may compare-and-swap it */
	RDMALOG_BALLOT_W_CLOSING,	/* its closing compare-and-swap runs */
};

/**
 * struct rdmalog_ballot - the ballot word and its loopback, a singleton
 * @mutex: see the lock rules below
 * @lock: see the lock rules below
 * @page: the ballot page, for the module's lifetime
 * @va: its address
 * @running: an up period runs (written under @mutex)
 * @addr: its listen address, port 0 (under @mutex)
 * @work: sets the loopback up, or tears a failed one down and tries again
 * @state: &enum rdmalog_ballot_state (under @lock; read with READ_ONCE)
 * @msg: why it is not READY (under @lock)
 * @listen: the loopback's listening id (under @lock; destroyed under
 *	@mutex)
 * @active: the connecting side, which posts the atomics
 * @passive: the accepted side, whose queue pair serves them
 * @established: bit 0: @active established, bit 1: @passive
 * @wq: the set-up waits here for @established or a failure
 * @ibdev: the device of the loopback (under @mutex, as the next ones)
 * @pd: its protection domain: both queue pairs and the word's MR
 * @cq: both queue pairs' completion queue
 * @mr: the word's registration: LOCAL_WRITE and REMOTE_ATOMIC, 8 bytes,
 *	good on the loopback's queue pairs only (its own PD)
 * @map: the page's DMA mapping on @ibdev, shared with the connections
 *	granted the word there (rdmalog_ballot_map_get()); set under @mutex
 *	and @lock, read under either; the loopback's reference
 * @dma: @map's address (valid with @map)
 * @cqe: completion of the loopback's REG_MR and atomics (one at a time)
 * @done: completed by @cqe
 * @wc_status: its status
 * @word: the owner's copy: what the word holds (epoch, node, sequence,
 *	open), as this node's last atomic on it left it; written under
 *	@mutex and @lock, read under either
 * @want: the vote the word is to hold (its bits 63..24: epoch and node):
 *	rdmalog_ballot_record() and rdmalog_ballot_floor() raise it under
 *	@lock, with or without @mutex
 * @synced: the word holds @want (under @lock); a vote that found @mutex
 *	busy, and rdmalog_ballot_floor(), leave it false for the work
 * @wstate: open or closed (the RDMALOG_BALLOT_W_* above; under @lock);
 *	CLOSED whenever the loopback is not READY
 * @holds: the holds that keep the word closed (under @lock), and
 *	@hold_n, how many of each &enum rdmalog_ballot_hold_why
 * @hold_n: see @holds
 * @blk: the ballot block in force while the word is open (under @mutex)
 * @found: the election's hook for a vote found in the word (set at init)
 * @unheld: the election's hook for the last hold ended: the word may
 *	open now (set at init; called without @lock, in any context)
 * @ready_hook: the transport's: the word is READY, grant it on the live
 *	connections (set at init; called without @mutex)
 * @revoke_hook: the transport's: close every connection that registered
 *	the word from this mapping (set at init; called under @mutex)
 * @maps: mappings of the page not yet released (under @lock): a set-up
 *	maps the page anew only once the last one of the previous loopback is
 *	gone, with every registration of it
 * @held: what the word held after this node's last atomic on it (the
 *	value it read, or the swap its compare-and-swap made); under @lock
 * @over: an epoch above %RDMALOG_BALLOT_MAX_EPOCH was learned
 *	(rdmalog_ballot_floor()): the work turns the word OFF; under @lock
 * @unread: the loopback was torn down while connections may have been
 *	granted the word (under @lock; set in the same section that marks
 *	the word closed, cleared only once what it held was taken): once the
 *	last mapping is released (@maps 0), @read_work reads the word with
 *	the CPU and takes a vote cast into it (rdmalog_ballot_read_cpu()),
 *	whether or not a loopback can be set up again
 * @read_work: see @unread (on the ballot's queue, queued by the last
 *	mapping's release)
 * @record_work: puts @want into the word for rdmalog_ballot_record_soon()
 *	(on the ballot's queue)
 * @close_work: closes the word for rdmalog_ballot_close_soon() (on the
 *	ballot's queue)
 * @pending: the swap of the owner's last compare-and-swap on the word
 *	whose completion did not come (it may have run; under @mutex): its
 *	own value, not tampering, when the CPU finds it there
 * @layout: how the loopback's device lays an atomic's word out in memory
 *	(RDMALOG_BALLOT_LAYOUT_*; found by each set-up's probe, under
 *	@mutex): the word is opened only where the CPU can read it after a
 *	revocation
 * @ops: atomics completed since the module loaded (under @lock)
 *
 * Lock rules: &rdmalog_ballot.mutex (process context) serializes the up
 * period, the set-up and tear-down, and every atomic on the loopback; it
 * is taken after the election's vote_mutex, and the found hook runs
 * under it (it takes the election's spinlock and the ring's, never a
 * mutex). &rdmalog_ballot.lock (a spinlock, _bh) protects @state, the
 * ids and @established, which the rdma_cm handlers read and write; the
 * handlers take nothing else, and never the mutex, because the tear-down
 * destroys the ids under the mutex and rdma_destroy_id() waits for a
 * running handler. It also protects the holds and @wstate, so that a
 * hold and an opening exclude each other without the mutex.
 *
 * What each file does under them: the top comments of ballot.c and
 * ballot_loop.c.
 */
struct rdmalog_ballot {
	struct mutex mutex; /* see above */
	spinlock_t lock; /* see above */
	struct page *page;
	void *va;
	bool running;
	struct sockaddr_storage addr;
	struct delayed_work work;
	u32 state;
	char msg[96];
	struct rdma_cm_id *listen;
	struct rdma_cm_id *active;
	struct rdma_cm_id *passive;
	u32 established;
	wait_queue_head_t wq;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_mr *mr;
	struct rdmalog_ballot_map *map;
	u64 dma;
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status wc_status;
	u64 word;
	u64 want;
	bool synced;
	u32 wstate;
	u32 holds;
	u32 hold_n[__RDMALOG_BALLOT_HOLD_NR];
	struct rdmalog_ballot_block_in blk;
	void (*found)(u64 epoch, u32 node, u32 how);
	void (*unheld)(void);
	void (*ready_hook)(void);
	void (*revoke_hook)(const struct rdmalog_ballot_map *map);
	u32 maps;
	u64 held;
	bool over;
	bool unread;
	struct work_struct read_work;
	struct work_struct record_work;
	struct work_struct close_work;
	u64 pending;
	u32 layout;
	u64 ops;
};

/* The ballot word and its loopback, defined in ballot.c. */
extern struct rdmalog_ballot rdmalog_ballot;
/* The ballot's work queue, defined in ballot.c (why one of its own: there). */
extern struct workqueue_struct *rdmalog_ballot_wq;

/* ballot.c: what the word holds; each with the mutex held */
/*
 * Close an open word, taking in (the found hook) a vote a candidate cast
 * into it; a failed atomic tears the loopback down.
 */
void rdmalog_ballot_close_locked(void);
/*
 * Put the vote the word is to hold (@want) into it, closed, taking in
 * first a vote cast into a word left open (the set-up; the work for a
 * vote that found the mutex busy). Return: 0; -EPROTO (the device's
 * results do not add up); -EPERM (the word changed while closed: OFF
 * now); or an atomic's error.
 */
int rdmalog_ballot_sync(void);
/*
 * The loopback was torn down while connections may have been granted the
 * word: once none reaches it any more, read it with the CPU and take in
 * a vote cast into it (nothing to do otherwise).
 */
void rdmalog_ballot_read_cpu(void);

/* ballot_loop.c: the loopback */
/* &rdmalog_ballot.cqe's completion: the loopback's REG_MR or atomic. */
void rdmalog_ballot_done(struct ib_cq *cq, struct ib_wc *wc);
/* &rdmalog_ballot.work: set the loopback up, or a failed one again. */
void rdmalog_ballot_work(struct work_struct *work);
/*
 * Tear everything of the loopback down, in the reverse order of the
 * set-up, and leave it in @state (&enum rdmalog_ballot_state) with why
 * in @msg (NULL: the reason recorded stays); the word closed, and
 * revoked from the connections granted it unless going DOWN. Mutex held.
 */
void rdmalog_ballot_teardown(u32 state, const char *msg);
/*
 * Compare-and-swap (@cas) or fetch-and-add @cmp_add to the word through
 * the loopback; *@old: its value before. Mutex held; sleeps. Return: 0,
 * or a negative errno (the loopback failed: the caller's failure path,
 * rdmalog_ballot_fail(), tears it down).
 */
int rdmalog_ballot_atomic(bool cas, u64 cmp_add, u64 swap, u64 *old);
/* The loopback failed (@why): tear it down, set it up again. Mutex held. */
void rdmalog_ballot_fail(const char *why);

#endif /* _RDMALOG_BALLOT_PRIV_H */
