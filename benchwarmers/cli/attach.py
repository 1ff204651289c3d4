"""What `bench ask` sends: the files and piped text it attaches, read only as far as the service's max_body_mb lets
a request go, and the body's size checked before it is sent (a 413 mid-upload reads as no service at all)."""
from __future__ import annotations

import json
import os
import stat

from ..servicelink import CommandError
from ..settings import SETTINGS

MB = 1024 * 1024
ROOM = 1024               # bytes for what post_ask adds to the body (the model's name, "stream": true)
CHUNK = MB
MID_SEND = MB             # a body this big may be cut off mid-send by a 413 (below it the refusal is read whole)


class BodyLimit:
    """The largest request body the service takes: its max_body_mb setting. The default holds until something would
    pass it; then the service is asked once for its own value (an admin route: without admin access, the default)."""

    def __init__(self, client):
        self.client = client
        self.mb = SETTINGS["max_body_mb"].default
        self.asked = False
        self.known = False           # self.mb is the service's own value, not the default

    @property
    def bytes(self) -> int:
        return int(self.mb * MB)     # as the service counts it (server/requestbody.py)

    def allows(self, size: int) -> bool:
        if size > self.bytes and not self.asked:
            self.asked = True
            mb = service_max_body_mb(self.client)
            if mb is not None:
                self.mb, self.known = mb, True
        return size <= self.bytes

    def words(self) -> str:
        where = "its max_body_mb setting" if self.known else "the default of its max_body_mb setting"
        return f"the {self.mb:g} MB the service takes in one request ({where})"


def service_max_body_mb(client) -> float | None:
    """The service's max_body_mb, or None when it cannot be read (no admin access, an older service)."""
    try:
        view = client.get("/bench/settings", timeout=10)
    except CommandError:
        return None
    for setting in view.get("settings") or []:
        if not isinstance(setting, dict) or setting.get("name") != "max_body_mb":
            continue
        value = setting.get("value")
        return float(value) if isinstance(value, (int, float)) and value > 0 else None
    return None


def too_large(what: str, limit: BodyLimit) -> CommandError:
    return CommandError(f"{what} passes {limit.words()}: attach or pipe less (a part of it), or raise the setting "
                        "(bench settings set max_body_mb N).", 2)


def read_bounded(read, what: str, limit: BodyLimit, used: int) -> bytes:
    """What `read(n)` gives, never more than the request can carry after the `used` bytes before it: a pipe that
    never ends (`yes |`) is cut off at the limit, not read into memory whole. Read a chunk at a time: read(n) sets
    n bytes aside at once, and the service's limit may be gigabytes."""
    parts, total = [], 0
    while chunk := read(min(CHUNK, limit.bytes - used - total + 1)):
        parts.append(chunk)
        total += len(chunk)
        if used + total > limit.bytes and not limit.allows(used + total):   # allows() may learn a higher limit
            raise too_large(what, limit)
    return b"".join(parts)


def read_file(name: str, limit: BodyLimit, used: int) -> str:
    """A file's text (UTF-8, a bad byte as U+FFFD, line ends as \\n). A device (/dev/zero) is refused; a pipe
    (`-f <(git diff)`) is read like stdin, up to the limit; a regular file past the limit is refused unread."""
    try:
        with open(name, "rb") as f:
            info = os.fstat(f.fileno())
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
                raise CommandError(f"Cannot attach {name}: it is a device, not a file. Attach a file, or pipe "
                                   "the text in.", 2)
            if stat.S_ISREG(info.st_mode) and not limit.allows(used + info.st_size):
                raise too_large(f"{name} ({info.st_size / MB:.1f} MB)", limit)
            data = read_bounded(f.read, name, limit, used)
    except OSError as e:
        raise CommandError(f"Cannot read {name}: {e.strerror or e}.", 2) from None
    text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")     # as a text-mode read gives it


def check_size(body: dict, limit: BodyLimit) -> int:
    """The body's size as the client sends it (JSON escapes: a non-ASCII character can take 6 bytes, so text under
    the limit can make a body past it); refused here rather than by a 413 that cuts the upload off."""
    size = len(json.dumps(body)) + ROOM
    if not limit.allows(size):
        raise CommandError(f"The request would be {size / MB:.1f} MB (JSON-escaped), past {limit.words()}: attach "
                           "less, or raise the setting (bench settings set max_body_mb N).", 2)
    return size


def refused_mid_send(client, err: CommandError, size: int) -> CommandError:
    """A body past the service's limit is refused with a 413 while it is still being sent; the service then closes,
    the upload breaks off, and the client can only say no service answers. When the service does answer a second
    look, that was the refusal: say so."""
    if err.code != 3 or size < MID_SEND:
        return err
    try:
        client.get("/v1/models", gateway=True, timeout=10)
    except CommandError:
        return err                   # no service indeed
    mb = service_max_body_mb(client)
    limit = f"its max_body_mb setting is {mb:g} MB" if mb else "see its max_body_mb setting"
    return CommandError(f"The service refused the request as too large ({size / MB:.1f} MB; {limit}) and closed the "
                        "connection before it was all sent: attach less, or raise the setting "
                        "(bench settings set max_body_mb N).", 1)
