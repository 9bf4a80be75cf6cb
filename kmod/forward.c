// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - forwarded appends: a backup's writers, and what both sides
 * share.
 *
 * A write() on a backup is appended by the primary: the backup sends a
 * FWD on its connection to the primary and waits for the FWD_DONE, which
 * the primary sends once the record is committed (or could not be). The
 * formats are in proto.h; Documentation/protocol.rst ("Forwarded
 * appends") and Documentation/device.rst (write() on a backup) describe
 * the behaviour.
 *
 * Backup side (rdmalog_fwd_append(), the writer's thread):
 *
 *   A payload of up to %RDMALOG_FWD_INLINE_MAX bytes travels inside the
 *   FWD. A larger one is copied into pages of our own (&struct
 *   rdmalog_fwd_buf), DMA-mapped and registered with one of the
 *   connection's FRWR MRs (&struct rdmalog_fwd_reg) for REMOTE_READ only,
 *   with a fresh key each time; the REG_MR is posted in the same chain
 *   right before the FWD, so it has executed before the primary can read.
 *   The request (&struct rdmalog_fwd_req) is on &rdmalog_fwd_ep.reqs from
 *   before the FWD is posted until the FWD_DONE arrives or the connection
 *   ends, whether or not its writer still waits: the primary may still
 *   read the payload, so the registration and the pages stay until then.
 *   The FWD_DONE handler (CQ context) posts the LOCAL_INV; its completion
 *   unmaps and frees the pages and returns the MR to the pool.
 *
 * Primary side: kmod/fwd_serve.c (it shares kmod/fwd_priv.h with this
 *   file): a work item per FWD pulls the payload, appends it and answers.
 *
 * Lifetimes and locks:
 *
 *   &rdmalog_fwd_ep.lock (BH-safe spinlock) protects the request list, the
 *   registration pool, the counters and @dead. The endpoint's memory is
 *   kept by references (the writer's from rdmalog_conn_primary_ep(), each
 *   work item's); its device resources are released by conn.c after the
 *   QP is drained and destroyed, which calls rdmalog_fwd_ep_release():
 *   that marks the state dead (no new user), fails the requests left
 *   (their outcome is unknown: -ENOTCONN), and waits until no thread is a
 *   "user" (between rdmalog_fwd_user_get() and _put(): DMA mappings,
 *   posts, MRs), then deregisters the MRs and frees the pages still
 *   attached to them. A user never waits for anything but completions
 *   (which the drain delivers), @dead, or a free MR (freed by completions
 *   or by @dead); a user never takes a mutex. Posts check
 *   &rdmalog_ep.live under &rdmalog_ep.lock, so nothing is posted on a QP
 *   being destroyed. A registration whose invalidation failed (flushed:
 *   the connection is dying) may still be valid: it is "retired" with its
 *   pages, never reused, and released only after ib_dereg_mr().
 *
 *   The up period's log, role and commit timeout come from node.c and
 *   node_up.c (rdmalog_fwd_start(), _set_policy(), _stop()) and are read
 *   under the leaf lock of rdmalog_fwd_node: the data path never takes
 *   the node's mutex.
 */
#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ep.h"
#include "forward.h"
#include "fwd_priv.h"
#include "log.h"
#include "proto.h"
#include "rdma_dev.h"
#include "trace.h"
#include "stats.h"

/* On top of the commit timeout: how long a writer waits for FWD_DONE. */
#define RDMALOG_FWD_ANSWER_MARGIN_MS	10000
/* Pause before a blocking writer retries a FWD refused for lack of room. */
#define RDMALOG_FWD_RETRY_MS		10
/*
 * How long a connection whose peer answered a FWD -EROFS is not forwarded
 * to: it no longer leads, or hands the log over and is about to close.
 */
#define RDMALOG_FWD_REFUSED_MS		1000

/**
 * struct rdmalog_fwd_req - a FWD of a backup's writer
 * @node: on &rdmalog_fwd_ep.reqs while outstanding (under its lock);
 *	whoever takes it off (the FWD_DONE handler, the release, or the
 *	writer when the FWD could not be posted) owns @reg and completes
 *	@done
 * @ref: the writer's and the list's
 * @id: its request id
 * @reg: its registration (not inline), with the payload as @reg->buf
 * @done: completed once @result and @lsn are set
 * @result: 0, or the negative errno for the writer
 * @lsn: the record's LSN when @result is 0
 * @answered: the primary closed the forwarding (FWD_CLOSE) while the
 *	request was listed: @result (-EROFS) is set and @done completed; the
 *	FWD_DONE or the release only takes it off the list (under the lock)
 */
struct rdmalog_fwd_req {
	struct list_head node;
	refcount_t ref;
	u64 id;
	struct rdmalog_fwd_reg *reg;
	struct completion done;
	int result;
	u64 lsn;
	bool answered;
};

/*
 * The up period's parameters (rdmalog_fwd_start()), under @lock (BH-safe
 * spinlock, a leaf): @log referenced while set (NULL while down); @role
 * and @commit_timeout_ms the node's settings, kept after a stop (0 before
 * the first start). A writer reads @commit_timeout_ms with READ_ONCE()
 * alone: a stale value only sizes its wait.
 */
static struct {
	spinlock_t lock; /* see above */
	struct rdmalog_log *log;
	u32 role;
	u32 commit_timeout_ms;
} rdmalog_fwd_node = {
	.lock = __SPIN_LOCK_UNLOCKED(rdmalog_fwd_node.lock),
};

void rdmalog_fwd_start(const struct rdmalog_fwd_params *p)
{
	struct rdmalog_log *old;

	rdmalog_log_get(p->log);
	spin_lock_bh(&rdmalog_fwd_node.lock);
	old = rdmalog_fwd_node.log;
	rdmalog_fwd_node.log = p->log;
	rdmalog_fwd_node.role = p->role;
	rdmalog_fwd_node.commit_timeout_ms = p->commit_timeout_ms;
	spin_unlock_bh(&rdmalog_fwd_node.lock);
	/* None: the node stops what it starts. */
	if (WARN_ON_ONCE(old))
		rdmalog_log_put(old);
}

void rdmalog_fwd_set_policy(u32 role, u32 commit_timeout_ms)
{
	spin_lock_bh(&rdmalog_fwd_node.lock);
	rdmalog_fwd_node.role = role;
	rdmalog_fwd_node.commit_timeout_ms = commit_timeout_ms;
	spin_unlock_bh(&rdmalog_fwd_node.lock);
}

void rdmalog_fwd_stop(void)
{
	struct rdmalog_log *log;

	spin_lock_bh(&rdmalog_fwd_node.lock);
	log = rdmalog_fwd_node.log;
	rdmalog_fwd_node.log = NULL;
	spin_unlock_bh(&rdmalog_fwd_node.lock);
	if (log)
		rdmalog_log_put(log);
}

/*
 * The up period's log (referenced: the caller puts it) or NULL, and the
 * node's role.
 */
struct rdmalog_log *rdmalog_fwd_node_log(u32 *role)
{
	struct rdmalog_log *log;

	spin_lock_bh(&rdmalog_fwd_node.lock);
	log = rdmalog_fwd_node.log;
	if (log)
		rdmalog_log_get(log);
	*role = rdmalog_fwd_node.role;
	spin_unlock_bh(&rdmalog_fwd_node.lock);
	return log;
}

/* ------------------------------------------------------------------ */
/* Payload buffers */

void rdmalog_fwd_buf_free(struct rdmalog_fwd_buf *buf)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!buf)
		return;
	for_each_sg(buf->sgt.sgl, sg, buf->sgt.orig_nents, i)
		if (sg_page(sg))
			__free_page(sg_page(sg));
	sg_free_table(&buf->sgt);
	kfree(buf);
	rdmalog_live_add(RDMALOG_STAT_LIVE_FWD_BUFS, -1);
}

struct rdmalog_fwd_buf *rdmalog_fwd_buf_alloc(u32 len,
					      enum dma_data_direction dir)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE);
	struct rdmalog_fwd_buf *buf;
	struct scatterlist *sg;
	struct page *page;
	u32 left = len;
	unsigned int i;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	rdmalog_live_add(RDMALOG_STAT_LIVE_FWD_BUFS, 1);
	buf->len = len;
	buf->dir = dir;
	if (sg_alloc_table(&buf->sgt, nr, GFP_KERNEL)) {
		kfree(buf);
		rdmalog_live_add(RDMALOG_STAT_LIVE_FWD_BUFS, -1);
		return NULL;
	}
	for_each_sg(buf->sgt.sgl, sg, nr, i) {
		page = alloc_page(GFP_KERNEL);
		if (!page) {
			rdmalog_fwd_buf_free(buf);
			return NULL;
		}
		sg_set_page(sg, page, min_t(u32, left, PAGE_SIZE), 0);
		left -= sg->length;
	}
	return buf;
}

