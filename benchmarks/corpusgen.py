"""Synthetic Crossref works generated from the shapes of the recorded corpus.

Every generated work is one of the recorded ``crossref/work/*.json`` messages used as a template: the
same keys and nesting, with a new DOI (the template's prefix, a synthetic suffix), a new title and
abstract recombined from the corpus' words and sentences, authors drawn from the pooled corpus
authors (the template's author count), a random prefix of the template's reference list (with
mutated DOIs), and shifted dates/``indexed`` stamps. Output is deterministic for a given seed.

``write_jsonl(path, n)`` writes a Crossref JSON Lines file (one work ``message`` per line), the
input of ``syncd cache import`` and of the import benchmark.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tests.corpus_path import CORPUS

GENERATOR_VERSION = 2  # bump when the output changes (invalidates cached stores and files)

_WORD = re.compile(r"[A-Za-z][A-Za-z\-]{2,}")
_SENT = re.compile(r"(?<=[.!?])\s+")
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Pools:
    templates: list[dict[str, Any]]
    words: list[str]
    sentences: list[str]
    authors: list[dict[str, Any]]
    containers: list[str]


@lru_cache(maxsize=1)
def pools(corpus: Path = CORPUS) -> Pools:
    """The recorded Crossref work messages and the word/sentence/author pools drawn from them."""
    templates: list[dict[str, Any]] = []
    words: set[str] = set()
    sentences: list[str] = []
    authors: list[dict[str, Any]] = []
    containers: set[str] = set()
    for f in sorted((corpus / "crossref" / "work").glob("*.json")):
        if f.name.endswith(".headers.json"):
            continue
        try:
            msg = json.loads(f.read_text(encoding="utf-8")).get("message")
        except (ValueError, AttributeError):
            continue
        if not isinstance(msg, dict) or not msg.get("DOI"):
            continue
        templates.append(msg)
        for t in msg.get("title") or []:
            words.update(w.lower() for w in _WORD.findall(t))
        abstract = _TAG.sub(" ", msg.get("abstract") or "")
        words.update(w.lower() for w in _WORD.findall(abstract))
        sentences.extend(s.strip() for s in _SENT.split(" ".join(abstract.split())) if len(s.strip()) > 30)
        authors.extend(a for a in msg.get("author") or [] if isinstance(a, dict))
        containers.update(c for c in msg.get("container-title") or [] if c)
    return Pools(templates, sorted(words), sentences, authors, sorted(containers))


def _stamp(rng: random.Random) -> dict[str, Any]:
    ts = rng.randint(1_500_000_000, 1_790_000_000)
    import time as _t

    tm = _t.gmtime(ts)
    return {
        "date-parts": [[tm.tm_year, tm.tm_mon, tm.tm_mday]],
        "date-time": _t.strftime("%Y-%m-%dT%H:%M:%SZ", tm),
        "timestamp": ts * 1000,
    }


def make_work(i: int, seed: int = 7, p: Pools | None = None) -> dict[str, Any]:
    """The ``i``-th synthetic work message (deterministic for ``(i, seed)``)."""
    p = p or pools()
    rng = random.Random(seed * 1_000_003 + i)
    t = p.templates[rng.randrange(len(p.templates))]
    w = dict(t)
    prefix = t["DOI"].split("/", 1)[0]  # the `prefix` field is sometimes an id.crossref.org URL
    doi = f"{prefix}/syn.{seed}.{i:08d}.{rng.randrange(36**4):x}"
    w["DOI"] = doi
    w["prefix"] = prefix
    w["URL"] = f"https://doi.org/{doi}"
    n_title = rng.randint(5, 16)
    w["title"] = [" ".join(rng.choice(p.words) for _ in range(n_title)).capitalize()]
    if t.get("abstract"):
        k = rng.randint(2, 7)
        w["abstract"] = "<jats:p>" + " ".join(rng.choice(p.sentences) for _ in range(k)) + "</jats:p>"
    if t.get("author"):
        n = len(t["author"])
        picked = [dict(rng.choice(p.authors)) for _ in range(n)]
        for j, a in enumerate(picked):
            a["sequence"] = "first" if j == 0 else "additional"
        w["author"] = picked
    if t.get("container-title") and p.containers:
        w["container-title"] = [rng.choice(p.containers)]
    refs = t.get("reference") or []
    if refs:
        cut = rng.randint(0, len(refs))
        out = []
        for j, r in enumerate(refs[:cut]):
            r = dict(r)
            r["key"] = f"{doi}-ref{j}"
            if "DOI" in r:
                r["DOI"] = f"{r['DOI']}.{rng.randrange(1000)}"
            out.append(r)
        w["reference"] = out
        w["reference-count"] = w["references-count"] = len(out)
    for key in ("indexed", "deposited", "created"):
        if key in t:
            w[key] = _stamp(rng)
    y = rng.randint(1950, 2026)
    for key in ("issued", "published", "published-print", "published-online"):
        if key in t:
            w[key] = {"date-parts": [[y, rng.randint(1, 12), rng.randint(1, 28)]]}
    w["is-referenced-by-count"] = rng.randint(0, 500)
    return w


def works(n: int, seed: int = 7, start: int = 0) -> Iterator[dict[str, Any]]:
    """``n`` synthetic work messages, indices ``start .. start+n-1``."""
    p = pools()
    for i in range(start, start + n):
        yield make_work(i, seed, p)


def write_jsonl(path: Path, n: int, seed: int = 7) -> tuple[int, int]:
    """Write ``n`` works as Crossref JSON Lines (one ``message`` per line). Returns ``(works, bytes)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    size = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for w in works(n, seed):
            line = json.dumps(w, ensure_ascii=False, separators=(",", ":")) + "\n"
            size += len(line.encode("utf-8"))
            fh.write(line)
    tmp.replace(path)
    return n, size
