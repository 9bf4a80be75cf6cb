// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - a connection endpoint's resources and its send side.
 *
 * &struct rdmalog_ep (ep.h) is created, connected and closed by conn.c;
 * this file gives it its resources and takes them back
 * (rdmalog_ep_setup(), rdmalog_ep_release_resources(): device object,
 * PD, buffers, CQ, QP, the fence MR, and the users' per-endpoint set-up),
 * counts its references (the last put frees it and puts its conn), sends
 * on it (the send pool, credits and sequence numbers:
 * rdmalog_ep_send_chain()), posts work requests of its users
 * (rdmalog_ep_post(), rdmalog_ep_reg_fence()), and turns their completion
 * errors and QP events into one error report (rdmalog_ep_error(), whose
 * work -- conn.c's -- closes the endpoint). A received message is copied
 * out of its buffer, the buffer posted again and the credit counted here
 * (rdmalog_recv_done()); hello.c checks and acts on it. The locks are
 * conn.c's (its top comment): here
 * &rdmalog_ep.lock, taken with _bh outside the CQ handler, and the conn
 * lock held by the callers of set-up.
 */
#include <linux/dma-mapping.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "ballot_mr.h"
#include "conn.h"
#include "ep.h"
#include "log.h"
#include "rdma_dev.h"
#include "ring_mr.h"
#include "stats.h"
#include "transport.h"

/* Transport ACK timeout, 4.096 us * 2^16 = 268 ms per retry. */
#define RDMALOG_ACK_TIMEOUT		16

static void rdmalog_ep_release(struct kref *ref)
{
	struct rdmalog_ep *ep = container_of(ref, struct rdmalog_ep, ref);

	rdmalog_conn_put(ep->conn);
	kfree(ep);
	rdmalog_live_add(RDMALOG_STAT_LIVE_EPS, -1);
}

void rdmalog_ep_get(struct rdmalog_ep *ep)
{
	kref_get(&ep->ref);
}

void rdmalog_ep_put(struct rdmalog_ep *ep)
{
	kref_put(&ep->ref, rdmalog_ep_release);
}

/*
 * Report an error of @ep from any context: the first report queues the
 * error work, which closes the endpoint under the conn lock.
 */
void rdmalog_ep_error(struct rdmalog_ep *ep, const char *fmt, ...)
{
	va_list ap;

	if (test_and_set_bit(RDMALOG_EP_ERROR, &ep->flags))
		return;
	va_start(ap, fmt);
	vsnprintf(ep->err, sizeof(ep->err), fmt, ap);
	va_end(ap);
	/* The work's reference; the close work holds the base one. */
	kref_get(&ep->ref);
	if (!queue_work(rdmalog_conn_wq, &ep->error_work))
		rdmalog_ep_put(ep);
}

int rdmalog_ep_post(struct rdmalog_ep *ep, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad)
{
	const struct ib_send_wr *dummy;
	int err = -ENOTCONN;

	if (!bad)
		bad = &dummy;
	*bad = wr;
	spin_lock_bh(&ep->lock);
	if (ep->live)
		err = ib_post_send(ep->qp, wr, bad);
	spin_unlock_bh(&ep->lock);
	return err;
}

/* A fence failed (they are posted unsignalled): the connection goes. */
static void rdmalog_ep_fence_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     fence_cqe);

	rdmalog_ep_wc_ok(ep, wc, "registration fence");
}

struct ib_send_wr *rdmalog_ep_reg_fence(struct rdmalog_ep *ep,
					struct ib_send_wr *inv,
					struct ib_send_wr *regs)
{
	if (!ep->fence_mr)
		return regs;
	memset(inv, 0, sizeof(*inv));
	inv->opcode = IB_WR_LOCAL_INV;
	inv->wr_cqe = &ep->fence_cqe;
	inv->ex.invalidate_rkey = ep->fence_mr->rkey;
	inv->next = regs;
	return inv;
}

