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
#include <linux/printk.h>
#include <linux/string.h>

#include "stats.h"

static DEFINE_PER_CPU(u64, rdmalog_stats[__RDMALOG_STAT_MAX]);

void rdmalog_stats_add(enum rdmalog_stat stat, u64 val)
{
	if (WARN_ON_ONCE((unsigned int)stat >= __RDMALOG_STAT_MAX))
		return;
	this_cpu_add(rdmalog_stats[stat], val);
}

static const char *const rdmalog_live_names[__RDMALOG_STAT_MAX] = {
	[RDMALOG_STAT_LIVE_LOGS] = "logs",
	[RDMALOG_STAT_LIVE_RING_PAGES] = "ring pages",
	[RDMALOG_STAT_LIVE_CONNS] = "connections",
	[RDMALOG_STAT_LIVE_EPS] = "endpoints",
	[RDMALOG_STAT_LIVE_QPS] = "queue pairs",
	[RDMALOG_STAT_LIVE_MRS] = "memory regions",
	[RDMALOG_STAT_LIVE_FWD_REQS] = "forwarded appends",
	[RDMALOG_STAT_LIVE_FWD_BUFS] = "forwarding buffers",
	[RDMALOG_STAT_LIVE_PEERS] = "peers",
};

/**
 * rdmalog_stats_check_exit() - report objects left when the module unloads
 *
 * Called last in module exit, when every object must be gone: a gauge
 * that is not 0 is a leak (or a miscount), reported with a WARN so that
 * a test kernel with panic_on_warn stops right there.
 */
void rdmalog_stats_check_exit(void)
{
	u64 v[__RDMALOG_STAT_MAX];
	bool left = false;
	int i;

	rdmalog_stats_read(v);
	for (i = 0; i < __RDMALOG_STAT_MAX; i++) {
		if (!rdmalog_live_names[i] || !v[i])
			continue;
		pr_err("%lld %s left at exit\n", (long long)v[i],
		       rdmalog_live_names[i]);
		left = true;
	}
	WARN(left, "rdmalog: objects left at exit\n");
}

void rdmalog_stats_read(u64 out[__RDMALOG_STAT_MAX])
{
	int cpu, i;

	memset(out, 0, sizeof(u64) * __RDMALOG_STAT_MAX);
	for_each_possible_cpu(cpu)
		for (i = 0; i < __RDMALOG_STAT_MAX; i++)
			out[i] += per_cpu(rdmalog_stats[i], cpu);
}
