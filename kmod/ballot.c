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
 * by rdma_cm to the node's own listen address on an ephemeral port, and
 * never with a store. Its value is read the same way (a fetch-and-add of
 * 0): the device, not the CPU, says how it lays the word out in memory.
 *
 * The loopback is set up in the background at the start of the up period
 * and again every %RDMALOG_BALLOT_RETRY_MS after a failure; the vote is
 * recorded into the word once it is READY (the word is closed: nobody
 * else changes it, so the owner's copy, @word, is what it holds).
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
 */
#include <linux/completion.h>
#include <linux/in.h>
#include <linux/kref.h>
#include <linux/in6.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/swab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <net/ipv6.h>
#include <rdma/rdma_cm.h>

#include "ballot.h"
#include "inject.h"
#include "proto.h"
#include "stats.h"
#include "transport.h"

/* Where things are in the ballot page. */
#define RDMALOG_BALLOT_WORD_OFF		0
#define RDMALOG_BALLOT_BLOCK_OFF	64
#define RDMALOG_BALLOT_RESULT_OFF	128
/* A word of the loopback's own: how the device lays an atomic's word out. */
#define RDMALOG_BALLOT_PROBE_OFF	192
/* What the loopback's registration covers: the word up to the probe. */
#define RDMALOG_BALLOT_LOOP_LEN		256
/* How long one atomic (or the REG_MR) on the loopback may take: ballot.h */
/* How long the loopback's set-up may take. */
#define RDMALOG_BALLOT_CONNECT_MS	10000
/* Votes a closing takes in before it gives up (each one a later epoch). */
#define RDMALOG_BALLOT_CLOSE_TRIES	64

/* How the device lays the word out in memory, as the CPU reads it. */
enum {
	RDMALOG_BALLOT_LAYOUT_UNKNOWN,
	RDMALOG_BALLOT_LAYOUT_NATIVE,
	RDMALOG_BALLOT_LAYOUT_SWAPPED,	/* byte-swapped */
};

/* The vote's bits of a word: its epoch and the node it went to. */
#define RDMALOG_BALLOT_VOTE_MASK	(~0ULL << RDMALOG_BALLOT_FOR_SHIFT)

/* Where the word stands for candidates (&rdmalog_ballot.wstate). */
enum {
	RDMALOG_BALLOT_W_CLOSED,	/* only this node changes it */
	RDMALOG_BALLOT_W_OPENING,	/* its opening compare-and-swap runs */
	RDMALOG_BALLOT_W_OPEN,		/* candidates may compare-and-swap it */
	RDMALOG_BALLOT_W_CLOSING,	/* its closing compare-and-swap runs */
};

/**
 * struct rdmalog_ballot - the ballot word and its loopback, a singleton
 * @mutex: see the top of this file
 * @lock: see the top of this file
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
 * @pending: the swap of the owner's last compare-and-swap on the word
 *	whose completion did not come (it may have run; under @mutex): its
 *	own value, not tampering, when the CPU finds it there
 * @layout: how the loopback's device lays an atomic's word out in memory
 *	(RDMALOG_BALLOT_LAYOUT_*; found by each set-up's probe, under
 *	@mutex): the word is opened only where the CPU can read it after a
 *	revocation
 * @ops: atomics completed since the module loaded (under @lock)
 */
static struct rdmalog_ballot {
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
	void (*ready_hook)(void);
	void (*revoke_hook)(const struct rdmalog_ballot_map *map);
	u32 maps;
	u64 held;
	bool over;
	bool unread;
	struct work_struct read_work;
	u64 pending;
	u32 layout;
	u64 ops;
} rdmalog_ballot;

static struct rdmalog_ballot *const b = &rdmalog_ballot;

/*
 * The ballot's work, on a queue of its own: its set-up may wait seconds
 * for its connection, and the transport's flushes of rdmalog_conn_wq
 * (closing connections) must not wait for that.
 */
static struct workqueue_struct *rdmalog_ballot_wq;

/**
 * struct rdmalog_ballot_map - the ballot page's DMA mapping on one device
 * @ref: the loopback's reference while it is set up, and one for each
 *	connection that registers the word or the block (ballot_mr.c)
 * @ibdev: the device (each holder keeps it: the loopback until its
 *	tear-down, a connection by its &rdmalog_rdev)
 * @dma: the page's address on @ibdev
 *
 * One mapping per device, not one per user: every atomic on the word,
 * the owner's and the candidates', goes to the one address, which is
 * what a device serializes its atomics on (and a bounce buffer of a
 * second mapping would be another copy). Unmapped by the last put.
 */
struct rdmalog_ballot_map {
	struct kref ref;
	struct ib_device *ibdev;
	u64 dma;
};

static void rdmalog_ballot_map_release(struct kref *ref)
{
	struct rdmalog_ballot_map *map =
		container_of(ref, struct rdmalog_ballot_map, ref);

	ib_dma_unmap_page(map->ibdev, map->dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	kfree(map);
	spin_lock_bh(&b->lock);
	b->maps--;
	/* Nothing reaches the word now: read it (unread). */
	if (!b->maps && b->unread)
		queue_work(rdmalog_ballot_wq, &b->read_work);
	spin_unlock_bh(&b->lock);
	wake_up_all(&b->wq);
}

void rdmalog_ballot_map_put(struct rdmalog_ballot_map *map)
{
	if (map)
		kref_put(&map->ref, rdmalog_ballot_map_release);
}

struct rdmalog_ballot_map *rdmalog_ballot_map_get(struct ib_device *ibdev,
						  u64 *dma)
{
	struct rdmalog_ballot_map *map = NULL;

	spin_lock_bh(&b->lock);
	if (b->state == RDMALOG_BALLOT_READY && b->map &&
	    b->map->ibdev == ibdev) {
		map = b->map;
		kref_get(&map->ref);
		*dma = map->dma;
	}
	spin_unlock_bh(&b->lock);
	return map;
}

/* Record why it is not READY, and the new state. */
static void rdmalog_ballot_set_state(u32 state, const char *msg)
{
	spin_lock_bh(&b->lock);
	WRITE_ONCE(b->state, state);
	strscpy(b->msg, msg ?: "", sizeof(b->msg));
	spin_unlock_bh(&b->lock);
	wake_up_all(&b->wq);
}

/* @w opened or closed by its owner: the vote kept, the sequence on. */
static u64 rdmalog_ballot_flip(u64 w, bool open)
{
	return (w & RDMALOG_BALLOT_VOTE_MASK) |
	       (((u64)rdmalog_ballot_seq(w) + 1) & RDMALOG_BALLOT_SEQ_MASK) <<
	       RDMALOG_BALLOT_SEQ_SHIFT | (open ? RDMALOG_BALLOT_OPEN : 0);
}

static void rdmalog_ballot_close_locked(void);

/* A handler saw the loopback fail: tear it down and try again (work). */
static void rdmalog_ballot_lost(const char *what)
{
	bool was;

	spin_lock_bh(&b->lock);
	was = b->state == RDMALOG_BALLOT_CONNECTING ||
	      b->state == RDMALOG_BALLOT_READY;
	if (was) {
		WRITE_ONCE(b->state, RDMALOG_BALLOT_FAILED);
		snprintf(b->msg, sizeof(b->msg), "loopback: %s", what);
	}
	spin_unlock_bh(&b->lock);
	if (!was)
		return;
	wake_up_all(&b->wq);
	mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
}

static void rdmalog_ballot_done(struct ib_cq *cq, struct ib_wc *wc)
{
	b->wc_status = wc->status;
	complete(&b->done);
}

/* ------------------------------------------------------------------ */
/* The loopback's rdma_cm side */

static int rdmalog_ballot_create_qp(struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {
		.send_cq = b->cq,
		.recv_cq = b->cq,
		/* one REG_MR or atomic at a time, and ib_drain_qp()'s */
		.cap.max_send_wr = 4,
		.cap.max_recv_wr = 1,
		.cap.max_send_sge = 1,
		.cap.max_recv_sge = 1,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int err = rdma_create_qp(id, b->pd, &attr);

	if (!err)
		rdmalog_live_add(RDMALOG_STAT_LIVE_QPS, 1);
	return err;
}

static void rdmalog_ballot_conn_param(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	/* atomics are served as RDMA READs are: one at a time is plenty */
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* The same IP address, whatever the ports. */
static bool rdmalog_ballot_same_ip(const struct sockaddr *a,
				   const struct sockaddr *c)
{
	if (a->sa_family != c->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)c)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)c)->sin6_addr);
	return false;
}

