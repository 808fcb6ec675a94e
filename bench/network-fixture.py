# SPDX-License-Identifier: MIT
"""The loopback fixtures network.bench.sh measures against: tests/network/fixtures.py's dnsmasq (the
allow-list's upstream resolver) and HTTP server, started under PLACE.  Prints "ready HTTP_PORT DNS_PORT"
once both answer, then serves until its stdin ends (or it is killed).

Usage: python3 bench/network-fixture.py PLACE
"""
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "network"))
import fixtures  # noqa: E402


def main():
    place = sys.argv[1]
    missing = fixtures.missing_tools()
    if missing:
        print("missing", " ".join(missing), flush=True)
        return 1
    # A SIGTERM ends it through the finally below, which stops dnsmasq.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    dns = fixtures.Dnsmasq(place)
    http = fixtures.HttpServer()
    try:
        print("ready", http.port, dns.port, flush=True)
        sys.stdin.read()
    finally:
        http.close()
        dns.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