int rdmalog_fwd_buf_map(struct rdmalog_ep *ep, struct rdmalog_fwd_buf *buf)
{
	buf->nents = ib_dma_map_sg(ep->ibdev, buf->sgt.sgl,
				   buf->sgt.orig_nents, buf->dir);
	return buf->nents ? 0 : -ENOMEM;
}

/* Any context; the device must still be there (a user, or the release). */
void rdmalog_fwd_buf_unmap(struct rdmalog_ep *ep, struct rdmalog_fwd_buf *buf)
{
	if (!buf->nents)
		return;
	ib_dma_unmap_sg(ep->ibdev, buf->sgt.sgl, buf->sgt.orig_nents,
			buf->dir);
	buf->nents = 0;
}

/* ------------------------------------------------------------------ */
/* Users, registrations, posting */

/* Become a user of the device; false once the release started. */
bool rdmalog_fwd_user_get(struct rdmalog_fwd_ep *f)
{
	bool ok;

	spin_lock_bh(&f->lock);
	ok = !f->dead;
	if (ok)
		f->users++;
	spin_unlock_bh(&f->lock);
	return ok;
}

void rdmalog_fwd_user_put(struct rdmalog_fwd_ep *f)
{
	spin_lock_bh(&f->lock);
	f->users--;
	spin_unlock_bh(&f->lock);
	wake_up(&f->wq);
}

