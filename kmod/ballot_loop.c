// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the ballot word's loopback (Documentation/leader-change.rst,
 * "Compare-and-swap where the device has atomics"): an RC queue pair
 * connected by rdma_cm to the node's own listen address on an ephemeral
 * port, which every atomic of this node on its ballot word goes through
 * (ballot.c says why, and what the word means).
 *
 * The loopback is set up in the background at the start of the up period
 * and again every %RDMALOG_BALLOT_RETRY_MS after a failure; the vote is
 * recorded into the word once it is READY (the word is closed: nobody
 * else changes it, so the owner's copy, @word, is what it holds).
 *
 * This file holds the loopback: the rdma_cm handler of its ids and the
 * accept of its own connect request, its queue pairs, its set-up (the
 * word's registration, the probe of how the device lays a word out, the
 * first sync) and tear-down, one atomic at a time posted and waited for,
 * the work that sets it up and tries again after a failure, the up
 * period's start and stop and the devices that come and go; and the
 * page's DMA mapping, which the set-up makes and shares with the
 * connections granted the word (rdmalog_ballot_map_get()), and which the
 * tear-down revokes from them (the transport's hooks).
 *
 * Lock rules (all of them at &struct rdmalog_ballot, ballot_priv.h):
 * &rdmalog_ballot.mutex (process context) serializes the up period, the
 * set-up and tear-down, and every atomic on the loopback.
 * &rdmalog_ballot.lock (a spinlock, _bh) protects @state, the ids and
 * @established, which the rdma_cm handlers read and write; the handlers
 * take nothing else, and never the mutex, because the tear-down destroys
 * the ids under the mutex and rdma_destroy_id() waits for a running
 * handler. A mapping's references: &struct rdmalog_ballot_map.
 */
#include <linux/bottom_half.h>
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
#include "ballot_priv.h"
#include "inject.h"
#include "stats.h"
#include "transport.h"

/* How long one atomic (or the REG_MR) on the loopback may take: ballot.h */
/* How long the loopback's set-up may take. */
#define RDMALOG_BALLOT_CONNECT_MS	10000

static struct rdmalog_ballot *const b = &rdmalog_ballot;

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

void rdmalog_ballot_done(struct ib_cq *cq, struct ib_wc *wc)
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
void rdmalog_ballot_teardown(u32 state, const char *msg)
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
 * and wait for its completion. Mutex held. Return: 0; -ENOTCONN (no
 * active queue pair: the loopback is not set up, or was torn down); -EIO
 * (a completion in error, or the fail point inject_ballot_loopback_fail);
 * the error of ib_post_send(); or -ETIMEDOUT (no completion within
 * %RDMALOG_BALLOT_OP_MS). On an error the caller's failure path tears the
 * loopback down.
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
	/*
	 * With bottom halves off: a software device that runs the work
	 * request from a tasklet its post schedules (rxe up to Linux 6.1)
	 * runs it when they come back on, here, rather than from ksoftirqd
	 * whenever the scheduler gets to it.
	 */
	local_bh_disable();
	err = ib_post_send(active->qp, wr, NULL);
	local_bh_enable();
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
int rdmalog_ballot_atomic(bool cas, u64 cmp_add, u64 swap, u64 *old)
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
void rdmalog_ballot_fail(const char *why)
{
	lockdep_assert_held(&b->mutex);
	rdmalog_ballot_teardown(RDMALOG_BALLOT_FAILED, why);
	if (b->running)
		mod_delayed_work(rdmalog_ballot_wq, &b->work,
				 msecs_to_jiffies(RDMALOG_BALLOT_RETRY_MS));
}

void rdmalog_ballot_work(struct work_struct *work)
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
/* The up period and the devices */

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

void rdmalog_ballot_set_grant_hooks(void (*ready)(void),
				    void (*revoke)(const struct rdmalog_ballot_map *map))
{
	b->ready_hook = ready;
	b->revoke_hook = revoke;
}
