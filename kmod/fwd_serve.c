// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the primary's side of forwarded appends.
 *
 * rdmalog_fwd_received() takes a backup's FWD in CQ context and queues a
 * work item on rdmalog_fwd_wq for it, which holds a reference on the
 * endpoint. The work item checks the request and pulls a non-inline
 * payload into pages of its own, holding one of the connection's
 * registrations for it: on IB/RoCE with up to %RDMALOG_FWD_PULL_READS
 * RDMA READs at a time into the pages addressed with the PD's
 * local_dma_lkey (no REG_MR on the send queue: rdmalog_fwd_read_direct());
 * on iWARP, where the READ sink must be registered, with one READ into
 * the pages registered with that MR (LOCAL_WRITE and REMOTE_WRITE), then
 * invalidating it and waiting for that. Then it appends with
 * rdmalog_log_append() (not blocking for ring space: a full ring is
 * answered EAGAIN) and sends the FWD_DONE. Work items run concurrently
 * (unbound workqueue), so forwarded appends group-commit like local
 * writers. The backup bounds its requests in flight per connection
 * (%RDMALOG_FWD_MAX_OUTSTANDING); a primary that sees more drops the
 * connection.
 *
 * The backup's side, the payload buffers, the registration pool and the
 * rules on lifetimes and locks that both sides follow are forward.c's;
 * the two files share kmod/fwd_priv.h.
 */
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ep.h"
#include "forward.h"
#include "fwd_priv.h"
#include "inject.h"
#include "log.h"
#include "proto.h"
#include "rdma_dev.h"
#include "trace.h"
#include "stats.h"

/**
 * struct rdmalog_fwd_work - a FWD being served by the primary
 * @work: on rdmalog_fwd_wq
 * @ep: the connection it came on (referenced)
 * @req_id: the backup's id
 * @len: payload bytes (as received, unchecked)
 * @flags: &enum rdmalog_fwd_flags (as received)
 * @addr: the payload's remote address (not inline)
 * @rkey: its remote key (not inline)
 * @read_cqe: completion of its RDMA READs (every one signalled)
 * @reads_left: READs posted whose completion has not come yet
 * @read_ok: every READ completed so far succeeded
 * @read_done: completed by the completion that takes @reads_left to 0
 * @refuse: it came while the forwarding was closed: answered EROFS,
 *	not served
 * @data: the inline payload
 */
struct rdmalog_fwd_work {
	struct work_struct work;
	struct rdmalog_ep *ep;
	u64 req_id;
	u32 len;
	u32 flags;
	u64 addr;
	u32 rkey;
	struct ib_cqe read_cqe;
	atomic_t reads_left;
	bool read_ok;
	struct completion read_done;
	bool refuse;
	u8 data[];
};

/*
 * Forwarded appends being served by the primary. Unbound, so that many
 * wait for their commit at once; not WQ_MEM_RECLAIM (no reclaim path).
 */
static struct workqueue_struct *rdmalog_fwd_wq;

int rdmalog_fwd_init(void)
{
	rdmalog_fwd_wq = alloc_workqueue("rdmalog_fwd", WQ_UNBOUND,
					 WQ_UNBOUND_MAX_ACTIVE);
	return rdmalog_fwd_wq ? 0 : -ENOMEM;
}

void rdmalog_fwd_exit(void)
{
	destroy_workqueue(rdmalog_fwd_wq);
}

/* LOCAL_INV done (primary side): its poster waits for it. */
static void rdmalog_fwd_inv_done_wake(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_fwd_reg *r = container_of(wc->wr_cqe,
						 struct rdmalog_fwd_reg,
						 inv_cqe);

	r->inv_ok = rdmalog_ep_wc_ok(r->ep, wc,
				     "forwarded payload invalidation");
	complete(&r->inv_done);
}

