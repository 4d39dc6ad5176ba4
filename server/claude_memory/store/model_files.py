"""The managed embedding model: fastembed's own download, by model name, into ``<data dir>/models``.

fastembed fetches a model from the Hugging Face hub (``HF_ENDPOINT`` names a mirror; proxies come from the
usual variables) into a cache folder laid out as the hub's client lays it out. Here that folder is the data
directory's ``models``, and a download never lands there half-done:

- it goes to a staging folder beside it (``models/.download-…``), one attempt, no sleeps of fastembed's own
  (the service retries with its own backoff);
- every file is then checked against the checksum the hub gave for it (the hub's client checks sizes only:
  the blob of a large file is named by its sha256, a small one by its git blob hash);
- only then is the model's folder moved into place, with one rename; a failure removes the staging folder.

A model whose int8 quantization was measured (``QUANTIZABLE``) also gets an int8 copy, made here from the
float32 one (:mod:`claude_memory.store.quantize`) into ``models/int8/<model>``, staged and renamed likewise.

Nothing here opens the store; :class:`~claude_memory.store.embedder.Embedder` loads what this module fetched.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Final

MODELS_DIR: Final = "models"  # in the data directory
INT8_DIR: Final = "int8"  # in MODELS_DIR: the int8 copies made here
# Models whose int8 copy was measured against their float32 vectors and on both dev benchmarks
# (bench/bench_quantize.py, docs/architecture.md); others are used as downloaded.
QUANTIZABLE: Final = frozenset({"sentence-transformers/all-minilm-l6-v2"})
STAGING_PREFIX: Final = ".download-"
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_GIT_SHA1: Final = re.compile(r"[0-9a-f]{40}")
_READ: Final = 1 << 20


class ModelFetchError(Exception):
    """A download that did not give a complete, verified model; the message is one sentence."""


def models_dir(data_dir: Path) -> Path:
    return data_dir / MODELS_DIR


def no_telemetry() -> None:
    """Before fastembed, the hub's client or ONNX Runtime is first imported, so that none of them reports anything:
    the hub's client then sends no telemetry (no agent detection, no library versions beyond its own in the user
    agent; it reads the variable at import), and ONNX Runtime (1.29 and later, on Linux and macOS) creates no device
    id, no offline queue and no uploader of usage events to Microsoft (it reads the variable once, when its
    environment is created; ``disable_telemetry_events()`` after that still leaves the device id and the first event
    queued). ONNX Runtime's variable is set whatever it was: nothing leaves the machine."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    os.environ["ORT_TELEMETRY_DISABLED"] = "1"  # the name in ONNX Runtime's later releases


def describe(name: str) -> tuple[Any, Any]:
    """(fastembed's model class, its description) for a model fastembed knows by ``name``; ValueError if none."""
    no_telemetry()
    from fastembed import TextEmbedding  # heavy (~0.6 s): only when a model is looked up

    for kind in TextEmbedding.EMBEDDINGS_REGISTRY:
        for description in kind._list_supported_models():
            if description.model.lower() == name.lower():
                return kind, description
    raise ValueError(f"fastembed has no text embedding model named {name!r}.")


def _repo_folder(repo: str) -> str:
    return "models--" + repo.replace("/", "--")


def installed(data_dir: Path, name: str) -> Path | None:
    """The folder holding the managed copy of ``name`` (its ``model.onnx`` and tokenizer), if it is complete."""
    root = models_dir(data_dir)
    if not root.is_dir():
        return None
    _, description = describe(name)
    repo = root / _repo_folder(description.sources.hf)
    ref = repo / "refs" / "main"
    try:
        snapshot = repo / "snapshots" / ref.read_text().strip()
    except OSError:
        return None
    needed = [description.model_file, *description.additional_files, "tokenizer.json"]
    return snapshot if all((snapshot / f).exists() for f in needed) else None


def int8_folder(data_dir: Path, name: str) -> Path:
    return models_dir(data_dir) / INT8_DIR / name.replace("/", "--")