bool rdmalog_ep_wc_ok(struct rdmalog_ep *ep, struct ib_wc *wc,
		      const char *what)
{
	if (likely(wc->status == IB_WC_SUCCESS))
		return true;
	/*
	 * Flushes are how a connection going away completes its requests.
	 * One before our release started: the QP went to error (a peer's
	 * disconnect, or the device on its own): see rdmalog_ep_flush_work().
	 */
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		if (!test_bit(RDMALOG_EP_DEAD, &ep->flags) &&
		    !test_and_set_bit(RDMALOG_EP_FLUSHED, &ep->flags)) {
			kref_get(&ep->ref);	/* the work's */
			if (!queue_delayed_work(rdmalog_conn_wq, &ep->flush_work,
						msecs_to_jiffies(RDMALOG_EP_FLUSH_GRACE_MS)))
				rdmalog_ep_put(ep);
		}
		return false;
	}
	if (!test_bit(RDMALOG_EP_DEAD, &ep->flags)) {
		rdmalog_stats_inc(RDMALOG_STAT_COMPLETION_ERRORS);
		rdmalog_ep_error(ep, "%s: %s", what,
				 ib_wc_status_msg(wc->status));
	}
	return false;
}

/*
 * Work requests were flushed a while ago and no close of ours started
 * since: the QP is in error and carries nothing more (rxe puts it there
 * when a local operation fails), so the connection is over. Without
 * this, only the peer timeout would end it.
 */
void rdmalog_ep_flush_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(to_delayed_work(work),
					     struct rdmalog_ep, flush_work);

	/* @closing without the conn lock: a hint; the error work decides */
	if (!test_bit(RDMALOG_EP_DEAD, &ep->flags) && !READ_ONCE(ep->closing)) {
		rdmalog_stats_inc(RDMALOG_STAT_COMPLETION_ERRORS);
		rdmalog_ep_error(ep, "work requests flushed: the queue pair is in the error state");
	}
	rdmalog_ep_put(ep);
}

static void rdmalog_ep_qp_event(struct ib_event *event, void *context)
{
	struct rdmalog_ep *ep = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		/* A message arrived before the RTU: the CM needs to know. */
		rdma_notify(ep->cm_id, event->event);
		break;
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
	case IB_EVENT_PATH_MIG:
		break;
	default:
		rdmalog_stats_inc(RDMALOG_STAT_COMPLETION_ERRORS);
		rdmalog_ep_error(ep, "queue pair event: %s",
				 ib_event_msg(event->event));
		break;
	}
}

/*
 * Post @len bytes at @msg from a send buffer after @pre: a control
 * message (@rdma NULL: its header filled in, a credit and a sequence
 * number taken) or, with @rdma (its remote address and key set), the
 * bytes as they are by RDMA WRITE.
 */
