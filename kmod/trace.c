// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the tracepoints declared in trace.h, instantiated once here.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
