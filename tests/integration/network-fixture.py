#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Loopback servers for the network service's test (test-network-service.c).

Usage: network-fixture.py CERT KEY QUERY_LOG

  DNS over UDP  answers the made-up names below and appends every query's name to QUERY_LOG (before
                it answers, so a query answered is a query logged);
  HTTP          answers every request with its request line and Host header as the body;
  TLS           (CERT, KEY) answers with the name the client's SNI named.
Prints "ready DNS_PORT HTTP_PORT TLS_PORT" once all three listen on 127.0.0.1, then serves until
its stdin closes.
"""
import socket
import ssl
import struct
import sys
import threading

ADDRESSES = {
    "allowed.dsh.test": "127.0.0.1",
    "denied.dsh.test": "127.0.0.1",
    "meta.dsh.test": "169.254.169.254",
}
CNAMES = {"alias.dsh.test": "allowed.dsh.test"}


def encode_name(name):
    return b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"


def read_question(query):
    labels, at = [], 12
    while query[at]:
        labels.append(query[at + 1:at + 1 + query[at]].decode("ascii", "replace"))
        at += 1 + query[at]
    qtype, = struct.unpack(">H", query[at + 1:at + 3])
    return ".".join(labels).lower(), qtype, at + 5


def answer(query):
    name, qtype, end = read_question(query)
    records = []
    target = CNAMES.get(name)
    if target:
        records.append(encode_name(name) + struct.pack(">HHIH", 5, 1, 60, len(encode_name(target)))
                       + encode_name(target))
    address = ADDRESSES.get(target or name)
    if address and qtype == 1:
        records.append(encode_name(target or name) + struct.pack(">HHIH", 1, 1, 60, 4)
                       + socket.inet_aton(address))
    rcode = 0 if address else 3
    header = query[:2] + struct.pack(">HHHHH", 0x8180 | rcode, 1, len(records), 0, 0)
    return name, header + query[12:end] + b"".join(records)


def serve_dns(sock, log_path):
    while True:
        query, peer = sock.recvfrom(4096)
        name, reply = answer(query)
        with open(log_path, "a") as log:
            log.write(name + "\n")
        sock.sendto(reply, peer)


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.decode("latin-1")


def serve_http(conn):
    with conn:
        head = read_head(conn)
        lines = head.split("\r\n")
        host = next((line.split(":", 1)[1].strip() for line in lines[1:] if line.lower().startswith("host:")), "")
        body = f"line={lines[0]}\nhost={host}\n".encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


NAMES = {}


def serve_tls(conn, context):
    try:
        with context.wrap_socket(conn, server_side=True) as tls:
            head = read_head(tls)
            body = f"sni={NAMES.pop(id(tls), '')}\nline={head.split(chr(13))[0]}\n".encode()
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except (ssl.SSLError, OSError):
        pass


def accept_loop(listener, handle):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def main():
    cert, key, log_path = sys.argv[1:4]
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind(("127.0.0.1", 0))
    http = socket.create_server(("127.0.0.1", 0))
    tls = socket.create_server(("127.0.0.1", 0))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: NAMES.__setitem__(id(sock), name or "")
    threading.Thread(target=serve_dns, args=(dns, log_path), daemon=True).start()
    threading.Thread(target=accept_loop, args=(http, serve_http), daemon=True).start()
    threading.Thread(target=accept_loop, args=(tls, lambda conn: serve_tls(conn, context)), daemon=True).start()
    print("ready", dns.getsockname()[1], http.getsockname()[1], tls.getsockname()[1], flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
