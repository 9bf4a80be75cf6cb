// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the node's changes of role while up (Documentation/
 * protocol.rst, "Standing and leading" to "Switchover"):
 *
 * - the watch (every heartbeat, failover auto): a backup that lost its
 *   primary stands, after a pre-vote; a primary cut off from a majority
 *   steps down; the configured primary coming up joins the log its peers
 *   hold, or leads a new one when none does;
 * - standing (the watch, "node promote", a TAKEOVER) and leading with
 *   the log held, the epoch-start record;
 * - stepping down (deposed, cut off, handed over);
 * - the switchover: the primary hands the log over to a backup.
 *
 * The node's state is node.c's (node_priv.h), under its config_mutex;
 * the election itself is elect.c's, which tells this file through the
 * callbacks registered by rdmalog_node_role_init().
 */
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/random.h>
#include <linux/workqueue.h>

#include "node_priv.h"
#include "ballot.h"
#include "conn.h"
#include "elect.h"
#include "forward.h"
#include "inject.h"
#include "log.h"
#include "netlink.h"
#include "repl.h"

static void rdmalog_node_step_down(u32 kind, const char *why);
static int rdmalog_node_stand(u32 why, u32 detect_ms, u32 from,
			      u64 from_epoch, struct netlink_ext_ack *extack);
static int rdmalog_node_lead(u64 epoch, struct rdmalog_log_waiter *w,
			     u64 *es_lsn, int *es_err,
			     struct netlink_ext_ack *extack);

/*
 * The election heard a primary of a later epoch lead our log: we lead
 * @epoch no more (elect.c, under its spinlock: only queue the work).
 */
static void rdmalog_node_deposed(u64 epoch)
{
	atomic64_set(&rdmalog_node.deposed_epoch, epoch);
	schedule_work(&rdmalog_node.step_down_work);
}

/*
 * Our primary, @from, hands the log over to us with its vote in
 * @vote_epoch (elect.c, CQ handler context: only queue the work).
 */
static void rdmalog_node_takeover(u32 from, u64 vote_epoch)
{
	atomic64_set(&rdmalog_node.takeover_epoch, vote_epoch);
	atomic_set(&rdmalog_node.takeover_from, from);
	queue_work(system_highpri_wq, &rdmalog_node.takeover_work);
}

/* The election's callbacks into the node; at module init. */
void rdmalog_node_role_init(void)
{
	rdmalog_elect_set_deposed(rdmalog_node_deposed);
	rdmalog_elect_set_takeover(rdmalog_node_takeover);
	rdmalog_ballot_set_found(rdmalog_elect_found);
	rdmalog_ballot_set_unheld(rdmalog_elect_unheld);
}

/*
 * Whether this node watches: with failover auto, a backup that may lead
 * for the loss of its primary, a primary for the loss of its majority;
 * and a configured primary joining (rdmalog_node_watch_join()).
 */
static bool rdmalog_node_watches(void)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;

	if (!rdmalog_node.up)
		return false;
	/* Joining goes on to its end whatever failover is set to now. */
	if (rdmalog_node.joining)
		return true;
	if (cfg->failover != RDMALOG_FAILOVER_AUTO)
		return false;
	return cfg->role == RDMALOG_ROLE_PRIMARY || cfg->lead;
}

/* Start watching, if it should and does not already. */
void rdmalog_node_watch(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (!rdmalog_node_watches())
		return;
	rdmalog_node.primary_seen = jiffies;
	rdmalog_node.quorum_seen = jiffies;
	rdmalog_node.had_quorum = false;
	queue_delayed_work(system_highpri_wq, &rdmalog_node.watch_work,
			   msecs_to_jiffies(rdmalog_node.config.heartbeat_ms));
}

/*
 * Whether @peer stands before this node: it may lead, and its priority
 * is higher, or the same and its id lower. What its last HEARTBEAT said;
 * one not heard from counts as the defaults (priority 0, may lead). The
 * primary this node lost does not, while it is not connected: a dead one
 * stands no more (one that comes back, as a backup or cut off and then
 * reconnected, counts again).
 */
