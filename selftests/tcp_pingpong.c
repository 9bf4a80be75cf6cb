// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_pingpong - a TCP request/response round trip (make bench's "what a
 * user would pick instead", selftests/bench_alt.py)
 *
 *   tcp_pingpong -l [-p PORT] [-s SIZE]
 *   tcp_pingpong -c HOST [-p PORT] [-s SIZE] [-n ITERS] [-w WARMUP]
 *
 * -l  server: accept one connection, send back every SIZE-byte message it
 *     receives until the client closes, then exit 0.
 * -c  client: connect to HOST (an IPv4 address), then WARMUP + ITERS times
 *     send SIZE bytes and wait for the SIZE-byte answer; time each of the
 *     last ITERS round trips (CLOCK_MONOTONIC).
 *
 * Both sides set TCP_NODELAY (no Nagle: each message leaves at once) and
 * use blocking send()/recv(), the plain way an application does RPC over
 * TCP. Defaults: port 18600, SIZE 64, ITERS 1000, WARMUP 50.
 *
 * The client prints one JSON line:
 *   {"size":S,"iterations":N,"rtt_us":{"min":..,"mean":..,"p50":..,
 *    "p90":..,"p99":..,"max":..}}
 * Exit 0 on success, 1 on a failure (said on stderr), 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE	(1 << 20)

static void die(const char *what)
{
	fprintf(stderr, "tcp_pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: tcp_pingpong -l [-p PORT] [-s SIZE]\n"
		"       tcp_pingpong -c HOST [-p PORT] [-s SIZE] [-n ITERS] "
		"[-w WARMUP]\n");
	exit(2);
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("setsockopt TCP_NODELAY");
}

/* all of len bytes, or 0 at a clean end of stream before the first byte */
static int recv_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv");
		if (n == 0) {
			if (got == 0)
				return 0;
			errno = EPROTO;
			die("recv: short message");
		}
		got += n;
	}
	return 1;
}

static void send_all(int fd, const char *buf, size_t len)
{
	size_t sent = 0;

	while (sent < len) {
		ssize_t n = send(fd, buf + sent, len - sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("send");
		sent += n;
	}
}

static int server(int port, size_t size, char *buf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, ls, fd;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	if (setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("setsockopt SO_REUSEADDR");
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (listen(ls, 1))
		die("listen");
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(ls);
	nodelay(fd);
	while (recv_all(fd, buf, size))
		send_all(fd, buf, size);
	close(fd);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the nearest-rank percentile of sorted v[0..n) */
static double pct(const double *v, long n, double p)
{
	long k = (long)(p / 100.0 * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static int client(const char *host, int port, size_t size, long iters,
		  long warmup, char *buf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct timespec t0, t1;
	double *rtt, sum = 0;
	long i;
	int fd;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "tcp_pingpong: bad IPv4 address %s\n", host);
		return 2;
	}
	rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		die("calloc");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	nodelay(fd);
	memset(buf, 'r', size);
	for (i = -warmup; i < iters; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		send_all(fd, buf, size);
		if (!recv_all(fd, buf, size)) {
			errno = ECONNRESET;
			die("recv: the server closed");
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (i >= 0)
			rtt[i] = (t1.tv_sec - t0.tv_sec) * 1e6 +
				 (t1.tv_nsec - t0.tv_nsec) / 1e3;
	}
	close(fd);
	for (i = 0; i < iters; i++)
		sum += rtt[i];
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("{\"size\":%zu,\"iterations\":%ld,\"rtt_us\":{\"min\":%.1f,"
	       "\"mean\":%.1f,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
	       "\"max\":%.1f}}\n", size, iters, rtt[0], sum / iters,
	       pct(rtt, iters, 50), pct(rtt, iters, 90), pct(rtt, iters, 99),
	       rtt[iters - 1]);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	long iters = 1000, warmup = 50, size = 64;
	const char *host = NULL;
	int port = 18600, listen_mode = 0, c;
	char *buf;

	while ((c = getopt(argc, argv, "lc:p:s:n:w:")) != -1) {
		switch (c) {
		case 'l':
			listen_mode = 1;
			break;
		case 'c':
			host = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			size = atol(optarg);
			break;
		case 'n':
			iters = atol(optarg);
			break;
		case 'w':
			warmup = atol(optarg);
			break;
		default:
			usage();
		}
	}
	if (listen_mode == !!host || optind != argc || size < 1 ||
	    size > MAX_SIZE || iters < 1 || warmup < 0 || port < 1 ||
	    port > 65535)
		usage();
	buf = malloc(size);
	if (!buf)
		die("malloc");
	if (listen_mode)
		return server(port, size, buf);
	return client(host, port, size, iters, warmup, buf);
}