/*
 * @id is the active id of a set-up still on. The tear-down clears it
 * before it takes the handler's lock to destroy the queue pair, so a
 * handler that sees it here makes its queue pair before that.
 */
static bool rdmalog_ballot_connecting(struct rdma_cm_id *id)
{
	bool ret;

	spin_lock_bh(&b->lock);
	ret = b->active == id && b->state == RDMALOG_BALLOT_CONNECTING;
	spin_unlock_bh(&b->lock);
	return ret;
}

static __be16 rdmalog_ballot_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

/*
 * A connect request on the loopback's listener (@id is new): accepted
 * once, from this node's own address, while setting up. Return: 0, or
 * non-zero for the rdma_cm to reject and destroy @id.
 */
static int rdmalog_ballot_accept(struct rdma_cm_id *id)
{
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.dst_addr;
	struct rdma_conn_param param;
	bool ours;
	int err;

	/* Our own active id only: its address and its port. */
	spin_lock_bh(&b->lock);
	ours = b->state == RDMALOG_BALLOT_CONNECTING && !b->passive &&
	       b->listen && b->active && id->device == b->listen->device &&
	       rdmalog_ballot_same_ip(src, (struct sockaddr *)&b->addr) &&
	       rdmalog_ballot_port(src) ==
	       rdmalog_ballot_port((struct sockaddr *)
				   &b->active->route.addr.src_addr);
	if (ours)
		b->passive = id;
	spin_unlock_bh(&b->lock);
	if (!ours)
		return -ECONNREFUSED;

	err = rdmalog_ballot_create_qp(id);
	if (!err) {
		rdmalog_ballot_conn_param(&param);
		err = rdma_accept(id, &param);
		if (err) {
			rdma_destroy_qp(id);
			rdmalog_live_add(RDMALOG_STAT_LIVE_QPS, -1);
		}
	}
	if (!err)
		return 0;
	/* Still ours: the rdma_cm destroys @id; else the tear-down does. */
	spin_lock_bh(&b->lock);
	ours = b->passive == id;
	if (ours)
		b->passive = NULL;
	spin_unlock_bh(&b->lock);
	rdmalog_ballot_lost("cannot accept its own connection");
	return ours ? err : 0;
}

