"""Nothing leaves the machine: ONNX Runtime 1.29 and later (which fastembed loads) sets up Microsoft's usage telemetry
on Linux and macOS when its environment is created: a device id and a queue of events under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime``, uploaded when the network allows. The product turns it off
(``store.model_files.no_telemetry``) before ONNX Runtime is first imported, in every process that embeds; this runs
the real model in a fresh process with its own home and looks for what the telemetry would have left there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.shared_data import embedding_model

EMBED = """
import sys
from pathlib import Path
from claude_memory.store.embedder import Embedder
embedder = Embedder(Path(sys.argv[1]))
print(len(embedder.embed(["where did we put the retry logic?"])[0]))
"""


def test_embedding_leaves_no_telemetry_behind(tmp_path: Path) -> None:
    model = embedding_model()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "XDG_", "HF_HUB_DISABLE"))}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", EMBED, str(model)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "384"  # the model really ran
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if "Microsoft" in p.parts)
    assert left == [], left