static void rdmalog_fwd_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_fwd_work *w = container_of(wc->wr_cqe,
						  struct rdmalog_fwd_work,
						  read_cqe);
	struct rdmalog_ep *ep = w->ep;

	if (!rdmalog_ep_wc_ok(ep, wc, "forwarded payload READ"))
		WRITE_ONCE(w->read_ok, false);
	if (atomic_dec_and_test(&w->reads_left))
		complete(&w->read_done);
}

/*
 * Post the chain @wr of @n READs of @w and wait for the completion of
 * every one that was posted. Work item context. Return: 0 (all
 * succeeded), -ENOTCONN (none posted: the connection is gone) or -EIO.
 */
static int rdmalog_fwd_read_wait(struct rdmalog_ep *ep,
				 struct rdmalog_fwd_work *w,
				 const struct ib_send_wr *wr, int n)
{
	const struct ib_send_wr *bad, *p;
	int err, unposted = 0;

	WRITE_ONCE(w->read_ok, true);
	atomic_set(&w->reads_left, n);
	reinit_completion(&w->read_done);
	err = rdmalog_ep_post(ep, wr, &bad);
	if (err) {
		for (p = bad; p; p = p->next)
			unposted++;
		if (unposted == n && err == -ENOTCONN)
			return -ENOTCONN;
		rdmalog_ep_error(ep, "cannot post a forwarded payload READ: %d",
				 err);
		/* Those posted still complete, flushed at the latest. */
		if (unposted == n ||
		    atomic_sub_and_test(unposted, &w->reads_left))
			return -EIO;
	}
	/* Completes, flushed at the latest, when the QP is drained. */
	wait_for_completion(&w->read_done);
	return err || !READ_ONCE(w->read_ok) ? -EIO : 0;
}

/*
 * Pull the payload of @w into @buf (DMA-mapped) with RDMA READs whose
 * sink the PD's local_dma_lkey addresses, so that nothing but READs goes
 * on the send queue: a REG_MR behind the replication WRITEs of a busy
 * queue is run again by rxe 6.1 after a retransmission and puts the QP
 * in error (Documentation/testing.rst). Each READ has up to
 * &rdmalog_fwd_ep.read_sges entries, and up to %RDMALOG_FWD_PULL_READS
 * are in flight (the send queue slots of the registration that this pull
 * holds as its token, which it does not post). IB and RoCE only: an iWARP
 * READ sink must be registered. Work item context. Return: 0, -ENOTCONN
 * or -EIO; either way no READ into @buf is in flight any more.
 */
static int rdmalog_fwd_read_direct(struct rdmalog_ep *ep,
				   struct rdmalog_fwd_work *w,
				   struct rdmalog_fwd_buf *buf)
{
	u32 per = ep->fwd.read_sges, lkey = ep->pd->local_dma_lkey;
	struct ib_rdma_wr rd[RDMALOG_FWD_PULL_READS] = {};
	struct scatterlist *sg = buf->sgt.sgl;
	unsigned int left = buf->nents;
	u64 raddr = w->addr;
	struct ib_sge *sges;
	int i, err = 0;
	u32 k;

	/* setup made it at least 1; 0 would post empty READs forever */
	if (WARN_ON_ONCE(!per))
		return -EIO;
	sges = kcalloc(RDMALOG_FWD_PULL_READS * per, sizeof(*sges),
		       GFP_KERNEL);
	if (!sges)
		return -EIO;
	w->read_cqe.done = rdmalog_fwd_read_done;
	while (left && !err) {
		for (i = 0; i < RDMALOG_FWD_PULL_READS && left; i++) {
			struct ib_sge *s = &sges[i * per];
			u32 len = 0;

			for (k = 0; k < per && left; k++, left--) {
				s[k].addr = sg_dma_address(sg);
				s[k].length = sg_dma_len(sg);
				s[k].lkey = lkey;
				len += s[k].length;
				sg = sg_next(sg);
			}
			rd[i].wr.opcode = IB_WR_RDMA_READ;
			rd[i].wr.wr_cqe = &w->read_cqe;
			rd[i].wr.send_flags = IB_SEND_SIGNALED;
			rd[i].wr.sg_list = s;
			rd[i].wr.num_sge = k;
			rd[i].wr.next = NULL;
			rd[i].remote_addr = raddr;
			rd[i].rkey = w->rkey;
			if (i)
				rd[i - 1].wr.next = &rd[i].wr;
			raddr += len;
		}
		err = rdmalog_fwd_read_wait(ep, w, &rd[0].wr, i);
	}
	kfree(sges);
	return err;
}

