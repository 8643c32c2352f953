"""The one output format of every consumer driver in tests/clients/.

One JSON object per record, one per line, on stdout:

    {"topic": str, "partition": int, "offset": int,
     "timestamp": int (ms) | null, "timestamp_type": "CreateTime" | "LogAppendTime" | null,
     "key": base64 | null, "value": base64 | null,
     "headers": [[str, base64 | null], ...] | {"grouped": ...}}

null stays distinct from empty ("" in base64). Headers keep their order and
duplicates; kafkajs cannot (it groups them by key), so its driver prints
"headers_grouped": {key: [base64|null, ...]} (keys in first-seen order)
instead, and the oracle compares that form. `timestamp_type` null means the
client does not expose it.
"""

from __future__ import annotations

import base64
import json
import sys


def b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def emit(topic: str, partition: int, offset: int, timestamp: int | None, timestamp_type: str | None,
         key: bytes | None, value: bytes | None, headers, **extra) -> None:
    line = {"topic": topic, "partition": int(partition), "offset": int(offset),
            "timestamp": None if timestamp is None else int(timestamp), "timestamp_type": timestamp_type,
            "key": b64(key), "value": b64(value),
            "headers": [[k.decode("utf-8") if isinstance(k, bytes) else k, b64(v)] for k, v in (headers or [])]}
    line.update(extra)
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(msg: str, code: int = 1):
    sys.stderr.write(msg.rstrip() + "\n")
    sys.stderr.flush()
    sys.exit(code)
