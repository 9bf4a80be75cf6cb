// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - connections to the peers.
 *
 * While the log is up, this node listens with the rdma_cm on its address
 * and keeps exactly one RC connection to every configured peer: the node
 * with the smaller id connects, the larger one accepts (and, while it is
 * not connected, "knocks": a connect request flagged RDMALOG_CM_F_KNOCK
 * that the smaller node always rejects, telling the knocking node whether
 * it would be refused and making the smaller node connect at once). The
 * handshake, the control messages and the state machine are described in
 * Documentation/protocol.rst; the formats are in proto.h.
 *
 * What the live connections tell of the peers' roles (the primary that
 * holds our ring, the census), the role we announce and a change of it
 * that keeps the connections are conn_role.c's; it follows the objects
 * and locks below, and the two files share kmod/transport.h.
 *
 * Objects
 *
 * &struct rdmalog_conn: one per configured peer and up period (node.c owns
 * it through its peer). It holds the peer's displayed state, the reconnect
 * and heartbeat work items and at most one current endpoint. Freed by its
 * last reference: the owner's, the list's (while activated), one per
 * endpoint, and short ones taken by the connect-request handler.
 *
 * &struct rdmalog_ep: one rdma_cm connection (or attempt): cm_id, CQ, QP,
 * receive ring and send pool. It is created by a connection attempt or an
 * accepted request and closed exactly once by rdmalog_ep_close(), which
 * detaches it from its conn and queues its close work: rdma_disconnect,
 * ib_drain_qp, destroy the QP, free the CQ (no completion handler runs
 * after that), deregister and unmap what replication and forwarding set up,
 * free the buffers, deallocate the endpoint's own PD, put the device
 * object, and rdma_destroy_id last. The PD and the device object go
 * before the id is destroyed (as in nvme-rdma): on device removal the
 * rdma_cm waits for every id on the device, so nothing of ours is left on
 * the device when it goes. The
 * memory of the endpoint is reference-counted (kref): the close work
 * holds the base reference, every queued error work one more.
 *
 * Locks, in the order they are taken:
 *
 *   rdma_cm handler_mutex     held by the rdma_cm around our event handler
 *   rdmalog_conns.mutex       running flag, parameters, list of conns,
 *                             listener
 *   rdmalog_conn.lock         (mutex) state machine of one conn and its
 *                             endpoints: every field marked so below
 *   rdma_dev.c's mutex        device objects
 *   rdmalog_ep.lock,          (spinlocks, _bh in process context) send
 *   rdmalog_conn.info_lock    pool and credits; what the peer reported
 *
 * Because the rdma_cm holds handler_mutex while our handler takes the
 * mutexes above, nothing here calls rdma_destroy_id() (which waits for
 * running handlers) with rdmalog_conns.mutex or a conn's lock held, and
 * the handler never destroys its own id: it returns non-zero to have the
 * rdma_cm destroy an id we do not keep (a rejected request), and leaves
 * every other id to the close work. rdma_connect_locked() and rdma_accept()
 * run inside the handler. Completion handlers (softirq, or a spinning
 * appender with BH disabled: cq.c) take only the spinlocks and hand
 * anything that sleeps to rdmalog_conn_wq.
 *
 * Why softirq: control messages are few and their handlers only
 * copy, re-post, count and update a few fields; the data path (repl.c)
 * commits records from its completion handler (rdmalog_log_commit() takes
 * a spinlock only), where a softirq gives the lowest latency. Everything
 * that sleeps goes to the workqueue.
 *
 * The data path (repl.c, forward.c) hangs off &struct rdmalog_ep: it sends
 * through rdmalog_ep_send_chain() (credits, sequence numbers), gives each
 * of its work requests its own &struct ib_cqe, registers memory on the
 * endpoint's own PD (&rdmalog_ep.pd: a remote key is good on that QP only;
 * &rdmalog_ep.rdev's capabilities say whether FRWR and atomics are there),
 * and has its room in RDMALOG_SQ_SIZE (ep.h). Ring registration is
 * ring_mr.c's: a backup registers its ring for the primary's connection
 * and sends it a RING descriptor; the primary checks the RING there, and
 * catchup.c judges the backup in sync or behind (see ring_mr.c's top
 * comment and protocol.rst, "Ring registration"). The log's lock is
 * BH-safe, so completion handlers may read log positions and commit.
 */
#include <linux/err.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "auth.h"
#include "ballot.h"
#include "ballot_mr.h"
#include "conn.h"
#include "ep.h"
#include "inject.h"
#include "log.h"
#include "node.h"
#include "proto.h"
#include "rdma_dev.h"
#include "ring_map.h"
#include "stats.h"
#include "transport.h"

/* Knock backoff of the accepting side (give the other side time first). */
#define RDMALOG_KNOCK_MIN_MS		1000
#define RDMALOG_BACKOFF_MAX_MS		5000

struct rdmalog_conns_state rdmalog_conns = {
	.mutex = __MUTEX_INITIALIZER(rdmalog_conns.mutex),
	.list = LIST_HEAD_INIT(rdmalog_conns.list),
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(rdmalog_conns.wq),
	.ring_lock = __SPIN_LOCK_UNLOCKED(rdmalog_conns.ring_lock),
};