static bool rdmalog_node_stands_before(struct rdmalog_peer *peer)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_peer_info pi = {};
	u32 prio = 0;

	if (peer->conn) {
		rdmalog_conn_get_info(peer->conn, &pi);
		if (peer->node_id == rdmalog_node.last_primary &&
		    pi.state != RDMALOG_PEER_CONNECTED)
			return false;
		if (pi.has_standing) {
			if (!pi.remote_lead)
				return false;
			prio = pi.remote_priority;
		}
	}
	return prio > cfg->priority ||
	       (prio == cfg->priority && peer->node_id < cfg->node_id);
}

/*
 * How long a backup waits, after it last saw its primary, before it
 * stands: two heartbeats, and four more for each configured node that
 * stands before it (rdmalog_node_stands_before(): any of them may be
 * standing first), so that candidates rarely collide and the preferred
 * one usually wins; the primary it lost is not counted while it is not
 * connected. Its primary is declared lost by the transport after the
 * peer timeout of silence (or at once when it closes).
 */
static unsigned long rdmalog_node_stand_delay(void)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_peer *peer;
	u32 rank = 0;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	list_for_each_entry(peer, &rdmalog_node.peers, list)
		if (rdmalog_node_stands_before(peer))
			rank++;
	return msecs_to_jiffies(cfg->heartbeat_ms * (2 + 4 * rank));
}

/* A majority of the configured nodes is connected, this one counted. */
static bool rdmalog_node_reaches_majority(void)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	return rdmalog_conn_nr_live() + 1 >= (rdmalog_node.npeers + 1) / 2 + 1;
}

/*
 * A primary with failover auto must not lead into a partition: once it
 * had a majority of the configured nodes connected (itself counted) and
 * then has not had one for a peer timeout, it steps down, and its writers are told
 * (-ENOTCONN for the records waiting, forwarding for later ones). The
 * side of the partition with the majority elects a primary meanwhile.
 */
static void rdmalog_node_watch_quorum(unsigned long now)
{
	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (rdmalog_node_reaches_majority()) {
		rdmalog_node.quorum_seen = now;
		rdmalog_node.had_quorum = true;
		return;
	}
	/* Coming up, its backups may not be there yet. */
	if (!rdmalog_node.had_quorum ||
	    time_before(now, rdmalog_node.quorum_seen +
			msecs_to_jiffies(rdmalog_node.config.peer_timeout_ms)))
		return;
	rdmalog_node_step_down(RDMALOG_CHANGE_CUT_OFF,
			       "cut off from a majority of the configured nodes for the peer timeout");
}

/*
 * The configured primary came up as a backup (rdmalog_node_up()): a peer
 * that leads, or serves or follows a log, means the cluster has a log
 * already, and it joins it as a backup for good (a primary brings it the
 * log; with none, the backups that hold it elect one). When every peer
 * answered without a log, or after two peer timeouts with no peer
 * holding one, it leads a new log as the configured primary does with
 * failover manual. It never leads an empty log while a peer it reaches
 * holds one.
 */
static void rdmalog_node_watch_join(unsigned long now)
{
	const struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_node_change *ch = &rdmalog_node.change;
	struct rdmalog_conn_census c;
	struct rdmalog_elect_info ei;
	u64 epoch;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_conn_census(&c);
	rdmalog_elect_get_info(&ei);
	epoch = max3(rdmalog_node.epoch, rdmalog_conn_epoch_seen(), ei.epoch);
	if (c.with_log || rdmalog_conn_has_primary()) {
		rdmalog_node.joining = false;
		pr_info("node %u: a peer %s (epoch %llu): joins it as a backup\n",
			cfg->node_id, c.primaries ? "leads the log" :
			"holds a log", epoch);
		memset(ch, 0, sizeof(*ch));
		ch->why = RDMALOG_CHANGE_JOINED;
		ch->epoch = epoch;
		ch->done_ns = ktime_get_boottime_ns();
		return;
	}
	if (c.heard < rdmalog_node.npeers &&
	    time_before(now, rdmalog_node.join_until))
		return;
	pr_info("node %u: %u of %u peers answered, none holds a log: leads a new one\n",
		cfg->node_id, c.heard, rdmalog_node.npeers);
	rdmalog_node.joining = false;
	/* A log of no records: nothing to reconcile, no epoch-start record. */
	rdmalog_node_lead(epoch + 1, NULL, NULL, NULL, NULL);
}

