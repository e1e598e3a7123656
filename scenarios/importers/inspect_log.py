"""Reading an Inspect AI log file (``.eval`` or ``.json``) into typed headers and sample dicts.

Two paths give the same result. Where ``inspect_ai`` is installed (the ``proctor[inspect]``
extra), its own ``inspect_ai.log.read_eval_log`` reads the file, so a format change Inspect
makes is Inspect's to follow. Otherwise proctor reads the documented format itself:

- ``.eval``: a zip holding ``header.json`` (the log without samples: ``version``, ``status``,
  ``eval`` with ``task``/``model``/``config.epochs``, ``results``, ``error``),
  ``samples/<id>_epoch_<n>.json`` (one ``EvalSample`` each), ``summaries.json`` and, while a run
  is still going, ``_journal/start.json`` instead of the header.
- ``.json``: the whole ``EvalLog`` as one document, ``samples`` inline.

Large texts are stored once per sample under ``attachments`` and referenced as
``attachment://<hash>``; those references in the messages are resolved here.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from proctor.scenarios.importers.common import ImportFormatError

Reader = Literal["auto", "inspect_ai", "proctor"]
ZIP_ZSTANDARD = 93  # the zip method id of zstd, which Inspect writes (PKWARE APPNOTE 4.4.5)
# A zip entry's local file header (APPNOTE 4.3.7): signature, fixed fields, then the name and
# extra field, whose lengths are its last two fields.
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
ATTACHMENT = "attachment://"
_SAMPLE_FILE = re.compile(r"^samples/.+_epoch_\d+\.json$")
# Set to "proctor" to read with proctor's own reader even where inspect_ai is installed.
READER_ENV = "PROCTOR_INSPECT_READER"


@dataclass(frozen=True)
class InspectLog:
    """One log: where it came from, its header (``eval`` spec, status, error) and its samples."""

    path: Path
    header: dict[str, Any]
    samples: list[dict[str, Any]]
    reader: Literal["inspect_ai", "proctor"]

    @property
    def spec(self) -> dict[str, Any]:
        spec = self.header.get("eval")
        return spec if isinstance(spec, dict) else {}

    @property
    def task(self) -> str:
        return str(self.spec.get("task") or self.path.stem)

    @property
    def model(self) -> str:
        return str(self.spec.get("model") or "inspect:unknown")


def inspect_ai_installed() -> bool:
    return importlib.util.find_spec("inspect_ai") is not None


def chosen_reader(reader: Reader = "auto") -> Literal["inspect_ai", "proctor"]:
    """``inspect_ai`` where it is installed (unless ``PROCTOR_INSPECT_READER=proctor``)."""
    if reader == "auto":
        forced = os.environ.get(READER_ENV, "")
        if forced in ("proctor", "inspect_ai"):
            reader = forced  # type: ignore[assignment]
        else:
            reader = "inspect_ai" if inspect_ai_installed() else "proctor"
    return "inspect_ai" if reader == "inspect_ai" else "proctor"


def read_inspect_log(path: Path, reader: Reader = "auto") -> InspectLog:
    """The log at ``path``; an error naming the file and the fix when it is not an Inspect log."""
    if path.suffix not in (".eval", ".json"):
        raise ImportFormatError(
            f"{path}: not an Inspect log (expected a .eval or .json file written by inspect eval)"
        )
    how = chosen_reader(reader)
    if how == "inspect_ai":
        header, samples = _read_with_inspect_ai(path)
    elif path.suffix == ".eval":
        header, samples = _read_eval_zip(path)
    else:
        header, samples = _read_json_log(path)
    if not isinstance(header.get("eval"), dict):
        raise ImportFormatError(
            f"{path}: field 'eval': missing; an Inspect log names its task and model there "
            "(is this a log written by inspect eval?)"
        )
    return InspectLog(path, header, [_resolved(s) for s in samples], how)


def _load(data: bytes, where: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ImportFormatError(f"{where}: not valid JSON ({exc}); is the log complete?") from exc


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportFormatError(f"{path}: not a .eval log (not a zip archive: {exc})") from exc
    with zf:
        names = zf.namelist()
        head = "header.json" if "header.json" in names else "_journal/start.json"
        if head not in names:
            raise ImportFormatError(
                f"{path}: holds neither header.json nor _journal/start.json; not an Inspect .eval log"
            )
        header = _load(_entry(zf, head, path), f"{path}:{head}")
        if not isinstance(header, dict):
            raise ImportFormatError(f"{path}:{head}: expected a JSON object")
        samples = []
        for name in sorted(n for n in names if _SAMPLE_FILE.match(n)):
            sample = _load(_entry(zf, name, path), f"{path}:{name}")
            if not isinstance(sample, dict):
                raise ImportFormatError(f"{path}:{name}: expected a sample object")
            samples.append(sample)
    return header, samples


def _entry(zf: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """An entry's bytes; zstd entries (Python's zipfile reads them only from 3.14) are read raw
    from their local header on and decompressed with ``zstandard``."""
    info = zf.getinfo(name)
    if info.compress_type != ZIP_ZSTANDARD:
        try:
            return zf.read(info)
        except (zipfile.BadZipFile, NotImplementedError, OSError) as exc:
            raise ImportFormatError(f"{path}:{name}: cannot read the entry ({exc})") from exc
    import zstandard

    fp = zf.fp
    assert fp is not None  # the archive is open
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise ImportFormatError(f"{path}:{name}: bad local file header; the .eval file is damaged")
    fields = _LOCAL_HEADER.unpack(header)
    fp.seek(info.header_offset + _LOCAL_HEADER.size + fields[10] + fields[11])
    raw = fp.read(info.compress_size)
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as r:
            return r.read()
    except zstandard.ZstdError as exc:
        raise ImportFormatError(
            f"{path}:{name}: cannot decompress the entry ({exc}); the file is damaged"
        ) from exc


def _read_json_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = _load(path.read_bytes(), str(path))
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read ({exc.strerror})") from exc
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path}: expected an Inspect log object, got {type(data).__name__}")
    samples = data.get("samples") or []
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise ImportFormatError(f"{path}, field 'samples': expected a list of sample objects")
    return {k: v for k, v in data.items() if k != "samples"}, samples


def _read_with_inspect_ai(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from inspect_ai.log import read_eval_log  # type: ignore[import-not-found, unused-ignore]

    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except Exception as exc:
        raise ImportFormatError(f"{path}: inspect_ai cannot read it ({type(exc).__name__}: {exc})") from exc
    data: dict[str, Any] = log.model_dump(mode="json", exclude={"samples"})
    samples = [s.model_dump(mode="json") for s in (log.samples or [])]
    return data, samples


def _resolved(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample with ``attachment://`` references in its input, messages and output resolved."""
    attachments = sample.get("attachments")
    if not isinstance(attachments, dict) or not attachments:
        return sample
    out = dict(sample)
    for key in ("input", "messages", "output"):
        if key in out:
            out[key] = _resolve(out[key], attachments)
    return out


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


__all__ = [
    "READER_ENV",
    "InspectLog",
    "Reader",
    "chosen_reader",
    "inspect_ai_installed",
    "read_inspect_log",
]
