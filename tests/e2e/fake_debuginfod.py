#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A debuginfod server that misbehaves, for tests/e2e/test_hostile_files.c.

Usage: fake_debuginfod.py MODE PORT_FILE
  silent   accepts connections, reads the request, never answers
  stream   answers 200 and streams zeros without end (no Content-Length)
  garbage  answers 200 with 64 KiB of bytes that are no ELF file
Listens on 127.0.0.1 on a free port, writes the port to PORT_FILE, prints
"ready"; counts requests per path in PORT_FILE.log.
"""
import os
import socket
import sys
import threading
import time

mode, port_file = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
print("ready", flush=True)


def serve(conn):
    try:
        req = b""
        while b"\r\n\r\n" not in req and len(req) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            req += chunk
        line = req.split(b"\r\n", 1)[0].decode(errors="replace")
        with open(port_file + ".log", "a") as log:
            log.write(line + "\n")
        if mode == "silent":
            time.sleep(3600)
        elif mode == "stream":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Connection: close\r\n\r\n")
            zeros = bytes(1 << 16)
            while True:
                conn.sendall(zeros)
        elif mode == "garbage":
            body = bytes((i * 7 + 3) & 0xFF for i in range(65536))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    finally:
        conn.close()


while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