static int rdmalog_ep_post_sbuf(struct rdmalog_ep *ep, void *msg,
				u16 len, u8 type, u32 min_credits,
				struct ib_rdma_wr *rdma, bool read_back,
				struct ib_send_wr *pre,
				u32 nr_pre,
				void (*sbuf_init)(struct rdmalog_sbuf *sb,
						  void *arg),
				void *arg)
{
	struct ib_rdma_wr local = {}, rd = {};
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *wr, *last;
	struct rdmalog_msg_hdr *hdr;
	struct ib_sge sge, rd_sge;
	struct rdmalog_sbuf *sb;
	int err;

	spin_lock_bh(&ep->lock);
	if (!ep->live) {
		err = -ENOTCONN;
		goto out_unlock;
	}
	if ((!rdma && ep->credits < min_credits) ||
	    list_empty(&ep->send_free)) {
		rdmalog_stats_inc(RDMALOG_STAT_SEND_STALLS);
		err = -EAGAIN;
		goto out_unlock;
	}
	sb = list_first_entry(&ep->send_free, struct rdmalog_sbuf, free);
	list_del(&sb->free);

	if (!rdma) {
		/* in @msg too: callers read the epoch it went in */
		hdr = msg;
		hdr->magic = cpu_to_le32(RDMALOG_MSG_MAGIC);
		hdr->version = RDMALOG_PROTO_VERSION;
		hdr->type = type;
		hdr->length = cpu_to_le16(len);
		hdr->credits = cpu_to_le16(ep->grant);
		hdr->reserved = 0;
		hdr->seq = cpu_to_le32(ep->tx_seq + 1);
		hdr->epoch = cpu_to_le64(rdmalog_conn_epoch());
	}
	memcpy(sb->buf, msg, len);
	sge = sb->sge;
	sge.length = len;
	if (len <= ep->max_inline) {
		/* copied by the post: the device never reads the buffer */
		sge.addr = (uintptr_t)sb->buf;
	} else {
		ib_dma_sync_single_for_device(ep->ibdev, sb->sge.addr, len,
					      DMA_TO_DEVICE);
	}
	sb->type = type;
	sb->nr_writes = nr_pre;
	sb->done = NULL;
	if (sbuf_init)
		sbuf_init(sb, arg);

	if (!rdma)
		rdma = &local;
	wr = &rdma->wr;
	wr->wr_cqe = &sb->cqe;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->opcode = rdma == &local ? IB_WR_SEND : IB_WR_RDMA_WRITE;
	wr->send_flags = IB_SEND_SIGNALED;
	if (len <= ep->max_inline)
		wr->send_flags |= IB_SEND_INLINE;
	wr->next = NULL;
	if (read_back) {
		/* the READ's completion is the buffer's; the WRITE is silent */
		wr->wr_cqe = NULL;
		wr->send_flags &= ~IB_SEND_SIGNALED;
		rd_sge.addr = ep->proof.mr->iova;
		rd_sge.length = sizeof(u64);
		rd_sge.lkey = ep->proof.mr->lkey;
		rd.wr.opcode = IB_WR_RDMA_READ;
		rd.wr.wr_cqe = &sb->cqe;
		rd.wr.send_flags = IB_SEND_SIGNALED;
		rd.wr.sg_list = &rd_sge;
		rd.wr.num_sge = 1;
		rd.remote_addr = rdma->remote_addr;
		rd.rkey = rdma->rkey;
		wr->next = &rd.wr;
	}
	if (pre) {
		for (last = pre; last->next; last = last->next)
			;
		last->next = wr;
		err = ib_post_send(ep->qp, pre, &bad);
		last->next = NULL;
	} else {
		err = ib_post_send(ep->qp, wr, &bad);
	}
	if (err) {
		/*
		 * Posting stops at the first bad work request; the ones
		 * before it went out, but without their notice nobody counts
		 * them, and the connection is closed by the caller. One of
		 * them may be our WRITE from @sb (its READ was refused): no
		 * later post may take @sb while that WRITE reads it, so none
		 * goes out on this connection any more.
		 */
		if (bad != (pre ?: wr))
			ep->live = false;
		list_add(&sb->free, &ep->send_free);
		goto out_unlock;
	}
	if (rdma == &local) {
		ep->tx_seq++;
		ep->credits--;
		ep->grant = 0;
		rdmalog_stats_inc(RDMALOG_STAT_MSGS_SENT);
	}
out_unlock:
	spin_unlock_bh(&ep->lock);
	return err;
}

int rdmalog_ep_send_chain(struct rdmalog_ep *ep, void *msg, u16 len, u8 type,
			  u32 min_credits, struct ib_send_wr *pre, u32 nr_pre,
			  void (*sbuf_init)(struct rdmalog_sbuf *sb, void *arg),
			  void *arg)
{
	return rdmalog_ep_post_sbuf(ep, msg, len, type, min_credits, NULL,
				    false, pre, nr_pre, sbuf_init, arg);
}

int rdmalog_ep_write_chain(struct rdmalog_ep *ep, const void *buf, u16 len,
			   u64 raddr, u32 rkey, bool read_back,
			   struct ib_send_wr *pre, u32 nr_pre,
			   void (*sbuf_init)(struct rdmalog_sbuf *sb, void *arg),
			   void *arg)
{
	struct ib_rdma_wr wr = {
		.remote_addr = raddr,
		.rkey = rkey,
	};

	/* not written to: @rdma is set */
	return rdmalog_ep_post_sbuf(ep, (void *)buf, len, 0, 0, &wr,
				    read_back, pre, nr_pre, sbuf_init, arg);
}

int rdmalog_ep_send(struct rdmalog_ep *ep, void *msg, u16 len, u8 type,
		    u32 min_credits)
{
	return rdmalog_ep_send_chain(ep, msg, len, type, min_credits, NULL, 0,
				     NULL, NULL);
}

static void rdmalog_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_sbuf *sb = container_of(wc->wr_cqe, struct rdmalog_sbuf,
					       cqe);
	struct rdmalog_ep *ep = sb->ep;
	bool ok = wc->status == IB_WC_SUCCESS;

	/* Its owner's bookkeeping before the buffer can be reused. */
	if (sb->done)
		sb->done(ep, sb, ok);
	spin_lock(&ep->lock);
	list_add(&sb->free, &ep->send_free);
	spin_unlock(&ep->lock);
	rdmalog_ep_wc_ok(ep, wc, "send completion");
}

