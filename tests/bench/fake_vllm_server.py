"""A stand-in for vLLM's OpenAI server's key check, for tests of the lane's key handling.

python tests/bench/fake_vllm_server.py --port PORT [--api-key KEY]

Like ``vllm.entrypoints.openai.api_server``: the key is ``--api-key``, else ``VLLM_API_KEY``
from the environment; with a key, ``/v1/...`` answers 401 unless the request carries
``Authorization: Bearer KEY``. ``GET /v1/models`` lists one model. Binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def handler(key: str | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if key and self.headers.get("Authorization") != f"Bearer {key}":
                self.answer(401, {"error": "Unauthorized"})
            elif self.path == "/v1/models":
                self.answer(200, {"object": "list", "data": [{"id": "fake"}]})
            else:
                self.answer(404, {"error": "Not Found"})

        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    key = args.api_key or os.environ.get("VLLM_API_KEY")
    ThreadingHTTPServer(("127.0.0.1", args.port), handler(key)).serve_forever()


if __name__ == "__main__":
    main()
