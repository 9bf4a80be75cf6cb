/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - forwarded appends: a write() on a backup is sent to the
 * primary (FWD), appended there, and answered (FWD_DONE) once committed.
 * forward.c's top comment describes both sides, their locks and lifetimes.
 */
#ifndef _RDMALOG_FORWARD_H
#define _RDMALOG_FORWARD_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

struct rdmalog_ep;
struct rdmalog_fwd_reg;
struct rdmalog_log;
struct rdmalog_msg_fwd;
struct rdmalog_msg_fwd_close;
struct rdmalog_msg_fwd_done;

/*
 * FWDs a backup has sent on one connection and not yet seen the FWD_DONE
 * of (whether or not the writer still waits). A primary that receives
 * more drops the connection.
 */
#define RDMALOG_FWD_MAX_OUTSTANDING	64
/*
 * A forwarded payload pulled into a sink addressed with local_dma_lkey
 * (IB, RoCE): scatter/gather entries per READ asked of the QP, and READs
 * one pull has in flight (the send queue slots of a registration: its
 * READ, REG_MR and LOCAL_INV in %RDMALOG_SQ_SIZE).
 */
#define RDMALOG_FWD_READ_SGES		16
#define RDMALOG_FWD_PULL_READS		3

/**
 * struct rdmalog_fwd_ep - forwarding state of one connection
 * @lock: protects every field below but @regs' array itself; BH-safe
 *	(taken with _bh in process context, plain in the CQ handler)
 * @dead: rdmalog_fwd_ep_release() started: no new request, no new user of
 *	the device; set once, never cleared
 * @reqs: backup side: &struct rdmalog_fwd_req sent and not answered yet
 *	(each holds a reference on its request)
 * @nr_reqs: entries on @reqs, at most %RDMALOG_FWD_MAX_OUTSTANDING
 * @next_id: backup side: the next request id
 * @serving: primary side: FWDs received and not yet answered (drops just
 *	before the FWD_DONE is posted: the backup may send the next at once)
 * @unanswered: primary side: FWDs received whose FWD_DONE is not posted
 *	yet (drops just after)
 * @closed: backup side: the primary closed forwarding here (FWD_CLOSE):
 *	no FWD is sent until it reopens it
 * @posting: backup side: writers between listing their request and the
 *	return of its post; the FWD_CLOSED waits for none to be left
 * @close_seq: backup side: the seq of the last FWD_CLOSE, to answer;
 *	primary side: the seq of the last FWD_CLOSE sent
 * @refusing: primary side: from a FWD_CLOSE until the FWD_CLOSED that
 *	answers it, every FWD received here is answered EROFS unserved
 * @regs: %RDMALOG_FWD_MAX_REGS registrations (FRWR MRs) made by
 *	rdmalog_fwd_ep_setup(), or NULL (no FRWR: only inline payloads);
 *	freed by the release
 * @nr_regs: entries of @regs
 * @reg_free: registrations not in use, ready for a REG_MR
 * @max_len: largest payload one registration covers (0 without @regs)
 * @read_sges: scatter/gather entries per READ into a local_dma_lkey sink
 *	(the QP's max_read_sge, at most %RDMALOG_FWD_READ_SGES)
 * @users: threads that may touch the device (DMA mappings, posts, MRs):
 *	each counted from before its first such step to after its last;
 *	the release waits for none to be left
 * @wq: woken when a registration comes free, a request ends, @users
 *	drops, @dead is set, or the last @posting ends while @closed
 * @refused_at: backup side: jiffies when the peer last answered a FWD
 *	-EROFS (it no longer leads, or hands the log over; 0: never): no FWD
 *	goes to it for %RDMALOG_FWD_REFUSED_MS after (READ_ONCE/WRITE_ONCE,
 *	not under @lock)
 * @close_work: backup side: sends the FWD_CLOSED (on rdmalog_fwd_wq,
 *	holding a reference on the endpoint)
 */
struct rdmalog_fwd_ep {
	spinlock_t lock; /* see above */
	bool dead;
	struct list_head reqs;
	u32 nr_reqs;
	u64 next_id;
	u32 serving;
	u32 unanswered;
	bool closed;
	u32 posting;
	u32 close_seq;
	bool refusing;
	struct rdmalog_fwd_reg *regs;
	unsigned int nr_regs;
	struct list_head reg_free;
	u32 max_len;
	u32 read_sges;
	u32 users;
	wait_queue_head_t wq;
	unsigned long refused_at;
	struct work_struct close_work;
};

