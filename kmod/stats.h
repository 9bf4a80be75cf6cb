/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - module-wide counters (enum rdmalog_stat), per-CPU, summed on
 * read. Counted since the module was loaded; never reset.
 */
#ifndef _RDMALOG_STATS_H
#define _RDMALOG_STATS_H

#include <linux/types.h>
#include "../uapi/rdmalog_genl.h"

void rdmalog_stats_add(enum rdmalog_stat stat, u64 val);

static inline void rdmalog_stats_inc(enum rdmalog_stat stat)
{
	rdmalog_stats_add(stat, 1);
}

/*
 * The LIVE_ gauges: every object of the kind counts +1 when it is
 * created and -1 when it is freed (per-CPU like the counters: the sum
 * wraps back to the right value). rdmalog_stats_check_exit() warns about
 * any gauge that is not back to 0 when the module unloads.
 */
static inline void rdmalog_live_add(enum rdmalog_stat stat, long n)
{
	rdmalog_stats_add(stat, (u64)n);
}

void rdmalog_stats_read(u64 out[__RDMALOG_STAT_MAX]);
void rdmalog_stats_check_exit(void);

#endif /* _RDMALOG_STATS_H */
