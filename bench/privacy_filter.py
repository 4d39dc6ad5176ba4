"""Cost of the privacy filter (``PrivacyFilter().filter``) per ~500-character text, by kind of text.

    PYTHONPATH=server .venv/bin/python bench/privacy_filter.py [--texts 2000] [--repeat 5] [--seed 1]

Kinds (equal shares): English prose; Python source (500-character windows of this repository's own
server code); tool output full of hashes, UUIDs and digests (git log, docker, pip); JSON lockfile lines
(``"integrity": "sha512-…"``, ``"resolved": …``); texts with 1-3 synthetic credentials of assorted
providers; and 500-character windows of real transcript text (the string values of the Claude Code
transcripts in ../shared/fixtures/transcripts, when present; otherwise the kind is left out).

Each text is filtered ``--repeat`` times and its median kept; p50/p95 are over the texts.  Prints JSON
(figures only, no assertion).  The credentials are synthetic and built from pieces at run time.
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from claude_memory.core.privacy import PrivacyFilter

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHARED_TRANSCRIPTS = REPO.parent / "shared" / "fixtures" / "transcripts"
SIZE = 500

VOCABULARY = """
the a we then it memory search index store event import refactor function test fails because when after before
user prompt answer session project file line column value should could would please check run build deploy
release merge branch commit review change update config setting token count cache key password field model
embedding vector query result error warning debug trace note idea
"""
WORDS = VOCABULARY.split()


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def prose(rng: random.Random) -> str:
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < SIZE:
        word = rng.choice(WORDS)
        out.append(word.capitalize() if not out or out[-1].endswith(".") else word)
        if rng.random() < 0.08:
            out[-1] += "."
        elif rng.random() < 0.05:
            out[-1] += ","
    return " ".join(out)[:SIZE]


def python_windows(rng: random.Random, count: int) -> list[str]:
    sources = sorted((REPO / "server" / "claude_memory").rglob("*.py"))
    texts = [p.read_text(encoding="utf-8") for p in sources]
    texts = [t for t in texts if len(t) > SIZE * 2]
    out = []
    for _ in range(count):
        t = rng.choice(texts)
        start = rng.randrange(0, len(t) - SIZE)
        out.append(t[start : start + SIZE])
    return out


def tool_output(rng: random.Random) -> str:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < SIZE:
        kind = rng.randrange(6)
        h = hashlib.sha1(str(rng.random()).encode()).hexdigest()
        if kind == 0:
            lines.append(f"commit {h}")
        elif kind == 1:
            lines.append(f"{h[:7]} {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(WORDS)}")
        elif kind == 2:
            lines.append(f"session_id={uuid.UUID(int=rng.getrandbits(128))} status=ok")
        elif kind == 3:
            digest = hashlib.sha256(h.encode()).hexdigest()
            lines.append(f"ghcr.io/acme/api@sha256:{digest}")
        elif kind == 4:
            lines.append(f"-rw-r--r-- 1 user user {rng.randrange(99999)} Nov 25 14:22 {rng.choice(WORDS)}_{h[:6]}.py")
        else:
            lines.append(f"  Downloading numpy-2.1.{rng.randrange(9)}-cp311-cp311-manylinux_x86_64.whl (16.3 MB)")
    return "\n".join(lines)[:SIZE]


def lockfile(rng: random.Random) -> str:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < SIZE:
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        version = f"{rng.randrange(9)}.{rng.randrange(20)}.{rng.randrange(30)}"
        integrity = base64.b64encode(hashlib.sha512(name.encode() + version.encode()).digest()).decode()
        lines += [
            f'    "node_modules/{name}": {{',
            f'      "version": "{version}",',
            f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-{version}.tgz",',
            f'      "integrity": "sha512-{integrity}",',
            '      "dev": true',
            "    },",
        ]
    return "\n".join(lines)[:SIZE]


def secret(rng: random.Random) -> str:
    """One synthetic credential of an assorted provider (built from pieces)."""
    kind = rng.randrange(12)
    if kind == 0:
        return "ghp_" + _rand(rng, ALNUM, 36)
    if kind == 1:
        return "sk-proj-" + _rand(rng, ALNUM, 48)
    if kind == 2:
        return "hf_" + _rand(rng, ALNUM, 34)
    if kind == 3:
        return "AKIA" + _rand(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    if kind == 4:
        return "aws_secret_access_key = " + _rand(rng, B64, 40)
    if kind == 5:
        return "sk_" + "live_" + _rand(rng, ALNUM, 24)
    if kind == 6:
        return "postgres://app:" + _rand(rng, ALNUM, 12) + "@db.internal:5432/app"
    if kind == 7:
        return "export OPENAI_API_KEY=" + _rand(rng, ALNUM, 32)
    if kind == 8:
        return "MTIz" + _rand(rng, ALNUM, 22) + "." + _rand(rng, ALNUM, 6) + "." + _rand(rng, ALNUM, 38)
    if kind == 9:
        key = _rand(rng, B64, 86) + "=="
        return f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={key};EndpointSuffix=core.windows.net"
    if kind == 10:
        return "xoxb-" + "".join(rng.choice("0123456789") for _ in range(12)) + "-" + _rand(rng, ALNUM, 24)
    return "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx" + _rand(rng, ALNUM, 20) + "." + _rand(rng, ALNUM, 43)


def with_secrets(rng: random.Random) -> str:
    base = prose(rng) if rng.random() < 0.5 else tool_output(rng)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(0, len(base))
        base = base[:pos] + " " + secret(rng) + " " + base[pos:]
    return base[: SIZE + 150]  # the credential may push a text a little past 500 characters


def transcript_windows(rng: random.Random, count: int) -> list[str]:
    strings: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            if len(value) >= 100:
                strings.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in sorted(SHARED_TRANSCRIPTS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                walk(json.loads(line))
            except json.JSONDecodeError:
                continue
    if not strings:
        return []
    out = []
    for _ in range(count):
        s = rng.choice(strings)
        start = rng.randrange(0, max(1, len(s) - SIZE))
        out.append(s[start : start + SIZE])
    return out


def texts_by_kind(count: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    kinds: dict[str, list[str]] = {}
    per = count // (6 if SHARED_TRANSCRIPTS.is_dir() else 5)
    kinds["prose"] = [prose(rng) for _ in range(per)]
    kinds["python"] = python_windows(rng, per)
    kinds["tool_output"] = [tool_output(rng) for _ in range(per)]
    kinds["lockfile"] = [lockfile(rng) for _ in range(per)]
    kinds["secrets_1_3"] = [with_secrets(rng) for _ in range(per)]
    transcripts = transcript_windows(rng, per) if SHARED_TRANSCRIPTS.is_dir() else []
    if transcripts:
        kinds["transcript"] = transcripts
    return kinds


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    flt = PrivacyFilter()
    kinds = texts_by_kind(args.texts, args.seed)
    for texts in kinds.values():  # warm up (regex caches, lazily built tables)
        for t in texts[:20]:
            flt.filter(t)
    timings: dict[str, list[float]] = {}
    masked: dict[str, int] = {}
    gc.disable()
    try:
        for kind, texts in kinds.items():
            per_text = []
            for t in texts:
                runs = []
                for _ in range(args.repeat):
                    start = time.perf_counter_ns()
                    flt.filter(t)
                    runs.append(time.perf_counter_ns() - start)
                per_text.append(statistics.median(runs) / 1000)
            timings[kind] = per_text
            masked[kind] = sum(flt.filter(t)[1].secrets_masked for t in texts)
    finally:
        gc.enable()
    every = [x for values in timings.values() for x in values]
    result = {
        "python": sys.version.split()[0],
        "texts": len(every),
        "repeat": args.repeat,
        "us_per_text": {
            kind: {
                "n": len(values),
                "mean_chars": round(sum(map(len, kinds[kind])) / len(values)),
                "p50": round(percentile(values, 50), 1),
                "p95": round(percentile(values, 95), 1),
                "secrets_masked": masked[kind],
            }
            for kind, values in timings.items()
        },
        "overall": {"n": len(every), "p50": round(percentile(every, 50), 1), "p95": round(percentile(every, 95), 1)},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