/*
 * Pull the payload of @w into @buf: register it, RDMA READ, invalidate.
 * Work item context. Return: 0 (@buf holds the payload, unmapped), or a
 * negative errno; when *@bufp was set to NULL, @buf now belongs to a
 * retired registration.
 */
static int rdmalog_fwd_pull(struct rdmalog_ep *ep, struct rdmalog_fwd_work *w,
			    struct rdmalog_fwd_buf **bufp)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	struct rdmalog_fwd_buf *buf = *bufp;
	struct ib_rdma_wr rd = {};
	struct ib_reg_wr rwr = {};
	struct rdmalog_fwd_reg *r;
	struct ib_send_wr inv = {};
	struct ib_sge sge;
	bool dead;
	int err;

	if (!rdmalog_fwd_user_get(f))
		return -EIO;
	wait_event(f->wq, (r = rdmalog_fwd_reg_try(f, &dead)) || dead);
	if (!r) {
		err = -EIO;
		goto out_user;
	}
	if (w->len > f->max_len) {
		err = -EMSGSIZE;
		goto out_reg;
	}
	err = rdmalog_fwd_buf_map(ep, buf);
	if (err)
		goto out_reg;
	if (!ep->rdev->iwarp) {
		/* @r only bounds the pulls in flight (the send queue) */
		err = rdmalog_fwd_read_direct(ep, w, buf);
		goto out_unmap;
	}
	err = rdmalog_fwd_reg_map(r, buf);
	if (err)
		goto out_unmap;

	rwr.wr.opcode = IB_WR_REG_MR;
	rwr.wr.wr_cqe = &r->reg_cqe;
	rwr.wr.next = &rd.wr;
	rwr.mr = r->mr;
	rwr.key = r->mr->rkey;
	/* an iWARP READ sink is written by the peer's READ response */
	rwr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	sge.addr = r->mr->iova;
	sge.length = w->len;
	sge.lkey = r->mr->lkey;
	w->read_cqe.done = rdmalog_fwd_read_done;
	WRITE_ONCE(w->read_ok, true);
	atomic_set(&w->reads_left, 1);
	reinit_completion(&w->read_done);
	rd.wr.opcode = IB_WR_RDMA_READ;
	rd.wr.wr_cqe = &w->read_cqe;
	rd.wr.send_flags = IB_SEND_SIGNALED;
	rd.wr.sg_list = &sge;
	rd.wr.num_sge = 1;
	rd.remote_addr = w->addr;
	rd.rkey = w->rkey;
	err = rdmalog_ep_post(ep, &rwr.wr, NULL);
	if (err == -ENOTCONN)
		goto out_unmap;
	if (err) {
		rdmalog_ep_error(ep, "cannot post a forwarded payload READ: %d",
				 err);
		err = -EIO;
		goto out_retire;
	}
	/* Completes, flushed at the latest, when the QP is drained. */
	wait_for_completion(&w->read_done);

	r->inv_cqe.done = rdmalog_fwd_inv_done_wake;
	reinit_completion(&r->inv_done);
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_cqe = &r->inv_cqe;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = r->mr->rkey;
	if (rdmalog_ep_post(ep, &inv, NULL)) {
		err = -EIO;
		goto out_retire;
	}
	wait_for_completion(&r->inv_done);
	if (!r->inv_ok || !w->read_ok) {
		err = -EIO;
		if (!r->inv_ok)
			goto out_retire;
	}
	/* Invalidated: the pages are ours again. */
	rdmalog_fwd_buf_unmap(ep, buf);
	rdmalog_fwd_reg_free(f, r);
	rdmalog_fwd_user_put(f);
	return err;

