/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "HOST:PORT" listen addresses as users write them: an IPv4 address,
 * "localhost", or a bracketed IPv6 address ("[::1]:7070"). One parser for
 * every listener (serve's HTTP and gRPC ports, --metrics-listen).
 */
#ifndef OMNIPROF_UTIL_NET_ADDR_H
#define OMNIPROF_UTIL_NET_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * Parses listen into *ss / *sl. Port 0 is taken only with allow_port0 (the
 * kernel then picks one). 0, or -EINVAL with *why (static text).
 */
int net_addr__parse(const char *listen, bool allow_port0, struct sockaddr_storage *ss,
		    socklen_t *sl, const char **why);
/* True for 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8. */
bool net_addr__is_loopback(const struct sockaddr_storage *ss);
/* The port in host order. */
uint16_t net_addr__port(const struct sockaddr_storage *ss);

#endif