static int rdmalog_ballot_cm_handler(struct rdma_cm_id *id,
				     struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return rdmalog_ballot_accept(id);
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!rdmalog_ballot_connecting(id))
			return 0;
		if (rdma_resolve_route(id, RDMALOG_RESOLVE_TIMEOUT_MS))
			rdmalog_ballot_lost("cannot resolve a route to itself");
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* Not once the tear-down took it: its queue pair would leak. */
		if (!rdmalog_ballot_connecting(id))
			return 0;
		err = rdmalog_ballot_create_qp(id);
		if (err) {
			rdmalog_ballot_lost("cannot create a queue pair");
			return 0;
		}
		rdmalog_ballot_conn_param(&param);
		if (rdma_connect_locked(id, &param))
			rdmalog_ballot_lost("cannot connect to itself");
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		spin_lock_bh(&b->lock);
		if (id == b->active)
			b->established |= 1;
		else if (id == b->passive)
			b->established |= 2;
		spin_unlock_bh(&b->lock);
		wake_up_all(&b->wq);
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rdmalog_ballot_lost("its RDMA device is being removed");
		return 0;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return 0;
	default:
		/* errors, rejections, a disconnection */
		rdmalog_ballot_lost(rdma_event_msg(ev->event));
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Set-up and tear-down (under the mutex) */

/* @id's queue pair, if its handler made one; not while a handler runs. */
static void rdmalog_ballot_qp_down(struct rdma_cm_id *id)
{
	if (!id)
		return;
	rdma_lock_handler(id);
	if (id->qp) {
		rdma_disconnect(id);	/* the queue pair to error */
		ib_drain_qp(id->qp);
		rdma_destroy_qp(id);
		rdmalog_live_add(RDMALOG_STAT_LIVE_QPS, -1);
	}
	rdma_unlock_handler(id);
}

/* Everything of the loopback, in the reverse order of the set-up. */
static void rdmalog_ballot_teardown(u32 state, const char *msg)
{
	struct rdma_cm_id *listen, *active, *passive;

	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	/* No handler accepts or counts anything from here on. */
	WRITE_ONCE(b->state, state);
	if (msg)
		strscpy(b->msg, msg, sizeof(b->msg));
	/*
	 * No atomic reaches the word through this node any more: its next
	 * set-up reads it, takes a vote cast into it if it was left open,
	 * and closes it. (No connection is granted the word yet: nobody
	 * else reaches it either.)
	 */
	WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
	WRITE_ONCE(b->synced, false);
	/*
	 * Closed, but not known until read by the CPU (connections granted
	 * it may still cast into it): in the same section, so that no hold
	 * takes it for closed and read meanwhile.
	 */
	if (b->map && state != RDMALOG_BALLOT_DOWN)
		WRITE_ONCE(b->unread, true);
	listen = b->listen;
	active = b->active;
	passive = b->passive;
	b->listen = NULL;
	b->active = NULL;
	b->passive = NULL;
	b->established = 0;
	spin_unlock_bh(&b->lock);
	wake_up_all(&b->wq);

	/* The listener first: no connect request is accepted after it. */
	if (listen)
		rdma_destroy_id(listen);
	rdmalog_ballot_qp_down(active);
	rdmalog_ballot_qp_down(passive);
	if (active)
		rdma_destroy_id(active);
	if (passive)
		rdma_destroy_id(passive);
	if (b->mr) {
		ib_dereg_mr(b->mr);
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		b->mr = NULL;
	}
	if (b->cq) {
		ib_free_cq(b->cq);
		b->cq = NULL;
	}
	if (b->map) {
		struct rdmalog_ballot_map *map = b->map;

		spin_lock_bh(&b->lock);
		b->map = NULL;
		spin_unlock_bh(&b->lock);
		/*
		 * The word is out of this node's reach now: no connection may
		 * keep it (a candidate's vote would go unseen). Not when going
		 * down: the word was closed first, and every connection goes.
		 */
		if (state != RDMALOG_BALLOT_DOWN && b->revoke_hook)
			b->revoke_hook(map);
		rdmalog_ballot_map_put(map);
	}
	if (b->pd) {
		ib_dealloc_pd(b->pd);
		b->pd = NULL;
	}
	b->ibdev = NULL;
}

