// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the rdma_cm side of the connections.
 *
 * The handshake's private data (struct rdmalog_cm_hs: filled, parsed and
 * checked), rejections and their texts, the events of an endpoint's id
 * (address and route resolved, connected, rejected, disconnected, device
 * removal), the listener (created and retried by its work) and the
 * connect requests it takes: a configured peer's request accepted into a
 * new endpoint, a knock answered, anything else rejected with a reason;
 * and the ib_client, whose RDMA devices the listener and the endpoints
 * are on.
 * The objects, their states and the locks are conn.c's (its top comment
 * states the rules, and why nothing here destroys an id under our
 * mutexes); the two files share kmod/transport.h.
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
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "auth.h"
#include "ballot.h"
#include "conn.h"
#include "ep.h"
#include "inject.h"
#include "log.h"
#include "node.h"
#include "proto.h"
#include "rdma_dev.h"
#include "stats.h"
#include "transport.h"

#define RDMALOG_LISTEN_BACKLOG		16
/* Transport retries (the ACK timeout: ep.c), 7 of them. */
#define RDMALOG_RETRY_COUNT		7
/* RNR: infinite retries (credits keep it from happening at all). */
#define RDMALOG_RNR_RETRY_COUNT		7
/* RDMA READ depth asked for (the data path's catch-up reads). */
#define RDMALOG_RD_ATOM			16

/*
 * Requests we cannot attribute to a configured peer (unknown node, bad
 * handshake) are logged at most this often: such a node knocks every few
 * seconds for as long as it is misconfigured.
 */
static DEFINE_RATELIMIT_STATE(rdmalog_stranger_rs, 60 * HZ, 5);

/* The listener's rdma_cm context (its child ids start with it too). */
#define RDMALOG_LISTENER_CTX	((void *)&rdmalog_conns)

/* Whether @sa (the remote end of an accepted id) has address @a. */
static bool rdmalog_sa_is(const struct sockaddr *sa,
			  const struct rdmalog_addr *a)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return a->len == 4 && !memcmp(&sin->sin_addr, a->addr, 4);
	if (sa->sa_family != AF_INET6)
		return false;
	if (a->len == 16)
		return !memcmp(&sin6->sin6_addr, a->addr, 16);
	return a->len == 4 && ipv6_addr_v4mapped(&sin6->sin6_addr) &&
	       !memcmp(&sin6->sin6_addr.s6_addr32[3], a->addr, 4);
}

/* Text for a rejection reason we received, after "refused by node N: ". */
static void rdmalog_rej_text(struct rdmalog_conn *conn, u8 reason,
			     u64 detail, char *buf, size_t len)
{
	const struct rdmalog_conn_local *l = &conn->local;

	switch (reason) {
	case RDMALOG_REJ_BAD_HANDSHAKE:
		snprintf(buf, len, "our handshake was not understood");
		break;
	case RDMALOG_REJ_VERSION:
		snprintf(buf, len, "protocol version %llu there, %u here",
			 detail, RDMALOG_PROTO_VERSION);
		break;
	case RDMALOG_REJ_CLUSTER_ID:
		/* Not the ids: the message reaches unprivileged users. */
		snprintf(buf, len,
			 "cluster id differs (compare 'rdmalogctl node show' on both)");
		break;
	case RDMALOG_REJ_UNKNOWN_PEER:
		snprintf(buf, len,
			 "this node (%u) is not one of its configured peers",
			 l->node_id);
		break;
	case RDMALOG_REJ_ADDR_MISMATCH:
		snprintf(buf, len,
			 "it has node %u configured at another address",
			 l->node_id);
		break;
	case RDMALOG_REJ_NODE_ID:
		snprintf(buf, len, "it is node %llu, not node %u", detail,
			 conn->peer_id);
		break;
	case RDMALOG_REJ_CAPACITY:
		snprintf(buf, len,
			 "ring capacity differs (%llu bytes there, %llu here)",
			 detail, l->capacity);
		break;
	case RDMALOG_REJ_DIRECTION:
		snprintf(buf, len,
			 "the node ids disagree on which side connects");
		break;
	case RDMALOG_REJ_NOT_READY:
		snprintf(buf, len, "it is shutting down");
		break;
	case RDMALOG_REJ_NO_RESOURCES:
		snprintf(buf, len, "it could not set up the connection");
		break;
	case RDMALOG_REJ_BAD_PARAMS:
		snprintf(buf, len, "connection parameters out of range");
		break;
	case RDMALOG_REJ_AUTH:
		snprintf(buf, len, detail ?
			 "it has a shared secret and this node has none" :
			 "this node has a shared secret and it has none");
		break;
	default:
		snprintf(buf, len, "reason %u", reason);
		break;
	}
}