/*
 * A backup with failover auto: once it had a primary in this up period
 * and has seen none for its stand delay (counted again from any vote it
 * granted: the winner needs a moment to connect), it stands for election
 * as "node promote" does. Losing restarts the count.
 */
void rdmalog_node_watch_work(struct work_struct *work)
{
	unsigned long now = jiffies, granted, silent = 0, delay = 0;
	struct rdmalog_conn_census census;
	bool stand = false;
	u32 id = 0, primary;
	int err;

	mutex_lock(&rdmalog_node.config_mutex);
	if (!rdmalog_node_watches())
		goto out_unlock;
	if (rdmalog_node.joining) {
		rdmalog_node_watch_join(now);
		goto out_requeue;
	}
	if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		rdmalog_node_watch_quorum(now);
		goto out_requeue;
	}
	rdmalog_conn_census(&census);
	primary = rdmalog_conn_primary_id();
	if (primary) {
		rdmalog_node.primary_seen = now;
		rdmalog_node.had_primary = true;
		rdmalog_node.last_primary = primary;
	} else if (census.primaries || !rdmalog_node_reaches_majority()) {
		/*
		 * A connected peer says it leads (it is about to take our
		 * ring), or we are cut off from a majority: a node that cannot
		 * reach one cannot win, and its candidacy would fence it
		 * against the primary the others keep (or elect); one that
		 * just came back must first see whether they have one. The
		 * count starts again from here.
		 */
		rdmalog_node.primary_seen = now;
	} else {
		granted = rdmalog_elect_granted_at();
		if (granted && time_after(granted, rdmalog_node.primary_seen))
			rdmalog_node.primary_seen = granted;
		silent = now - rdmalog_node.primary_seen;
		delay = rdmalog_node_stand_delay();
		stand = rdmalog_node.had_primary && silent >= delay;
	}
	id = rdmalog_node.config.node_id;
out_requeue:
	/* Not after a step-down that left the log down. */
	if (rdmalog_node_watches())
		queue_delayed_work(system_highpri_wq, &rdmalog_node.watch_work,
				   msecs_to_jiffies(rdmalog_node.config.heartbeat_ms));
out_unlock:
	mutex_unlock(&rdmalog_node.config_mutex);
	if (!stand)
		return;
	pr_info("node %u: no primary for %u ms (stand delay %u ms): stands for election\n",
		id, jiffies_to_msecs(silent), jiffies_to_msecs(delay));
	err = rdmalog_node_stand(RDMALOG_CHANGE_STOOD, jiffies_to_msecs(silent),
				 0, 0, NULL);
	if (err) {
		pr_info("node %u: did not become the primary: %d\n", id, err);
		mutex_lock(&rdmalog_node.config_mutex);
		rdmalog_node.primary_seen = jiffies;
		mutex_unlock(&rdmalog_node.config_mutex);
	}
}

/*
 * A change of role stopped serving the log and could not start again
 * (out of memory): nothing serves it, so it goes down as by "node down".
 */
static void rdmalog_node_drop_log(void)
{
	struct rdmalog_log *log = rdmalog_node.log;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	pr_warn("node %u: cannot serve its log in its new role: down\n",
		rdmalog_node.config.node_id);
	rdmalog_log_shutdown(log);
	rdmalog_node.log = NULL;
	rdmalog_node.up = false;
	rdmalog_log_put(log);
	rdmalog_netlink_notify_node(RDMALOG_EVENT_DOWN, &rdmalog_node.config,
				    rdmalog_node.epoch);
}

/*
 * The primary steps down (@why: for the kernel log) and serves the same
 * log as a backup. Its uncommitted records go (their appends fail with
 * -ENOTCONN: a new primary may commit them); its committed ones stay, and
 * the primary that leads next judges it by them (it joins, or catches
 * up). As it led, it counts as having had a primary: with failover auto
 * it stands again if none appears.
 */
