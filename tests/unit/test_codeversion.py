"""The service's own-code fingerprint: it changes with the Python sources, not with bytecode or other files."""

from __future__ import annotations

import os
from pathlib import Path

from claude_memory.service.codeversion import CodeVersion, fingerprint, package_root


def _tree(root: Path) -> Path:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "mod.py").write_text("X = 1\n")
    return root / "pkg"


def test_an_edited_added_or_removed_source_changes_the_fingerprint(tmp_path: Path) -> None:
    pkg = _tree(tmp_path)
    code = CodeVersion(pkg)
    assert not code.changed()
    mod = pkg / "sub" / "mod.py"
    mod.write_text("X = 22\n")  # another size
    assert code.changed()

    code = CodeVersion(pkg)
    stat = mod.stat()
    os.utime(mod, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # same size, new time (git checkout)
    assert code.changed()

    code = CodeVersion(pkg)
    (pkg / "new.py").write_text("")
    assert code.changed()

    code = CodeVersion(pkg)
    (pkg / "new.py").unlink()
    assert code.changed()


def test_bytecode_and_other_files_do_not_change_it(tmp_path: Path) -> None:
    pkg = _tree(tmp_path)
    before = fingerprint(pkg)
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "mod.cpython-312.py").write_text("written by compileall")
    (pkg / "notes.txt").write_text("x")
    assert fingerprint(pkg) == before


def test_the_default_root_is_this_package() -> None:
    assert (package_root() / "service" / "codeversion.py").is_file()