/* The uapi name of a refusal (wire) reason. */
u32 rdmalog_rej_to_refusal(u8 reason)
{
	switch (reason) {
	case RDMALOG_REJ_BAD_HANDSHAKE:
		return RDMALOG_REFUSAL_BAD_HANDSHAKE;
	case RDMALOG_REJ_VERSION:
		return RDMALOG_REFUSAL_VERSION;
	case RDMALOG_REJ_CLUSTER_ID:
		return RDMALOG_REFUSAL_CLUSTER_ID;
	case RDMALOG_REJ_UNKNOWN_PEER:
		return RDMALOG_REFUSAL_UNKNOWN_PEER;
	case RDMALOG_REJ_ADDR_MISMATCH:
		return RDMALOG_REFUSAL_ADDR_MISMATCH;
	case RDMALOG_REJ_NODE_ID:
		return RDMALOG_REFUSAL_NODE_ID;
	case RDMALOG_REJ_CAPACITY:
		return RDMALOG_REFUSAL_CAPACITY;
	case RDMALOG_REJ_DIRECTION:
		return RDMALOG_REFUSAL_DIRECTION;
	case RDMALOG_REJ_BAD_PARAMS:
		return RDMALOG_REFUSAL_BAD_PARAMS;
	case RDMALOG_REJ_AUTH:
	case RDMALOG_REJ_LOCAL_AUTH_FAILED:
		return RDMALOG_REFUSAL_AUTH;
	case RDMALOG_REJ_LOCAL_SECOND_PRIMARY:
		return RDMALOG_REFUSAL_SECOND_PRIMARY;
	default:
		return RDMALOG_REFUSAL_OTHER;
	}
}

/* Reasons that make a peer REFUSED (the others are transient). */
static bool rdmalog_rej_is_refusal(u8 reason)
{
	return reason != RDMALOG_REJ_NOT_READY &&
	       reason != RDMALOG_REJ_NO_RESOURCES &&
	       reason != RDMALOG_REJ_KNOCK_OK && reason != RDMALOG_REJ_NONE;
}

/* Fill our handshake; @nonce: ours (NULL in a knock). */
static void rdmalog_hs_fill(const struct rdmalog_conn_local *l,
			    u32 dst_node, u8 flags, const u8 *nonce,
			    struct rdmalog_cm_hs *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->magic = cpu_to_le32(RDMALOG_CM_MAGIC);
	hs->version = RDMALOG_PROTO_VERSION;
	hs->flags = flags | (l->auth ? RDMALOG_CM_F_AUTH : 0);
	if (nonce)
		memcpy(hs->nonce, nonce, sizeof(hs->nonce));
	hs->recv_depth = cpu_to_le16(RDMALOG_RECV_DEPTH);
	hs->src_node = cpu_to_le16(l->node_id);
	hs->dst_node = cpu_to_le16(dst_node);
	hs->msg_size = cpu_to_le16(RDMALOG_MSG_SIZE);
	hs->cluster_id = cpu_to_le64(l->cluster_id);
	hs->epoch = cpu_to_le64(rdmalog_conn_epoch());
	hs->capacity = cpu_to_le64(l->capacity);
}

/*
 * Copy a peer's handshake out of private data and check what can be
 * checked without knowing the peer: length, magic, version. Return a
 * reason (RDMALOG_REJ_NONE: @hs is filled) and the detail to send back.
 */
static u8 rdmalog_hs_parse(const void *pdata, u8 len,
			   struct rdmalog_cm_hs *hs, u64 *detail)
{
	const size_t head = offsetof(struct rdmalog_cm_hs, flags);

	/* Magic and version first: another version may be shorter. */
	memset(hs, 0, sizeof(*hs));
	if (!pdata || len < head)
		return RDMALOG_REJ_BAD_HANDSHAKE;
	memcpy(hs, pdata, head);
	if (le32_to_cpu(hs->magic) != RDMALOG_CM_MAGIC)
		return RDMALOG_REJ_BAD_HANDSHAKE;
	if (hs->version != RDMALOG_PROTO_VERSION) {
		*detail = RDMALOG_PROTO_VERSION;
		return RDMALOG_REJ_VERSION;
	}
	if (len < sizeof(*hs))
		return RDMALOG_REJ_BAD_HANDSHAKE;
	memcpy(hs, pdata, sizeof(*hs));
	return RDMALOG_REJ_NONE;
}