/*
 * A free registration, or NULL: none free, or @dead set (the release
 * started, or there is no pool at all).
 */
struct rdmalog_fwd_reg *rdmalog_fwd_reg_try(struct rdmalog_fwd_ep *f,
					    bool *dead)
{
	struct rdmalog_fwd_reg *r = NULL;

	spin_lock_bh(&f->lock);
	*dead = f->dead || !f->nr_regs;
	if (!*dead && !list_empty(&f->reg_free)) {
		r = list_first_entry(&f->reg_free, struct rdmalog_fwd_reg,
				     free);
		list_del_init(&r->free);
	}
	spin_unlock_bh(&f->lock);
	return r;
}

/* Back to the pool: @r is not registered (invalidated or never posted). */
void rdmalog_fwd_reg_free(struct rdmalog_fwd_ep *f, struct rdmalog_fwd_reg *r)
{
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	list_add(&r->free, &f->reg_free);
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up(&f->wq);
}

/* @r may still be valid: keep it (and @r->buf) for the release. */
void rdmalog_fwd_reg_retire(struct rdmalog_fwd_ep *f, struct rdmalog_fwd_reg *r)
{
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	r->retired = true;
	spin_unlock_irqrestore(&f->lock, flags);
	wake_up(&f->wq);
}

/* An error completion of a REG_MR (posted unsignalled, maybe fenced). */
static void rdmalog_fwd_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_fwd_reg *r = container_of(wc->wr_cqe,
						 struct rdmalog_fwd_reg,
						 reg_cqe);
	rdmalog_ep_wc_ok(r->ep, wc, "forwarded payload registration");
}

/* LOCAL_INV done (backup side): free the payload, return the MR. */
static void rdmalog_fwd_inv_done_free(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_fwd_reg *r = container_of(wc->wr_cqe,
						 struct rdmalog_fwd_reg,
						 inv_cqe);
	struct rdmalog_ep *ep = r->ep;
	struct rdmalog_fwd_buf *buf;

	if (!rdmalog_ep_wc_ok(ep, wc, "forwarded payload invalidation")) {
		rdmalog_fwd_reg_retire(&ep->fwd, r);
		return;
	}
	buf = r->buf;
	r->buf = NULL;
	if (buf) {
		/* The CQ is alive, so the device is too. */
		rdmalog_fwd_buf_unmap(ep, buf);
		rdmalog_fwd_buf_free(buf);
	}
	rdmalog_fwd_reg_free(&ep->fwd, r);
}

/*
 * Invalidate @r, which maps @r->buf; the completion frees both (or
 * retires them). Any context.
 */
static void rdmalog_fwd_reg_invalidate(struct rdmalog_ep *ep,
				       struct rdmalog_fwd_reg *r)
{
	struct ib_send_wr inv = {};

	r->inv_cqe.done = rdmalog_fwd_inv_done_free;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_cqe = &r->inv_cqe;
	inv.send_flags = IB_SEND_SIGNALED;
	inv.ex.invalidate_rkey = r->mr->rkey;
	if (rdmalog_ep_post(ep, &inv, NULL))
		rdmalog_fwd_reg_retire(&ep->fwd, r);
}

