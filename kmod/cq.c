// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - a connection's completion queue, which a committing writer
 * may reap itself.
 *
 * ib_alloc_cq() reaps a CQ in one context only (softirq for ours). A
 * writer waiting for a commit that is a round trip away would rather
 * take the completion itself than sleep through an interrupt, a softirq
 * and a wakeup (log.c's spin, through replication's poll hook). So an
 * endpoint's CQ is created with ib_create_cq() and reaped here, by
 * whoever owns it: the irq_poll softirq that its completion event
 * schedules, or a writer spinning for its commit, which owns the CQ for
 * the whole spin (rdmalog_cq_own() to rdmalog_cq_release(), reaping with
 * rdmalog_cq_reap_owned()), so that the completion it waits for is its
 * own to run, not the softirq's. One owner at a time
 * (%RDMALOG_CQ_OWNED), so completions run in CQ order and one at a time,
 * exactly as ib_alloc_cq()'s, and with BH disabled in both cases (their
 * handlers are written for softirq).
 *
 * No completion event is lost: the CQ is armed except while the softirq
 * reaper is scheduled or running, and that reaper arms it again (asking
 * for missed events) once it has taken everything. A reaper that finds
 * the CQ owned by a writer leaves it to the writer, and says so
 * (%RDMALOG_CQ_MISSED): the writer arms it and, if completions came
 * meanwhile, schedules the reaper when it lets go. So a writer owns CQs
 * with preemption off and for a bounded spin only (repl.c's busy poll):
 * one scheduled out while it owned them would hold every completion of
 * those connections until it ran again.
 */
#include <linux/bitops.h>
#include <linux/bottom_half.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>

#include "cq.h"

/* Reaped per softirq run before irq_poll runs another poller. */
#define RDMALOG_CQ_BUDGET	256

enum {
	RDMALOG_CQ_OWNED,
	RDMALOG_CQ_MISSED,
	RDMALOG_CQ_DYING,
};

/* Run up to @budget completions. The caller owns @rcq, BH disabled. */
static int rdmalog_cq_reap(struct rdmalog_cq *rcq, int budget)
{
	int done = 0, n, i;

	while (done < budget) {
		n = ib_poll_cq(rcq->cq, min(RDMALOG_CQ_BATCH, budget - done),
			       rcq->wc);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct ib_wc *wc = &rcq->wc[i];

			if (wc->wr_cqe)
				wc->wr_cqe->done(rcq->cq, wc);
			else
				WARN_ON_ONCE(wc->status == IB_WC_SUCCESS);
		}
		done += n;
		if (n < RDMALOG_CQ_BATCH)
			break;
	}
	return done;
}

/* Arm the CQ; true when completions came before it was armed. */
static bool rdmalog_cq_arm(struct rdmalog_cq *rcq)
{
	return ib_req_notify_cq(rcq->cq, IB_CQ_NEXT_COMP |
				IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

static int rdmalog_cq_iop(struct irq_poll *iop, int budget)
{
	struct rdmalog_cq *rcq = container_of(iop, struct rdmalog_cq, iop);
	int n;

	if (test_and_set_bit_lock(RDMALOG_CQ_OWNED, &rcq->flags)) {
		/* A writer reaps: it arms the CQ when it lets go. */
		set_bit(RDMALOG_CQ_MISSED, &rcq->flags);
		irq_poll_complete(iop);
		/* ... unless it let go before it could see the bit */
		if (!test_and_set_bit_lock(RDMALOG_CQ_OWNED, &rcq->flags)) {
			clear_bit(RDMALOG_CQ_MISSED, &rcq->flags);
			clear_bit_unlock(RDMALOG_CQ_OWNED, &rcq->flags);
			irq_poll_sched(iop);
		}
		return 0;
	}
	n = rdmalog_cq_reap(rcq, budget);
	clear_bit_unlock(RDMALOG_CQ_OWNED, &rcq->flags);
	if (n < budget) {
		irq_poll_complete(iop);
		if (rdmalog_cq_arm(rcq))
			irq_poll_sched(iop);
	}
	return n;
}

/* Completion event (any context the driver calls it from). */
static void rdmalog_cq_event(struct ib_cq *cq, void *ctx)
{
	struct rdmalog_cq *rcq = ctx;

	irq_poll_sched(&rcq->iop);
}

bool rdmalog_cq_own(struct rdmalog_cq *rcq)
{
	if (test_bit(RDMALOG_CQ_DYING, &rcq->flags) ||
	    test_and_set_bit_lock(RDMALOG_CQ_OWNED, &rcq->flags))
		return false;
	return true;
}

int rdmalog_cq_reap_owned(struct rdmalog_cq *rcq, int budget)
{
	int n;

	/* rdmalog_cq_destroy() waits for us: let go soon */
	if (test_bit(RDMALOG_CQ_DYING, &rcq->flags))
		return -ENODEV;
	local_bh_disable();
	n = rdmalog_cq_reap(rcq, budget);
	local_bh_enable();
	return n;
}

void rdmalog_cq_release(struct rdmalog_cq *rcq)
{
	local_bh_disable();
	clear_bit_unlock(RDMALOG_CQ_OWNED, &rcq->flags);
	/* The reaper skipped its turn for us: arm, and reap what came. */
	if (test_and_clear_bit(RDMALOG_CQ_MISSED, &rcq->flags) &&
	    !test_bit(RDMALOG_CQ_DYING, &rcq->flags) && rdmalog_cq_arm(rcq))
		irq_poll_sched(&rcq->iop);
	local_bh_enable();
}

int rdmalog_cq_create(struct rdmalog_cq *rcq, struct ib_device *dev,
		      int nr_cqe, int vector)
{
	struct ib_cq_init_attr attr = {
		.cqe = nr_cqe,
		.comp_vector = vector,
	};
	struct ib_cq *cq;

	rcq->flags = 0;
	cq = ib_create_cq(dev, rdmalog_cq_event, NULL, rcq, &attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	rcq->cq = cq;
	irq_poll_init(&rcq->iop, RDMALOG_CQ_BUDGET, rdmalog_cq_iop);
	/* Nothing was posted yet: nothing to reap. */
	rdmalog_cq_arm(rcq);
	return 0;
}

void rdmalog_cq_destroy(struct rdmalog_cq *rcq)
{
	if (!rcq->cq)
		return;
	set_bit(RDMALOG_CQ_DYING, &rcq->flags);
	/* A writer that owns it lets go soon: it reaps a batch at most. */
	while (test_and_set_bit_lock(RDMALOG_CQ_OWNED, &rcq->flags))
		usleep_range(10, 100);
	/*
	 * Whoever let go of it last (a writer's release, the softirq
	 * reaper) may still arm it, after it let go and before it saw
	 * DYING; both do so with BH disabled, an RCU read-side section:
	 * wait for them. No one owns it again.
	 */
	synchronize_rcu();
	irq_poll_disable(&rcq->iop);
	ib_destroy_cq(rcq->cq);
	rcq->cq = NULL;
}