static void rdmalog_node_step_down(u32 kind, const char *why)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log *log = rdmalog_node.log;
	u64 n;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	rdmalog_node_stop_serving();
	n = rdmalog_log_step_down(log);
	cfg->role = RDMALOG_ROLE_BACKUP;
	if (rdmalog_node_start_serving(log, NULL)) {
		rdmalog_node_drop_log();
		return;
	}
	pr_info("node %u: %s: steps down from epoch %llu to a backup, %llu uncommitted record%s removed\n",
		cfg->node_id, why, rdmalog_node.epoch, n, n == 1 ? "" : "s");
	memset(&rdmalog_node.change, 0, sizeof(rdmalog_node.change));
	rdmalog_node.change.why = kind;
	rdmalog_node.change.epoch = rdmalog_node.epoch;
	rdmalog_node.change.done_ns = ktime_get_boottime_ns();
	rdmalog_netlink_notify_node(RDMALOG_EVENT_ROLE, cfg,
				    rdmalog_node.epoch);
	rdmalog_node_serve(true);
	rdmalog_node.had_primary = true;
}

/*
 * We were the primary of an epoch a later primary of our log deposed
 * (rdmalog_node_deposed()): if we still lead it, step down.
 */
void rdmalog_node_step_down_work(struct work_struct *work)
{
	u64 epoch = atomic64_read(&rdmalog_node.deposed_epoch);

	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.up &&
	    rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY &&
	    rdmalog_node.epoch == epoch) {
		if (rdmalog_node.handing_over)
			rdmalog_node_step_down(RDMALOG_CHANGE_HANDED_OVER,
					       "handed the log over");
		else
			rdmalog_node_step_down(RDMALOG_CHANGE_DEPOSED,
					       "a later epoch leads its log, or is being elected");
	}
	mutex_unlock(&rdmalog_node.config_mutex);
}

/*
 * A backup won the election of @epoch: it leads now, with the log it
 * holds, and keeps its connections (Documentation/protocol.rst,
 * "Standing and leading"). No primary may hold its ring from here to the
 * end of the change (rdmalog_conn_role_begin()); the records it holds
 * beyond its commit point are published uncommitted; replication,
 * forwarding and the election take the role of primary; its epoch-start
 * record is posted (@w, @es_lsn; *@es_err: 0, or why not, -EAGAIN when
 * the ring has no room now; with @w NULL, none: a new, empty log), and
 * every kept connection whose peer knew
 * it as a backup is told by LEAD, which names the record (or closed, and
 * the peer reconnects). If the log cannot lead (a primary of a later
 * epoch reached it meanwhile, or holds its ring), it serves on as a
 * backup, its connections untouched. Return: 0 (then the caller waits
 * for the record on @w if *@es_err is 0); -EINVAL (that primary);
 * -ENETDOWN (the log is dead).
 */
static int rdmalog_node_lead(u64 epoch, struct rdmalog_log_waiter *w,
			     u64 *es_lsn, int *es_err,
			     struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	struct rdmalog_log *log = rdmalog_node.log;
	struct rdmalog_log_held held;
	u32 leads, closed;
	int err;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	err = rdmalog_conn_role_begin();
	if (err) {
		err = -EINVAL;
		goto err_msg;
	}
	err = rdmalog_log_lead(log, epoch, get_random_u64() ?: 1, &held);
	if (err)
		goto err_end;
	rdmalog_elect_note_epoch(epoch);
	rdmalog_node_change_role(RDMALOG_ROLE_PRIMARY, epoch);
	/*
	 * Before the LEADs, which name it: a backup whose ring ends where it
	 * starts writes it there itself, and its RING counts it. For a peer
	 * timeout from now on (the backups joining) every append may wait
	 * that much longer for its commit.
	 */
	if (w)
		*es_err = rdmalog_log_post_epoch_start(log, true,
						       cfg->peer_timeout_ms, w,
						       es_lsn);
	rdmalog_conn_role_end(RDMALOG_ROLE_PRIMARY, epoch, &leads, &closed);
	pr_info("node %u: leads epoch %llu from LSN %llu\n",
		cfg->node_id, epoch, held.lsn + 1);
	pr_info("node %u: epoch %llu: LEAD on %u live connections, %u closed\n",
		cfg->node_id, epoch, leads, closed);
	rdmalog_netlink_notify_node(RDMALOG_EVENT_ROLE, cfg, epoch);
	rdmalog_node_serve_kept();
	return 0;

err_end:
	/* Still a backup: a primary the change deferred is granted now. */
	rdmalog_conn_role_end(RDMALOG_ROLE_BACKUP, rdmalog_node.epoch, &leads,
			      &closed);
err_msg:
	NL_SET_ERR_MSG(extack,
		       "a primary of a later epoch took this node's log meanwhile");
	return err;
}