out_retire:
	r->buf = buf;
	*bufp = NULL;
	rdmalog_fwd_reg_retire(f, r);
	goto out_user;
out_unmap:
	rdmalog_fwd_buf_unmap(ep, buf);
out_reg:
	rdmalog_fwd_reg_free(f, r);
out_user:
	rdmalog_fwd_user_put(f);
	return err;
}

/* Append @w's payload to @log. Work item context. */
static int rdmalog_fwd_serve(struct rdmalog_ep *ep, struct rdmalog_fwd_work *w,
			     struct rdmalog_log *log, u64 *lsn)
{
	struct rdmalog_fwd_buf *buf;
	struct bio_vec *bv = NULL;
	struct iov_iter iter;
	struct scatterlist *sg;
	struct kvec kv;
	unsigned int i;
	int err;

	if (w->flags & RDMALOG_FWD_F_INLINE) {
		kv.iov_base = w->data;
		kv.iov_len = w->len;
		iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, w->len);
		return rdmalog_log_append(log, &iter, true, lsn);
	}
	if (!w->rkey || w->addr + w->len < w->addr)
		return -EINVAL;
	buf = rdmalog_fwd_buf_alloc(w->len, DMA_FROM_DEVICE);
	if (!buf)
		return -ENOMEM;
	err = rdmalog_fwd_pull(ep, w, &buf);
	if (err)
		goto out;
	bv = kvmalloc_array(buf->sgt.orig_nents, sizeof(*bv), GFP_KERNEL);
	if (!bv) {
		err = -ENOMEM;
		goto out;
	}
	for_each_sg(buf->sgt.sgl, sg, buf->sgt.orig_nents, i)
		bvec_set_page(&bv[i], sg_page(sg), sg->length, 0);
	iov_iter_bvec(&iter, ITER_SOURCE, bv, buf->sgt.orig_nents, w->len);
	err = rdmalog_log_append(log, &iter, true, lsn);
out:
	kvfree(bv);
	rdmalog_fwd_buf_free(buf);
	return err;
}

/* FWD_DONE status for the result of an append. */
static u32 rdmalog_fwd_status(int err)
{
	switch (err) {
	case 0:
	case -EMSGSIZE:
	case -EINVAL:
	case -ETIMEDOUT:
	case -ENETDOWN:
	case -EIO:
	case -ENOSPC:
	case -EAGAIN:
	case -EROFS:
		break;
	case -ENOMEM:
		err = -EAGAIN;	/* not appended; worth another try */
		break;
	default:
		err = -EIO;
		break;
	}
	return -err;
}

bool rdmalog_fwd_queue_work(struct work_struct *work)
{
	return queue_work(rdmalog_fwd_wq, work);
}

void rdmalog_fwd_send(struct rdmalog_ep *ep, void *m, u16 len, u8 type,
		      const char *what)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(RDMALOG_FWD_SEND_WAIT_MS);
	int ret;

	for (;;) {
		ret = rdmalog_ep_send(ep, m, len, type, 2);
		if (ret != -EAGAIN)
			break;
		if (time_after(jiffies, deadline)) {
			rdmalog_ep_error(ep, "no send credit for a %s", what);
			return;
		}
		usleep_range(100, 1000);
	}
	if (ret && ret != -ENOTCONN)
		rdmalog_ep_error(ep, "cannot send a %s: %d", what, ret);
}

/* Send the FWD_DONE, waiting a little for a credit if need be. */
static void rdmalog_fwd_answer(struct rdmalog_ep *ep, u64 req_id, u32 len,
			       int err, u64 lsn)
{
	struct rdmalog_msg_fwd_done m = {};

	m.req_id = cpu_to_le64(req_id);
	m.lsn = cpu_to_le64(err ? 0 : lsn);
	m.status = cpu_to_le32(rdmalog_fwd_status(err));
	trace_rdmalog_fwd(ep->conn->peer_id, req_id, len, err);
	rdmalog_fwd_send(ep, &m, sizeof(m), RDMALOG_MSG_FWD_DONE, "FWD_DONE");
}

