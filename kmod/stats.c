// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - module-wide counters.
 *
 * One array of u64 per CPU, bumped with this_cpu_add() (safe against
 * preemption and interrupts on the local CPU, so any context may count)
 * and summed over the possible CPUs on read. No lock: a sum is not a
 * snapshot across counters, and on 32-bit a reader racing a writer may
 * see a torn value of one CPU's counter; both are acceptable for
 * statistics.
 */
#include <linux/bug.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/string.h>

#include "stats.h"

static DEFINE_PER_CPU(u64, rdmalog_stats[__RDMALOG_STAT_MAX]);

void rdmalog_stats_add(enum rdmalog_stat stat, u64 val)
{
	if (WARN_ON_ONCE((unsigned int)stat >= __RDMALOG_STAT_MAX))
		return;
	this_cpu_add(rdmalog_stats[stat], val);
}

void rdmalog_stats_read(u64 out[__RDMALOG_STAT_MAX])
{
	int cpu, i;

	memset(out, 0, sizeof(u64) * __RDMALOG_STAT_MAX);
	for_each_possible_cpu(cpu)
		for (i = 0; i < __RDMALOG_STAT_MAX; i++)
			out[i] += per_cpu(rdmalog_stats[i], cpu);
}