/* From @from to @to in milliseconds, to the nearest. */
static u32 rdmalog_node_ms_since(ktime_t from, ktime_t to)
{
	return DIV_ROUND_CLOSEST_ULL(max_t(s64, ktime_us_delta(to, from), 0),
				     USEC_PER_MSEC);
}

/*
 * rdmalog_node_stand() - stand for election and lead on a win
 * @why: &enum rdmalog_change: PROMOTED (the operator), STOOD (the watch),
 *	TOOK_OVER (its primary handed the log over)
 * @detect_ms: STOOD: how long ago it lost its primary's connection
 * @from: TOOK_OVER: that primary, whose vote in @from_epoch counts
 * @from_epoch: see @from
 * @extack: where to say why it failed; may be NULL
 *
 * The election runs without config_mutex (the node's events and the
 * device's GET_STATE and the other netlink commands go on); the change
 * of role takes it, if the up period it stood in is
 * still on. Returns once the epoch-start record is committed.
 *
 * Return: 0; -ENETDOWN (down, or went down meanwhile); -EALREADY (the
 * primary); -EPERM (configured not to lead); those of
 * rdmalog_elect_stand(); -ESTALE (won, but a primary of a later epoch
 * took the log meanwhile: it stays a backup); after the change of role,
 * those of rdmalog_log_wait_epoch_start() (-ETIMEDOUT: it leads, but
 * its epoch-start record was not committed within the commit timeout).
 */