/* Do we and the peer agree on whether there is a shared secret? */
static u8 rdmalog_hs_check_auth(const struct rdmalog_conn_local *l,
				const struct rdmalog_cm_hs *hs, u64 *detail)
{
	if (!!(hs->flags & RDMALOG_CM_F_AUTH) == l->auth)
		return RDMALOG_REJ_NONE;
	*detail = l->auth;
	return RDMALOG_REJ_AUTH;
}

/* Cluster and destination node id: does the peer want this node? */
static u8 rdmalog_hs_check_identity(const struct rdmalog_conn_local *l,
				    const struct rdmalog_cm_hs *hs,
				    u64 *detail)
{
	if (le64_to_cpu(hs->cluster_id) != l->cluster_id) {
		*detail = l->cluster_id;
		return RDMALOG_REJ_CLUSTER_ID;
	}
	if (le16_to_cpu(hs->dst_node) != l->node_id) {
		*detail = l->node_id;
		return RDMALOG_REJ_NODE_ID;
	}
	return RDMALOG_REJ_NONE;
}

/* Queue and ring parameters. */
static u8 rdmalog_hs_check_params(const struct rdmalog_conn_local *l,
				  const struct rdmalog_cm_hs *hs, u64 *detail)
{
	u16 depth = le16_to_cpu(hs->recv_depth);

	if (!depth || depth > RDMALOG_MAX_RECV_DEPTH ||
	    le16_to_cpu(hs->msg_size) != RDMALOG_MSG_SIZE)
		return RDMALOG_REJ_BAD_PARAMS;
	if (le64_to_cpu(hs->capacity) != l->capacity) {
		*detail = l->capacity;
		return RDMALOG_REJ_CAPACITY;
	}
	return RDMALOG_REJ_NONE;
}

/* Text for a refusal we send, after "refused node N: ". */
static void rdmalog_refusal_text(const struct rdmalog_conn_local *l,
				 u8 reason, const struct rdmalog_cm_hs *hs,
				 char *buf, size_t len)
{
	switch (reason) {
	case RDMALOG_REJ_CLUSTER_ID:
		snprintf(buf, len, "its cluster id is not ours");
		break;
	case RDMALOG_REJ_NODE_ID:
		snprintf(buf, len, "it expected node %u here, this is node %u",
			 le16_to_cpu(hs->dst_node), l->node_id);
		break;
	case RDMALOG_REJ_ADDR_MISMATCH:
		snprintf(buf, len,
			 "the connection does not come from its configured address");
		break;
	case RDMALOG_REJ_DIRECTION:
		snprintf(buf, len,
			 "the node ids disagree on which side connects");
		break;
	case RDMALOG_REJ_CAPACITY:
		snprintf(buf, len,
			 "its ring capacity %llu bytes is not ours (%llu)",
			 le64_to_cpu(hs->capacity), l->capacity);
		break;
	case RDMALOG_REJ_BAD_PARAMS:
		snprintf(buf, len,
			 "receive depth %u or message size %u out of range",
			 le16_to_cpu(hs->recv_depth),
			 le16_to_cpu(hs->msg_size));
		break;
	case RDMALOG_REJ_AUTH:
		snprintf(buf, len, l->auth ?
			 "this node has a shared secret and it has none" :
			 "it has a shared secret and this node has none");
		break;
	default:
		snprintf(buf, len, "reason %u", reason);
		break;
	}
}

