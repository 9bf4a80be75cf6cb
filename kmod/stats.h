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

void rdmalog_stats_read(u64 out[__RDMALOG_STAT_MAX]);

#endif /* _RDMALOG_STATS_H */
