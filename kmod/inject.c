// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - test-only delay points (see inject.h). Reading a parameter
 * is a READ_ONCE(); setting one through sysfs takes effect at the next
 * pass through the point.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/sysfs.h>

#include "inject.h"

static unsigned int rdmalog_inject_ms[__RDMALOG_INJ_MAX];

module_param_named(inject_cu_post_ms, rdmalog_inject_ms[RDMALOG_INJ_CU_POST],
		   uint, 0600);
MODULE_PARM_DESC(inject_cu_post_ms,
		 "test only: delay (ms) between reserving and posting a catch-up READ");
module_param_named(inject_cu_grant_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_CU_GRANT], uint, 0600);
MODULE_PARM_DESC(inject_cu_grant_ms,
		 "test only: delay (ms) while mapping a catch-up read grant");

module_param_named(inject_cu_ring_ms, rdmalog_inject_ms[RDMALOG_INJ_CU_RING],
		   uint, 0600);
MODULE_PARM_DESC(inject_cu_ring_ms,
		 "test only: delay (ms) before the primary judges a RING");
module_param_named(inject_cu_join_ms, rdmalog_inject_ms[RDMALOG_INJ_CU_JOIN],
		   uint, 0600);
MODULE_PARM_DESC(inject_cu_join_ms,
		 "test only: delay (ms) after a backup sent its JOIN");

module_param_named(inject_log_truncate_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_LOG_TRUNCATE], uint, 0600);
MODULE_PARM_DESC(inject_log_truncate_ms,
		 "test only: delay (ms) before a timed-out writer truncates");
module_param_named(inject_log_fill_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_LOG_FILL], uint, 0600);
MODULE_PARM_DESC(inject_log_fill_ms,
		 "test only: delay (ms) between reserving ring space and writing");
module_param_named(inject_repl_apply_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_REPL_APPLY], uint, 0600);
MODULE_PARM_DESC(inject_repl_apply_ms,
		 "test only: delay (ms) before a backup takes a notice");
module_param_named(inject_notice_take_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_NOTICE_TAKE], uint, 0600);
MODULE_PARM_DESC(inject_notice_take_ms,
		 "test only: delay (ms) in a backup's take of a notice, between the NOTIFY's number and the block");
module_param_named(inject_fwd_answer_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_FWD_ANSWER], uint, 0600);
MODULE_PARM_DESC(inject_fwd_answer_ms,
		 "test only: delay (ms) before the primary answers a FWD");
module_param_named(inject_elect_lead_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_ELECT_LEAD], uint, 0600);
MODULE_PARM_DESC(inject_elect_lead_ms,
		 "test only: delay (ms) between winning an election and leading");
module_param_named(inject_elect_answer_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_ELECT_ANSWER], uint, 0600);
MODULE_PARM_DESC(inject_elect_answer_ms,
		 "test only: delay (ms) before a voter judges a VOTE_REQ");
module_param_named(inject_elect_beat_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_ELECT_BEAT], uint, 0600);
MODULE_PARM_DESC(inject_elect_beat_ms,
		 "test only: delay (ms) of the election's heartbeat work");
module_param_named(inject_elect_cas_ms,
		   rdmalog_inject_ms[RDMALOG_INJ_ELECT_CAS], uint, 0600);
MODULE_PARM_DESC(inject_elect_cas_ms,
		 "test only: delay (ms) between a candidate's judging a peer's ballot word and its compare-and-swap");

module_param_named(inject_ep_addr_ms, rdmalog_inject_ms[RDMALOG_INJ_EP_ADDR],
		   uint, 0600);
MODULE_PARM_DESC(inject_ep_addr_ms,
		 "test only: delay (ms) of an outgoing attempt whose peer's address resolved, before it is set up (blocks the node's address resolutions)");

/* Passes sleeping at a delay point now (a test waits for one). */
static atomic_t rdmalog_inject_sleeping = ATOMIC_INIT(0);

static int rdmalog_inject_sleeping_get(char *buf,
				       const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&rdmalog_inject_sleeping));
}

static const struct kernel_param_ops rdmalog_inject_sleeping_ops = {
	.get = rdmalog_inject_sleeping_get,
};

module_param_cb(inject_sleeping, &rdmalog_inject_sleeping_ops, NULL, 0400);
MODULE_PARM_DESC(inject_sleeping,
		 "test only: how many passes sleep at a delay point now");

static atomic_t rdmalog_inject_fails[__RDMALOG_INJ_FAIL_MAX];

/* An atomic_t as a module parameter: set, read, counted down. */
static int rdmalog_inject_fail_set(const char *val,
				   const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (err)
		return err;
	if (n > INT_MAX)
		return -EINVAL;
	atomic_set(kp->arg, n);
	return 0;
}

static int rdmalog_inject_fail_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops rdmalog_inject_fail_ops = {
	.set = rdmalog_inject_fail_set,
	.get = rdmalog_inject_fail_get,
};

module_param_cb(inject_ack_fail, &rdmalog_inject_fail_ops,
		&rdmalog_inject_fails[RDMALOG_INJ_FAIL_ACK], 0600);
MODULE_PARM_DESC(inject_ack_fail,
		 "test only: so many of the next ACKs are not sent (as without credit)");

module_param_cb(inject_qp_error, &rdmalog_inject_fail_ops,
		&rdmalog_inject_fails[RDMALOG_INJ_FAIL_QP_ERROR], 0600);
MODULE_PARM_DESC(inject_qp_error,
		 "test only: so many of the next heartbeats move their QP to the error state instead");

module_param_cb(inject_ballot_loopback_fail, &rdmalog_inject_fail_ops,
		&rdmalog_inject_fails[RDMALOG_INJ_FAIL_BALLOT_LOOPBACK], 0600);
MODULE_PARM_DESC(inject_ballot_loopback_fail,
		 "test only: so many of the next atomics on the ballot word's loopback fail");

module_param_cb(inject_lead_fail, &rdmalog_inject_fail_ops,
		&rdmalog_inject_fails[RDMALOG_INJ_FAIL_LEAD], 0600);
MODULE_PARM_DESC(inject_lead_fail,
		 "test only: so many of the next LEADs are not sent (as without credit)");

module_param_cb(inject_ballot_announce_stale, &rdmalog_inject_fail_ops,
		&rdmalog_inject_fails[RDMALOG_INJ_FAIL_BALLOT_ANNOUNCE], 0600);
MODULE_PARM_DESC(inject_ballot_announce_stale,
		 "test only: so many of the next HEARTBEATs announce the open ballot word's block with the sequence before the word's");

bool rdmalog_inject_fail(enum rdmalog_inject_fail_point point)
{
	return atomic_add_unless(&rdmalog_inject_fails[point], -1, 0);
}

void rdmalog_inject_delay(enum rdmalog_inject_point point)
{
	unsigned int ms = READ_ONCE(rdmalog_inject_ms[point]);

	/* not with BH disabled either (a CQ that a spinning writer reaps) */
	if (ms && in_task() && !softirq_count()) {
		might_sleep();
		atomic_inc(&rdmalog_inject_sleeping);
		msleep(ms);
		atomic_dec(&rdmalog_inject_sleeping);
	}
}
