// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - test-only delay points (see inject.h). Reading a parameter
 * is a READ_ONCE(); setting one through sysfs takes effect at the next
 * pass through the point.
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>

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

module_param_named(inject_cu_join_ms, rdmalog_inject_ms[RDMALOG_INJ_CU_JOIN],
		   uint, 0600);
MODULE_PARM_DESC(inject_cu_join_ms,
		 "test only: delay (ms) after a backup sent its JOIN");

void rdmalog_inject_delay(enum rdmalog_inject_point point)
{
	unsigned int ms = READ_ONCE(rdmalog_inject_ms[point]);

	if (ms && in_task()) {
		might_sleep();
		msleep(ms);
	}
}