/* The protocol above the transport (msg.c): constant once set. */
static const struct rdmalog_ep_ops *rdmalog_ep_ops;

void rdmalog_ep_set_ops(const struct rdmalog_ep_ops *ops)
{
	rdmalog_ep_ops = ops;
}

const struct rdmalog_ep_ops *rdmalog_ep_get_ops(void)
{
	return rdmalog_ep_ops;
}

/*
 * Every work item of the transport (conn.c, ep.c). Not WQ_MEM_RECLAIM:
 * nothing here is on a memory reclaim path, and the close work flushes
 * rdma_cm work.
 */
struct workqueue_struct *rdmalog_conn_wq;

static void rdmalog_ep_close_work(struct work_struct *work);

/* ------------------------------------------------------------------ */
/* Addresses */

void rdmalog_addr_to_sa(const struct rdmalog_addr *a, u16 port,
			struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->len == 16) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->addr, 16);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		if (a->len == 4)
			memcpy(&sin->sin_addr, a->addr, 4);
		else
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
	}
}

/* ------------------------------------------------------------------ */
/* State, messages, events */

/*
 * The judgement of the peer's copy (enum rdmalog_peer_sync) from what
 * @info already holds; see the uapi for who judges what.
 */
static u32 rdmalog_conn_sync(const struct rdmalog_peer_info *info)
{
	bool primary = READ_ONCE(rdmalog_conns.role) == RDMALOG_ROLE_PRIMARY;

	switch (info->state) {
	case RDMALOG_PEER_REFUSED:
		return RDMALOG_PEER_SYNC_REFUSED;
	case RDMALOG_PEER_DISCONNECTED:
		return primary ? RDMALOG_PEER_SYNC_BEHIND :
				 RDMALOG_PEER_SYNC_UNKNOWN;
	case RDMALOG_PEER_CONNECTED:
		if (info->cu.state != RDMALOG_CATCHUP_NONE)
			return RDMALOG_PEER_SYNC_CATCHING_UP;
		if (!primary)
			return RDMALOG_PEER_SYNC_UNKNOWN;
		if (info->repl.joined)
			return RDMALOG_PEER_SYNC_IN_SYNC;
		if (info->cu.diverged)
			return RDMALOG_PEER_SYNC_DIVERGED;
		return RDMALOG_PEER_SYNC_UNKNOWN;
	default:
		return RDMALOG_PEER_SYNC_UNKNOWN;
	}
}

static void rdmalog_conn_fill_info_locked(struct rdmalog_conn *conn,
					  struct rdmalog_peer_info *info)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&conn->lock);
	info->state = conn->state;
	strscpy(info->msg, conn->msg, sizeof(info->msg));
	info->reconnects = conn->reconnects;
	info->refusals = conn->refusals;
	spin_lock_bh(&conn->info_lock);
	if (conn->remote.valid) {
		info->has_remote = true;
		info->last_rx_ms = jiffies_to_msecs(now - conn->remote.when);
		info->remote_epoch = conn->remote.epoch;
		info->remote_first_lsn = conn->remote.first_lsn;
		info->remote_commit_lsn = conn->remote.commit_lsn;
		info->remote_next_lsn = conn->remote.next_lsn;
	}
	info->has_role = conn->remote.has_role;
	info->remote_role = conn->remote.role;
	info->has_standing = conn->remote.has_standing;
	info->remote_priority = conn->remote.standing & RDMALOG_STANDING_PRIO;
	info->remote_lead = !(conn->remote.standing & RDMALOG_STANDING_NO_LEAD);
	spin_unlock_bh(&conn->info_lock);
	if (conn->ep && conn->ep->established) {
		rdmalog_ep_ops->info(conn->ep, &info->repl, &info->cu);
		info->has_vote_path = true;
		rdmalog_ep_ballot_path(conn->ep, &info->vote_path,
				       &info->vote_why, &info->ballot_granted);
	}
	info->sync = rdmalog_conn_sync(info);
	if (info->state == RDMALOG_PEER_REFUSED)
		info->refusal = rdmalog_rej_to_refusal(conn->refusal);
}

void rdmalog_conn_notify_ep(struct rdmalog_ep *ep, enum rdmalog_event event,
			    u64 first_lsn)
{
	struct rdmalog_conn *conn = ep->conn;
	struct rdmalog_peer_info *info;

	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return;
	info->node_id = conn->peer_id;
	info->addr = conn->addr;
	mutex_lock(&conn->lock);
	rdmalog_conn_fill_info_locked(conn, info);
	mutex_unlock(&conn->lock);
	rdmalog_conns.p.events->peer(conn->local.node_id, event, info,
				     event == RDMALOG_EVENT_LOG_RESET ?
				     first_lsn : 0);
	kfree(info);
}

/*
 * The legal moves of the displayed state (enum rdmalog_peer_state): to
 * CONFIGURED when stopped; to CONNECTING only before the first connection
 * of this up period (activation, or an attempt that failed); to CONNECTED
 * or REFUSED once activated; to DISCONNECTED only after a connection.
 * Local invariants: nothing a peer sends can make a move illegal.
 */
