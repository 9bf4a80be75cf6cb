// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - per-RDMA-device objects and the guard of a device being removed.
 *
 * A &struct rdmalog_rdev is created lazily, the first time a connection
 * endpoint needs a queue pair on a device (rdmalog_rdev_get() with the
 * device of its rdma_cm id), and freed with its protection domain when the
 * last endpoint on the device puts it. Lookups run under rdmalog_rdev_mutex
 * and take a reference with kref_get_unless_zero(); the release runs
 * under the same mutex, so an object on the list is either referenced or
 * being released, never half gone, and a waiter that sees no object of a
 * device under the mutex knows its PD is deallocated.
 *
 * The ib_client is cm.c's, registered by conn.c (the connections are
 * what a device removal must tear down); this file calls nobody. Its .remove brackets the
 * teardown of every endpoint on the device with
 * rdmalog_rdev_removal_start(), after which no new object is created for
 * the device, and rdmalog_rdev_removal_finish(), which waits until the
 * last object of the device is released. Connection attempts that raced
 * the sweep and have an rdma_cm id on the device but no object yet are
 * told by the rdma_cm (RDMA_CM_EVENT_DEVICE_REMOVAL) after .remove
 * returns; the rdma_cm waits for their ids to be destroyed before the
 * device goes. Objects are created only while the ib_client is registered
 * (rdmalog_rdev_set_ready()), so .remove runs for every device in use.
 *
 * Lock order: conn.c's locks, then rdmalog_rdev_mutex, a leaf.
 */
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "rdma_dev.h"

/* Protects rdmalog_rdevs, rdmalog_rdev_removals and rdmalog_rdev_ready. */
static DEFINE_MUTEX(rdmalog_rdev_mutex);
/* Every &struct rdmalog_rdev, referenced or being released. */
static LIST_HEAD(rdmalog_rdevs);
/* Devices whose .remove runs: no object may be created for them. */
static LIST_HEAD(rdmalog_rdev_removals);
/* The ib_client is registered: objects may be created. */
static bool rdmalog_rdev_ready;
/* Woken whenever an object is released. */
static DECLARE_WAIT_QUEUE_HEAD(rdmalog_rdev_wq);
/*
 * The device whose capabilities were logged last, so that an object
 * created again and again (a peer that keeps failing) logs them once.
 * Compared only, never dereferenced.
 */
static const struct ib_device *rdmalog_rdev_logged;

static bool rdmalog_rdev_removing(struct ib_device *ibdev)
{
	struct rdmalog_rdev_removal *r;

	lockdep_assert_held(&rdmalog_rdev_mutex);
	list_for_each_entry(r, &rdmalog_rdev_removals, list)
		if (r->ibdev == ibdev)
			return true;
	return false;
}

static void rdmalog_rdev_caps(struct rdmalog_rdev *rdev)
{
	const struct ib_device_attr *attrs = &rdev->ibdev->attrs;

	rdev->frwr = !!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	rdev->max_fast_reg_pages = attrs->max_fast_reg_page_list_len;
	rdev->max_qp_wr = max(attrs->max_qp_wr, 0);
	rdev->max_cqe = max(attrs->max_cqe, 0);
	rdev->max_send_sge = max(attrs->max_send_sge, 0);
	rdev->max_recv_sge = max(attrs->max_recv_sge, 0);
	rdev->max_qp_rd_atom = max(attrs->max_qp_rd_atom, 0);
	rdev->max_qp_init_rd_atom = max(attrs->max_qp_init_rd_atom, 0);
	rdev->atomics = attrs->atomic_cap != IB_ATOMIC_NONE;
	rdev->iwarp = rdma_protocol_iwarp(rdev->ibdev,
					  rdma_start_port(rdev->ibdev));
	rdev->reg_fence = rdev->ibdev->ops.driver_id == RDMA_DRIVER_RXE;
	rdev->num_comp_vectors = max(rdev->ibdev->num_comp_vectors, 1);
}

/**
 * rdmalog_rdev_get() - the object of @ibdev, created on first use
 * @ibdev: an RDMA device, typically the device of an rdma_cm id
 *
 * Return: the object with a reference for the caller, or an ERR_PTR():
 * -ENODEV while @ibdev is being removed or the module is not ready, or
 * -ENOMEM.
 */
struct rdmalog_rdev *rdmalog_rdev_get(struct ib_device *ibdev)
{
	struct rdmalog_rdev *rdev;
	int err;