/* Map @buf's entries into @r with a fresh key. Return: 0 or -EIO. */
int rdmalog_fwd_reg_map(struct rdmalog_fwd_reg *r, struct rdmalog_fwd_buf *buf)
{
	struct ib_mr *mr = r->mr;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	if (ib_map_mr_sg(mr, buf->sgt.sgl, buf->nents, NULL, PAGE_SIZE) !=
	    buf->nents || mr->length != buf->len)
		return -EIO;
	/* The peer sees offsets, not our DMA addresses (as for the ring). */
	mr->iova = RDMALOG_RING_IOVA + (mr->iova & (PAGE_SIZE - 1));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Backup side */

static void rdmalog_fwd_req_put(struct rdmalog_fwd_req *req)
{
	if (refcount_dec_and_test(&req->ref)) {
		kfree(req);
		rdmalog_live_add(RDMALOG_STAT_LIVE_FWD_REQS, -1);
	}
}

/* FWD_DONE status to the writer's errno. */
static int rdmalog_fwd_errno(u32 status)
{
	switch (status) {
	case 0:
		return 0;
	case EMSGSIZE:
	case EINVAL:
	case ETIMEDOUT:
	case ENETDOWN:
	case EIO:
	case ENOSPC:
	case EAGAIN:
	case EROFS:
		return -status;
	default:
		/* Not appended, for a reason this version does not know. */
		return -EIO;
	}
}

/* Whether a writer may queue one more request (or must give up). */
static bool rdmalog_fwd_may_queue(struct rdmalog_fwd_ep *f, bool *dead)
{
	bool ok;

	spin_lock_bh(&f->lock);
	*dead = f->dead || f->closed;	/* closed: as good as gone */
	ok = !*dead && f->nr_reqs < RDMALOG_FWD_MAX_OUTSTANDING;
	spin_unlock_bh(&f->lock);
	return ok;
}

/*
 * Take @req off the list if it is still on it. Return: true when the
 * caller now owns it (see &rdmalog_fwd_req.node).
 */
static bool rdmalog_fwd_req_take(struct rdmalog_fwd_ep *f,
				 struct rdmalog_fwd_req *req)
{
	bool owned;

	spin_lock_bh(&f->lock);
	owned = !list_empty(&req->node);
	if (owned) {
		list_del_init(&req->node);
		f->nr_reqs--;
	}
	spin_unlock_bh(&f->lock);
	if (owned) {
		wake_up(&f->wq);
		rdmalog_fwd_req_put(req);	/* the list's */
	}
	return owned;
}

/* The FWD message with room for an inline payload. */
struct rdmalog_fwd_msg {
	struct rdmalog_msg_fwd m;
	u8 data[RDMALOG_FWD_INLINE_MAX];
};

/*
 * Post the FWD of @req (with @pre, the REG_MR, before it), retrying while
 * there is no send credit. User context. Return: 0 (posted), -EAGAIN
 * (@nonblock and no credit), -ENOTCONN (not posted: the connection is
 * gone, no credit came in time, or a fatal signal), or another error of
 * ib_post_send() (the REG_MR may have been posted).
 */
static int rdmalog_fwd_post_fwd(struct rdmalog_ep *ep,
				struct rdmalog_fwd_msg *msg, u16 mlen,
				struct ib_send_wr *pre, bool nonblock)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(RDMALOG_FWD_SEND_WAIT_MS);
	int err;

	for (;;) {
		err = rdmalog_ep_send_chain(ep, msg, mlen, RDMALOG_MSG_FWD, 2,
					    pre, 0, NULL, NULL);
		if (err != -EAGAIN || nonblock)
			return err;
		if (READ_ONCE(ep->fwd.dead) || fatal_signal_pending(current) ||
		    time_after(jiffies, deadline))
			return -ENOTCONN;
		usleep_range(100, 1000);
	}
}

/*
 * One FWD of the @len bytes of @from and its FWD_DONE. Return: as
 * rdmalog_fwd_append(); -EAGAIN also when the primary's ring was full.
 */