static bool rdmalog_conn_move_ok(const struct rdmalog_conn *conn, u32 to)
{
	switch (to) {
	case RDMALOG_PEER_CONFIGURED:
		return true;
	case RDMALOG_PEER_CONNECTING:
		return !conn->ever_connected;
	case RDMALOG_PEER_CONNECTED:
	case RDMALOG_PEER_REFUSED:
		return conn->state != RDMALOG_PEER_CONFIGURED;
	case RDMALOG_PEER_DISCONNECTED:
		return conn->ever_connected;
	default:
		return false;
	}
}

void rdmalog_conn_change_state(struct rdmalog_conn *conn, u32 state,
			       bool quiet)
{
	struct rdmalog_peer_info info;

	lockdep_assert_held(&conn->lock);
	if (conn->state == state)
		return;
	if (WARN_ON_ONCE(!rdmalog_conn_move_ok(conn, state)))
		return;
	conn->state = state;
	if (quiet)
		return;
	memset(&info, 0, sizeof(info));
	info.node_id = conn->peer_id;
	info.addr = conn->addr;
	rdmalog_conn_fill_info_locked(conn, &info);
	rdmalog_conns.p.events->peer(conn->local.node_id,
				     RDMALOG_EVENT_PEER_STATE, &info, 0);
}

void rdmalog_conn_set_msg(struct rdmalog_conn *conn, const char *fmt, ...)
{
	va_list ap;

	lockdep_assert_held(&conn->lock);
	va_start(ap, fmt);
	vsnprintf(conn->msg, sizeof(conn->msg), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Reference counting (of endpoints: ep.c) */

static void rdmalog_conn_release(struct kref *ref)
{
	struct rdmalog_conn *conn = container_of(ref, struct rdmalog_conn, ref);

	mutex_destroy(&conn->lock);
	kfree(conn);
	rdmalog_live_add(RDMALOG_STAT_LIVE_CONNS, -1);
}

/**
 * rdmalog_conn_put() - drop a reference to a conn
 * @conn: the conn; NULL is ignored
 */
void rdmalog_conn_put(struct rdmalog_conn *conn)
{
	if (conn)
		kref_put(&conn->ref, rdmalog_conn_release);
}

/* ------------------------------------------------------------------ */
/* Endpoint errors (reported in ep.c): the work that closes the endpoint */

static void rdmalog_ep_error_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     error_work);
	struct rdmalog_conn *conn = ep->conn;

	mutex_lock(&conn->lock);
	if (!ep->closing && ep->refusal) {
		/* Refused after the handshake: the peer cannot be trusted. */
		conn->refusals++;
		conn->refusal = ep->refusal;
		rdmalog_stats_inc(RDMALOG_STAT_REFUSALS_SENT);
		pr_warn_ratelimited("node %u: refused node %u: %s\n",
				    conn->local.node_id, conn->peer_id, ep->err);
		rdmalog_ep_close(ep, RDMALOG_PEER_REFUSED, "refused node %u: %s",
				 conn->peer_id, ep->err);
	} else if (!ep->closing) {
		pr_warn_ratelimited("node %u: connection to node %u failed: %s\n",
				    conn->local.node_id, conn->peer_id, ep->err);
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "connection failed: %s", ep->err);
	}
	mutex_unlock(&conn->lock);
	rdmalog_ep_put(ep);
}

/* ------------------------------------------------------------------ */
/* Endpoint lifetime (its resources: ep.c) */

struct rdmalog_ep *rdmalog_ep_alloc(struct rdmalog_conn *conn,
				    bool passive, bool knock)
{
	struct rdmalog_ep *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return NULL;
	rdmalog_live_add(RDMALOG_STAT_LIVE_EPS, 1);
	kref_init(&ep->ref);
	kref_get(&conn->ref);	/* the endpoint's, put by rdmalog_ep_release() */
	ep->conn = conn;
	ep->passive = passive;
	ep->knock = knock;
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->send_free);
	INIT_WORK(&ep->error_work, rdmalog_ep_error_work);
	INIT_DELAYED_WORK(&ep->flush_work, rdmalog_ep_flush_work);
	INIT_WORK(&ep->close_work, rdmalog_ep_close_work);
	INIT_WORK(&ep->grant_work, rdmalog_ep_grant_work);
	ep->peer_hb_ms = RDMALOG_DEFAULT_HEARTBEAT_MS;
	rdmalog_ep_ops->init(ep);
	atomic_inc(&rdmalog_conns.nr_eps);
	return ep;
}

static void rdmalog_ep_close_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     close_work);

	if (ep->connect_sent)
		rdma_disconnect(ep->cm_id);	/* may fail: not connected */
	/*
	 * The endpoint's works run on other workqueues and may be running
	 * now: they finish before anything they use goes, and one queued
	 * later (by a completion, until the CQ is freed) sees DEAD and
	 * returns. Not in rdmalog_ep_release_resources(): a refused accept
	 * calls it under the conn lock, which the works take.
	 */
	set_bit(RDMALOG_EP_DEAD, &ep->flags);
	/* A grant waiting for the ballot word: not after the release. */
	if (cancel_work_sync(&ep->grant_work))
		rdmalog_ep_put(ep);
	rdmalog_ep_ops->stop(ep);
	rdmalog_ep_release_resources(ep);
	rdmalog_ring_unhold(ep);
	/* Waits for a running handler of this id; none runs afterwards. */
	rdma_destroy_id(ep->cm_id);
	if (atomic_dec_and_test(&rdmalog_conns.nr_eps))
		wake_up_all(&rdmalog_conns.wq);
	rdmalog_ep_put(ep);
}

