"""Replace a file all at once: a reader, or a kill at any moment, sees the old file or the new one, never half.

A new file is written next to the target, flushed and fsynced, then renamed over it with
:func:`os.replace` (atomic on POSIX and Windows within one directory). ``write_text`` on
the target itself would truncate it first: a kill after that left ``runs.jsonl`` empty.

Left out: fsyncing the directory (the rename survives a killed process; a power cut right
after it may still bring back the old file, which is also whole).
"""
from __future__ import annotations

import os
from pathlib import Path

TEMPORARY_SUFFIX = ".partial"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so that ``path`` is never seen half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + TEMPORARY_SUFFIX)
    try:
        with partial.open("w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)       # 被打断时不留下半截的临时文件（成功时它已不存在）
