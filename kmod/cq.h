/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - a connection's completion queue, which a committing writer
 * may reap itself (cq.c).
 */
#ifndef _RDMALOG_CQ_H
#define _RDMALOG_CQ_H

#include <linux/irq_poll.h>
#include <rdma/ib_verbs.h>

/* Completions taken from the device per ib_poll_cq(). */
#define RDMALOG_CQ_BATCH	16

/**
 * struct rdmalog_cq - a CQ whose completions run their &ib_cqe.done from
 * softirq or from a writer's poll, one owner at a time
 * @cq: the CQ (ib_create_cq()); its context is the &struct rdmalog_cq
 * @iop: the softirq reaper, scheduled by the CQ's completion event
 * @flags: %RDMALOG_CQ_OWNED (somebody reaps: taken with
 *	test_and_set_bit_lock()), %RDMALOG_CQ_MISSED (the softirq found it
 *	owned: the owner re-arms the CQ when it lets go),
 *	%RDMALOG_CQ_DYING (rdmalog_cq_destroy() began: nobody else reaps)
 * @wc: the owner's completions
 *
 * Lifetime: from rdmalog_cq_create() to rdmalog_cq_destroy(), which runs
 * after the QPs on it are drained and destroyed; the memory is its
 * owner's (the endpoint, which pollers hold a reference to).
 */
struct rdmalog_cq {
	struct ib_cq *cq;
	struct irq_poll iop;
	unsigned long flags;
	struct ib_wc wc[RDMALOG_CQ_BATCH];
};

/**
 * rdmalog_cq_create() - create and arm a CQ of @nr_cqe entries on
 * completion vector @vector of @dev
 * Return: 0 or a negative errno.
 */
int rdmalog_cq_create(struct rdmalog_cq *rcq, struct ib_device *dev,
		      int nr_cqe, int vector);

/**
 * rdmalog_cq_destroy() - wait for the reaper and any poller to be done,
 * then destroy the CQ (no QP left on it). Process context. Idempotent.
 */
void rdmalog_cq_destroy(struct rdmalog_cq *rcq);

/**
 * rdmalog_cq_own() - become the CQ's reaper until rdmalog_cq_release():
 * meanwhile the softirq reaper leaves its completions to the caller
 * Return: false when somebody else reaps or the CQ is going away.
 * Process context; the caller must not sleep until it lets go.
 */
bool rdmalog_cq_own(struct rdmalog_cq *rcq);

/**
 * rdmalog_cq_reap_owned() - run up to @budget completions of an owned
 * CQ now, with BH disabled (as from softirq)
 * Return: how many, or -ENODEV when the CQ is going away (let it go).
 */
int rdmalog_cq_reap_owned(struct rdmalog_cq *rcq, int budget);

/**
 * rdmalog_cq_release() - stop reaping an owned CQ; what came meanwhile
 * and was not reaped goes to the softirq reaper
 */
void rdmalog_cq_release(struct rdmalog_cq *rcq);

#endif /* _RDMALOG_CQ_H */