/*
 * Post one work request (signalled, on @b->cqe) on the active queue pair
 * and wait for its completion. Return: 0, -ETIMEDOUT or -EIO (the
 * loopback is then torn down by the caller's failure path).
 */
static int rdmalog_ballot_post_wait(struct ib_send_wr *wr)
{
	struct rdma_cm_id *active;
	int err;

	lockdep_assert_held(&b->mutex);
	spin_lock_bh(&b->lock);
	active = b->active;
	spin_unlock_bh(&b->lock);
	if (!active || !active->qp)
		return -ENOTCONN;
	if (rdmalog_inject_fail(RDMALOG_INJ_FAIL_BALLOT_LOOPBACK))
		return -EIO;
	reinit_completion(&b->done);
	wr->wr_cqe = &b->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(active->qp, wr, NULL);
	if (err)
		return err;
	/* Its memory is the page and @b: nothing of the caller's stack. */
	if (!wait_for_completion_timeout(&b->done,
					 msecs_to_jiffies(RDMALOG_BALLOT_OP_MS)))
		return -ETIMEDOUT;
	return b->wc_status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
 * Compare-and-swap (@cas) or fetch-and-add @cmp_add to the 8 bytes at
 * @off of the page (the word, or the probe), through the loopback;
 * *@old: their value before. Return as rdmalog_ballot_post_wait().
 */
static int rdmalog_ballot_atomic_at(u32 off, bool cas, u64 cmp_add, u64 swap,
				    u64 *old)
{
	struct ib_sge sge = {
		.addr = b->dma + RDMALOG_BALLOT_RESULT_OFF,
		.length = sizeof(u64),
		.lkey = b->pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr.opcode = cas ? IB_WR_ATOMIC_CMP_AND_SWP :
				   IB_WR_ATOMIC_FETCH_AND_ADD,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = b->mr->iova + off,
		.rkey = b->mr->rkey,
		.compare_add = cmp_add,
		.swap = swap,
	};
	int err;

	ib_dma_sync_single_for_device(b->ibdev,
				      b->dma + RDMALOG_BALLOT_RESULT_OFF,
				      sizeof(u64), DMA_BIDIRECTIONAL);
	/* Until its completion says, it may or may not have run. */
	if (cas && off == RDMALOG_BALLOT_WORD_OFF)
		b->pending = swap;
	err = rdmalog_ballot_post_wait(&wr.wr);
	if (err)
		return err;
	if (cas && off == RDMALOG_BALLOT_WORD_OFF)
		b->pending = 0;
	ib_dma_sync_single_for_cpu(b->ibdev, b->dma + RDMALOG_BALLOT_RESULT_OFF,
				   sizeof(u64), DMA_BIDIRECTIONAL);
	*old = READ_ONCE(*(u64 *)(b->va + RDMALOG_BALLOT_RESULT_OFF));
	spin_lock_bh(&b->lock);
	b->ops++;
	if (off == RDMALOG_BALLOT_WORD_OFF && !cas)
		b->held = *old + cmp_add;
	else if (off == RDMALOG_BALLOT_WORD_OFF)
		b->held = *old == cmp_add ? swap : *old;
	spin_unlock_bh(&b->lock);
	return 0;
}

/* The same on the word. */
static int rdmalog_ballot_atomic(bool cas, u64 cmp_add, u64 swap, u64 *old)
{
	return rdmalog_ballot_atomic_at(RDMALOG_BALLOT_WORD_OFF, cas, cmp_add,
					swap, old);
}

/*
 * How the device lays out a word its atomics change, as the CPU reads
 * it: a compare-and-swap of a pattern into the probe word, read back with
 * the CPU (the word itself is never probed: its value may read the same
 * either way). Only then can the CPU read the word after a revocation
 * (rdmalog_ballot_read_cpu()). Mutex held. Return as
 * rdmalog_ballot_post_wait().
 */
static int rdmalog_ballot_probe(void)
{
	u64 pat = 0x0102030405060708ULL, now, old, raw;
	u32 layout = RDMALOG_BALLOT_LAYOUT_UNKNOWN;
	int err;

	lockdep_assert_held(&b->mutex);
	err = rdmalog_ballot_atomic_at(RDMALOG_BALLOT_PROBE_OFF, false, 0, 0,
				       &now);
	if (err)
		return err;
	if (now == pat)
		pat = 0x1112131415161718ULL;
	err = rdmalog_ballot_atomic_at(RDMALOG_BALLOT_PROBE_OFF, true, now, pat,
				       &old);
	if (err)
		return err;
	ib_dma_sync_single_for_cpu(b->ibdev, b->dma + RDMALOG_BALLOT_PROBE_OFF,
				   sizeof(u64), DMA_BIDIRECTIONAL);
	raw = READ_ONCE(*(u64 *)(b->va + RDMALOG_BALLOT_PROBE_OFF));
	if (old == now && raw == pat)
		layout = RDMALOG_BALLOT_LAYOUT_NATIVE;
	else if (old == now && raw == swab64(pat))
		layout = RDMALOG_BALLOT_LAYOUT_SWAPPED;
	b->layout = layout;
	return 0;
}

/* Register the word for the loopback: LOCAL_WRITE and REMOTE_ATOMIC. */
static int rdmalog_ballot_reg(void)
{
	struct ib_reg_wr wr = {};
	struct scatterlist sg;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = b->dma + RDMALOG_BALLOT_WORD_OFF;
	/* the word and the probe (its own PD: no connection reaches it) */
	sg_dma_len(&sg) = RDMALOG_BALLOT_LOOP_LEN;
	n = ib_map_mr_sg(b->mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(b->mr, ib_inc_rkey(b->mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = b->mr;
	wr.key = b->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	return rdmalog_ballot_post_wait(&wr.wr);
}

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
static void rdmalog_ballot_read_cpu(void)
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
static int rdmalog_ballot_sync(void)
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

static bool rdmalog_ballot_connected(void)
{
	bool ret;

	spin_lock_bh(&b->lock);
	ret = b->established == 3 || b->state != RDMALOG_BALLOT_CONNECTING;
	spin_unlock_bh(&b->lock);
	return ret;
}

/* A new id of the loopback, kept in *@slot (under the lock), or NULL. */
static struct rdma_cm_id *rdmalog_ballot_new_id(struct rdma_cm_id **slot)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(&init_net, rdmalog_ballot_cm_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return NULL;
	spin_lock_bh(&b->lock);
	*slot = id;
	spin_unlock_bh(&b->lock);
	return id;
}

/* The set-up; mutex held, nothing of a loopback left. */
static void rdmalog_ballot_setup(void)
{
	struct rdmalog_ballot_map *map;
	struct sockaddr_storage dst;
	struct rdma_cm_id *id;
	const char *why;
	int err;

	rdmalog_ballot_set_state(RDMALOG_BALLOT_CONNECTING, NULL);
	why = "cannot create an rdma_cm id";
	id = rdmalog_ballot_new_id(&b->listen);
	if (!id)
		goto fail;
	err = rdma_bind_addr(id, (struct sockaddr *)&b->addr);
	if (err || !id->device) {
		why = "no RDMA device has the listen address";
		goto fail;
	}
	b->ibdev = id->device;
	if (b->ibdev->attrs.atomic_cap == IB_ATOMIC_NONE) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_NONE,
					"the RDMA device has no atomics");
		return;
	}
	why = "out of memory";
	b->pd = ib_alloc_pd(b->ibdev, 0);
	if (IS_ERR(b->pd)) {
		b->pd = NULL;
		goto fail;
	}
	/*
	 * The last loopback's mapping is gone with every connection that
	 * registered it: no candidate reaches the word while it is synced.
	 */
	why = "waiting for the connections granted the word to close";
	if (READ_ONCE(b->maps))
		goto fail;
	why = "out of memory";
	b->dma = ib_dma_map_page(b->ibdev, b->page, 0, PAGE_SIZE,
				 DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(b->ibdev, b->dma))
		goto fail;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map) {
		ib_dma_unmap_page(b->ibdev, b->dma, PAGE_SIZE,
				  DMA_BIDIRECTIONAL);
		goto fail;
	}
	kref_init(&map->ref);
	map->ibdev = b->ibdev;
	map->dma = b->dma;
	spin_lock_bh(&b->lock);
	b->map = map;
	b->maps++;
	spin_unlock_bh(&b->lock);
	/* both queue pairs' send and receive queues, drains included */
	b->cq = ib_alloc_cq(b->ibdev, NULL, 16, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(b->cq)) {
		b->cq = NULL;
		goto fail;
	}
	b->mr = ib_alloc_mr(b->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(b->mr)) {
		b->mr = NULL;
		goto fail;
	}
	rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);

	/* Everything a connect request needs is there: listen. */
	err = rdma_listen(id, 1);
	if (err) {
		why = "cannot listen on an ephemeral port";
		goto fail;
	}
	/* Connect to the port the listener was given. */
	memcpy(&dst, &id->route.addr.src_addr, sizeof(dst));
	why = "cannot create an rdma_cm id";
	id = rdmalog_ballot_new_id(&b->active);
	if (!id)
		goto fail;
	err = rdma_resolve_addr(id, (struct sockaddr *)&b->addr,
				(struct sockaddr *)&dst,
				RDMALOG_RESOLVE_TIMEOUT_MS);
	if (err) {
		why = "cannot resolve its own address";
		goto fail;
	}
	/* The handlers run without the mutex; so does this wait. */
	mutex_unlock(&b->mutex);
	wait_event_timeout(b->wq, rdmalog_ballot_connected(),
			   msecs_to_jiffies(RDMALOG_BALLOT_CONNECT_MS));
	mutex_lock(&b->mutex);
	spin_lock_bh(&b->lock);
	err = b->state == RDMALOG_BALLOT_CONNECTING && b->established == 3 &&
	      b->active == id ? 0 : -ENOTCONN;
	spin_unlock_bh(&b->lock);
	if (err) {
		why = "no connection to itself in time";
		if (!b->running || READ_ONCE(b->state) != RDMALOG_BALLOT_CONNECTING)
			return;	/* stopped, or failed: torn down by the caller */
		goto fail;
	}

	why = "cannot register the word";
	if (rdmalog_ballot_reg())
		goto fail;
	why = "an atomic on the loopback failed";
	if (rdmalog_ballot_probe())
		goto fail;
	err = rdmalog_ballot_sync();
	if (err == -EPERM)
		return;
	if (err == -EPROTO) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_OFF,
					"the device's atomics return values this node cannot read");
		return;
	}
	if (err) {
		why = "an atomic on the loopback failed";
		goto fail;
	}
	rdmalog_ballot_set_state(RDMALOG_BALLOT_READY, NULL);
	pr_info("ballot word on %s through a loopback queue pair\n",
		dev_name(&b->ibdev->dev));
	return;