/*
 * An endpoint that never got past the request handler: released there,
 * and its id destroyed by the rdma_cm when the handler returns non-zero.
 */
void rdmalog_ep_discard(struct rdmalog_ep *ep)
{
	WRITE_ONCE(ep->closing, true);
	rdmalog_ep_release_resources(ep);
	if (atomic_dec_and_test(&rdmalog_conns.nr_eps))
		wake_up_all(&rdmalog_conns.wq);
	rdmalog_ep_put(ep);
}

/* ------------------------------------------------------------------ */
/* The state machine */

static void rdmalog_conn_schedule_retry(struct rdmalog_conn *conn)
{
	unsigned int delay = conn->backoff_ms;

	lockdep_assert_held(&conn->lock);
	if (conn->stopping || !conn->activated)
		return;
	/* Jitter: up to half the delay again, so peers do not march on. */
	delay += get_random_u32_below(delay / 2 + 1);
	conn->backoff_ms = min_t(unsigned int, conn->backoff_ms * 2,
				 RDMALOG_BACKOFF_MAX_MS);
	mod_delayed_work(rdmalog_conn_wq, &conn->connect_work,
			 msecs_to_jiffies(delay));
}

unsigned int rdmalog_conn_min_backoff(struct rdmalog_conn *conn)
{
	return conn->active ? RDMALOG_BACKOFF_MIN_MS : RDMALOG_KNOCK_MIN_MS;
}

/**
 * rdmalog_ep_close() - close an endpoint (once) and decide what comes next
 * @ep: the endpoint
 * @state: the conn's new displayed state, or %RDMALOG_STATE_KEEP
 * @fmt: the conn's new message, or NULL to keep it
 *
 * Marks the endpoint closed (senders and handlers leave it alone from now
 * on), detaches it from its conn, schedules the next attempt unless the
 * conn is stopping, and queues the close work that releases everything.
 * Called with the conn lock held; does not sleep on the rdma_cm.
 */
void rdmalog_ep_close(struct rdmalog_ep *ep, int state,
		      const char *fmt, ...)
{
	struct rdmalog_conn *conn = ep->conn;
	va_list ap;

	lockdep_assert_held(&conn->lock);
	if (ep->closing)
		return;
	WRITE_ONCE(ep->closing, true);
	spin_lock_bh(&ep->lock);
	ep->live = false;
	spin_unlock_bh(&ep->lock);

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(conn->msg, sizeof(conn->msg), fmt, ap);
		va_end(ap);
	}
	if (ep->established) {
		rdmalog_stats_inc(RDMALOG_STAT_DISCONNECTS);
		pr_info_ratelimited("node %u: connection to node %u closed: %s\n",
				    conn->local.node_id, conn->peer_id,
				    conn->msg);
	} else if (!ep->knock) {
		rdmalog_stats_inc(RDMALOG_STAT_CONNECT_FAILURES);
	}
	if (conn->ep == ep) {
		conn->ep = NULL;
		/* hb_work sees no live endpoint and stops by itself. */
		cancel_delayed_work(&conn->hb_work);
		/* Not connected yet in this up period: still CONNECTING. */
		if (state == RDMALOG_PEER_DISCONNECTED && !conn->ever_connected)
			state = RDMALOG_PEER_CONNECTING;
		if (state != RDMALOG_STATE_KEEP && !conn->stopping)
			rdmalog_conn_change_state(conn, state, false);
		rdmalog_conn_schedule_retry(conn);
	}
	queue_work(rdmalog_conn_wq, &ep->close_work);
}

void rdmalog_ep_established(struct rdmalog_ep *ep)
{
	struct rdmalog_conn *conn = ep->conn;
	struct sockaddr_storage ss;
	const char *why;
	int err;

	lockdep_assert_held(&conn->lock);
	ep->established = true;
	spin_lock_bh(&ep->lock);
	ep->live = true;
	spin_unlock_bh(&ep->lock);
	WRITE_ONCE(conn->last_rx, jiffies);

	if (conn->ever_connected)
		conn->reconnects++;
	conn->ever_connected = true;
	conn->last_reason = RDMALOG_REJ_NONE;
	conn->msg[0] = '\0';
	rdmalog_stats_inc(RDMALOG_STAT_CONNECTS);
	rdmalog_addr_to_sa(&conn->addr, conn->addr.port, &ss);
	pr_info_ratelimited("node %u: connected to node %u (%pISpc, %s, inline %u)\n",
			    conn->local.node_id, conn->peer_id, &ss,
			    ep->passive ? "accepted" : "connected",
			    ep->max_inline);

	err = rdmalog_ep_send_hello(ep);
	if (err) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot send HELLO: error %d", err);
		return;
	}
	set_bit(RDMALOG_EP_HELLO_TX, &ep->flags);
	local_bh_disable();
	why = rdmalog_ep_maybe_grant_ring(ep);
	rdmalog_ep_maybe_grant_ballot(ep);
	local_bh_enable();
	if (why)
		rdmalog_ep_error(ep, "%s", why);
	rdmalog_conn_change_state(conn, RDMALOG_PEER_CONNECTED, false);
	mod_delayed_work(rdmalog_conn_wq, &conn->hb_work,
			 msecs_to_jiffies(READ_ONCE(rdmalog_conns.heartbeat_ms)));
}