	mutex_lock(&rdmalog_rdev_mutex);
	if (!rdmalog_rdev_ready || rdmalog_rdev_removing(ibdev)) {
		err = -ENODEV;
		goto err_unlock;
	}
	list_for_each_entry(rdev, &rdmalog_rdevs, list)
		if (rdev->ibdev == ibdev && kref_get_unless_zero(&rdev->ref))
			goto out_unlock;

	err = -ENOMEM;
	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		goto err_unlock;
	kref_init(&rdev->ref);
	rdev->ibdev = ibdev;
	rdmalog_rdev_caps(rdev);
	list_add_tail(&rdev->list, &rdmalog_rdevs);
	if (rdmalog_rdev_logged == ibdev)
		goto out_unlock;
	rdmalog_rdev_logged = ibdev;
	pr_info_ratelimited("using RDMA device %s: %s, max_qp_wr %u, max_cqe %u, sge %u/%u, rd_atom %u/%u, fast registration %s (%u pages), atomics %s\n",
			    dev_name(&ibdev->dev),
			    rdev->iwarp ? "iWARP" : "InfiniBand/RoCE",
			    rdev->max_qp_wr, rdev->max_cqe, rdev->max_send_sge,
			    rdev->max_recv_sge, rdev->max_qp_init_rd_atom,
			    rdev->max_qp_rd_atom, rdev->frwr ? "yes" : "no",
			    rdev->max_fast_reg_pages,
			    rdev->atomics ? "yes" : "no");
out_unlock:
	mutex_unlock(&rdmalog_rdev_mutex);
	return rdev;

err_unlock:
	mutex_unlock(&rdmalog_rdev_mutex);
	return ERR_PTR(err);
}

/* kref release: called with rdmalog_rdev_mutex held (kref_put_mutex). */
static void rdmalog_rdev_release(struct kref *ref)
{
	struct rdmalog_rdev *rdev = container_of(ref, struct rdmalog_rdev, ref);

	lockdep_assert_held(&rdmalog_rdev_mutex);
	list_del(&rdev->list);
	kfree(rdev);
}

/**
 * rdmalog_rdev_put() - drop a reference taken by rdmalog_rdev_get()
 * @rdev: the object; NULL is ignored
 *
 * The last reference frees the object and wakes a .remove waiting for the
 * device.
 */
void rdmalog_rdev_put(struct rdmalog_rdev *rdev)
{
	if (!rdev)
		return;
	if (kref_put_mutex(&rdev->ref, rdmalog_rdev_release,
			   &rdmalog_rdev_mutex)) {
		mutex_unlock(&rdmalog_rdev_mutex);
		wake_up_all(&rdmalog_rdev_wq);
	}
}

static bool rdmalog_rdev_gone(struct ib_device *ibdev)
{
	struct rdmalog_rdev *rdev;
	bool gone = true;

	mutex_lock(&rdmalog_rdev_mutex);
	list_for_each_entry(rdev, &rdmalog_rdevs, list)
		if (rdev->ibdev == ibdev)
			gone = false;
	mutex_unlock(&rdmalog_rdev_mutex);
	return gone;
}

void rdmalog_rdev_removal_start(struct rdmalog_rdev_removal *r,
				struct ib_device *ibdev)
{
	r->ibdev = ibdev;
	mutex_lock(&rdmalog_rdev_mutex);
	list_add(&r->list, &rdmalog_rdev_removals);
	mutex_unlock(&rdmalog_rdev_mutex);
}

void rdmalog_rdev_removal_finish(struct rdmalog_rdev_removal *r)
{
	wait_event(rdmalog_rdev_wq, rdmalog_rdev_gone(r->ibdev));
	mutex_lock(&rdmalog_rdev_mutex);
	list_del(&r->list);
	mutex_unlock(&rdmalog_rdev_mutex);
}

void rdmalog_rdev_set_ready(bool ready)
{
	mutex_lock(&rdmalog_rdev_mutex);
	rdmalog_rdev_ready = ready;
	mutex_unlock(&rdmalog_rdev_mutex);
}

/**
 * rdmalog_rdma_dev_exit() - check that no device object is left
 *
 * Called after conn.c unregistered its ib_client (whose .remove ran for
 * every device): no object can be left.
 */
void rdmalog_rdma_dev_exit(void)
{
	mutex_lock(&rdmalog_rdev_mutex);
	rdmalog_rdev_ready = false;
	WARN(!list_empty(&rdmalog_rdevs),
	     "rdmalog: RDMA device objects left at exit\n");
	mutex_unlock(&rdmalog_rdev_mutex);
}