fail:
	rdmalog_ballot_teardown(RDMALOG_BALLOT_FAILED, why);
	if (b->running)
		mod_delayed_work(rdmalog_ballot_wq, &b->work,
				 msecs_to_jiffies(RDMALOG_BALLOT_RETRY_MS));
}

/* The loopback failed under the mutex: tear it down, set it up again. */
static void rdmalog_ballot_fail(const char *why)
{
	lockdep_assert_held(&b->mutex);
	rdmalog_ballot_teardown(RDMALOG_BALLOT_FAILED, why);
	if (b->running)
		mod_delayed_work(rdmalog_ballot_wq, &b->work,
				 msecs_to_jiffies(RDMALOG_BALLOT_RETRY_MS));
}

static void rdmalog_ballot_work(struct work_struct *work)
{
	bool over, was_ready;
	u32 state;
	int err;

	mutex_lock(&b->mutex);
	/* A revoked word first (as @read_work): the set-up needs it read. */
	rdmalog_ballot_read_cpu();
	was_ready = READ_ONCE(b->state) == RDMALOG_BALLOT_READY;
	spin_lock_bh(&b->lock);
	over = b->over;
	spin_unlock_bh(&b->lock);
	if (over && READ_ONCE(b->state) != RDMALOG_BALLOT_OFF) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_OFF,
					"an epoch above what the word holds");
		goto out;
	}
	state = READ_ONCE(b->state);
	if (b->running && state == RDMALOG_BALLOT_READY && !b->synced) {
		/*
		 * A vote came while the mutex was busy (rdmalog_ballot_record()),
		 * or a floor: never swapped into an open word.
		 */
		rdmalog_ballot_close_locked();
		if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY)
			goto out;
		err = rdmalog_ballot_sync();
		if (err && err != -EPERM)
			rdmalog_ballot_fail("recording a vote failed");
		goto out;
	}
	if (!b->running || state == RDMALOG_BALLOT_READY ||
	    state == RDMALOG_BALLOT_NONE || state == RDMALOG_BALLOT_OFF)
		goto out;
	if (state == RDMALOG_BALLOT_FAILED && (b->pd || b->listen)) {
		/* Torn down now, set up again after the pause. */
		rdmalog_ballot_teardown(RDMALOG_BALLOT_FAILED, NULL);
		mod_delayed_work(rdmalog_ballot_wq, &b->work,
				 msecs_to_jiffies(RDMALOG_BALLOT_RETRY_MS));
		goto out;
	}
	rdmalog_ballot_setup();