static void rdmalog_reject(struct rdma_cm_id *id, u8 reason, u64 detail,
			   u32 node_id)
{
	struct rdmalog_cm_rej rej = {
		.magic = cpu_to_le32(RDMALOG_CM_MAGIC),
		.version = RDMALOG_PROTO_VERSION,
		.reason = reason,
		.node_id = cpu_to_le16(node_id),
		.detail = cpu_to_le64(detail),
	};

	if (reason != RDMALOG_REJ_KNOCK_OK)
		rdmalog_stats_inc(RDMALOG_STAT_REFUSALS_SENT);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

static void rdmalog_conn_params_fill(struct rdmalog_ep *ep,
				     struct rdma_conn_param *param,
				     struct rdmalog_cm_hs *hs)
{
	memset(param, 0, sizeof(*param));
	param->private_data = hs;
	param->private_data_len = sizeof(*hs);
	param->responder_resources = min_t(u32, RDMALOG_RD_ATOM,
					   ep->rdev->max_qp_rd_atom);
	param->initiator_depth = min_t(u32, RDMALOG_RD_ATOM,
				       ep->rdev->max_qp_init_rd_atom);
	param->flow_control = 1;
	param->retry_count = RDMALOG_RETRY_COUNT;
	param->rnr_retry_count = RDMALOG_RNR_RETRY_COUNT;
}

/* ROUTE_RESOLVED on an outgoing attempt: set up and connect. */
static void rdmalog_ep_route_resolved(struct rdmalog_ep *ep)
{
	struct rdmalog_conn *conn = ep->conn;
	struct rdma_conn_param param;
	struct rdmalog_cm_hs hs;
	int err;

	err = rdmalog_ep_setup(ep);
	if (err) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED, NULL);
		return;
	}
	if (!ep->knock)
		get_random_bytes(ep->nonce[0], sizeof(ep->nonce[0]));
	rdmalog_hs_fill(&conn->local, conn->peer_id,
			ep->knock ? RDMALOG_CM_F_KNOCK : 0,
			ep->knock ? NULL : ep->nonce[0], &hs);
	rdmalog_conn_params_fill(ep, &param, &hs);
	ep->connect_sent = true;
	err = rdma_connect_locked(ep->cm_id, &param);
	if (err)
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot send the connect request: error %d",
				 err);
}

/* ESTABLISHED on an outgoing attempt: check the peer's accept. */
static void rdmalog_ep_connected(struct rdmalog_ep *ep,
				 struct rdma_cm_event *ev)
{
	struct rdmalog_conn *conn = ep->conn;
	u8 reason;
	u64 detail = 0;
	struct rdmalog_cm_hs hs;
	char why[96];

	if (ep->knock) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "node %u accepted a knock (protocol error)",
				 conn->peer_id);
		return;
	}
	reason = rdmalog_hs_parse(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &hs, &detail);
	if (!reason && le16_to_cpu(hs.src_node) != conn->peer_id) {
		detail = le16_to_cpu(hs.src_node);
		reason = RDMALOG_REJ_NODE_ID;
	}
	if (!reason && le16_to_cpu(hs.dst_node) != conn->local.node_id)
		reason = RDMALOG_REJ_UNKNOWN_PEER;
	if (!reason && le64_to_cpu(hs.cluster_id) != conn->local.cluster_id) {
		detail = le64_to_cpu(hs.cluster_id);
		reason = RDMALOG_REJ_CLUSTER_ID;
	}
	if (!reason)
		reason = rdmalog_hs_check_params(&conn->local, &hs, &detail);
	if (reason == RDMALOG_REJ_CAPACITY)
		detail = le64_to_cpu(hs.capacity);
	if (!reason) {
		reason = rdmalog_hs_check_auth(&conn->local, &hs, &detail);
		detail = reason && !detail;	/* for the text: whether it has one */
	}
	if (reason) {
		rdmalog_rej_text(conn, reason, detail, why, sizeof(why));
		conn->refusals++;
		rdmalog_stats_inc(RDMALOG_STAT_REFUSALS_RECEIVED);
		pr_warn_ratelimited("node %u: node %u accepted with an invalid handshake: %s\n",
				    conn->local.node_id, conn->peer_id, why);
		conn->refusal = reason;
		rdmalog_ep_close(ep, RDMALOG_PEER_REFUSED,
				 "accepted by node %u, but refused: %s",
				 conn->peer_id, why);
		return;
	}
	ep->peer_recv_depth = le16_to_cpu(hs.recv_depth);
	memcpy(ep->nonce[1], hs.nonce, sizeof(ep->nonce[1]));
	spin_lock_bh(&ep->lock);
	ep->credits = ep->peer_recv_depth;
	spin_unlock_bh(&ep->lock);
	rdmalog_ep_established(ep);
}

/* REJECTED on an outgoing attempt or knock. */
static void rdmalog_ep_rejected(struct rdmalog_ep *ep,
				struct rdma_cm_event *ev)
{
	struct rdmalog_conn *conn = ep->conn;
	struct rdmalog_cm_rej rej;
	struct sockaddr_storage ss;
	const void *data;
	char why[96];
	u8 len = 0;
	int state;