static int rdmalog_fwd_once(struct rdmalog_ep *ep, struct iov_iter *from,
			    u32 len, bool nonblock, unsigned long timeout,
			    u64 *lsn)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	bool inl = len <= RDMALOG_FWD_INLINE_MAX;
	struct rdmalog_fwd_buf *buf = NULL;
	struct rdmalog_fwd_reg *reg = NULL;
	struct rdmalog_fwd_req *req;
	struct rdmalog_fwd_msg *msg;
	struct ib_reg_wr rwr = {};
	struct ib_send_wr fence;
	bool dead = false, wake;
	u16 mlen = sizeof(msg->m);
	long left;
	int err;

	msg = kzalloc(sizeof(*msg), GFP_KERNEL);
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (req) {
		/* before any "goto out_free", which puts it */
		refcount_set(&req->ref, 1);
		rdmalog_live_add(RDMALOG_STAT_LIVE_FWD_REQS, 1);
	}
	if (!msg || !req) {
		err = -ENOMEM;
		goto out_free;
	}
	INIT_LIST_HEAD(&req->node);
	init_completion(&req->done);

	/* Copy first: a fault must not hold a registration or a slot. */
	if (inl) {
		if (!copy_from_iter_full(msg->data, len, from)) {
			err = -EFAULT;
			goto out_free;
		}
		mlen += len;
		msg->m.flags = cpu_to_le32(RDMALOG_FWD_F_INLINE);
	} else {
		struct scatterlist *sg;
		unsigned int i;

		buf = rdmalog_fwd_buf_alloc(len, DMA_TO_DEVICE);
		if (!buf) {
			err = -ENOMEM;
			goto out_free;
		}
		for_each_sg(buf->sgt.sgl, sg, buf->sgt.orig_nents, i)
			if (copy_page_from_iter(sg_page(sg), 0, sg->length,
						from) != sg->length) {
				err = -EFAULT;
				goto out_free;
			}
	}

	/* Room on the list, then (not inline) a registration. */
	if (nonblock) {
		if (!rdmalog_fwd_may_queue(f, &dead)) {
			err = dead ? -EHOSTUNREACH : -EAGAIN;
			goto out_free;
		}
	} else if (wait_event_interruptible(f->wq,
					    rdmalog_fwd_may_queue(f, &dead) ||
					    dead)) {
		err = -ERESTARTSYS;
		goto out_free;
	} else if (dead) {
		err = -EHOSTUNREACH;
		goto out_free;
	}
	if (!rdmalog_fwd_user_get(f)) {
		err = -EHOSTUNREACH;
		goto out_free;
	}
	if (!inl) {
		reg = rdmalog_fwd_reg_try(f, &dead);
		if (!reg && !dead && !nonblock) {
			err = wait_event_interruptible(f->wq,
						       (reg = rdmalog_fwd_reg_try(f, &dead)) ||
						       dead);
			if (err)
				goto out_user;
		}
		if (!reg) {
			err = dead ? (f->nr_regs ? -EHOSTUNREACH : -EOPNOTSUPP)
				   : -EAGAIN;
			goto out_user;
		}
		if (len > f->max_len) {
			err = -EMSGSIZE;
			goto out_reg;
		}
		err = rdmalog_fwd_buf_map(ep, buf);
		if (err)
			goto out_reg;
		err = rdmalog_fwd_reg_map(reg, buf);
		if (err)
			goto out_unmap;
		rwr.wr.opcode = IB_WR_REG_MR;
		rwr.wr.wr_cqe = &reg->reg_cqe;
		rwr.mr = reg->mr;
		rwr.key = reg->mr->rkey;
		rwr.access = IB_ACCESS_REMOTE_READ;
		msg->m.addr = cpu_to_le64(reg->mr->iova);
		msg->m.rkey = cpu_to_le32(reg->mr->rkey);
	}
	msg->m.len = cpu_to_le32(len);

	/* On the list before it is posted: the answer may come at once. */
	spin_lock_bh(&f->lock);
	if (f->dead || f->closed ||
	    f->nr_reqs >= RDMALOG_FWD_MAX_OUTSTANDING) {
		/* Dead or closed; or a racing writer took the last slot. */
		err = f->dead || f->closed ? -EHOSTUNREACH : -EAGAIN;
		spin_unlock_bh(&f->lock);
		goto out_unmap;
	}
	req->id = f->next_id++;
	req->reg = reg;
	if (reg)
		reg->buf = buf;
	refcount_inc(&req->ref);	/* the list's */
	list_add_tail(&req->node, &f->reqs);
	f->nr_reqs++;
	f->posting++;
	spin_unlock_bh(&f->lock);
	msg->m.req_id = cpu_to_le64(req->id);

	/*
	 * Behind a fence: a writer's FWD (or any other request) may be in
	 * flight on the queue, and rxe would run the REG_MR again if it had
	 * to retransmit it.
	 */
	err = rdmalog_fwd_post_fwd(ep, msg, mlen,
				   reg ? rdmalog_ep_reg_fence(ep, &fence,
							      &rwr.wr) : NULL,
				   nonblock);
	spin_lock_bh(&f->lock);
	wake = !--f->posting && f->closed;
	spin_unlock_bh(&f->lock);
	if (wake)
		wake_up(&f->wq);	/* the FWD_CLOSED waits for the last */
	if (err) {
		if (rdmalog_fwd_req_take(f, req) && reg) {
			reg->buf = NULL;
			if (err != -EAGAIN && err != -ENOTCONN) {
				/* The REG_MR may have gone out. */
				reg->buf = buf;
				buf = NULL;
				rdmalog_fwd_reg_retire(f, reg);
				reg = NULL;
				rdmalog_ep_error(ep, "cannot post a FWD: %d",
						 err);
			}
		} else if (reg) {
			/* The release took it, with @reg and @buf. */
			buf = NULL;
			reg = NULL;
		}
		if (err != -EAGAIN)
			err = -EHOSTUNREACH;
		goto out_unmap;
	}
	/* @reg and @buf now belong to the request. */
	rdmalog_fwd_user_put(f);
	rdmalog_stats_inc(RDMALOG_STAT_FWD_SENT);

	left = wait_for_completion_killable_timeout(&req->done, timeout);
	if (left > 0) {
		err = req->result;
		if (!err)
			*lsn = req->lsn;
	} else {
		/* Still listed: its registration stays until answered. */
		err = left ? -EINTR : -ENOTCONN;
	}
	if (err)
		rdmalog_stats_inc(RDMALOG_STAT_FWD_ERRORS);
	buf = NULL;
	goto out_free;