out:
	state = READ_ONCE(b->state);
	mutex_unlock(&b->mutex);
	/* Connections that came up before it was READY get it now. */
	if (!was_ready && state == RDMALOG_BALLOT_READY && b->ready_hook)
		b->ready_hook();
}

/* ------------------------------------------------------------------ */
/* The users' side */

void rdmalog_ballot_start(const struct sockaddr_storage *addr)
{
	mutex_lock(&b->mutex);
	WRITE_ONCE(b->running, true);
	b->addr = *addr;
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)&b->addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&b->addr)->sin6_port = 0;
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_OFF)
		rdmalog_ballot_set_state(RDMALOG_BALLOT_FAILED,
					 "not set up yet");
	mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
	mutex_unlock(&b->mutex);
}

void rdmalog_ballot_stop(void)
{
	mutex_lock(&b->mutex);
	WRITE_ONCE(b->running, false);
	/* A set-up waiting for its connection gives up now. */
	if (READ_ONCE(b->state) == RDMALOG_BALLOT_CONNECTING)
		rdmalog_ballot_set_state(RDMALOG_BALLOT_FAILED, "stopping");
	/* Closed before anything of the node changes (nothing opens it now). */
	rdmalog_ballot_close_locked();
	mutex_unlock(&b->mutex);
	/* The work takes the mutex: cancel it without. */
	cancel_delayed_work_sync(&b->work);
	mutex_lock(&b->mutex);
	rdmalog_ballot_teardown(READ_ONCE(b->state) == RDMALOG_BALLOT_OFF ?
				RDMALOG_BALLOT_OFF : RDMALOG_BALLOT_DOWN,
				READ_ONCE(b->state) == RDMALOG_BALLOT_OFF ?
				NULL : "");
	mutex_unlock(&b->mutex);
}