/* ------------------------------------------------------------------ */
/* Outgoing attempts and the periodic work (the rdma_cm's side: cm.c) */

/* Start a connection attempt, or a knock, to @conn's peer. */
static void rdmalog_conn_start_attempt(struct rdmalog_conn *conn)
{
	struct sockaddr_storage src, dst;
	struct rdma_cm_id *id;
	struct rdmalog_ep *ep;
	int err;

	lockdep_assert_held(&conn->lock);
	ep = rdmalog_ep_alloc(conn, false, !conn->active);
	if (!ep) {
		rdmalog_conn_set_msg(conn, "out of memory");
		rdmalog_conn_schedule_retry(conn);
		return;
	}
	id = rdma_create_id(&init_net, rdmalog_cm_handler, ep, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		rdmalog_conn_set_msg(conn, "cannot create an rdma_cm id: %ld",
				     PTR_ERR(id));
		rdmalog_ep_discard(ep);
		rdmalog_conn_schedule_retry(conn);
		return;
	}
	ep->cm_id = id;
	conn->ep = ep;
	ep->deadline = jiffies + msecs_to_jiffies(RDMALOG_ATTEMPT_TIMEOUT_MS);
	mod_delayed_work(rdmalog_conn_wq, &conn->connect_work,
			 msecs_to_jiffies(RDMALOG_ATTEMPT_TIMEOUT_MS));

	rdmalog_addr_to_sa(&conn->local.listen, 0, &src);
	rdmalog_addr_to_sa(&conn->addr, conn->addr.port, &dst);
	/* Asynchronous: the handler runs later (from the rdma_cm's work). */
	err = rdma_resolve_addr(id, conn->local.listen.len ?
				(struct sockaddr *)&src : NULL,
				(struct sockaddr *)&dst,
				RDMALOG_RESOLVE_TIMEOUT_MS);
	if (err)
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot resolve %pISpc: error %d", &dst, err);
}

static void rdmalog_conn_connect_work(struct work_struct *work)
{
	struct rdmalog_conn *conn = container_of(to_delayed_work(work),
						 struct rdmalog_conn,
						 connect_work);
	struct rdmalog_ep *ep;

	mutex_lock(&conn->lock);
	if (conn->stopping || !conn->activated)
		goto out_unlock;
	ep = conn->ep;
	if (ep) {
		if (ep->established)
			goto out_unlock;
		if (time_before(jiffies, ep->deadline)) {
			mod_delayed_work(rdmalog_conn_wq, &conn->connect_work,
					 ep->deadline - jiffies);
			goto out_unlock;
		}
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "no connection within %u ms",
				 RDMALOG_ATTEMPT_TIMEOUT_MS);
		goto out_unlock;
	}
	rdmalog_conn_start_attempt(conn);
out_unlock:
	mutex_unlock(&conn->lock);
}

static void rdmalog_conn_hb_work(struct work_struct *work)
{
	struct rdmalog_conn *conn = container_of(to_delayed_work(work),
						 struct rdmalog_conn, hb_work);
	unsigned int interval, timeout;
	struct rdmalog_ep *ep;
	int err;

	mutex_lock(&conn->lock);
	ep = conn->ep;
	if (conn->stopping || !ep || !ep->established || ep->closing)
		goto out_unlock;

	/* The handshake completed: the next loss starts a fresh backoff. */
	if (!ep->backoff_reset && test_bit(RDMALOG_EP_HELLO, &ep->flags)) {
		conn->backoff_ms = rdmalog_conn_min_backoff(conn);
		ep->backoff_reset = true;
	}

	interval = READ_ONCE(rdmalog_conns.heartbeat_ms);
	timeout = max(READ_ONCE(rdmalog_conns.peer_timeout_ms),
		      2 * READ_ONCE(ep->peer_hb_ms));
	if (time_after(jiffies, READ_ONCE(conn->last_rx) +
				msecs_to_jiffies(timeout))) {
		rdmalog_stats_inc(RDMALOG_STAT_HEARTBEAT_TIMEOUTS);
		pr_warn_ratelimited("node %u: no message from node %u for %u ms: declaring it dead\n",
				    conn->local.node_id, conn->peer_id,
				    timeout);
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "no message from node %u for %u ms (peer timeout)",
				 conn->peer_id, timeout);
		goto out_unlock;
	}
	if (rdmalog_inject_fail(RDMALOG_INJ_FAIL_QP_ERROR)) {
		struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

		/* not closing: the flushes alone must end the connection */
		ib_modify_qp(ep->qp, &qa, IB_QP_STATE);
		goto requeue;
	}
	err = rdmalog_ep_send_heartbeat(ep);
	if (err && err != -EAGAIN) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot send a heartbeat: error %d", err);
		goto out_unlock;
	}