static void rdmalog_fwd_work_fn(struct work_struct *work)
{
	struct rdmalog_fwd_work *w = container_of(work, struct rdmalog_fwd_work,
						  work);
	struct rdmalog_ep *ep = w->ep;
	struct rdmalog_fwd_ep *f = &ep->fwd;
	struct rdmalog_log *log;
	u64 lsn = 0;
	u32 role;
	int err;

	log = rdmalog_fwd_node_log(&role);
	if (w->refuse || role == RDMALOG_ROLE_BACKUP ||
	    test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags))
		err = -EROFS;
	else if (w->flags & ~RDMALOG_FWD_F_INLINE)
		err = -EINVAL;
	else if (!w->len)
		err = -EINVAL;
	else if (w->len > ep->conn->local.max_record)
		err = -EMSGSIZE;
	else if (!(w->flags & RDMALOG_FWD_F_INLINE) && w->len > f->max_len)
		err = -EMSGSIZE;	/* more than we can pull: no buffer */
	else if (!log)
		err = -ENETDOWN;
	else
		err = rdmalog_fwd_serve(ep, w, log, &lsn);
	if (log)
		rdmalog_log_put(log);
	if (err)
		rdmalog_stats_inc(RDMALOG_STAT_FWD_ERRORS);
	rdmalog_stats_inc(RDMALOG_STAT_FWD_SERVED);

	/* Before the answer: the backup may send the next FWD at once. */
	spin_lock_bh(&f->lock);
	f->serving--;
	spin_unlock_bh(&f->lock);
	rdmalog_inject_delay(RDMALOG_INJ_FWD_ANSWER);
	rdmalog_fwd_answer(ep, w->req_id, w->len, err, lsn);
	/* Posted: a FWD_CLOSE posted from now on follows it (close_all). */
	spin_lock_bh(&f->lock);
	f->unanswered--;
	spin_unlock_bh(&f->lock);
	rdmalog_ep_put(ep);	/* the work item's */
	kfree(w);
}

const char *rdmalog_fwd_received(struct rdmalog_ep *ep,
				 const struct rdmalog_msg_fwd *m, u32 len)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	u32 flags = le32_to_cpu(m->flags);
	u32 plen = le32_to_cpu(m->len);
	struct rdmalog_fwd_work *w;
	bool inl = flags & RDMALOG_FWD_F_INLINE;

	/* msg.c checked that an inline payload is all there. */
	w = kzalloc(struct_size(w, data, inl ? plen : 0), GFP_ATOMIC);
	if (!w)
		return "out of memory for a forwarded append";
	spin_lock(&f->lock);
	if (f->serving >= RDMALOG_FWD_MAX_OUTSTANDING) {
		spin_unlock(&f->lock);
		kfree(w);
		return "more FWDs outstanding than allowed";
	}
	f->serving++;
	f->unanswered++;
	w->refuse = f->refusing;
	spin_unlock(&f->lock);

	INIT_WORK(&w->work, rdmalog_fwd_work_fn);
	init_completion(&w->read_done);
	w->req_id = le64_to_cpu(m->req_id);
	w->len = plen;
	w->flags = flags;
	w->addr = le64_to_cpu(m->addr);
	w->rkey = le32_to_cpu(m->rkey);
	if (inl)
		memcpy(w->data, m->data, plen);
	rdmalog_ep_get(ep);	/* the work item's */
	w->ep = ep;
	queue_work(rdmalog_fwd_wq, &w->work);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Closing the forwarding before a hand-over */

/* No FWD of @ep is unanswered. */
static bool rdmalog_fwd_all_answered(struct rdmalog_fwd_ep *f)
{
	bool ret;

	spin_lock_bh(&f->lock);
	ret = !f->unanswered;
	spin_unlock_bh(&f->lock);
	return ret;
}

