"""A small XML element tree with line numbers, parsed safely with expat.

URDF and MJCF errors must name the line, which ``xml.etree`` does not keep, and robot
files come from the internet, so entity declarations (the billion-laughs and external
entity attacks) are refused outright: robot descriptions never need them. Expat is in the
standard library, so this costs no dependency (defusedxml would, and still not give lines).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from ..errors import MimicInputError
from ..input_files import read_input_bytes

#: Element nesting refused beyond this depth: MuJoCo's XML reader (tinyxml2) stops at the
#: same depth, no robot comes near it, and it keeps every tree walk far from Python's
#: recursion limit.
MAX_DEPTH = 500


@dataclass
class Element:
    """One XML element: tag, attributes, children, text, and where it was written."""

    tag: str
    attrib: dict[str, str]
    line: int
    file: Path
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrib.get(name, default)

    def find(self, tag: str) -> Element | None:
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> list[Element]:
        return [c for c in self.children if c.tag == tag]

    def iter(self, tag: str | None = None) -> Iterator[Element]:
        stack = [self]
        while stack:
            el = stack.pop()
            if tag is None or el.tag == tag:
                yield el
            stack.extend(reversed(el.children))

    @property
    def where(self) -> str:
        """``file:line`` for messages."""
        return f"{self.file}:{self.line}"


class _Refused(Exception):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def parse_xml(path: str | os.PathLike) -> Element:
    """Parse ``path`` into an ``Element`` tree; any problem is a one-line ``MimicInputError``."""
    p = Path(path)
    return parse_xml_bytes(read_input_bytes(p, "robot description"), p)


def parse_xml_bytes(data: bytes, path: Path) -> Element:
    """Parse XML held in memory (``path`` only names it in messages)."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    root: list[Element] = []

    def refuse_entity(name, *args):
        raise _Refused(
            f"entity declaration '{name}' refused (robot files do not need entities)", parser.CurrentLineNumber
        )

    def refuse_external(*args):
        raise _Refused("external entity reference refused", parser.CurrentLineNumber)

    def start(tag, attrs):
        if len(stack) >= MAX_DEPTH:
            raise _Refused(
                f"<{tag}> is nested deeper than {MAX_DEPTH} elements (MuJoCo stops there too)", parser.CurrentLineNumber
            )
        el = Element(tag=tag, attrib=dict(attrs), line=parser.CurrentLineNumber, file=path)
        if stack:
            stack[-1].children.append(el)
        else:
            root.append(el)
        stack.append(el)

    def end(tag):
        stack.pop()

    def chars(text):
        if stack:
            stack[-1].text += text

    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_external
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise MimicInputError(f"{path}:{exc.line}: {exc}") from None
    except expat.ExpatError as exc:
        raise MimicInputError(f"{path}:{exc.lineno}: malformed XML: {expat.ErrorString(exc.code)}") from None
    except LookupError as exc:  # <?xml encoding="..."?> naming a codec Python does not have
        raise MimicInputError(f"{path}:1: unknown XML encoding ({exc}): save the file as UTF-8") from None
    except UnicodeError as exc:
        raise MimicInputError(
            f"{path}:{parser.CurrentLineNumber}: the text does not match its XML "
            f"encoding ({getattr(exc, 'reason', exc)}): save the file as UTF-8"
        ) from None
    if not root:
        raise MimicInputError(f"{path}: no XML element found")
    return root[0]