	data = rdma_consumer_reject_data(ep->cm_id, ev, &len);
	if (!data || len < sizeof(rej)) {
		rdmalog_addr_to_sa(&conn->addr, conn->addr.port, &ss);
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "%pISpc rejected the connection: %s (is node %u up?)",
				 &ss, rdma_reject_msg(ep->cm_id, ev->status),
				 conn->peer_id);
		return;
	}
	memcpy(&rej, data, sizeof(rej));
	if (le32_to_cpu(rej.magic) != RDMALOG_CM_MAGIC) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "node %u rejected the connection (not an rdmalog rejection)",
				 conn->peer_id);
		return;
	}

	if (rej.reason == RDMALOG_REJ_KNOCK_OK && ep->knock) {
		/* A refusal is over; CONNECTING/DISCONNECTED stay. */
		state = conn->state == RDMALOG_PEER_REFUSED ?
			RDMALOG_PEER_DISCONNECTED : RDMALOG_STATE_KEEP;
		rdmalog_ep_close(ep, state, "waiting for node %u to connect",
				 conn->peer_id);
		conn->last_reason = RDMALOG_REJ_NONE;
		return;
	}
	rdmalog_rej_text(conn, rej.reason, le64_to_cpu(rej.detail), why,
			 sizeof(why));
	if (!rdmalog_rej_is_refusal(rej.reason)) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "node %u rejected the connection: %s",
				 conn->peer_id, why);
		return;
	}
	conn->refusals++;
	rdmalog_stats_inc(RDMALOG_STAT_REFUSALS_RECEIVED);
	if (conn->last_reason != rej.reason)
		pr_warn_ratelimited("node %u: refused by node %u: %s\n",
				    conn->local.node_id, conn->peer_id, why);
	conn->last_reason = rej.reason;
	conn->refusal = rej.reason;
	rdmalog_ep_close(ep, RDMALOG_PEER_REFUSED, "refused by node %u: %s",
			 conn->peer_id, why);
}

/* Events of an endpoint's id (everything but CONNECT_REQUEST). */
static int rdmalog_ep_event(struct rdmalog_ep *ep, struct rdma_cm_event *ev)
{
	struct rdmalog_conn *conn = ep->conn;
	struct sockaddr_storage ss;
	int err;

	if (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED)
		rdmalog_inject_delay(RDMALOG_INJ_EP_ADDR);
	mutex_lock(&conn->lock);
	if (ep->closing)
		goto out;
	rdmalog_addr_to_sa(&conn->addr, conn->addr.port, &ss);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ep->ibdev = ep->cm_id->device;
		err = rdma_resolve_route(ep->cm_id, RDMALOG_RESOLVE_TIMEOUT_MS);
		if (err)
			rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
					 "cannot resolve a route to %pISpc: error %d",
					 &ss, err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rdmalog_ep_route_resolved(ep);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ep->passive)
			rdmalog_ep_established(ep);
		else
			rdmalog_ep_connected(ep, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rdmalog_ep_rejected(ep, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot resolve %pISpc: error %d", &ss,
				 ev->status);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "no route to %pISpc: error %d", &ss,
				 ev->status);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "%pISpc unreachable: error %d", &ss,
				 ev->status);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "connection to %pISpc failed: error %d", &ss,
				 ev->status);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "disconnected by node %u", conn->peer_id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "RDMA device removed");
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "local address changed");
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		break;
	}
out:
	mutex_unlock(&conn->lock);
	return 0;
}

static struct rdmalog_conn *rdmalog_conn_find(u32 peer_id)
{
	struct rdmalog_conn *conn;

	lockdep_assert_held(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list)
		if (conn->peer_id == peer_id)
			return conn;
	return NULL;
}

/* A refusal of a request from a known peer, on this side. */
static void rdmalog_conn_refused_here(struct rdmalog_conn *conn, u8 reason,
				      const char *why)
{
	mutex_lock(&conn->lock);
	if (!conn->stopping && conn->activated) {
		conn->refusals++;
		if (conn->last_reason != reason)
			pr_warn_ratelimited("node %u: refused node %u: %s\n",
					    conn->local.node_id, conn->peer_id,
					    why);
		conn->last_reason = reason;
		conn->refusal = reason;
		/* A working connection is not disturbed by an impostor. */
		if (conn->state != RDMALOG_PEER_CONNECTED) {
			rdmalog_conn_set_msg(conn, "refused node %u: %s",
					     conn->peer_id, why);
			rdmalog_conn_change_state(conn, RDMALOG_PEER_REFUSED,
						  false);
		}
	}
	mutex_unlock(&conn->lock);
}