/*
 * A receive buffer's completion: the one entry point of every message.
 * Copy the message out and re-post the buffer first, then have hello.c
 * check and act on it (rdmalog_conn_process()).
 */
static void rdmalog_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_rbuf *rb = container_of(wc->wr_cqe, struct rdmalog_rbuf,
					       cqe);
	struct rdmalog_ep *ep = rb->ep;
	union rdmalog_msg_any m;
	const char *why;
	u32 len;
	int err;

	if (!rdmalog_ep_wc_ok(ep, wc, "receive completion"))
		return;
	if (test_bit(RDMALOG_EP_DEAD, &ep->flags))
		return;

	/* Copy the message out and give the buffer back before anything. */
	len = wc->byte_len;
	memset(&m, 0, sizeof(m));
	ib_dma_sync_single_for_cpu(ep->ibdev, rb->sge.addr, RDMALOG_MSG_SIZE,
				   DMA_FROM_DEVICE);
	memcpy(&m, (u8 *)ep->recv_mem + (rb - ep->rbufs) * RDMALOG_MSG_SIZE,
	       min_t(u32, len, sizeof(m)));
	ib_dma_sync_single_for_device(ep->ibdev, rb->sge.addr,
				      RDMALOG_MSG_SIZE, DMA_FROM_DEVICE);
	err = ib_post_recv(ep->qp, &rb->wr, NULL);
	if (unlikely(err)) {
		rdmalog_stats_inc(RDMALOG_STAT_COMPLETION_ERRORS);
		rdmalog_ep_error(ep, "cannot re-post a receive buffer: %d",
				 err);
		return;
	}
	spin_lock(&ep->lock);
	ep->grant++;
	spin_unlock(&ep->lock);

	why = len > sizeof(m) ? "message longer than any known type" :
				rdmalog_conn_process(ep, &m, len);
	if (!why)
		rdmalog_ep_get_ops()->rx_done(ep);
	if (unlikely(why)) {
		rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
		pr_warn_ratelimited("node %u: dropping the connection to node %u: %s (type %u, %u bytes)\n",
				    ep->conn->local.node_id, ep->conn->peer_id,
				    why, len >= sizeof(m.hdr) ? m.hdr.type : 0,
				    len);
		if (ep->refusal)
			rdmalog_ep_error(ep, "%s", why);
		else
			rdmalog_ep_error(ep, "bad message: %s", why);
	}
}

static void rdmalog_ep_free_bufs(struct rdmalog_ep *ep)
{
	if (ep->send_mapped)
		ib_dma_unmap_single(ep->ibdev, ep->send_dma,
				    RDMALOG_SEND_DEPTH * RDMALOG_MSG_SIZE,
				    DMA_TO_DEVICE);
	if (ep->recv_mapped)
		ib_dma_unmap_single(ep->ibdev, ep->recv_dma,
				    RDMALOG_RECV_DEPTH * RDMALOG_MSG_SIZE,
				    DMA_FROM_DEVICE);
	ep->send_mapped = false;
	ep->recv_mapped = false;
	kfree(ep->send_mem);
	kfree(ep->recv_mem);
	kfree(ep->sbufs);
	kfree(ep->rbufs);
	ep->send_mem = NULL;
	ep->recv_mem = NULL;
	ep->sbufs = NULL;
	ep->rbufs = NULL;
}

