/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog selftests: helpers shared by the kselftest programs.
 *
 * Everything here is static: each program includes it once. The programs
 * run as root inside the test VM, with rdmalogctl in PATH (override with
 * $RDMALOGCTL) and rdmalog.ko loaded.
 */
#ifndef _RDMALOG_TEST_H
#define _RDMALOG_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "rdmalog.h"
#include "rdmalog_genl.h"

/*
 * Linux 6.1's kselftest_harness.h is written for -Wall: under -Wextra its
 * SIGALRM handler has an unused parameter, and ASSERT_EQ(1, u64_value)
 * compares an int literal with an unsigned value. Neither is a problem
 * (the harness prints both sides with their own signedness), so those two
 * warnings are off for the programs that include this header.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wsign-compare"

#define RL_DEV			"/dev/" RDMALOG_DEV_NAME
#define RL_HDR_BYTES		48	/* sizeof(struct rdmalog_ring_record) */
#define RL_NOBODY		65534
/* Generous per-test timeout: the VMs run under TCG (10-50x slower). */
#define RL_TIMEOUT		180

_Static_assert(sizeof(struct rdmalog_ring_record) == RL_HDR_BYTES,
	       "ring record header is 48 bytes");

/* Bytes one record of @len payload bytes occupies in the ring. */
static inline uint64_t rl_rec_bytes(uint64_t len)
{
	return (RL_HDR_BYTES + len + RDMALOG_RECORD_ALIGN - 1) &
	       ~(uint64_t)(RDMALOG_RECORD_ALIGN - 1);
}

/* ------------------------------------------------------------------ */
/* CRC32C (Castagnoli, reflected poly 0x82F63B78, seed ~0, final xor ~0). */

/* The reference: bit by bit, straight from the definition. */
static inline uint32_t rl_crc32c_bitwise(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~0U;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78U & (0U - (crc & 1)));
	}
	return ~crc;
}

/* A table-driven variant (table built from the bitwise definition) for
 * the programs that check many megabytes; rl_crc32c_selfcheck() proves
 * both agree with the standard check value.
 */
static uint32_t rl_crc_table[256];

static inline void rl_crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78U & (0U - (c & 1)));
		rl_crc_table[i] = c;
	}
}

static inline uint32_t rl_crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~0U;

	if (!rl_crc_table[1])
		rl_crc_init();
	while (len--)
		crc = rl_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* 0 when both implementations give the CRC-32C check value. */