static int rdmalog_node_stand(u32 why, u32 detect_ms, u32 from,
			      u64 from_epoch, struct netlink_ext_ack *extack)
{
	u32 join_ms = 0, id, elect_ms, ms;
	ktime_t t_stood = ktime_get();
	struct rdmalog_elect_result res;
	struct rdmalog_log_waiter w;
	struct rdmalog_log *log;
	int err = 0, es_err = 0;
	u64 lsn = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	if (!rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is down");
		err = -ENETDOWN;
	} else if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "this node is the primary");
		err = -EALREADY;
	} else if (!rdmalog_node.config.lead) {
		NL_SET_ERR_MSG(extack, "this node is configured not to lead");
		err = -EPERM;
	}
	log = rdmalog_node.log;
	id = rdmalog_node.config.node_id;
	if (!err)
		rdmalog_log_get(log);
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		return err;

	/*
	 * On its own, it first asks whether it would win: a node that only
	 * lost touch with a primary the others still follow changes nothing.
	 * The operator's promote deposes a live primary on purpose.
	 */
	if (why == RDMALOG_CHANGE_STOOD) {
		/*
		 * The ballot word stays closed from the pre-vote to the end of
		 * the candidacy (each of the two closes it): between them,
		 * with no hold, it would open again and close again, two
		 * atomics on the loopback for nothing.
		 */
		rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_STAND);
		err = rdmalog_elect_stand(&res, true, 0, 0);
	}
	if (!err)
		err = rdmalog_elect_stand(&res, false, from, from_epoch);
	if (why == RDMALOG_CHANGE_STOOD)
		rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_STAND);
	if (err) {
		/* Static text, as NL_SET_ERR_MSG() sets (it takes literals). */
		if (extack && res.msg)
			extack->_msg = res.msg;
		goto out_put;
	}
	/*
	 * The election from the call on (pre-vote, the word's close between
	 * it and the candidacy, the candidacy), reconciliation from here:
	 * the change of role is part of it. Rounded, not truncated; the
	 * reconciliation is the rest of the whole, so that their sum is the
	 * time from standing to the commit.
	 */
	elect_ms = rdmalog_node_ms_since(t_stood, ktime_get());
	rdmalog_inject_delay(RDMALOG_INJ_ELECT_LEAD);
	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.log != log) {
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = -ENETDOWN;
	} else if (rdmalog_node.config.role == RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "this node is the primary");
		err = -EALREADY;
	} else {
		err = rdmalog_node_lead(res.epoch, &w, &lsn, &es_err, extack);
		if (err == -EINVAL)
			err = -ESTALE;
	}
	/* Led (rdmalog_elect_set_role() cleared it) or not: votes again. */
	rdmalog_elect_won_done();
	if (!err) {
		struct rdmalog_node_change *ch = &rdmalog_node.change;

		ch->why = why;
		ch->epoch = res.epoch;
		ch->detect_ms = detect_ms;
		ch->elect_ms = elect_ms;
		ch->fence_ms = res.fence_ms;
		ch->reconcile_ms = 0;
		ch->done_ns = ktime_get_boottime_ns();
	}
	join_ms = rdmalog_node.config.peer_timeout_ms;
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		goto out_put;
	/*
	 * The backups grant their ring on our LEAD (or reconnect, where it
	 * could not be sent) and are sent the record when they join, unless
	 * they hold it already (it was posted before the LEADs).
	 *
	 * A ring too full for the record waits for a trim; but with no
	 * adopted record waiting for its commit there is nothing to
	 * reconcile, and the new primary leads without one (appends wait for
	 * the trim as they would anyway). It is posted then, after the LEADs.
	 */
	err = es_err;
	if (err == -EAGAIN && !rdmalog_log_adopted_pending(log)) {
		pr_info("node %u: epoch %llu: no room in the ring for an epoch-start record, and nothing to reconcile: leads without one\n",
			id, res.epoch);
		err = 0;
		lsn = 0;
	} else if (err == -EAGAIN) {
		err = rdmalog_log_post_epoch_start(log, false, join_ms, &w,
						   &lsn);
		if (!err)
			err = rdmalog_log_wait_epoch_start(log, &w);
	} else if (!err) {
		err = rdmalog_log_wait_epoch_start(log, &w);
	}
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "it leads, but its epoch-start record was not committed");
		goto out_put;
	}
	/* Their sum is the whole time, rounded once. */
	ms = rdmalog_node_ms_since(t_stood, ktime_get());
	ms = ms > elect_ms ? ms - elect_ms : 0;
	if (lsn)
		pr_info("node %u: epoch %llu: its first record, LSN %llu, is committed: election %u ms (fencing %u ms), reconciliation %u ms\n",
			id, res.epoch, lsn, elect_ms, res.fence_ms, ms);
	mutex_lock(&rdmalog_node.config_mutex);
	if (rdmalog_node.log == log && rdmalog_node.change.epoch == res.epoch) {
		rdmalog_node.change.reconcile_ms = ms;
		rdmalog_node.change.done_ns = ktime_get_boottime_ns();
	}
	mutex_unlock(&rdmalog_node.config_mutex);
out_put:
	rdmalog_log_put(log);
	return err;
}

int rdmalog_node_promote(struct netlink_ext_ack *extack)
{
	return rdmalog_node_stand(RDMALOG_CHANGE_PROMOTED, 0, 0, 0, extack);
}

/* Our primary handed the log over (rdmalog_node_takeover()): stand. */
void rdmalog_node_takeover_work(struct work_struct *work)
{
	u64 epoch = atomic64_read(&rdmalog_node.takeover_epoch);
	u32 from = atomic_read(&rdmalog_node.takeover_from);
	int err;

	pr_info("node %u: node %u hands the log over: stands in epoch %llu\n",
		READ_ONCE(rdmalog_node.config.node_id), from, epoch);
	err = rdmalog_node_stand(RDMALOG_CHANGE_TOOK_OVER, 0, from, epoch,
				 NULL);
	if (err)
		pr_info("node %u: did not take over from node %u: %d\n",
			READ_ONCE(rdmalog_node.config.node_id), from, err);
}

/* Where a switchover stands (rdmalog_node_handover_state()). */
enum rdmalog_handover {
	RDMALOG_HO_DOWN,	/* the log went down (or was replaced) */
	RDMALOG_HO_STEPPED_DOWN, /* no longer the primary: handed over */
	RDMALOG_HO_LOST,	/* the target does not replicate from us */
	RDMALOG_HO_DRAINING,	/* records unpublished, uncommitted or not
				 * on the target
				 */
	RDMALOG_HO_DRAINED,	/* every record committed and on the target */
};