/* @ep answered the FWD_CLOSE, or is gone. */
static bool rdmalog_fwd_close_done(struct rdmalog_ep *ep)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	bool ret;

	spin_lock_bh(&f->lock);
	ret = !f->refusing || f->dead;
	spin_unlock_bh(&f->lock);
	if (!ret) {
		spin_lock_bh(&ep->lock);
		ret = !ep->live;
		spin_unlock_bh(&ep->lock);
	}
	return ret;
}

/*
 * Why this is enough: the caller refuses the appends first, so a FWD
 * served from then on is answered EROFS and appends nothing; the one
 * served before is answered before the FWD_CLOSE is posted, and a
 * connection delivers in order. So when the backup takes the FWD_CLOSE,
 * every FWD it still has outstanding there appended nothing, and it
 * sends no more: once it answered, none of its writers can be left with
 * an unknown outcome by the connection's end (the new primary's fencing).
 */
u32 rdmalog_fwd_close_all(bool reopen, u32 timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct rdmalog_ep *eps[RDMALOG_MAX_PEERS];
	struct rdmalog_msg_fwd_close m = {};
	bool sent[RDMALOG_MAX_PEERS];
	u32 n, i, late = 0;

	n = rdmalog_conn_live_eps(eps, ARRAY_SIZE(eps));
	if (reopen)
		m.flags = cpu_to_le32(RDMALOG_FWD_CLOSE_F_REOPEN);
	for (i = 0; i < n; i++) {
		struct rdmalog_fwd_ep *f = &eps[i]->fwd;

		/*
		 * Refused from now on until the backup answers: what it sent
		 * before it heard the FWD_CLOSE may still be on its way.
		 * (A reopen leaves that to the FWD_CLOSED too.)
		 */
		spin_lock_bh(&f->lock);
		if (!reopen) {
			f->refusing = true;
			f->close_seq++;
		}
		m.seq = cpu_to_le32(f->close_seq);
		spin_unlock_bh(&f->lock);
		while (!reopen && !rdmalog_fwd_all_answered(f) &&
		       time_before(jiffies, deadline))
			usleep_range(500, 1000);
		/*
		 * Still unanswered: a FWD_CLOSE would be a lie (that FWD may
		 * have appended). Its backup learns the outcome, or -ENOTCONN.
		 */
		sent[i] = reopen || rdmalog_fwd_all_answered(f);
		if (!sent[i]) {
			spin_lock_bh(&f->lock);
			f->refusing = false;
			spin_unlock_bh(&f->lock);
			continue;
		}
		rdmalog_fwd_send(eps[i], &m, sizeof(m), RDMALOG_MSG_FWD_CLOSE,
				 "FWD_CLOSE");
	}
	for (i = 0; i < n; i++) {
		while (!reopen && sent[i] && !rdmalog_fwd_close_done(eps[i]) &&
		       time_before(jiffies, deadline))
			usleep_range(500, 1000);
		if (!reopen && (!sent[i] || !rdmalog_fwd_close_done(eps[i]))) {
			pr_info("switchover: peer %u: forwarding not closed in %u ms (%s)\n",
				eps[i]->conn->peer_id, timeout_ms,
				sent[i] ? "no FWD_CLOSED" : "a FWD unanswered");
			late++;
		}
		rdmalog_ep_put(eps[i]);
	}
	return late;
}

const char *rdmalog_fwd_closed_received(struct rdmalog_ep *ep,
					const struct rdmalog_msg_fwd_close *m)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	u32 seq = le32_to_cpu(m->seq);
	bool asked;

	if (m->flags)
		return "FWD_CLOSED with flags";
	spin_lock(&f->lock);
	asked = seq && seq <= f->close_seq;
	/* The answer to the last one: nothing sent before it is on its way. */
	if (seq == f->close_seq)
		f->refusing = false;
	spin_unlock(&f->lock);
	return asked ? NULL : "FWD_CLOSED not asked for";
}
