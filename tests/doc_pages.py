"""The documentation pages the doc tests read, and their fenced code blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
#: Every page a reader of the repository sees: the front door, the changelog and docs/.
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)\s*$")


@dataclass(frozen=True)
class Block:
    page: str               # relative to the repository, e.g. "docs/reference/cli.md"
    line: int               # 1-based line of the block's first code line
    lang: str               # "python", "sh", "console", "" ...
    code: str
    prints: Optional[str]   # the ```text block that follows a "prints" paragraph, if any

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(pages=PAGES) -> list[Block]:
    out = []
    for page in pages:
        lines = page.read_text(encoding="utf-8").splitlines()
        found, i = [], 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m:
                j = i + 1
                while not FENCE.match(lines[j]):
                    j += 1
                found.append((i + 2, m.group(2).lower(), "\n".join(lines[i + 1:j]), j))
                i = j
            i += 1
        for n, (line, lang, code, end) in enumerate(found):
            prints = None
            if n + 1 < len(found) and found[n + 1][1] == "text":
                between = "\n".join(lines[end + 1:found[n + 1][0] - 2]).strip()
                if between == "prints":
                    prints = found[n + 1][2]
            out.append(Block(page.relative_to(ROOT).as_posix(), line, lang, code, prints))
    return out
