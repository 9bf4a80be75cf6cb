/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - per-RDMA-device objects: the device capabilities every
 * connection on that device shares, and the guard of a device being
 * removed. Protection domains are per connection (conn.c), not here.
 */
#ifndef _RDMALOG_RDMA_DEV_H
#define _RDMALOG_RDMA_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>

struct ib_device;

/**
 * struct rdmalog_rdev - what rdmalog keeps per RDMA device
 * @list: entry on the device list (rdma_dev.c), under its mutex
 * @ref: one reference per user (each connection endpoint that has a queue
 *	pair on the device); the last put frees this
 * @ibdev: the device; valid while the object exists (the device cannot go
 *	before its ib_client .remove callback, which waits for every
 *	reference to be dropped)
 * @frwr: IB_DEVICE_MEM_MGT_EXTENSIONS (fast registration), which the data
 *	path needs
 * @max_fast_reg_pages: max_fast_reg_page_list_len
 * @max_qp_wr: work requests per queue
 * @max_cqe: entries per completion queue
 * @max_send_sge: scatter/gather entries per send work request
 * @max_recv_sge: scatter/gather entries per receive work request
 * @max_qp_rd_atom: RDMA READs/atomics a QP serves at once (responder)
 * @max_qp_init_rd_atom: RDMA READs/atomics a QP issues at once (initiator)
 * @atomics: atomic_cap is not IB_ATOMIC_NONE
 * @iwarp: the device speaks iWARP (no atomics, no WRITE_WITH_IMM; the
 *	RDMA READ sink must be registered)
 * @reg_fence: the device runs a REG_MR again when it retransmits an
 *	earlier request of the same send queue, and the second run fails on
 *	the then valid MR and puts the QP in error (rxe, 6.1 and 6.12:
 *	"mr->lkey ... not free"): a REG_MR must come behind a fence
 *	(rdmalog_ep_reg_fence())
 * @num_comp_vectors: completion vectors to spread CQs over
 *
 * Everything but @list and @ref is written once at creation and read-only
 * afterwards.
 */
struct rdmalog_rdev {
	struct list_head list;
	struct kref ref;
	struct ib_device *ibdev;
	bool frwr;
	u32 max_fast_reg_pages;
	u32 max_qp_wr;
	u32 max_cqe;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	bool atomics;
	bool iwarp;
	bool reg_fence;
	int num_comp_vectors;
};

/**
 * struct rdmalog_rdev_removal - a device being removed, on the stack of
 * the ib_client's .remove (cm.c)
 * @list: entry on the list of devices being removed (rdma_dev.c)
 * @ibdev: the device
 */
struct rdmalog_rdev_removal {
	struct list_head list;
	struct ib_device *ibdev;
};

/*
 * The ib_client's .remove, first step: no new object for @ibdev from now
 * on (rdmalog_rdev_get() fails with -ENODEV). Process context.
 */
void rdmalog_rdev_removal_start(struct rdmalog_rdev_removal *r,
				struct ib_device *ibdev);
/*
 * Last step, once every user of the device was told to go: wait until
 * the last object of the device is released. Process context; sleeps.
 */
void rdmalog_rdev_removal_finish(struct rdmalog_rdev_removal *r);
/*
 * Whether objects may be created: set by the owner of the ib_client
 * before it registers the client, cleared if that fails (and at exit by
 * rdmalog_rdma_dev_exit()).
 */
void rdmalog_rdev_set_ready(bool ready);
/* Module exit, after the ib_client is gone: warns if an object is left. */
void rdmalog_rdma_dev_exit(void);

/*
 * The object of @ibdev with a reference the caller drops with
 * rdmalog_rdev_put(); created on first use. Process context.
 * Return: the object, ERR_PTR(-ENODEV) while @ibdev is being removed (or
 * while the ib_client is not registered), or ERR_PTR(-ENOMEM). Never NULL.
 * Protection domains are per connection (conn.c), not per device: a
 * remote key is then good on the queue pair it was granted to only.
 */
struct rdmalog_rdev *rdmalog_rdev_get(struct ib_device *ibdev);
/* Drop a reference; the last one frees the object. Process context. */
void rdmalog_rdev_put(struct rdmalog_rdev *rdev);

#endif /* _RDMALOG_RDMA_DEV_H */
