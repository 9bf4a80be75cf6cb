/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - per-RDMA-device objects: the protection domain and the device
 * capabilities every connection on that device shares.
 */
#ifndef _RDMALOG_RDMA_DEV_H
#define _RDMALOG_RDMA_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>

struct ib_device;
struct ib_pd;

/**
 * struct rdmalog_rdev - what rdmalog keeps per RDMA device
 * @list: entry on the device list (rdma_dev.c), under its mutex
 * @ref: one reference per user (each connection endpoint that has a queue
 *	pair on the device); the last put deallocates @pd and frees this
 * @ibdev: the device; valid while the object exists (the device cannot go
 *	before its ib_client .remove callback, which waits for every
 *	reference to be dropped)
 * @pd: protection domain, ib_alloc_pd(@ibdev, 0): no unsafe global rkey
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
 * @num_comp_vectors: completion vectors to spread CQs over
 *
 * Everything but @list and @ref is written once at creation and read-only
 * afterwards.
 */
struct rdmalog_rdev {
	struct list_head list;
	struct kref ref;
	struct ib_device *ibdev;
	struct ib_pd *pd;
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
	int num_comp_vectors;
};

int rdmalog_rdma_dev_init(void);
void rdmalog_rdma_dev_exit(void);

/*
 * The object of @ibdev with a reference the caller drops with
 * rdmalog_rdev_put(); created with its PD on first use. Process context.
 * Return: the object, ERR_PTR(-ENODEV) while @ibdev is being removed (or
 * before the ib_client is registered), ERR_PTR(-ENOMEM), or the error of
 * ib_alloc_pd(). Never NULL.
 */
struct rdmalog_rdev *rdmalog_rdev_get(struct ib_device *ibdev);
/* Drop a reference; the last one frees the PD. Process context. */
void rdmalog_rdev_put(struct rdmalog_rdev *rdev);

#endif /* _RDMALOG_RDMA_DEV_H */