int rdmalog_fwd_init(void);
void rdmalog_fwd_exit(void);

/**
 * struct rdmalog_fwd_params - what an up period forwards with
 * @log: the log a primary appends forwarded records to (referenced by
 *	forward.c until rdmalog_fwd_stop())
 * @role: &enum rdmalog_role of this node
 * @commit_timeout_ms: how long an append waits for its commit (a backup
 *	waits that long, and a margin, for its FWD_DONE)
 */
struct rdmalog_fwd_params {
	struct rdmalog_log *log;
	u32 role;
	u32 commit_timeout_ms;
};

/*
 * node_up.c starts forwarding for an up period before the connections, and
 * stops it after them (it waits for nothing: a FWD being served holds a
 * log reference of its own, and one served later finds no log). Process
 * context, the node's config mutex held, as for the policy in between.
 */
void rdmalog_fwd_start(const struct rdmalog_fwd_params *p);
void rdmalog_fwd_set_policy(u32 role, u32 commit_timeout_ms);
void rdmalog_fwd_stop(void);

/*
 * Append @from as one record through the primary (this node is a backup).
 * Process context; may sleep. Returns once the primary committed it.
 * Return: 0 and *@lsn, or -EINVAL (empty), -EMSGSIZE (above max_record or
 * what one registration covers), -EHOSTUNREACH (no primary reachable: not
 * sent, not in the log), -EAGAIN (@nonblock and no send slot, or the
 * primary's ring is full), -ERESTARTSYS (signal before anything was
 * sent), -ENOTCONN (sent, but the answer was lost: the connection died or
 * no answer came in time; the record may or may not be committed),
 * -EINTR (fatal signal while waiting: outcome unknown), -EFAULT,
 * -ENOMEM, -EOPNOTSUPP (no fast registration for a large payload), or
 * the primary's answer: -ETIMEDOUT, -ENETDOWN, -EIO, -ENOSPC, -EROFS,
 * -EMSGSIZE, -EINVAL (not in the log).
 */
int rdmalog_fwd_append(struct iov_iter *from, bool nonblock, u64 *lsn);

/*
 * The primary, handing the log over with its appends refused: on every
 * live connection, wait until every FWD received is answered, then send
 * a FWD_CLOSE, and wait for the FWD_CLOSEDs, at most @timeout_ms in all.
 * With @reopen (the hand-over failed): send FWD_CLOSE with
 * %RDMALOG_FWD_CLOSE_F_REOPEN instead, waiting for nothing. Process
 * context; sleeps. Return: the connections that did not answer in time
 * (their backups' FWDs may end -ENOTCONN when the connection ends).
 */
u32 rdmalog_fwd_close_all(bool reopen, u32 timeout_ms);

/* From msg.c (the endpoint's set-up, through the ops). */
void rdmalog_fwd_ep_init(struct rdmalog_ep *ep);
/* Set up what sleeps (MRs); conn lock held, process context. */
int rdmalog_fwd_ep_setup(struct rdmalog_ep *ep);
/*
 * After the QP is drained and destroyed and the CQ freed: fail what waits,
 * wait for the users of the device, free the registrations.
 */
void rdmalog_fwd_ep_release(struct rdmalog_ep *ep);
/*
 * NULL when nothing is forwarded on @ep either way (no FWD outstanding,
 * being posted or being served, forwarding not closed there), else why
 * @ep cannot be kept across a change of role (&rdmalog_ep_ops.role_check).
 * Any context; does not sleep.
 */
const char *rdmalog_fwd_ep_idle(struct rdmalog_ep *ep);
const char *rdmalog_fwd_received(struct rdmalog_ep *ep,
				 const struct rdmalog_msg_fwd *m, u32 len);
const char *rdmalog_fwd_done_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_fwd_done *m);
const char *rdmalog_fwd_close_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_fwd_close *m);
const char *rdmalog_fwd_closed_received(struct rdmalog_ep *ep,
					const struct rdmalog_msg_fwd_close *m);

#endif /* _RDMALOG_FORWARD_H */