static int rdmalog_ep_alloc_bufs(struct rdmalog_ep *ep)
{
	u32 lkey = ep->pd->local_dma_lkey;
	int i;

	ep->rbufs = kcalloc(RDMALOG_RECV_DEPTH, sizeof(*ep->rbufs), GFP_KERNEL);
	ep->sbufs = kcalloc(RDMALOG_SEND_DEPTH, sizeof(*ep->sbufs), GFP_KERNEL);
	ep->recv_mem = kzalloc(RDMALOG_RECV_DEPTH * RDMALOG_MSG_SIZE,
			       GFP_KERNEL);
	ep->send_mem = kzalloc(RDMALOG_SEND_DEPTH * RDMALOG_MSG_SIZE,
			       GFP_KERNEL);
	if (!ep->rbufs || !ep->sbufs || !ep->recv_mem || !ep->send_mem)
		goto err;
	ep->recv_dma = ib_dma_map_single(ep->ibdev, ep->recv_mem,
					 RDMALOG_RECV_DEPTH * RDMALOG_MSG_SIZE,
					 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ep->ibdev, ep->recv_dma))
		goto err;
	ep->recv_mapped = true;
	ep->send_dma = ib_dma_map_single(ep->ibdev, ep->send_mem,
					 RDMALOG_SEND_DEPTH * RDMALOG_MSG_SIZE,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ep->ibdev, ep->send_dma))
		goto err;
	ep->send_mapped = true;

	for (i = 0; i < RDMALOG_RECV_DEPTH; i++) {
		struct rdmalog_rbuf *rb = &ep->rbufs[i];

		rb->ep = ep;
		rb->cqe.done = rdmalog_recv_done;
		rb->sge.addr = ep->recv_dma + i * RDMALOG_MSG_SIZE;
		rb->sge.length = RDMALOG_MSG_SIZE;
		rb->sge.lkey = lkey;
		rb->wr.wr_cqe = &rb->cqe;
		rb->wr.sg_list = &rb->sge;
		rb->wr.num_sge = 1;
	}
	for (i = 0; i < RDMALOG_SEND_DEPTH; i++) {
		struct rdmalog_sbuf *sb = &ep->sbufs[i];

		sb->ep = ep;
		sb->cqe.done = rdmalog_send_done;
		sb->buf = (u8 *)ep->send_mem + i * RDMALOG_MSG_SIZE;
		sb->sge.addr = ep->send_dma + i * RDMALOG_MSG_SIZE;
		sb->sge.lkey = lkey;
		list_add_tail(&sb->free, &ep->send_free);
	}
	return 0;

err:
	rdmalog_ep_free_bufs(ep);
	return -ENOMEM;
}

static const u32 rdmalog_inline_tries[] = {
	RDMALOG_INLINE_WANT, RDMALOG_NOTICE_LEN, 0
};

int rdmalog_ep_setup(struct rdmalog_ep *ep)
{
	struct rdmalog_conn *conn = ep->conn;
	struct ib_qp_init_attr attr = {};
	struct rdmalog_rdev *rdev;
	const char *what = "";
	int i, err;

	lockdep_assert_held(&conn->lock);
	ep->ibdev = ep->cm_id->device;
	rdev = rdmalog_rdev_get(ep->ibdev);
	if (IS_ERR(rdev)) {
		err = PTR_ERR(rdev);
		rdmalog_conn_set_msg(conn, "RDMA device %s not usable: error %d",
				     dev_name(&ep->ibdev->dev), err);
		return err;
	}
	ep->rdev = rdev;
	if (rdev->max_qp_wr < RDMALOG_SQ_SIZE ||
	    rdev->max_qp_wr < RDMALOG_RQ_SIZE ||
	    rdev->max_cqe < RDMALOG_CQ_SIZE || !rdev->max_send_sge ||
	    !rdev->max_recv_sge) {
		rdmalog_conn_set_msg(conn,
				     "RDMA device %s too small (max_qp_wr %u, max_cqe %u)",
				     dev_name(&ep->ibdev->dev), rdev->max_qp_wr,
				     rdev->max_cqe);
		return -EINVAL;
	}

	/*
	 * A protection domain of its own: the ring's rkeys and every other
	 * registration of this connection are good on its queue pair only,
	 * not on the other connections of the device.
	 */
	ep->pd = ib_alloc_pd(ep->ibdev, 0);
	if (IS_ERR(ep->pd)) {
		err = PTR_ERR(ep->pd);
		ep->pd = NULL;
		rdmalog_conn_set_msg(conn, "cannot allocate a PD: error %d",
				     err);
		return err;
	}

	err = rdmalog_ep_alloc_bufs(ep);
	if (err) {
		rdmalog_conn_set_msg(conn, "out of memory for buffers");
		return err;
	}

	err = rdmalog_cq_create(&ep->rcq, ep->ibdev, RDMALOG_CQ_SIZE,
				conn->peer_id % rdev->num_comp_vectors);
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot allocate a CQ: error %d",
				     err);
		return err;
	}

	attr.event_handler = rdmalog_ep_qp_event;
	attr.qp_context = ep;
	attr.send_cq = ep->rcq.cq;
	attr.recv_cq = ep->rcq.cq;
	attr.cap.max_send_wr = RDMALOG_SQ_SIZE;
	attr.cap.max_recv_wr = RDMALOG_RQ_SIZE;
	/* forwarded payloads are READ into pages (forward.c) */
	attr.cap.max_send_sge = min_t(u32, rdev->max_send_sge,
				      RDMALOG_FWD_READ_SGES);
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	/*
	 * Inline data: what the device takes of RDMALOG_INLINE_WANT, else
	 * of a notice's size, else none (devices refuse a size they lack).
	 */
	for (i = 0; i < ARRAY_SIZE(rdmalog_inline_tries); i++) {
		attr.cap.max_inline_data = rdmalog_inline_tries[i];
		err = rdma_create_qp(ep->cm_id, ep->pd, &attr);
		if (err != -EINVAL)
			break;
	}
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot create a QP: error %d", err);
		return err;
	}
	ep->qp = ep->cm_id->qp;
	ep->max_inline = attr.cap.max_inline_data;
	rdmalog_live_add(RDMALOG_STAT_LIVE_QPS, 1);
	if (rdev->reg_fence) {
		ep->fence_mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, 1);
		if (IS_ERR(ep->fence_mr)) {
			err = PTR_ERR(ep->fence_mr);
			ep->fence_mr = NULL;
			rdmalog_conn_set_msg(conn,
					     "cannot allocate an MR: error %d",
					     err);
			return err;
		}
		ep->fence_cqe.done = rdmalog_ep_fence_done;
	}
	err = rdmalog_ring_mr_setup(ep, rdmalog_conns.p.log);
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot DMA-map the ring: %s",
				     ep->ring_why);
		return err;
	}
	/* Not an error: a backup cannot catch up from us (ring_why). */
	if (READ_ONCE(rdmalog_conns.role) == RDMALOG_ROLE_PRIMARY)
		rdmalog_ring_mr_setup_primary(ep);
	err = rdmalog_ballot_mr_setup(ep);
	if (err) {
		rdmalog_conn_set_msg(conn,
				     "cannot allocate the ballot's MRs: error %d",
				     err);
		return err;
	}
	err = rdmalog_ep_get_ops()->setup(ep, &what);
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot set up %s: error %d", what,
				     err);
		return err;
	}

	for (i = 0; i < RDMALOG_RECV_DEPTH; i++) {
		err = ib_post_recv(ep->qp, &ep->rbufs[i].wr, NULL);
		if (err) {
			rdmalog_conn_set_msg(conn,
					     "cannot post receive buffers: error %d",
					     err);
			return err;
		}
	}

	err = rdma_set_ack_timeout(ep->cm_id, RDMALOG_ACK_TIMEOUT);
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot set the ACK timeout: %d",
				     err);
		return err;
	}
	return 0;
}