void rdmalog_ballot_device_removed(struct ib_device *ibdev)
{
	mutex_lock(&b->mutex);
	if (b->ibdev == ibdev) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_FAILED,
					"its RDMA device was removed");
		if (b->running)
			mod_delayed_work(rdmalog_ballot_wq, &b->work,
					 msecs_to_jiffies(RDMALOG_BALLOT_RETRY_MS));
	}
	mutex_unlock(&b->mutex);
}

void rdmalog_ballot_device_added(void)
{
	/* Not under the mutex: the work checks again under it. */
	u32 state = READ_ONCE(b->state);

	/* NONE too: the listen address may now be on a device with atomics. */
	if (READ_ONCE(b->running) &&
	    (state == RDMALOG_BALLOT_FAILED || state == RDMALOG_BALLOT_NONE)) {
		rdmalog_ballot_set_state(RDMALOG_BALLOT_FAILED,
					 "an RDMA device appeared: set up again");
		mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
	}
}

/* The vote's bits of a word for a vote for @node in @epoch. */
static u64 rdmalog_ballot_vote_word(u64 epoch, u32 node)
{
	return epoch << RDMALOG_BALLOT_EPOCH_SHIFT |
	       ((u64)node & RDMALOG_BALLOT_FOR_MASK) << RDMALOG_BALLOT_FOR_SHIFT;
}

void rdmalog_ballot_record(u64 epoch, u32 node)
{
	u64 want, cmp, swap, old;
	int err;

	spin_lock_bh(&b->lock);
	/* Votes only go up; a fold may have put a later one here already. */
	if (epoch >= rdmalog_ballot_epoch(b->want))
		b->want = rdmalog_ballot_vote_word(epoch, node);
	WRITE_ONCE(b->synced, false);
	spin_unlock_bh(&b->lock);
	/*
	 * The set-up may hold the mutex for seconds; a vote does not wait
	 * for it (the word is closed: only this node changes it). Its work
	 * puts the vote into the word.
	 */
	if (!mutex_trylock(&b->mutex)) {
		mod_delayed_work(rdmalog_ballot_wq, &b->work, 0);
		return;
	}
	if (READ_ONCE(b->state) == RDMALOG_BALLOT_OFF)
		goto out;
	if (epoch > RDMALOG_BALLOT_MAX_EPOCH) {
		rdmalog_ballot_teardown(RDMALOG_BALLOT_OFF,
					"an epoch above what the word holds");
		goto out;
	}
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY)
		goto out;	/* the set-up puts it in */
	/* Its callers hold the word closed; never swap into an open one. */
	if (WARN_ON_ONCE(READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_CLOSED))
		rdmalog_ballot_close_locked();
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY)
		goto out;
	spin_lock_bh(&b->lock);
	want = b->want;
	cmp = b->word;
	spin_unlock_bh(&b->lock);
	swap = (cmp & ~RDMALOG_BALLOT_VOTE_MASK) | want;
	err = rdmalog_ballot_atomic(true, cmp, swap, &old);
	if (!err && old != cmp && old != swap) {
		rdmalog_ballot_tamper(old);
		goto out;
	}
	if (err) {
		/* Set again at the next set-up; nobody else changes it. */
		pr_warn("ballot word: recording the vote failed (%d): the loopback is set up again\n",
			err);
		rdmalog_ballot_fail("recording a vote failed");
		goto out;
	}
	spin_lock_bh(&b->lock);
	b->word = swap;
	WRITE_ONCE(b->synced, b->want == want);
	spin_unlock_bh(&b->lock);
