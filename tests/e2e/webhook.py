#!/usr/bin/env python3
"""Alertmanager webhook receiver for the end-to-end test: appends one JSON line per alert in
every notification it gets ({"received": unix_time, "status", "alertname", "labels", ...}) to
the file given as argv[2] and answers 200. Listens on 127.0.0.1:argv[1] (0 = any free port; the
port is written to argv[2] + ".port" once listening)."""

import http.server
import json
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server naming)
        length = int(self.headers.get("Content-Length", "0"))
        try:
            payload = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self.send_response(400)
            self.end_headers()
            return
        now = time.time()
        with open(self.server.record, "a", encoding="utf-8") as f:
            for alert in payload.get("alerts", []):
                labels = alert.get("labels", {})
                f.write(json.dumps({
                    "received": now,
                    "status": alert.get("status"),
                    "alertname": labels.get("alertname"),
                    "labels": labels,
                    "annotations": alert.get("annotations", {}),
                    "startsAt": alert.get("startsAt"),
                    "endsAt": alert.get("endsAt"),
                }) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    port, record = int(sys.argv[1]), sys.argv[2]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.record = record
    with open(record + ".port", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
