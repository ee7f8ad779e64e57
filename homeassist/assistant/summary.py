"""The one INFO line per request (and its structured fields for the JSON log) that a person tailing the
log reads; what was said is in it only with ``[privacy] store_transcripts``."""

from __future__ import annotations

import json
import logging
from typing import Any

from homeassist.messages import Reply

_LOGGER = logging.getLogger(__name__)


def summary_fields(reply: Reply, *, with_text: bool = False) -> dict[str, Any]:
    """The request summary as structured fields (the JSON log's ``request`` object); what was said
    only ``with_text`` (``[privacy] store_transcripts``)."""
    fields: dict[str, Any] = {
        "request": {
            "id": reply.request_id,
            "kind": reply.intent.kind,
            "confidence": round(reply.intent.confidence, 3),
            "path": reply.path,
            "attempts": 1 + len(reply.recoveries),
            "tools": [{"tool": a.tool, "ok": a.ok, "ms": round(a.elapsed_ms, 1)} for a in reply.actions],
            "recoveries": list(reply.recoveries),
            "error": reply.error_kind,
            "timings_ms": {k: round(v, 1) for k, v in reply.timings_ms.items()},
        }
    }
    if with_text:
        fields["text"] = reply.request
    return fields


def log_summary(reply: Reply, *, with_text: bool = False) -> None:
    """The one INFO line per request a person tailing the log reads. What was said is in it only
    ``with_text`` (``[privacy] store_transcripts``); otherwise it is logged at DEBUG only."""
    tools = ",".join(f"{a.tool}:{'ok' if a.ok else 'error'}" for a in reply.actions) or "-"
    stages = " ".join(f"{k}={v:.1f}" for k, v in reply.timings_ms.items() if k != "total")
    _LOGGER.info(
        "request %s kind=%s path=%s attempts=%d tools=%s recoveries=%s%s %s total=%.1fms%s",
        reply.request_id,
        reply.intent.kind,
        reply.path,
        1 + len(reply.recoveries),
        tools,
        ",".join(reply.recoveries) or "-",
        f" error={reply.error_kind}" if reply.error_kind else "",
        stages,
        reply.timings_ms.get("total", 0.0),
        f" text={json.dumps(reply.request, ensure_ascii=False)}" if with_text else "",
        extra={"fields": summary_fields(reply, with_text=with_text)},
    )
