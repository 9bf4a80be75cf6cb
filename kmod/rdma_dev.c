// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - per-RDMA-device objects and the ib_client.
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
 * The ib_client exists for its .remove callback: before an RDMA device goes
 * (rdma link delete, driver unload, ib_unregister_client() at module exit)
 * rdmalog_rdev_remove() marks the device as being removed, so no new object
 * is created for it, has conn.c tear down every connection endpoint and the
 * listener on it (and waits for that), then waits until the last object of
 * the device is released. Connection attempts that raced the sweep and have
 * an rdma_cm id on the device but no object yet are told by the rdma_cm
 * (RDMA_CM_EVENT_DEVICE_REMOVAL) after this returns; the rdma_cm waits for
 * their ids to be destroyed before the device goes. The .add callback
 * only tells conn.c that a device appeared (to listen again sooner).
 *
 * Lock order: conn.c's locks, then rdmalog_rdev_mutex. Nothing here calls
 * back into conn.c with rdmalog_rdev_mutex held.
 */
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "rdma_dev.h"
#include "conn.h"

/**
 * struct rdmalog_rdev_removal - a device being removed, on the stack of
 * rdmalog_rdev_remove()
 * @list: entry on rdmalog_rdev_removals
 * @ibdev: the device
 */
struct rdmalog_rdev_removal {
	struct list_head list;
	struct ib_device *ibdev;
};

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

static int rdmalog_rdev_add(struct ib_device *ibdev)
{
	rdmalog_conn_device_added(ibdev);
	return 0;
}

/*
 * ib_client .remove: called before @ibdev goes, in process context without
 * ib_core locks held; must not return while anything of ours uses it.
 */
static void rdmalog_rdev_remove(struct ib_device *ibdev, void *client_data)
{
	struct rdmalog_rdev_removal removal = { .ibdev = ibdev };

	mutex_lock(&rdmalog_rdev_mutex);
	list_add(&removal.list, &rdmalog_rdev_removals);
	mutex_unlock(&rdmalog_rdev_mutex);

	/* Every endpoint with an object of @ibdev is closed and freed. */
	rdmalog_conn_device_removed(ibdev);
	wait_event(rdmalog_rdev_wq, rdmalog_rdev_gone(ibdev));

	mutex_lock(&rdmalog_rdev_mutex);
	list_del(&removal.list);
	mutex_unlock(&rdmalog_rdev_mutex);
}

static struct ib_client rdmalog_ib_client = {
	.name = "rdmalog",
	.add = rdmalog_rdev_add,
	.remove = rdmalog_rdev_remove,
};

/**
 * rdmalog_rdma_dev_init() - register the ib_client
 *
 * conn.c must be initialized: .add and .remove call into it.
 *
 * Return: 0 or the error of ib_register_client().
 */
int rdmalog_rdma_dev_init(void)
{
	int err;

	mutex_lock(&rdmalog_rdev_mutex);
	rdmalog_rdev_ready = true;
	mutex_unlock(&rdmalog_rdev_mutex);
	err = ib_register_client(&rdmalog_ib_client);
	if (err) {
		mutex_lock(&rdmalog_rdev_mutex);
		rdmalog_rdev_ready = false;
		mutex_unlock(&rdmalog_rdev_mutex);
	}
	return err;
}

/**
 * rdmalog_rdma_dev_exit() - unregister the ib_client
 *
 * Called once no connection is left (the node is down): .remove runs for
 * every device and finds nothing to do. No object can be left afterwards.
 */
void rdmalog_rdma_dev_exit(void)
{
	ib_unregister_client(&rdmalog_ib_client);
	mutex_lock(&rdmalog_rdev_mutex);
	rdmalog_rdev_ready = false;
	WARN(!list_empty(&rdmalog_rdevs),
	     "rdmalog: RDMA device objects left at exit\n");
	mutex_unlock(&rdmalog_rdev_mutex);
}