/* A valid knock: connect now unless already at it. */
static void rdmalog_conn_knocked(struct rdmalog_conn *conn)
{
	mutex_lock(&conn->lock);
	if (!conn->stopping && conn->activated && !conn->ep) {
		conn->backoff_ms = rdmalog_conn_min_backoff(conn);
		mod_delayed_work(rdmalog_conn_wq, &conn->connect_work, 0);
	}
	conn->last_reason = RDMALOG_REJ_NONE;
	mutex_unlock(&conn->lock);
}

/*
 * Accept a checked request of @conn on @id. Return: 0 (the endpoint owns
 * @id now), or non-zero after rejecting: the rdma_cm destroys @id.
 */
static int rdmalog_conn_accept(struct rdmalog_conn *conn,
			       struct rdma_cm_id *id,
			       const struct rdmalog_cm_hs *peer_hs,
			       struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct rdmalog_cm_hs hs;
	struct rdmalog_ep *ep, *old;
	int err;

	mutex_lock(&conn->lock);
	if (conn->stopping || !conn->activated) {
		rdmalog_reject(id, RDMALOG_REJ_NOT_READY, 0,
			       conn->local.node_id);
		err = -ECONNREFUSED;
		goto out_unlock;
	}
	ep = rdmalog_ep_alloc(conn, true, false);
	if (!ep) {
		rdmalog_reject(id, RDMALOG_REJ_NO_RESOURCES, 0,
			       conn->local.node_id);
		err = -ENOMEM;
		goto out_unlock;
	}
	ep->cm_id = id;
	ep->peer_recv_depth = le16_to_cpu(peer_hs->recv_depth);
	ep->credits = ep->peer_recv_depth;
	err = rdmalog_ep_setup(ep);
	if (err) {
		pr_warn_ratelimited("node %u: cannot accept node %u: %s\n",
				    conn->local.node_id, conn->peer_id,
				    conn->msg);
		rdmalog_reject(id, RDMALOG_REJ_NO_RESOURCES, 0,
			       conn->local.node_id);
		goto err_discard;
	}

	memcpy(ep->nonce[0], peer_hs->nonce, sizeof(ep->nonce[0]));
	get_random_bytes(ep->nonce[1], sizeof(ep->nonce[1]));
	rdmalog_hs_fill(&conn->local, conn->peer_id, 0, ep->nonce[1], &hs);
	rdmalog_conn_params_fill(ep, &param, &hs);
	/* What the peer can take, not more than we can serve. */
	param.initiator_depth = min(param.initiator_depth,
				    ev->param.conn.responder_resources);
	param.responder_resources = min(param.responder_resources,
					ev->param.conn.initiator_depth);
	err = rdma_accept(id, &param);
	if (err) {
		rdmalog_conn_set_msg(conn, "cannot accept node %u: error %d",
				     conn->peer_id, err);
		goto err_discard;
	}
	ep->connect_sent = true;

	old = conn->ep;
	if (old)
		rdmalog_ep_close(old, old->established ?
				 RDMALOG_PEER_DISCONNECTED : RDMALOG_STATE_KEEP,
				 "replaced by a new connection from node %u",
				 conn->peer_id);
	conn->ep = ep;
	id->context = ep;
	ep->deadline = jiffies + msecs_to_jiffies(RDMALOG_ATTEMPT_TIMEOUT_MS);
	mod_delayed_work(rdmalog_conn_wq, &conn->connect_work,
			 msecs_to_jiffies(RDMALOG_ATTEMPT_TIMEOUT_MS));
	mutex_unlock(&conn->lock);
	return 0;

err_discard:
	/* The rdma_cm destroys @id when we return non-zero. */
	rdmalog_ep_discard(ep);
	err = err ?: -ECONNREFUSED;
out_unlock:
	mutex_unlock(&conn->lock);
	return err;
}