out_unmap:
	if (buf)
		rdmalog_fwd_buf_unmap(ep, buf);
out_reg:
	if (reg)
		rdmalog_fwd_reg_free(f, reg);
out_user:
	rdmalog_fwd_user_put(f);
out_free:
	rdmalog_fwd_buf_free(buf);
	if (req)
		rdmalog_fwd_req_put(req);
	kfree(msg);
	return err;
}

/*
 * The peer closed the forwarding (FWD_CLOSE), or answered -EROFS less
 * than %RDMALOG_FWD_REFUSED_MS ago.
 */
static bool rdmalog_fwd_refused(struct rdmalog_fwd_ep *f)
{
	unsigned long t = READ_ONCE(f->refused_at);

	if (READ_ONCE(f->closed))
		return true;
	return t && time_before(jiffies,
				t + msecs_to_jiffies(RDMALOG_FWD_REFUSED_MS));
}

int rdmalog_fwd_append(struct iov_iter *from, bool nonblock, u64 *lsn)
{
	size_t len = iov_iter_count(from);
	unsigned long timeout;
	struct rdmalog_ep *ep;
	int err;

	ep = rdmalog_conn_primary_ep();
	if (!ep)
		return -EHOSTUNREACH;
	/*
	 * It said it is not the primary (it steps down, or hands the log
	 * over): nothing goes to it for a while, so that no FWD is in flight
	 * when it closes; the caller waits for the next primary.
	 */
	if (rdmalog_fwd_refused(&ep->fwd)) {
		err = -EHOSTUNREACH;
		goto out;
	}
	if (!len) {
		err = -EINVAL;
		goto out;
	}
	if (len > ep->conn->local.max_record) {
		err = -EMSGSIZE;
		goto out;
	}
	timeout = msecs_to_jiffies(READ_ONCE(rdmalog_fwd_node.commit_timeout_ms) +
				   RDMALOG_FWD_ANSWER_MARGIN_MS);
	for (;;) {
		err = rdmalog_fwd_once(ep, from, len, nonblock, timeout, lsn);
		if (err != -EAGAIN || nonblock)
			break;
		/* The primary's ring is full: wait, as a local writer would. */
		iov_iter_revert(from, len - iov_iter_count(from));
		if (msleep_interruptible(RDMALOG_FWD_RETRY_MS)) {
			err = -ERESTARTSYS;
			break;
		}
	}
out:
	rdmalog_ep_put(ep);
	return err;
}

