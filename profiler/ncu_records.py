"""Record lengths of an `.ncu-rep`, checked in the parent before ncu_report reads it (ncu_report says nothing
useful of a file cut short): which launches are whole, and where a cut falls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# record lengths: an .ncu-rep is "NVR\0" then records, each a little-endian uint32 length and that
# many bytes of protobuf. A block header record (fields 1 sources, 2 results, 5 payload bytes + 4)
# announces the record after it; one with results >= 1 is a launch record. Checked here, in the
# parent, so a file cut inside a record says exactly what is whole (ncu_report does not).

_HEADER_READ_MAX = 1 << 18  # block headers are small (the largest seen: 30 KB with its metric names)


@dataclass(frozen=True)
class RecordWalk:
    whole_launches: int  # launches whose header and payload are both whole
    cut: str | None  # None: every record's declared length fits the file
    whole_bytes: int = 0  # where the last whole record ends


def _varint(b: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("varint runs past the record")
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, i


def _block_header(b: bytes, partial: bool = False) -> tuple[int, int] | None:
    """(results, payload bytes + 4) of a block header record, or None for any other record.
    `partial`: `b` is the start of a cut record: (results, 0) once its results field is read."""
    fields: dict[int, int | None] = {}
    i = 0
    try:
        while i < len(b):
            key, i = _varint(b, i)
            number, wire = key >> 3, key & 7
            value = None
            if wire == 0:
                value, i = _varint(b, i)
            elif wire == 2:
                n, i = _varint(b, i)
                i += n
            elif wire in (1, 5):
                i += 8 if wire == 1 else 4
            else:
                return None
            if i > len(b):
                raise ValueError("field runs past the record")
            fields.setdefault(number, value)
    except ValueError:
        return (fields[2], 0) if partial and isinstance(fields.get(2), int) else None
    if isinstance(fields.get(2), int) and isinstance(fields.get(5), int):
        return fields[2], fields[5]
    return None


def walk_records(path: Path) -> RecordWalk:
    """Check every record's declared length against the bytes left; count the whole launches."""
    size = path.stat().st_size
    whole, pending, pos = 0, None, 4  # pending: (results, payload length + 4) of the last header
    start = pos  # where the pending header starts: the whole records end there when it is cut
    with open(path, "rb") as f:
        if f.read(4) != b"NVR\x00":
            return RecordWalk(0, None)
        while pos < size:
            f.seek(pos)
            prefix = f.read(4)
            if len(prefix) < 4:
                return RecordWalk(
                    whole,
                    _cut_text(pending, whole, f"a record's length prefix ({len(prefix)} of 4 bytes)"),
                    start if pending else pos,
                )
            n = int.from_bytes(prefix, "little")
            left = size - pos - 4
            if n > left:
                return RecordWalk(
                    whole,
                    _cut_text(
                        pending,
                        whole,
                        f"a record declaring {n} bytes, {left} left",
                        header=_block_header(f.read(min(n, _HEADER_READ_MAX)), partial=True),
                    ),
                    start if pending else pos,
                )
            if pending is not None and n + 4 == pending[1]:  # the payload the last header announced
                whole += pending[0]
                pending = None
            else:
                header = _block_header(f.read(n)) if n <= _HEADER_READ_MAX else None
                pending = header if header is not None and header[1] > 0 else None
                start = pos
            pos += 4 + n
    if pending is not None:
        return RecordWalk(whole, _cut_text(pending, whole, "the end of the file, just after a record header"), start)
    return RecordWalk(whole, None, pos)


def _cut_text(pending, whole: int, where: str, header=None) -> str:
    launches = f"{whole} whole launch{'es' if whole != 1 else ''}"
    in_launch = (pending is not None and pending[0]) or (header is not None and header[0])
    if in_launch:
        return f"cut inside launch record {whole + 1}: {launches} ({where})"
    return f"cut short after {launches} ({where})"