static inline int rl_crc32c_selfcheck(void)
{
	static const char check[] = "123456789";

	if (rl_crc32c_bitwise(check, 9) != 0xE3069283U)
		return -1;
	if (rl_crc32c(check, 9) != 0xE3069283U)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Time. */

static inline uint64_t rl_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline uint64_t rl_mono_ms(void)
{
	return rl_now_ns(CLOCK_MONOTONIC) / 1000000ULL;
}

static inline void rl_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* Shell commands. */

/*
 * Run "CMD 2>&1" with /bin/sh, collect its output in @out (NUL-terminated,
 * may be NULL) and return its exit status (128 + signal if killed, -1 if
 * it could not run).
 */
static inline int rl_sh(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int rl_sh(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[2048], sink[512];
	size_t used = 0, n;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	if (out && outlen)
		out[0] = '\0';
	fflush(stdout);
	fflush(stderr);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	for (;;) {
		if (out && used + 1 < outlen) {
			n = fread(out + used, 1, outlen - 1 - used, f);
			used += n;
			out[used] = '\0';
		} else {
			n = fread(sink, 1, sizeof(sink), f);
		}
		if (!n)
			break;
	}
	st = pclose(f);
	if (st == -1)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

static inline const char *rl_ctl_path(void)
{
	const char *p = getenv("RDMALOGCTL");

	return p && *p ? p : "rdmalogctl";
}

/* rl_sh() of "rdmalogctl ARGS". */
#define rl_ctl(out, outlen, fmt, ...) \
	rl_sh(out, outlen, "%s " fmt, rl_ctl_path(), ##__VA_ARGS__)

/*
 * Put the log in a known state with rdmalogctl: down (an "already down"
 * refusal is fine), then capacity/max-record/durability, node id 1 with
 * role primary, up: a fresh, empty log at LSN 1. Returns 0, or -1 with
 * the failing command and its output in @err.
 */
static inline int rl_log_reset(uint64_t capacity, uint32_t max_record,
			       const char *durability, char *err,
			       size_t errlen)
{
	char out[1024];
	int rc;

	rc = rl_ctl(out, sizeof(out), "node down");
	if (rc != 0 && !strcasestr(out, "already")) {
		snprintf(err, errlen, "'rdmalogctl node down' rc=%d: %s",
			 rc, out);
		return -1;
	}
	rc = rl_ctl(out, sizeof(out),
		    "log set capacity %llu max-record %u durability %s",
		    (unsigned long long)capacity, max_record, durability);
	if (rc != 0) {
		snprintf(err, errlen, "'rdmalogctl log set capacity %llu "
			 "max-record %u durability %s' rc=%d: %s",
			 (unsigned long long)capacity, max_record,
			 durability, rc, out);
		return -1;
	}
	rc = rl_ctl(out, sizeof(out), "node set id 1 role primary");
	if (rc != 0) {
		snprintf(err, errlen,
			 "'rdmalogctl node set id 1 role primary' rc=%d: %s",
			 rc, out);
		return -1;
	}
	rc = rl_ctl(out, sizeof(out), "node up");
	if (rc != 0) {
		snprintf(err, errlen, "'rdmalogctl node up' rc=%d: %s",
			 rc, out);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Device helpers. */

static inline int rl_get_state(int fd, struct rdmalog_state *st)
{
	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	return ioctl(fd, RDMALOG_IOC_GET_STATE, st);
}

/* READ_RECORD; returns the ioctl's result (-1 and errno on error). */
static inline int rl_read_record(int fd, uint64_t lsn, uint32_t flags,
				 void *buf, uint32_t buf_len,
				 struct rdmalog_read_record *rr)
{
	memset(rr, 0, sizeof(*rr));
	rr->version = RDMALOG_IOC_VERSION;
	rr->flags = flags;
	rr->lsn = lsn;
	rr->buf = (uint64_t)(uintptr_t)buf;
	rr->buf_len = buf_len;
	return ioctl(fd, RDMALOG_IOC_READ_RECORD, rr);
}

static inline int rl_trim(int fd, uint64_t lsn)
{
	return ioctl(fd, RDMALOG_IOC_TRIM, &lsn);
}

static inline uint64_t rl_last_lsn(int fd)
{
	uint64_t lsn = ~0ULL;

	if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn))
		return ~0ULL;
	return lsn;
}

static inline off_t rl_cursor(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}

/* Fill @buf with bytes derived from @seed (different seeds differ). */
static inline void rl_pattern(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* ------------------------------------------------------------------ */
/* Processes. */

/*
 * Wait until thread @tid of process @pid sleeps interruptibly ('S' in
 * /proc/PID/task/TID/stat) on 3 consecutive looks, 20 ms apart: the way to
 * tell a child is blocked in the call it announced. With @or_d, a sleep in
 * 'D' counts too (a delay point sleeps uninterruptibly). 0, or -1 on
 * timeout or when it is gone.
 */
static inline int rl_wait_asleep(pid_t pid, pid_t tid, unsigned int ms,
				 int or_d)
{
	uint64_t end = rl_mono_ms() + ms;
	char path[64], buf[512], *p;
	int seen = 0, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid,
		 tid ? tid : pid);
	while (rl_mono_ms() < end) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return -1;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (!p || !p[1] || !p[2])
			return -1;
		if (p[2] == 'Z' || p[2] == 'X')
			return -1;
		seen = p[2] == 'S' || (or_d && p[2] == 'D') ? seen + 1 : 0;
		if (seen >= 3)
			return 0;
		rl_msleep(20);
	}
	return -1;
}

static inline int rl_wait_sleeping(pid_t pid, pid_t tid, unsigned int ms)
{
	return rl_wait_asleep(pid, tid, ms, 0);
}

/*
 * waitpid() with a timeout in ms. Returns the pid, 0 on timeout (the child
 * still runs), -1 on error.
 */
static inline pid_t rl_waitpid_ms(pid_t pid, int *status, unsigned int ms)
{
	uint64_t end = rl_mono_ms() + ms;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r != 0)
			return r;
		if (rl_mono_ms() >= end)
			return 0;
		rl_msleep(10);
	}
}

/* Kill and reap a child that may still run (cleanup paths). */
static inline void rl_reap(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Exit status of a child as "exited N" / "killed by N" text. */
static inline const char *rl_status_str(int st)
{
	static char buf[64];

	if (WIFEXITED(st))
		snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "killed by signal %d",
			 WTERMSIG(st));
	else
		snprintf(buf, sizeof(buf), "status 0x%x", st);
	return buf;
}

/* CapEff of this process from /proc/self/status, or ~0 on error. */
static inline uint64_t rl_cap_eff(void)
{
	char line[256];
	unsigned long long v = ~0ULL;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return ~0ULL;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

static inline int rl_capset(uint32_t eff0, uint32_t prm0, uint32_t inh0,
			    uint32_t eff1, uint32_t prm1, uint32_t inh1)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct data[2] = {
		{ .effective = eff0, .permitted = prm0, .inheritable = inh0 },
		{ .effective = eff1, .permitted = prm1, .inheritable = inh1 },
	};

	return syscall(SYS_capset, &hdr, data);
}

/*
 * Become uid/gid 65534 with no supplementary groups and no capabilities
 * at all (effective, permitted, inheritable, ambient). 0 or -1.
 */
static inline int rl_drop_to_nobody(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (setgroups(0, NULL))
		return -1;
	if (setresgid(RL_NOBODY, RL_NOBODY, RL_NOBODY))
		return -1;
	if (setresuid(RL_NOBODY, RL_NOBODY, RL_NOBODY))
		return -1;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (rl_capset(0, 0, 0, 0, 0, 0))
		return -1;
	if (getuid() != RL_NOBODY || geteuid() != RL_NOBODY ||
	    getgid() != RL_NOBODY || rl_cap_eff() != 0)
		return -1;
	return 0;
}

/*
 * Stay root but lose CAP_NET_ADMIN (effective and permitted; the bounding
 * set too, so nothing can bring it back). 0 or -1.
 */
static inline int rl_drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct data[2];

	if (prctl(PR_CAPBSET_DROP, CAP_NET_ADMIN, 0, 0, 0))
		return -1;
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective &= ~(1U << CAP_NET_ADMIN);
	data[0].permitted &= ~(1U << CAP_NET_ADMIN);
	data[0].inheritable &= ~(1U << CAP_NET_ADMIN);
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	if (rl_cap_eff() & (1ULL << CAP_NET_ADMIN))
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Assertions on failing system calls. */

/* @expr must fail (-1) with errno @err. */
#define ASSERT_SYSERR(expr, err) do {					\
	long __r;							\
	int __e;							\
	errno = 0;							\
	__r = (long)(expr);						\
	__e = errno;							\
	ASSERT_EQ(-1, __r) {						\
		TH_LOG("%s: expected -1 (%s), got %ld", #expr,		\
		       strerrorname_np(err), __r);			\
	}								\
	ASSERT_EQ(err, __e) {						\
		TH_LOG("%s: expected %s, got %s (%s)", #expr,		\
		       strerrorname_np(err), strerrorname_np(__e),	\
		       strerror(__e));					\
	}								\
} while (0)

#define EXPECT_SYSERR(expr, err) do {					\
	long __r;							\
	int __e;							\
	errno = 0;							\
	__r = (long)(expr);						\
	__e = errno;							\
	EXPECT_EQ(-1, __r) {						\
		TH_LOG("%s: expected -1 (%s), got %ld", #expr,		\
		       strerrorname_np(err), __r);			\
	}								\
	if (__r == -1) {						\
		EXPECT_EQ(err, __e) {					\
			TH_LOG("%s: expected %s, got %s (%s)", #expr,	\
			       strerrorname_np(err),			\
			       strerrorname_np(__e), strerror(__e));	\
		}							\
	}								\
} while (0)

/* @expr must succeed (>= 0). */
#define ASSERT_SYSOK(expr) do {						\
	long __r;							\
	int __e;							\
	errno = 0;							\
	__r = (long)(expr);						\
	__e = errno;							\
	ASSERT_LE(0, __r) {						\
		TH_LOG("%s failed: %s (%s)", #expr,			\
		       strerrorname_np(__e), strerror(__e));		\
	}								\
} while (0)

#endif /* _RDMALOG_TEST_H */