requeue:
	queue_delayed_work(rdmalog_conn_wq, &conn->hb_work,
			   msecs_to_jiffies(interval));
out_unlock:
	mutex_unlock(&conn->lock);
}

/* ------------------------------------------------------------------ */
/* The interface to the node (node.c, node_up.c) */

/**
 * rdmalog_conn_create() - the connection object of a peer
 * @peer_id: the peer's node id
 * @addr: its address and port
 *
 * Call between rdmalog_conn_start() and rdmalog_conn_stop(); nothing
 * happens until rdmalog_conn_activate().
 *
 * Return: the object with one reference for the caller, or NULL.
 */
struct rdmalog_conn *rdmalog_conn_create(u32 peer_id,
					 const struct rdmalog_addr *addr)
{
	const struct rdmalog_conn_params *p = &rdmalog_conns.p;
	struct rdmalog_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	rdmalog_live_add(RDMALOG_STAT_LIVE_CONNS, 1);
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->list);
	mutex_init(&conn->lock);
	spin_lock_init(&conn->info_lock);
	INIT_DELAYED_WORK(&conn->connect_work, rdmalog_conn_connect_work);
	INIT_DELAYED_WORK(&conn->hb_work, rdmalog_conn_hb_work);
	conn->peer_id = peer_id;
	conn->addr = *addr;
	conn->state = RDMALOG_PEER_CONFIGURED;

	mutex_lock(&rdmalog_conns.mutex);
	conn->local = p->local;
	mutex_unlock(&rdmalog_conns.mutex);
	conn->active = conn->local.node_id < peer_id;
	conn->backoff_ms = rdmalog_conn_min_backoff(conn);
	return conn;
}

/**
 * rdmalog_conn_activate() - start connecting, or waiting to be connected
 * @conn: from rdmalog_conn_create(), not activated yet
 * @knock_now: the accepting side knocks at once, not after
 *	%RDMALOG_KNOCK_MIN_MS: the peer is known to be up (this node changed
 *	its role and closed the connection the peer had)
 *
 * The state becomes CONNECTING without an event: the caller's UP or
 * PEER_ADDED event says so.
 */
void rdmalog_conn_activate(struct rdmalog_conn *conn, bool knock_now)
{
	mutex_lock(&rdmalog_conns.mutex);
	kref_get(&conn->ref);	/* the list's, put by conn_stop/remove */
	list_add_tail(&conn->list, &rdmalog_conns.list);
	conn->listed = true;

	mutex_lock(&conn->lock);
	conn->activated = true;
	rdmalog_conn_change_state(conn, RDMALOG_PEER_CONNECTING, true);
	/* The accepting side knocks only if it is not connected soon. */
	queue_delayed_work(rdmalog_conn_wq, &conn->connect_work,
			   conn->active || knock_now ? 0 :
			   msecs_to_jiffies(RDMALOG_KNOCK_MIN_MS));
	mutex_unlock(&conn->lock);
	mutex_unlock(&rdmalog_conns.mutex);
}

/*
 * Stop @conn: no new attempt, the current endpoint closed, works
 * cancelled. Its close work may still be queued (flush the workqueue).
 * The state goes back to CONFIGURED without an event (the node sends one).
 */
static void rdmalog_conn_shutdown(struct rdmalog_conn *conn,
				  const char *why)
{
	mutex_lock(&conn->lock);
	conn->stopping = true;
	if (conn->ep)
		rdmalog_ep_close(conn->ep, RDMALOG_STATE_KEEP, "%s", why);
	rdmalog_conn_change_state(conn, RDMALOG_PEER_CONFIGURED, true);
	conn->msg[0] = '\0';
	mutex_unlock(&conn->lock);
	/* Neither re-arms itself once stopping is set. */
	cancel_delayed_work_sync(&conn->connect_work);
	cancel_delayed_work_sync(&conn->hb_work);
}

/* Every close work queued so far has run. */
void rdmalog_conn_wait_closed(void)
{
	flush_workqueue(rdmalog_conn_wq);
}

/**
 * rdmalog_conn_remove() - close a peer's connection for good (peer
 * deleted while up)
 * @conn: activated or not; the caller's reference stays
 *
 * Returns when its endpoints are released.
 */
void rdmalog_conn_remove(struct rdmalog_conn *conn)
{
	bool listed;

	mutex_lock(&rdmalog_conns.mutex);
	listed = conn->listed;
	if (listed) {
		list_del_init(&conn->list);
		conn->listed = false;
	}
	mutex_unlock(&rdmalog_conns.mutex);

	rdmalog_conn_shutdown(conn, "peer removed");
	rdmalog_conn_wait_closed();
	if (listed)
		rdmalog_conn_put(conn);
}

/**
 * rdmalog_conn_live_eps() - every established connection
 * @eps: filled with up to @max endpoints, each with a reference the
 *	caller drops (rdmalog_ep_put())
 * @max: room in @eps
 *
 * Return: how many were filled in.
 */