/* CONNECT_REQUEST on a new id of the listener. */
static int rdmalog_conn_request(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.dst_addr;
	struct rdmalog_conn_local local = {};
	struct rdmalog_conn *conn = NULL;
	struct rdmalog_cm_hs hs = {};
	u64 detail = 0;
	bool knock = false;
	char why[128];
	u8 reason;
	int ret;

	mutex_lock(&rdmalog_conns.mutex);
	if (!rdmalog_conns.running) {
		mutex_unlock(&rdmalog_conns.mutex);
		rdmalog_reject(id, RDMALOG_REJ_NOT_READY, 0, 0);
		return -ECONNREFUSED;
	}
	local = rdmalog_conns.p.local;

	reason = rdmalog_hs_parse(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &hs, &detail);
	if (!reason) {
		knock = hs.flags & RDMALOG_CM_F_KNOCK;
		conn = rdmalog_conn_find(le16_to_cpu(hs.src_node));
		if (conn)
			kref_get(&conn->ref);	/* put below */
		reason = rdmalog_hs_check_identity(&local, &hs, &detail);
	}
	mutex_unlock(&rdmalog_conns.mutex);

	if (!reason && !conn)
		reason = RDMALOG_REJ_UNKNOWN_PEER;
	if (!reason && !rdmalog_sa_is(src, &conn->addr))
		reason = RDMALOG_REJ_ADDR_MISMATCH;
	if (!reason && knock != conn->active)
		reason = RDMALOG_REJ_DIRECTION;
	if (!reason)
		reason = rdmalog_hs_check_params(&local, &hs, &detail);
	if (!reason)
		reason = rdmalog_hs_check_auth(&local, &hs, &detail);

	if (reason) {
		rdmalog_refusal_text(&local, reason, &hs, why, sizeof(why));
		if (conn) {
			rdmalog_conn_refused_here(conn, reason, why);
		} else if (__ratelimit(&rdmalog_stranger_rs)) {
			if (reason == RDMALOG_REJ_UNKNOWN_PEER)
				snprintf(why, sizeof(why),
					 "node %u is not a configured peer",
					 le16_to_cpu(hs.src_node));
			else if (reason == RDMALOG_REJ_BAD_HANDSHAKE)
				strscpy(why, "handshake not understood",
					sizeof(why));
			else if (reason == RDMALOG_REJ_VERSION)
				strscpy(why, "protocol version not spoken",
					sizeof(why));
			pr_warn("node %u: refused a connection from %pISc: %s\n",
				local.node_id, src, why);
		}
		rdmalog_reject(id, reason, detail, local.node_id);
		ret = -ECONNREFUSED;
	} else if (knock) {
		rdmalog_reject(id, RDMALOG_REJ_KNOCK_OK, 0, local.node_id);
		rdmalog_conn_knocked(conn);
		ret = -ECONNREFUSED;
	} else {
		ret = rdmalog_conn_accept(conn, id, &hs, ev);
	}
	rdmalog_conn_put(conn);
	return ret;
}

/* Events of the listening id itself. */
static int rdmalog_listener_event(struct rdma_cm_id *id,
				  struct rdma_cm_event *ev)
{
	bool ours = false;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	mutex_lock(&rdmalog_conns.mutex);
	if (rdmalog_conns.listener == id) {
		rdmalog_conns.listener = NULL;
		strscpy(rdmalog_conns.listen_msg,
			"RDMA device of the listen address removed; retrying",
			sizeof(rdmalog_conns.listen_msg));
		mod_delayed_work(rdmalog_conn_wq, &rdmalog_conns.listen_work,
				 msecs_to_jiffies(RDMALOG_LISTEN_RETRY_MS));
		ours = true;
	}
	mutex_unlock(&rdmalog_conns.mutex);
	/* Non-zero: the rdma_cm destroys the id (we no longer hold it). */
	return ours;
}

int rdmalog_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rdmalog_conn_request(id, ev);
	if (id->context == RDMALOG_LISTENER_CTX)
		return rdmalog_listener_event(id, ev);
	return rdmalog_ep_event(id->context, ev);
}

void rdmalog_listen_work(struct work_struct *work)
{
	struct rdma_cm_id *id, *failed = NULL;
	struct sockaddr_storage ss;
	char msg[sizeof(rdmalog_conns.listen_msg)];
	int err;

	mutex_lock(&rdmalog_conns.mutex);
	if (!rdmalog_conns.running || rdmalog_conns.listener)
		goto out_unlock;
	rdmalog_addr_to_sa(&rdmalog_conns.p.local.listen,
			   rdmalog_conns.p.local.listen.port, &ss);
	id = rdma_create_id(&init_net, rdmalog_cm_handler, RDMALOG_LISTENER_CTX,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto err;
	}
	err = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!err)
		err = rdma_listen(id, RDMALOG_LISTEN_BACKLOG);
	if (err) {
		/*
		 * Destroyed after unlocking: rdma_destroy_id() takes the id's
		 * handler_mutex, which our handler holds while it takes
		 * rdmalog_conns.mutex (one lock class for every id).
		 */
		failed = id;
		goto err;
	}
	rdmalog_conns.listener = id;
	rdmalog_conns.listen_msg[0] = '\0';
	pr_info_ratelimited("node %u: listening on %pISpc\n",
			    rdmalog_conns.p.local.node_id, &ss);
	goto out_unlock;

