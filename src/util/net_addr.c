// SPDX-License-Identifier: Apache-2.0
#include "util/net_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

int net_addr__parse(const char *listen, bool allow_port0, struct sockaddr_storage *ss,
		    socklen_t *sl, const char **why)
{
	/* INET6_ADDRSTRLEN plus room: longer hosts are refused, not cut. */
	char host[64];
	const char *colon = strrchr(listen, ':');
	char *end;
	long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	*why = "not HOST:PORT (an IPv4 address, localhost or an [IPv6] address, and a port)";
	if (!colon || colon == listen)
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < (allow_port0 ? 0 : 1) || port > 65535) {
		*why = allow_port0 ? "the port is not in 0..65535" : "the port is not in 1..65535";
		return -EINVAL;
	}
	hl = (size_t)(colon - listen);
	if (listen[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (hl < 3 || colon[-1] != ']' || hl - 2 >= sizeof(host))
			return -EINVAL;
		memcpy(host, listen + 1, hl - 2);
		host[hl - 2] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		*sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, listen, hl);
		host[hl] = '\0';
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		*sl = sizeof(*a);
	}
	*why = NULL;
	return 0;
}

bool net_addr__is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

uint16_t net_addr__port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}