/* The switchover's wait for the hand-over: how it stands now. */
static enum rdmalog_handover
rdmalog_node_handover_state(struct rdmalog_log *log, u32 target,
			    u64 *next_lsn)
{
	struct rdmalog_peer_info pi = {};
	struct rdmalog_log_state st;
	struct rdmalog_peer *peer;

	lockdep_assert_held(&rdmalog_node.config_mutex);
	if (rdmalog_node.log != log)
		return RDMALOG_HO_DOWN;
	if (rdmalog_node.config.role != RDMALOG_ROLE_PRIMARY)
		return RDMALOG_HO_STEPPED_DOWN;
	/* Found again each time: a PEER_DEL may run while we sleep. */
	peer = rdmalog_node_find_peer(target);
	if (!peer || !peer->conn)
		return RDMALOG_HO_LOST;
	/* A record reserved before the pause is not in next_lsn yet. */
	if (!rdmalog_log_quiet(log))
		return RDMALOG_HO_DRAINING;
	rdmalog_log_get_state(log, &st);
	*next_lsn = st.next_lsn;
	rdmalog_conn_get_info(peer->conn, &pi);
	if (!pi.repl.joined)
		return RDMALOG_HO_LOST;
	return st.commit_lsn == st.next_lsn && pi.repl.held_lsn >= st.next_lsn ?
	       RDMALOG_HO_DRAINED : RDMALOG_HO_DRAINING;
}

/**
 * rdmalog_node_switchover() - hand the log over to a backup (the primary)
 * @target: the backup's node id
 * @extack: where to say why it failed; may be NULL
 *
 * Planned maintenance: this primary pauses its appends (writers wait; a
 * non-blocking one gets -EAGAIN), waits until every record is committed
 * and held by @target, votes for @target in the next epoch and sends it
 * a TAKEOVER; @target stands in that epoch with the vote counted, fences
 * us, wins and leads, and we step down once we hear of it. Our paused
 * writers then fail over to forwarding (node.c's append), so they see a
 * pause, not an error. Sleeps; without config_mutex while it waits.
 *
 * Return: 0 once this node stepped down; -ENETDOWN (down, or went down);
 * -EINVAL (not the primary, or @target is this node); -ENOENT (@target
 * is not a configured peer); -ENOTCONN (@target does not replicate from
 * this node); -ETIMEDOUT (@target did not hold every record within the
 * commit timeout, or did not take over within three peer timeouts: the
 * appends resume here); those of rdmalog_elect_hand_over().
 */
