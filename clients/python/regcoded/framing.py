"""Wire formats: JSON-RPC lines on the control socket and server-sent events on HTTP."""

import json
from typing import Any, Dict, List, Optional


def encode_line(message: Dict[str, Any]) -> bytes:
    """One JSON-RPC object as one line (compact UTF-8, newline-terminated)."""
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def decode_line(line: bytes) -> Optional[Dict[str, Any]]:
    """A received line as a JSON object; None for a blank line. Raises ValueError for anything else."""
    text = line.decode("utf-8").strip()
    if not text:
        return None
    message = json.loads(text)
    if not isinstance(message, dict):
        raise ValueError("expected a JSON object per line, got %s" % type(message).__name__)
    return message


class SSEEvent:
    """One dispatched server-sent event."""

    __slots__ = ("event", "data", "id")

    def __init__(self, event: str, data: str, id: Optional[str]) -> None:
        self.event = event
        self.data = data
        self.id = id

    def json(self) -> Any:
        return json.loads(self.data)

    def __repr__(self) -> str:
        return "SSEEvent(event=%r, id=%r, data=%r)" % (self.event, self.id, self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SSEEvent) and (self.event, self.data, self.id) == (other.event, other.data, other.id)


class SSEParser:
    """Incremental parser for the text/event-stream format (WHATWG HTML, "Server-sent events").

    Feed it lines (with or without their line ending); it returns an SSEEvent when a blank line
    dispatches one. Comments (lines starting with ':') are ignored; `retry` is remembered.
    """

    def __init__(self) -> None:
        self._event = ""
        self._data: List[str] = []
        self._has_data = False
        self.last_event_id: Optional[str] = None
        self.retry_ms: Optional[int] = None

    def feed_line(self, line: str) -> Optional[SSEEvent]:
        if line.endswith("\r\n"):
            line = line[:-2]
        elif line.endswith("\n") or line.endswith("\r"):
            line = line[:-1]
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif field == "retry":
            if value.isdigit():
                self.retry_ms = int(value)
        return None

    def feed(self, text: str) -> List[SSEEvent]:
        """Parses a chunk of complete lines (any of CRLF, LF, CR endings)."""
        events = []
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]:
            event = self.feed_line(line)
            if event is not None:
                events.append(event)
        return events

    def _dispatch(self) -> Optional[SSEEvent]:
        if not self._has_data:
            self._event = ""
            return None
        event = SSEEvent(self._event or "message", "\n".join(self._data), self.last_event_id)
        self._event = ""
        self._data = []
        self._has_data = False
        return event