const char *rdmalog_fwd_done_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_fwd_done *m)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	u64 id = le64_to_cpu(m->req_id);
	u32 status = le32_to_cpu(m->status);
	u64 lsn = le64_to_cpu(m->lsn);
	struct rdmalog_fwd_req *req, *found = NULL;

	spin_lock(&f->lock);
	list_for_each_entry(req, &f->reqs, node) {
		if (req->id == id) {
			found = req;
			list_del_init(&req->node);
			f->nr_reqs--;
			break;
		}
	}
	spin_unlock(&f->lock);
	if (!found)
		return "FWD_DONE for a request not outstanding";
	if (found->answered) {
		/* Failed -EROFS by the FWD_CLOSE: it must not have appended. */
		trace_rdmalog_fwd(ep->conn->peer_id, id, 0, -(int)status);
		if (found->reg)
			rdmalog_fwd_reg_invalidate(ep, found->reg);
		wake_up(&f->wq);
		rdmalog_fwd_req_put(found);	/* the list's */
		return status ? NULL : "FWD_DONE appended a FWD after FWD_CLOSE";
	}

	found->result = rdmalog_fwd_errno(status);
	found->lsn = lsn;
	if (found->result == -EROFS)
		WRITE_ONCE(f->refused_at, jiffies ?: 1);
	trace_rdmalog_fwd(ep->conn->peer_id, id, 0, found->result);
	if (!status && !lsn)
		found->result = -ENOTCONN;	/* broken answer: unknown */
	if (found->reg)
		rdmalog_fwd_reg_invalidate(ep, found->reg);
	complete(&found->done);
	wake_up(&f->wq);
	rdmalog_fwd_req_put(found);	/* the list's */
	return !status && !lsn ? "FWD_DONE with LSN 0" : NULL;
}

static bool rdmalog_fwd_none_posting(struct rdmalog_fwd_ep *f)
{
	bool ret;

	spin_lock_bh(&f->lock);
	ret = !f->posting || f->dead;
	spin_unlock_bh(&f->lock);
	return ret;
}

/* The FWD_CLOSED: not from the CQ handler, as it may wait for a credit. */
static void rdmalog_fwd_closed_work(struct work_struct *work)
{
	struct rdmalog_fwd_ep *f = container_of(work, struct rdmalog_fwd_ep,
						close_work);
	struct rdmalog_ep *ep = container_of(f, struct rdmalog_ep, fwd);
	struct rdmalog_msg_fwd_close m = {};

	/*
	 * After every FWD a writer is still posting: the primary refuses
	 * what comes until this answer, which must follow them all.
	 */
	wait_event(f->wq, rdmalog_fwd_none_posting(f));
	spin_lock_bh(&f->lock);
	m.seq = cpu_to_le32(f->close_seq);
	spin_unlock_bh(&f->lock);
	rdmalog_fwd_send(ep, &m, sizeof(m), RDMALOG_MSG_FWD_CLOSED,
			 "FWD_CLOSED");
	rdmalog_ep_put(ep);	/* the work's */
}

/*
 * The primary answered every FWD it received here and refuses the later
 * ones (proto.h, &struct rdmalog_msg_fwd_close): those outstanding were
 * not appended. Fail them -EROFS now, so that their writers go on to the
 * next primary instead of learning -ENOTCONN, an unknown outcome, when
 * the new primary fences this one.
 */
const char *rdmalog_fwd_close_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_fwd_close *m)
{
	u32 flags = le32_to_cpu(m->flags);
	struct rdmalog_fwd_ep *f = &ep->fwd;
	struct rdmalog_fwd_req *req;
	u32 n = 0;

	if (flags & ~RDMALOG_FWD_CLOSE_F_REOPEN)
		return "FWD_CLOSE with unknown flags";
	spin_lock(&f->lock);
	WRITE_ONCE(f->closed, !(flags & RDMALOG_FWD_CLOSE_F_REOPEN));
	if (f->closed) {
		f->close_seq = le32_to_cpu(m->seq);
		list_for_each_entry(req, &f->reqs, node) {
			if (req->answered)
				continue;
			req->answered = true;
			req->result = -EROFS;
			complete(&req->done);
			n++;
		}
	}
	spin_unlock(&f->lock);
	wake_up(&f->wq);
	if (flags & RDMALOG_FWD_CLOSE_F_REOPEN)
		return NULL;
	pr_info("peer %u closed forwarding (switchover): %u forwarded appends go to the next primary\n",
		ep->conn->peer_id, n);
	rdmalog_ep_get(ep);	/* the work's */
	if (!rdmalog_fwd_queue_work(&f->close_work))
		rdmalog_ep_put(ep);	/* queued already: it answers for both */
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Endpoint set-up and release */

void rdmalog_fwd_ep_init(struct rdmalog_ep *ep)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;

	spin_lock_init(&f->lock);
	INIT_LIST_HEAD(&f->reqs);
	INIT_LIST_HEAD(&f->reg_free);
	init_waitqueue_head(&f->wq);
	f->next_id = 1;
	INIT_WORK(&f->close_work, rdmalog_fwd_closed_work);
}

