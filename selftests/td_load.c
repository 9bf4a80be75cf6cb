// SPDX-License-Identifier: GPL-2.0
/*
 * td_load - the steady load of the teardown suite (selftests/suites/teardown.py)
 *
 *   td_load -w [-p PREFIX] [-s SIZE] [-i INTERVAL_MS]
 *   td_load -r
 *
 * -w  writer: appends records to /dev/rdmalog until SIGTERM or SIGINT, one
 *     write(2) each, INTERVAL_MS (default 20) apart. The i-th payload (from
 *     0) is "PREFIX:i:" padded with letters to SIZE bytes (default 100; cut
 *     to SIZE if longer), so every record of a run is unique. Prints one
 *     line per write, with how long the call took:
 *       "OK i LSN MS"        the record is committed at LSN
 *       "OKNOLSN i ERRNO-NAME MS" committed, but RDMALOG_IOC_LAST_LSN
 *                            failed (ENETDOWN: the log went down since)
 *       "ERR i ERRNO-NAME MS" the call failed
 *     After ENETDOWN (the log went down) the descriptor is closed and
 *     reopened; while open(2) fails it prints "OPENERR ERRNO-NAME" once
 *     per errno change and retries every INTERVAL_MS.
 * -r  reader: follows the log from its first record with blocking reads and
 *     prints "R LSN" for every record and "RERR ERRNO-NAME MS" for every
 *     failed read (MS: how long the call blocked); reopens after ENETDOWN
 *     and seeks to the first retained record after ERANGE.
 *
 * SIGTERM or SIGINT ends both: a writer finishes the write(2) in progress
 * (the signal is handled, so a committed-or-not outcome is always
 * learnt), a reader's blocked read(2) returns EINTR. Then it prints
 *   "END attempts A ok O maxms M"
 * (M: the longest write(2) or failed read(2)) and exits with 0. Usage
 * errors exit with 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "rdmalog.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);	/* EINTR on SIGTERM: fine */
}

/* Opens the device, retrying until it works or a signal asks to stop. */
static int open_dev(int flags, unsigned int interval)
{
	int last = 0;

	while (!stop) {
		int fd = open("/dev/" RDMALOG_DEV_NAME, flags);

		if (fd >= 0)
			return fd;
		if (errno != last)
			printf("OPENERR %s\n", strerrorname_np(errno));
		last = errno;
		nap(interval);
	}
	return -1;
}

static int writer(const char *prefix, size_t size, unsigned int interval)
{
	uint64_t i, ok = 0, maxms = 0;
	char *buf = malloc(size + 64);
	int fd = -1;

	if (!buf)
		return 1;
	for (i = 0; !stop; i++) {
		uint64_t t0, ms, lsn = 0;
		size_t n, k;
		ssize_t r;
		int e;

		if (fd < 0) {
			fd = open_dev(O_RDWR, interval);
			if (fd < 0)
				break;
		}
		n = (size_t)snprintf(buf, size + 64, "%s:%llu:", prefix,
				     (unsigned long long)i);
		for (k = n; k < size; k++)
			buf[k] = (char)('a' + (i * 31 + k * 7) % 26);
		n = n > size ? n : size;
		t0 = now_ms();
		r = write(fd, buf, n);
		e = errno;
		ms = now_ms() - t0;
		if (ms > maxms)
			maxms = ms;
		if (r == (ssize_t)n) {
			if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0) {
				/* committed, LSN unknown (the log went down) */
				ok++;
				printf("OKNOLSN %llu %s %llu\n",
				       (unsigned long long)i,
				       strerrorname_np(errno),
				       (unsigned long long)ms);
				continue;
			}
			ok++;
			printf("OK %llu %llu %llu\n", (unsigned long long)i,
			       (unsigned long long)lsn, (unsigned long long)ms);
		} else {
			printf("ERR %llu %s %llu\n", (unsigned long long)i,
			       r < 0 ? strerrorname_np(e) : "SHORT",
			       (unsigned long long)ms);
			if (r < 0 && e == ENETDOWN) {
				close(fd);
				fd = -1;
			}
		}
		if (!stop)
			nap(interval);
	}
	printf("END attempts %llu ok %llu maxms %llu\n", (unsigned long long)i,
	       (unsigned long long)ok, (unsigned long long)maxms);
	if (fd >= 0)
		close(fd);
	free(buf);
	return 0;
}

static int reader(void)
{
	static char buf[1 << 20];	/* max_record is at most 1 MiB here */
	uint64_t reads = 0, maxms = 0;
	int fd = -1;

	while (!stop) {
		uint64_t t0, ms;
		ssize_t r;
		off_t pos;
		int e;

		if (fd < 0) {
			fd = open_dev(O_RDONLY, 100);
			if (fd < 0)
				break;
		}
		pos = lseek(fd, 0, SEEK_CUR);
		t0 = now_ms();
		r = read(fd, buf, sizeof(buf));
		e = errno;
		ms = now_ms() - t0;
		if (r >= 0) {
			reads++;
			printf("R %lld\n", (long long)pos);
			continue;
		}
		if (e == EINTR && stop)
			break;
		if (ms > maxms)
			maxms = ms;
		printf("RERR %s %llu\n", strerrorname_np(e),
		       (unsigned long long)ms);
		if (e == ENETDOWN) {
			close(fd);
			fd = -1;
		} else if (e == ERANGE) {
			struct rdmalog_state st = { .version = RDMALOG_IOC_VERSION };

			if (ioctl(fd, RDMALOG_IOC_GET_STATE, &st) == 0)
				lseek(fd, (off_t)st.first_lsn, SEEK_SET);
		} else {
			nap(100);
		}
	}
	printf("END attempts %llu ok %llu maxms %llu\n",
	       (unsigned long long)reads, (unsigned long long)reads,
	       (unsigned long long)maxms);
	if (fd >= 0)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long size = 100, interval = 20;
	const char *prefix = "td";
	struct sigaction sa;
	int mode = 0, c;
	char *end;

	while ((c = getopt(argc, argv, "wrp:s:i:")) != -1) {
		switch (c) {
		case 'w':
		case 'r':
			mode = c;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 's':
			size = strtoul(optarg, &end, 0);
			if (*end || !size || size > 4096)
				goto bad;
			break;
		case 'i':
			interval = strtoul(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		default:
			goto bad;
		}
	}
	if (!mode || optind != argc)
		goto bad;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: a blocked read returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return mode == 'w' ? writer(prefix, size, interval) : reader();
bad:
	fprintf(stderr, "usage: td_load -w [-p PREFIX] [-s SIZE] [-i MS] | td_load -r\n");
	return 2;
}