def quantizable(name: str) -> bool:
    return name.lower() in QUANTIZABLE


def installed_int8(data_dir: Path, name: str) -> Path | None:
    """The int8 copy of ``name``, if it was made."""
    folder = int8_folder(data_dir, name)
    return folder if (folder / "model.onnx").exists() and (folder / "tokenizer.json").exists() else None


def make_int8(data_dir: Path, name: str, source: Path) -> Path:
    """The int8 copy of the float32 model in ``source`` (made now if missing, ~3 s on 2 cores);
    :class:`ModelFetchError` (one sentence) when it cannot be made."""
    done = installed_int8(data_dir, name)
    if done is not None:
        return done
    from claude_memory.store.quantize import quantize_int8

    target = int8_folder(data_dir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    _clear_stale_staging(target.parent)
    staging = target.parent / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        for item in source.iterdir():
            if item.name != "model.onnx" and item.is_file():
                shutil.copyfile(item, staging / item.name)  # (the snapshot's files are links to blobs)
        quantize_int8(source / "model.onnx", staging / "model.onnx")
        if installed_int8(data_dir, name) is None:  # (another process may have made it meanwhile)
            os.replace(staging, target)
    except ImportError as exc:
        raise ModelFetchError(f"The int8 copy of {name} needs the onnx package ({exc.name} is missing).") from exc
    except Exception as exc:  # disk full, a model the quantizer cannot read: the float32 model serves instead
        raise ModelFetchError(f"The int8 copy of {name} could not be made ({type(exc).__name__}).") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def staged_bytes(data_dir: Path) -> int:
    """Bytes written so far by downloads in progress (their staging folders)."""
    total = 0
    root = models_dir(data_dir)
    with contextlib.suppress(OSError):
        for staging in root.glob(STAGING_PREFIX + "*"):
            for path in staging.rglob("*"):
                with contextlib.suppress(OSError):
                    if path.is_file() and not path.is_symlink():
                        total += path.stat().st_size
    return total


def expected_bytes(name: str) -> int:
    """About how large the model's download is (fastembed's own figure)."""
    _, description = describe(name)
    return int(float(description.size_in_GB) * 1e9)


def fetch(data_dir: Path, name: str) -> Path:
    """Download ``name`` into the managed folder and return its model folder; :class:`ModelFetchError` (one
    sentence) when it cannot. Environment: ``HF_ENDPOINT`` (a mirror), ``HTTPS_PROXY``, ``HF_TOKEN``."""
    kind, description = describe(name)
    repo = description.sources.hf
    if not repo:
        raise ModelFetchError(f"fastembed cannot download {name} from a model hub; set a local model folder instead.")
    root = models_dir(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    _clear_stale_staging(root)
    staging = root / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        _quiet_hub()
        try:
            kind.download_files_from_huggingface(
                repo, cache_dir=str(staging), extra_patterns=[description.model_file, *description.additional_files]
            )
        except Exception as exc:  # the hub's client and httpx raise many kinds: each becomes one sentence
            raise ModelFetchError(_download_failure(name, exc)) from exc
        _verify(staging / _repo_folder(repo))
        target = root / _repo_folder(repo)
        old = root / f"{STAGING_PREFIX}old-{uuid.uuid4().hex[:8]}"
        if target.exists():
            os.replace(target, old)  # the next line puts the new one in place; a crash between leaves no half
        os.replace(staging / _repo_folder(repo), target)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise ModelFetchError(f"The embedding model could not be stored in {root} ({exc.strerror or exc}).") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    folder = installed(data_dir, name)
    if folder is None:
        raise ModelFetchError(f"The download of {name} is missing files, so nothing was kept.")
    if quantizable(name):
        shutil.rmtree(int8_folder(data_dir, name), ignore_errors=True)  # made from the model just replaced
        with contextlib.suppress(ModelFetchError):  # the float32 model serves; loading tries once more
            make_int8(data_dir, name, folder)
    return folder


def remove(data_dir: Path, name: str) -> bool:
    """Delete the managed copy of ``name`` and its int8 copy; False when there was none."""
    _, description = describe(name)
    removed = False
    for target in (models_dir(data_dir) / _repo_folder(description.sources.hf), int8_folder(data_dir, name)):
        if target.exists():
            aside = target.with_name(f"{STAGING_PREFIX}removed-{uuid.uuid4().hex[:8]}")
            os.replace(target, aside)  # gone at once for any loader; the bytes follow
            shutil.rmtree(aside, ignore_errors=True)
            removed = True
    return removed


def model_file(name: str) -> str:
    """The ONNX file fastembed loads for ``name`` (``model.onnx`` for most; some exports name it otherwise)."""
    try:
        return str(describe(name)[1].model_file)
    except ValueError:
        return "model.onnx"


def fingerprint(folder: Path, name: str) -> str:
    """sha256 of the folder's model file (what the vectors were made with), and of the lookup tables kept
    beside it when there are (an int8 copy's, :data:`claude_memory.store.quantize.TABLES_FILE`)."""
    from claude_memory.store.quantize import TABLES_FILE

    model, tables = folder / model_file(name), folder / TABLES_FILE
    if not tables.exists():
        return _sha256(model)
    return hashlib.sha256(f"{_sha256(model)} {_sha256(tables)}".encode()).hexdigest()


# ---------------------------------------------------------------------- internals


def _verify(repo: Path) -> None:
    """Every downloaded file against the checksum its blob is named by."""
    snapshots = repo / "snapshots"
    for link in sorted(snapshots.rglob("*")):
        if not link.is_file():
            continue
        blob = link.resolve()
        if _SHA256.fullmatch(blob.name):
            actual = _sha256(blob)
        elif _GIT_SHA1.fullmatch(blob.name):
            actual = _git_sha1(blob)
        else:
            continue  # no checksum was given for it
        if actual != blob.name:
            raise ModelFetchError(
                f"The downloaded {link.name} does not match its checksum (a damaged download or a bad mirror), "
                "so nothing was kept."
            )


def _sha256(path: Path) -> str:
    return _digest(path, hashlib.sha256())


def _git_sha1(path: Path) -> str:
    """The hash git names a blob by: sha1 of a ``blob <size>`` header and the content."""
    return _digest(path, hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False))


def _digest(path: Path, digest: Any) -> str:
    """``digest`` (a hashlib object) updated with the file's content, as hex."""
    with path.open("rb") as handle:
        while block := handle.read(_READ):
            digest.update(block)
    return str(digest.hexdigest())


def _clear_stale_staging(root: Path) -> None:
    """Staging folders of downloads whose process is gone (killed half-way)."""
    for staging in root.glob(STAGING_PREFIX + "*"):
        pid = staging.name.removeprefix(STAGING_PREFIX).split("-")[0]
        if not pid.isdigit() or not _alive(int(pid)):
            shutil.rmtree(staging, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _quiet_hub() -> None:
    """The hub's client prints progress bars and retry notices to stderr: progress is ours (bytes staged), and a
    failure is one sentence."""
    from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]

    disable_progress_bars()
    logging.getLogger("huggingface_hub").setLevel(logging.CRITICAL)


def _download_failure(name: str, exc: Exception) -> str:
    """One sentence for a failed download, from the exception the hub's client raised."""
    kind = type(exc).__name__
    text = str(exc).splitlines()[0][:160] if str(exc) else ""
    if "Connect" in kind or "Timeout" in kind or "Network" in kind:
        why = "the model hub could not be reached"
    elif "Protocol" in kind or "consistency" in text.lower() or "corrupted" in text.lower():
        why = "the transfer was cut off or damaged"
    elif "NotFound" in kind:
        why = "the model hub does not have it"
    elif isinstance(exc, OSError) and exc.strerror:
        why = exc.strerror.lower()
    else:
        why = f"{kind}: {text}" if text else kind
    return f"The embedding model {name} could not be downloaded ({why})."