int rdmalog_node_switchover(u32 target, struct netlink_ext_ack *extack)
{
	struct rdmalog_node_config *cfg = &rdmalog_node.config;
	unsigned long deadline, start = jiffies;
	struct rdmalog_peer *peer;
	u32 drain_ms = 0, late, id;
	struct rdmalog_log *log;
	bool closed = false;
	enum rdmalog_handover state;
	u64 next = 0, epoch;
	int err = 0;

	mutex_lock(&rdmalog_node.config_mutex);
	peer = rdmalog_node_find_peer(target);
	if (!rdmalog_node.up) {
		NL_SET_ERR_MSG(extack, "the log is down");
		err = -ENETDOWN;
	} else if (cfg->role != RDMALOG_ROLE_PRIMARY) {
		NL_SET_ERR_MSG(extack, "only the primary hands the log over");
		err = -EINVAL;
	} else if (target == cfg->node_id) {
		NL_SET_ERR_MSG(extack, "this node is the primary already");
		err = -EINVAL;
	} else if (!peer) {
		NL_SET_ERR_MSG(extack, "no such peer");
		err = -ENOENT;
	} else if (rdmalog_node.handing_over) {
		NL_SET_ERR_MSG(extack, "a switchover is on already");
		err = -EBUSY;
	}
	if (err) {
		mutex_unlock(&rdmalog_node.config_mutex);
		return err;
	}
	log = rdmalog_node.log;
	id = cfg->node_id;
	rdmalog_log_get(log);
	rdmalog_node.handing_over = true;
	rdmalog_log_pause(log, true, false);
	deadline = jiffies + msecs_to_jiffies(cfg->commit_timeout_ms);
	pr_info("node %u: switchover to node %u: appends paused\n", id, target);

	/* Drain; without config_mutex while it sleeps (the peer is found again). */
	for (;;) {
		state = rdmalog_node_handover_state(log, target, &next);
		if (state != RDMALOG_HO_DRAINING ||
		    time_after(jiffies, deadline))
			break;
		mutex_unlock(&rdmalog_node.config_mutex);
		usleep_range(2000, 5000);
		mutex_lock(&rdmalog_node.config_mutex);
	}
	switch (state) {
	case RDMALOG_HO_DRAINED:
		break;
	case RDMALOG_HO_DRAINING:
		NL_SET_ERR_MSG(extack,
			       "the node did not hold every record within the commit timeout");
		err = -ETIMEDOUT;
		break;
	case RDMALOG_HO_LOST:
		NL_SET_ERR_MSG(extack, "the node does not replicate from this one");
		err = -ENOTCONN;
		break;
	case RDMALOG_HO_STEPPED_DOWN:
		NL_SET_ERR_MSG(extack, "this node stepped down meanwhile");
		err = -EINVAL;
		break;
	case RDMALOG_HO_DOWN:
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = -ENETDOWN;
		break;
	}
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		goto out_resume;
	drain_ms = jiffies_to_msecs(jiffies - start);

	/*
	 * From here its writers and the FWDs it serves are refused as by a
	 * primary that stepped down: they go to the next primary. A backup's
	 * FWD still unanswered when it fences us (the target when it stands,
	 * the others when they vote) would end -ENOTCONN, an unknown
	 * outcome: close the forwarding on every connection first, so that
	 * none is (forward.c; Documentation/protocol.rst, "Switchover").
	 */
	rdmalog_log_pause(log, true, true);
	late = rdmalog_fwd_close_all(false, READ_ONCE(cfg->peer_timeout_ms));
	if (late)
		pr_info("node %u: switchover to node %u: %u peers did not confirm that forwarding closed\n",
			id, target, late);
	closed = true;
	err = rdmalog_elect_hand_over(target, next, &epoch);
	if (err) {
		NL_SET_ERR_MSG(extack, "could not hand the log over to the node");
		goto out_resume;
	}

	/* It stands, fences us and leads; we step down when we hear it. */
	deadline = jiffies + 3 * msecs_to_jiffies(cfg->peer_timeout_ms);
	for (;;) {
		mutex_lock(&rdmalog_node.config_mutex);
		state = rdmalog_node_handover_state(log, target, &next);
		mutex_unlock(&rdmalog_node.config_mutex);
		if (state == RDMALOG_HO_STEPPED_DOWN ||
		    state == RDMALOG_HO_DOWN || time_after(jiffies, deadline))
			break;
		usleep_range(5000, 10000);
	}
	if (state == RDMALOG_HO_DOWN) {
		NL_SET_ERR_MSG(extack, "the log went down meanwhile");
		err = -ENETDOWN;
	} else if (state != RDMALOG_HO_STEPPED_DOWN) {
		NL_SET_ERR_MSG(extack, "the node did not take over in time");
		err = -ETIMEDOUT;
	}
	if (!err)
		pr_info("node %u: handed the log over to node %u (epoch %llu) at LSN %llu: appends paused %u ms, draining %u ms\n",
			id, target, epoch, next,
			jiffies_to_msecs(jiffies - start), drain_ms);
out_resume:
	/*
	 * Still leading: the backups forward to us again. Before the next
	 * switchover may start (handing_over), so that this REOPEN cannot
	 * overtake its FWD_CLOSE.
	 */
	if (err && closed)
		rdmalog_fwd_close_all(true, 0);
	mutex_lock(&rdmalog_node.config_mutex);
	rdmalog_node.handing_over = false;
	rdmalog_log_pause(log, false, false);
	mutex_unlock(&rdmalog_node.config_mutex);
	if (err)
		pr_info("node %u: switchover to node %u failed (%d): appends resume\n",
			id, target, err);
	rdmalog_log_put(log);
	return err;
}