out:
	mutex_unlock(&b->mutex);
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

void rdmalog_ballot_set_grant_hooks(void (*ready)(void),
				    void (*revoke)(const struct rdmalog_ballot_map *map))
{
	b->ready_hook = ready;
	b->revoke_hook = revoke;
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

void rdmalog_ballot_unhold(u32 why)
{
	spin_lock_bh(&b->lock);
	if (!WARN_ON_ONCE(!b->hold_n[why])) {
		b->hold_n[why]--;
		WRITE_ONCE(b->holds, b->holds - 1);
	}
	spin_unlock_bh(&b->lock);
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
static void rdmalog_ballot_close_locked(void)
{
	u64 cmp, swap, old;
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
	for (i = 0; i < RDMALOG_BALLOT_CLOSE_TRIES; i++) {
		swap = rdmalog_ballot_flip(cmp, false);
		err = rdmalog_ballot_atomic(true, cmp, swap, &old);
		if (err) {
			rdmalog_ballot_fail("closing the word failed");
			return;
		}
		if (old == cmp || old == swap) {
			spin_lock_bh(&b->lock);
			b->word = swap;
			WRITE_ONCE(b->wstate, RDMALOG_BALLOT_W_CLOSED);
			spin_unlock_bh(&b->lock);
			return;
		}
		if (!rdmalog_ballot_is_cast(old, cmp))
			break;
		rdmalog_ballot_fold(old, RDMALOG_BALLOT_FOUND_CLOSE);
		spin_lock_bh(&b->lock);
		b->word = old;
		spin_unlock_bh(&b->lock);
		cmp = old;
	}
	rdmalog_ballot_tamper(old);
}

int rdmalog_ballot_close(void)
{
	int err;

	/*
	 * Closed: nothing to wait for (a set-up may hold the mutex for
	 * seconds, and the word is closed while it runs).
	 */
	if (READ_ONCE(b->wstate) == RDMALOG_BALLOT_W_CLOSED &&
	    !READ_ONCE(b->unread))
		return 0;
	mutex_lock(&b->mutex);
	rdmalog_ballot_close_locked();
	/* A failed close revoked it: read now if nothing reaches it. */
	rdmalog_ballot_read_cpu();
	err = READ_ONCE(b->unread) ? -EBUSY : 0;
	mutex_unlock(&b->mutex);
	return err;
}

/* Write the block for the word's next sequence @seq. Mutex held. */
static void rdmalog_ballot_write_block(const struct rdmalog_ballot_block_in *in,
				       u32 seq)
{
	struct rdmalog_ballot_block *blk = b->va + RDMALOG_BALLOT_BLOCK_OFF;

	lockdep_assert_held(&b->mutex);
	ib_dma_sync_single_for_cpu(b->ibdev, b->dma + RDMALOG_BALLOT_BLOCK_OFF,
				   sizeof(*blk), DMA_BIDIRECTIONAL);
	memset(blk, 0, sizeof(*blk));
	blk->magic = cpu_to_le32(RDMALOG_BALLOT_MAGIC);
	blk->seq = cpu_to_le32(seq);
	blk->node_id = cpu_to_le32(in->node_id);
	blk->log_id = cpu_to_le64(in->log_id);
	blk->log_epoch = cpu_to_le64(in->log_epoch);
	blk->pos.epoch = cpu_to_le64(in->pos_epoch);
	blk->pos.lsn = cpu_to_le64(in->pos_lsn);
	blk->pos.gen = cpu_to_le32(in->pos_gen);
	/* In memory before the opening's atomic makes it count. */
	ib_dma_sync_single_for_device(b->ibdev,
				      b->dma + RDMALOG_BALLOT_BLOCK_OFF,
				      sizeof(*blk), DMA_BIDIRECTIONAL);
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
out:
	mutex_unlock(&b->mutex);
	return err;
}

void rdmalog_ballot_beat(void)
{
	u64 now, was;
	int err;

	if (READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_OPEN)
		return;
	mutex_lock(&b->mutex);
	if (READ_ONCE(b->state) != RDMALOG_BALLOT_READY ||
	    READ_ONCE(b->wstate) != RDMALOG_BALLOT_W_OPEN)
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