u32 rdmalog_conn_live_eps(struct rdmalog_ep **eps, u32 max)
{
	struct rdmalog_conn *conn;
	struct rdmalog_ep *ep;
	u32 n = 0;

	mutex_lock(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		if (n == max)
			break;
		mutex_lock(&conn->lock);
		ep = conn->ep;
		if (ep && ep->established && !ep->closing) {
			rdmalog_ep_get(ep);
			eps[n++] = ep;
		}
		mutex_unlock(&conn->lock);
	}
	mutex_unlock(&rdmalog_conns.mutex);
	return n;
}

void rdmalog_conn_beat_now(void)
{
	struct rdmalog_conn *conn;

	mutex_lock(&rdmalog_conns.mutex);
	/* One without a live endpoint stops at once (rdmalog_conn_hb_work()). */
	list_for_each_entry(conn, &rdmalog_conns.list, list)
		mod_delayed_work(rdmalog_conn_wq, &conn->hb_work, 0);
	mutex_unlock(&rdmalog_conns.mutex);
}

/**
 * rdmalog_conn_get_info() - the connection fields of a peer's snapshot
 * @conn: the peer's object
 * @info: state, msg, counters and what the peer reported are filled in
 */
void rdmalog_conn_get_info(struct rdmalog_conn *conn,
			   struct rdmalog_peer_info *info)
{
	mutex_lock(&conn->lock);
	rdmalog_conn_fill_info_locked(conn, info);
	mutex_unlock(&conn->lock);
}

/**
 * rdmalog_conn_start() - begin an up period: listen, accept peers' objects
 * @p: the parameters; @p->log is referenced until rdmalog_conn_stop()
 *
 * The listener is created in the background and retried while it fails
 * (the reason shows in rdmalog_conn_status_msg()).
 *
 * Return: 0, or -EBUSY if already started.
 */
int rdmalog_conn_start(const struct rdmalog_conn_params *p)
{
	struct crypto_shash *auth = NULL;
	struct sockaddr_storage ss;

	mutex_lock(&rdmalog_conns.mutex);
	if (rdmalog_conns.running) {
		mutex_unlock(&rdmalog_conns.mutex);
		return -EBUSY;
	}
	if (p->secret_len) {
		auth = rdmalog_auth_alloc(p->secret, p->secret_len);
		if (IS_ERR(auth)) {
			mutex_unlock(&rdmalog_conns.mutex);
			pr_warn("cannot set up authentication (hmac(sha256)): %ld\n",
				PTR_ERR(auth));
			return PTR_ERR(auth);
		}
	}
	rdmalog_conns.p = *p;
	rdmalog_conns.p.secret = NULL;
	rdmalog_conns.p.secret_len = 0;
	rdmalog_conns.p.local.auth = !!auth;
	rdmalog_conns.auth = auth;
	/* No endpoint exists: none sent anything in another epoch. */
	atomic64_set(&rdmalog_conns.epoch, p->epoch);
	rdmalog_log_get(p->log);	/* put by rdmalog_conn_stop() */
	WRITE_ONCE(rdmalog_conns.heartbeat_ms, p->heartbeat_ms);
	WRITE_ONCE(rdmalog_conns.peer_timeout_ms, p->peer_timeout_ms);
	WRITE_ONCE(rdmalog_conns.role, p->role);
	rdmalog_conn_set_standing(p->priority, p->lead);
	strscpy(rdmalog_conns.listen_msg, "not listening yet",
		sizeof(rdmalog_conns.listen_msg));
	rdmalog_conns.running = true;
	queue_delayed_work(rdmalog_conn_wq, &rdmalog_conns.listen_work, 0);
	rdmalog_addr_to_sa(&p->local.listen, 0, &ss);
	mutex_unlock(&rdmalog_conns.mutex);
	rdmalog_ballot_start(&ss);
	return 0;
}

/**
 * rdmalog_conn_stop() - end the up period
 *
 * Destroys the listener, stops every activated conn and waits until every
 * endpoint is released. The conns stay allocated for their owners.
 */
void rdmalog_conn_stop(void)
{
	struct rdmalog_conn *conn, *tmp;
	struct rdma_cm_id *listener;
	struct rdmalog_log *log;
	LIST_HEAD(dying);

	mutex_lock(&rdmalog_conns.mutex);
	if (!rdmalog_conns.running) {
		mutex_unlock(&rdmalog_conns.mutex);
		return;
	}
	rdmalog_conns.running = false;
	listener = rdmalog_conns.listener;
	rdmalog_conns.listener = NULL;
	list_splice_init(&rdmalog_conns.list, &dying);
	list_for_each_entry(conn, &dying, list)
		conn->listed = false;
	mutex_unlock(&rdmalog_conns.mutex);

	cancel_delayed_work_sync(&rdmalog_conns.listen_work);
	rdmalog_ballot_stop();
	/* After this no request handler runs: no new endpoint appears. */
	if (listener)
		rdma_destroy_id(listener);
	list_for_each_entry(conn, &dying, list)
		rdmalog_conn_shutdown(conn, "this node is going down");
	rdmalog_conn_wait_closed();
	wait_event(rdmalog_conns.wq, !atomic_read(&rdmalog_conns.nr_eps));

	list_for_each_entry_safe(conn, tmp, &dying, list) {
		list_del_init(&conn->list);
		rdmalog_conn_put(conn);
	}

	mutex_lock(&rdmalog_conns.mutex);
	log = rdmalog_conns.p.log;
	WRITE_ONCE(rdmalog_conns.p.log, NULL);
	rdmalog_conns.listen_msg[0] = '\0';
	/* No endpoint is left to use it. */
	rdmalog_auth_free(rdmalog_conns.auth);
	rdmalog_conns.auth = NULL;
	mutex_unlock(&rdmalog_conns.mutex);
	rdmalog_log_put(log);
}