int rdmalog_fwd_ep_setup(struct rdmalog_ep *ep)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	struct rdmalog_rdev *rdev = ep->rdev;
	u32 max = ep->conn->local.max_record;
	struct rdmalog_fwd_reg *r;
	unsigned int i, pages;

	/* Without fast registration only inline payloads are forwarded. */
	if (!rdev->frwr || !(ep->ibdev->attrs.page_size_cap & PAGE_SIZE))
		return 0;
	pages = min_t(u32, DIV_ROUND_UP(max, PAGE_SIZE),
		      rdev->max_fast_reg_pages);
	if (!pages)
		return 0;
	f->regs = kcalloc(RDMALOG_FWD_MAX_REGS, sizeof(*f->regs), GFP_KERNEL);
	if (!f->regs)
		return -ENOMEM;
	for (i = 0; i < RDMALOG_FWD_MAX_REGS; i++) {
		r = &f->regs[i];
		r->ep = ep;
		r->reg_cqe.done = rdmalog_fwd_reg_done;
		init_completion(&r->inv_done);
		INIT_LIST_HEAD(&r->free);
		f->nr_regs = i + 1;
		r->mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(r->mr)) {
			int err = PTR_ERR(r->mr);

			r->mr = NULL;
			return err;	/* the release frees the others */
		}
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
		list_add_tail(&r->free, &f->reg_free);
	}
	/*
	 * A registration's share of the send queue (ep.h) is three work
	 * requests: the direct READs of one pull fit in it, and so do a
	 * backup's fence, REG_MR and LOCAL_INV.
	 */
	BUILD_BUG_ON(RDMALOG_FWD_PULL_READS * RDMALOG_FWD_MAX_REGS >
		     RDMALOG_FWD_MAX_READS + 2 * RDMALOG_FWD_MAX_REGS);
	BUILD_BUG_ON(3 * RDMALOG_FWD_MAX_REGS >
		     RDMALOG_FWD_MAX_READS + 2 * RDMALOG_FWD_MAX_REGS);
	f->max_len = min_t(u64, max, (u64)pages * PAGE_SIZE);
	f->read_sges = clamp_t(u32, ep->qp->max_read_sge, 1,
			       RDMALOG_FWD_READ_SGES);
	return 0;
}

static bool rdmalog_fwd_idle(struct rdmalog_fwd_ep *f)
{
	bool idle;

	spin_lock_bh(&f->lock);
	idle = !f->users;
	spin_unlock_bh(&f->lock);
	return idle;
}

const char *rdmalog_fwd_ep_idle(struct rdmalog_ep *ep)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	const char *why = NULL;

	spin_lock_bh(&f->lock);
	if (f->nr_reqs || f->posting || f->closed)
		why = "this node forwards appends to it";
	else if (f->serving || f->unanswered || f->refusing)
		why = "it forwards appends to this node";
	spin_unlock_bh(&f->lock);
	return why;
}

void rdmalog_fwd_ep_release(struct rdmalog_ep *ep)
{
	struct rdmalog_fwd_ep *f = &ep->fwd;
	struct rdmalog_fwd_req *req;
	unsigned int i;

	spin_lock_bh(&f->lock);
	f->dead = true;
	while (!list_empty(&f->reqs)) {
		req = list_first_entry(&f->reqs, struct rdmalog_fwd_req, node);
		list_del_init(&req->node);
		f->nr_reqs--;
		/* Sent: the primary may have committed it. */
		if (!req->answered)
			req->result = -ENOTCONN;
		if (req->reg)
			req->reg->retired = true;	/* keeps its buf */
		if (!req->answered)
			complete(&req->done);
		/* The list's: the last one when the writer gave up. */
		rdmalog_fwd_req_put(req);
	}
	spin_unlock_bh(&f->lock);
	wake_up_all(&f->wq);

	/* Users only wait for completions (all delivered now) or @dead. */
	wait_event(f->wq, rdmalog_fwd_idle(f));

	for (i = 0; i < f->nr_regs; i++) {
		struct rdmalog_fwd_reg *r = &f->regs[i];

		if (r->mr) {
			ib_dereg_mr(r->mr);
			rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		}
		if (r->buf) {
			rdmalog_fwd_buf_unmap(ep, r->buf);
			rdmalog_fwd_buf_free(r->buf);
		}
	}
	kfree(f->regs);
	f->regs = NULL;
	f->nr_regs = 0;
	INIT_LIST_HEAD(&f->reg_free);
}
