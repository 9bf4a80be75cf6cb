/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - private to the two halves of forwarded appends: forward.c (a
 * backup's writers, the parameters of the up period, the payload buffers
 * and the registration pool, an endpoint's set-up and release) and
 * fwd_serve.c (the primary serving FWDs). Nothing else includes it; the
 * rest of the module sees forward.h. The rules on lifetimes and locks
 * are in forward.c's top comment.
 */
#ifndef _RDMALOG_FWD_PRIV_H
#define _RDMALOG_FWD_PRIV_H

#include <linux/completion.h>
#include <linux/dma-direction.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct rdmalog_ep;
struct rdmalog_fwd_ep;
struct rdmalog_log;

/* How long a FWD or FWD_DONE waits for a send credit before giving up. */
#define RDMALOG_FWD_SEND_WAIT_MS	10000

/**
 * struct rdmalog_fwd_buf - a payload in pages of our own
 * @sgt: one entry per page (the last one may be partial)
 * @len: payload bytes
 * @nents: DMA-mapped entries of @sgt, 0 while not mapped
 * @dir: the direction it is (or will be) mapped in
 */
struct rdmalog_fwd_buf {
	struct sg_table sgt;
	u32 len;
	int nents;
	enum dma_data_direction dir;
};

/**
 * struct rdmalog_fwd_reg - one FRWR MR of a connection's pool
 * @mr: the MR, or NULL (allocation failed during setup)
 * @ep: its endpoint
 * @free: on &rdmalog_fwd_ep.reg_free while free; under its lock
 * @reg_cqe: completion of its REG_MR (posted unsignalled: only an error
 *	completes)
 * @inv_cqe: completion of its LOCAL_INV
 * @buf: pages it maps that must outlive its registration: freed by the
 *	LOCAL_INV's completion (backup), or by the release when retired
 * @retired: may still be valid; never reused (under the lock)
 * @inv_ok: the LOCAL_INV succeeded (primary side, with @inv_done)
 * @inv_done: completed by a LOCAL_INV that its poster waits for
 */
struct rdmalog_fwd_reg {
	struct ib_mr *mr;
	struct rdmalog_ep *ep;
	struct list_head free;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	struct rdmalog_fwd_buf *buf;
	bool retired;
	bool inv_ok;
	struct completion inv_done;
};

/* forward.c */
/*
 * The up period's log (referenced: the caller puts it) or NULL, and the
 * node's role.
 */
struct rdmalog_log *rdmalog_fwd_node_log(u32 *role);
/* @len bytes in pages of our own, to be mapped in @dir; NULL: no memory. */
struct rdmalog_fwd_buf *rdmalog_fwd_buf_alloc(u32 len,
					      enum dma_data_direction dir);
/* Free @buf (NULL: nothing), which is not mapped. */
void rdmalog_fwd_buf_free(struct rdmalog_fwd_buf *buf);
/* DMA-map @buf for @ep's device. Return: 0 or -ENOMEM. */
int rdmalog_fwd_buf_map(struct rdmalog_ep *ep, struct rdmalog_fwd_buf *buf);
/* Any context; the device must still be there (a user, or the release). */
void rdmalog_fwd_buf_unmap(struct rdmalog_ep *ep, struct rdmalog_fwd_buf *buf);
/* Become a user of the device; false once the release started. */
bool rdmalog_fwd_user_get(struct rdmalog_fwd_ep *f);
void rdmalog_fwd_user_put(struct rdmalog_fwd_ep *f);
/*
 * A free registration, or NULL: none free, or @dead set (the release
 * started, or there is no pool at all).
 */
struct rdmalog_fwd_reg *rdmalog_fwd_reg_try(struct rdmalog_fwd_ep *f,
					    bool *dead);
/* Back to the pool: @r is not registered (invalidated or never posted). */
void rdmalog_fwd_reg_free(struct rdmalog_fwd_ep *f, struct rdmalog_fwd_reg *r);
/* @r may still be valid: keep it (and @r->buf) for the release. */
void rdmalog_fwd_reg_retire(struct rdmalog_fwd_ep *f,
			    struct rdmalog_fwd_reg *r);
/* Map @buf's entries into @r with a fresh key. Return: 0 or -EIO. */
int rdmalog_fwd_reg_map(struct rdmalog_fwd_reg *r, struct rdmalog_fwd_buf *buf);

/* fwd_serve.c */
/* Queue @work on rdmalog_fwd_wq. Return: false if it was queued already. */
bool rdmalog_fwd_queue_work(struct work_struct *work);
/*
 * Send the @len bytes of @m as a message of @type, waiting up to
 * %RDMALOG_FWD_SEND_WAIT_MS for a send credit; a failure other than a
 * connection that is gone closes it. Process context.
 */
void rdmalog_fwd_send(struct rdmalog_ep *ep, void *m, u16 len, u8 type,
		      const char *what);

#endif /* _RDMALOG_FWD_PRIV_H */