bool rdmalog_ep_poll_begin(struct rdmalog_ep *ep)
{
	return rdmalog_cq_own(&ep->rcq);
}

int rdmalog_ep_poll(struct rdmalog_ep *ep)
{
	return rdmalog_cq_reap_owned(&ep->rcq, RDMALOG_CQ_BATCH);
}

void rdmalog_ep_poll_end(struct rdmalog_ep *ep)
{
	rdmalog_cq_release(&ep->rcq);
}

void rdmalog_ep_release_resources(struct rdmalog_ep *ep)
{
	set_bit(RDMALOG_EP_DEAD, &ep->flags);
	spin_lock_bh(&ep->lock);
	ep->live = false;
	spin_unlock_bh(&ep->lock);
	if (ep->qp) {
		/* Every posted work request completes (flushed) first. */
		ib_drain_qp(ep->qp);
		rdma_destroy_qp(ep->cm_id);
		ep->qp = NULL;
		rdmalog_live_add(RDMALOG_STAT_LIVE_QPS, -1);
	}
	/* No completion handler runs after this. */
	rdmalog_cq_destroy(&ep->rcq);
	/* Nothing queues it any more; its reference is not the last. */
	if (cancel_delayed_work_sync(&ep->flush_work))
		rdmalog_ep_put(ep);
	/* Nothing is in flight: the users let go of the endpoint. */
	rdmalog_ep_get_ops()->release(ep);
	rdmalog_ring_mr_release(ep);
	rdmalog_ballot_mr_release(ep);
	if (ep->fence_mr) {
		ib_dereg_mr(ep->fence_mr);
		ep->fence_mr = NULL;
	}
	rdmalog_ep_free_bufs(ep);
	if (ep->pd) {
		ib_dealloc_pd(ep->pd);
		ep->pd = NULL;
	}
	rdmalog_rdev_put(ep->rdev);
	ep->rdev = NULL;
}