err:
	snprintf(msg, sizeof(msg),
		 "cannot listen on %pISpc: error %d%s; retrying", &ss, err,
		 err == -EADDRNOTAVAIL || err == -ENODEV ?
		 " (no RDMA device has this address)" :
		 err == -EADDRINUSE ? " (port in use)" : "");
	if (strcmp(msg, rdmalog_conns.listen_msg)) {
		pr_warn_ratelimited("node %u: %s\n", rdmalog_conns.p.local.node_id,
				    msg);
		strscpy(rdmalog_conns.listen_msg, msg,
			sizeof(rdmalog_conns.listen_msg));
	}
	queue_delayed_work(rdmalog_conn_wq, &rdmalog_conns.listen_work,
			   msecs_to_jiffies(RDMALOG_LISTEN_RETRY_MS));
out_unlock:
	mutex_unlock(&rdmalog_conns.mutex);
	if (failed)
		rdma_destroy_id(failed);
}

/*
 * ib_client .add: an RDMA device appeared. Listen again and retry waiting
 * connections now instead of after their backoff.
 */
static int rdmalog_cm_device_added(struct ib_device *ibdev)
{
	struct rdmalog_conn *conn;

	mutex_lock(&rdmalog_conns.mutex);
	if (!rdmalog_conns.running)
		goto out_unlock;
	if (!rdmalog_conns.listener)
		mod_delayed_work(rdmalog_conn_wq, &rdmalog_conns.listen_work, 0);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		if (!conn->stopping && conn->activated && !conn->ep) {
			conn->backoff_ms = rdmalog_conn_min_backoff(conn);
			mod_delayed_work(rdmalog_conn_wq, &conn->connect_work,
					 msecs_to_jiffies(RDMALOG_BACKOFF_MIN_MS));
		}
		mutex_unlock(&conn->lock);
	}
out_unlock:
	mutex_unlock(&rdmalog_conns.mutex);
	rdmalog_ballot_device_added();
	return 0;
}

/*
 * Close every endpoint on @ibdev and the listener if it is bound to it,
 * and return once they are released. rdma_dev.c refuses new device
 * objects for @ibdev meanwhile, so nothing new can start on it.
 */
static void rdmalog_cm_device_removed(struct ib_device *ibdev)
{
	struct rdma_cm_id *listener = NULL;
	struct rdmalog_conn *conn;

	mutex_lock(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		if (conn->ep && conn->ep->ibdev == ibdev)
			rdmalog_ep_close(conn->ep, RDMALOG_PEER_DISCONNECTED,
					 "RDMA device %s removed",
					 dev_name(&ibdev->dev));
		mutex_unlock(&conn->lock);
	}
	if (rdmalog_conns.listener &&
	    rdmalog_conns.listener->device == ibdev) {
		listener = rdmalog_conns.listener;
		rdmalog_conns.listener = NULL;
		snprintf(rdmalog_conns.listen_msg,
			 sizeof(rdmalog_conns.listen_msg),
			 "RDMA device %s of the listen address removed; retrying",
			 dev_name(&ibdev->dev));
		pr_info_ratelimited("node %u: %s\n", rdmalog_conns.p.local.node_id,
				    rdmalog_conns.listen_msg);
		if (rdmalog_conns.running)
			mod_delayed_work(rdmalog_conn_wq,
					 &rdmalog_conns.listen_work,
					 msecs_to_jiffies(RDMALOG_LISTEN_RETRY_MS));
	}
	mutex_unlock(&rdmalog_conns.mutex);

	if (listener)
		rdma_destroy_id(listener);
	rdmalog_ballot_device_removed(ibdev);
	rdmalog_conn_wait_closed();
}

/*
 * ib_client .remove: called before @ibdev goes (rdma link delete, driver
 * unload, ib_unregister_client() at module exit), in process context
 * without ib_core locks held; must not return while anything of ours
 * uses it.
 */
static void rdmalog_cm_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct rdmalog_rdev_removal removal;

	rdmalog_rdev_removal_start(&removal, ibdev);
	rdmalog_cm_device_removed(ibdev);
	rdmalog_rdev_removal_finish(&removal);
}

struct ib_client rdmalog_ib_client = {
	.name = "rdmalog",
	.add = rdmalog_cm_device_added,
	.remove = rdmalog_cm_ib_remove,
};