/**
 * rdmalog_conn_set_timers() - new heartbeat interval and peer timeout
 * @heartbeat_ms: interval; used from the next heartbeat on
 * @peer_timeout_ms: timeout; used from the next check on
 */
void rdmalog_conn_set_timers(u32 heartbeat_ms, u32 peer_timeout_ms)
{
	WRITE_ONCE(rdmalog_conns.heartbeat_ms, heartbeat_ms);
	WRITE_ONCE(rdmalog_conns.peer_timeout_ms, peer_timeout_ms);
}

/**
 * rdmalog_conn_set_standing() - our candidacy, announced from the next
 * HEARTBEAT on
 * @priority: 0 .. %RDMALOG_STANDING_PRIO (higher bits are dropped)
 * @lead: we may lead
 */
void rdmalog_conn_set_standing(u32 priority, bool lead)
{
	WRITE_ONCE(rdmalog_conns.standing,
		   (priority & RDMALOG_STANDING_PRIO) |
		   (lead ? 0 : RDMALOG_STANDING_NO_LEAD));
}

/**
 * rdmalog_conn_set_vote_epoch() - the election epoch announced in later
 * HELLOs and HEARTBEATs
 * @epoch: the election's (it only grows; elect.c)
 */
void rdmalog_conn_set_vote_epoch(u64 epoch)
{
	atomic64_set(&rdmalog_conns.vote_epoch, epoch);
}

/**
 * rdmalog_conn_status_msg() - why the node does not listen, if it does not
 * @buf: filled with a note, or "" when listening (or stopped)
 * @len: its size
 */
void rdmalog_conn_status_msg(char *buf, size_t len)
{
	mutex_lock(&rdmalog_conns.mutex);
	if (rdmalog_conns.running)
		strscpy(buf, rdmalog_conns.listen_msg, len);
	else if (len)
		buf[0] = '\0';
	mutex_unlock(&rdmalog_conns.mutex);
}

/* The ballot word is READY: grant it where both HELLOs passed already. */
static void rdmalog_conn_ballot_ready(void)
{
	struct rdmalog_ep *eps[RDMALOG_MAX_PEERS];
	u32 n, i;

	n = rdmalog_conn_live_eps(eps, ARRAY_SIZE(eps));
	for (i = 0; i < n; i++) {
		local_bh_disable();
		rdmalog_ep_maybe_grant_ballot(eps[i]);
		local_bh_enable();
		rdmalog_ep_put(eps[i]);
	}
}

/* The ballot word is out of its owner's reach: no connection keeps it. */
static void rdmalog_conn_ballot_revoke(const struct rdmalog_ballot_map *map)
{
	struct rdmalog_ep *eps[RDMALOG_MAX_PEERS];
	u32 n, i;

	n = rdmalog_conn_live_eps(eps, ARRAY_SIZE(eps));
	for (i = 0; i < n; i++) {
		if (rdmalog_ep_ballot_granted(eps[i], map))
			rdmalog_ep_error(eps[i],
					 "ballot word revoked: this node can no longer watch it");
		rdmalog_ep_put(eps[i]);
	}
}

/**
 * rdmalog_conn_init() - create the workqueue and register the ib_client
 *
 * Return: 0, -ENOMEM, or the error of ib_register_client().
 */
int rdmalog_conn_init(void)
{
	int err;

	INIT_DELAYED_WORK(&rdmalog_conns.listen_work, rdmalog_listen_work);
	atomic_set(&rdmalog_conns.nr_eps, 0);
	rdmalog_conn_wq = alloc_workqueue("rdmalog_conn", 0, 0);
	if (!rdmalog_conn_wq)
		return -ENOMEM;
	err = rdmalog_ballot_init();
	if (err)
		goto err_wq;
	rdmalog_ballot_set_grant_hooks(rdmalog_conn_ballot_ready,
				       rdmalog_conn_ballot_revoke);
	/* Device objects only while .remove will be called for them. */
	rdmalog_rdev_set_ready(true);
	err = ib_register_client(&rdmalog_ib_client);
	if (err)
		goto err_ballot;
	return 0;

err_ballot:
	rdmalog_rdev_set_ready(false);
	rdmalog_ballot_exit();
err_wq:
	destroy_workqueue(rdmalog_conn_wq);
	return err;
}

/**
 * rdmalog_conn_exit() - unregister the ib_client, destroy the workqueue
 *
 * The node is down by now (rdmalog_conn_stop() ran): nothing is queued,
 * and .remove runs for every device and finds nothing to do.
 */
void rdmalog_conn_exit(void)
{
	ib_unregister_client(&rdmalog_ib_client);
	rdmalog_rdev_set_ready(false);
	rdmalog_ballot_exit();
	destroy_workqueue(rdmalog_conn_wq);
}
