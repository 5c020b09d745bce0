"""MathML read as one line of text (anchors §3.6): a ``<math>`` element's TeX annotation, else a linear form.

:func:`math_text` is what :func:`syncd.normalize.text.jats_to_text` emits for an inline or display
formula: the TeX of an ``annotation`` whose ``encoding`` names TeX, else a linear reading of the
presentation markup (``x_{i}^{2}``, ``(Np)/(N−p)``, ``√(x)``, fences with their separators, prescripts
ahead of the base; a fraction operand or script base grouped unless one token or already bracketed),
else the ``alttext`` attribute. It reads a tree built by the JATS tokenizer
(names local and lowercased); :func:`local_name` and :func:`element_children` are the tree helpers
both walks share. Pure, never raises on such a tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml import etree

__all__ = ["element_children", "local_name", "math_text"]

_WS = re.compile(r"\s+")


def local_name(el: etree._Element) -> str:
    """The element's tag (already local and lowercased by the tokenizer); ``""`` for a comment or PI."""
    tag = el.tag
    return tag if isinstance(tag, str) else ""


def element_children(el: etree._Element) -> Iterator[etree._Element]:
    """The element children of ``el`` (comments and processing instructions skipped), in order."""
    return (c for c in el if isinstance(c.tag, str))


_MML_TOKENS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
_SIMPLE = re.compile(r"[\w.′']+|.")


def _group(s: str) -> str:
    return s if len(s) == 1 else "{" + s + "}"


def _paren(s: str) -> str:
    return s if _SIMPLE.fullmatch(s) else f"({s})"


_OPENERS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "〈": "〉", "⌊": "⌋", "⌈": "⌉", "|": "|", "‖": "‖"}
"""A fence token's opening character and the one that closes it (``|`` and ``‖`` close themselves)."""


def _unwrapped(el: etree._Element) -> etree._Element:
    """``el`` without the ``mrow`` wrappers of one child each (``<mrow><mrow><mo>(</mo></mrow></mrow>``)."""
    while local_name(el) == "mrow":
        kids = list(element_children(el))
        if len(kids) != 1:
            break
        el = kids[0]
    return el


def _fence(el: etree._Element) -> str:
    """The text of an ``mo`` fence token (possibly wrapped), ``""`` for anything else."""
    el = _unwrapped(el)
    return "".join(el.itertext()).strip() if local_name(el) == "mo" else ""


def _bracketed(el: etree._Element) -> bool:
    """Whether ``el`` is bracketed: an ``mfenced``, or an ``mrow`` whose first fence closes at its end.

    ``(a+b)`` and ``|u|`` are; ``(a)+(b)`` and ``|a|+|b|`` are not: their first fence closes before the end.
    """
    if local_name(el) == "mfenced":
        return True
    kids = list(element_children(el)) if local_name(el) == "mrow" else []
    if len(kids) < 2 or _fence(kids[0]) not in _OPENERS:
        return False
    stack: list[str] = []
    for i, kid in enumerate(kids):
        mark = _fence(kid)
        if stack and mark == _OPENERS[stack[-1]]:
            stack.pop()
            if not stack:
                return i == len(kids) - 1
        elif mark in _OPENERS:
            stack.append(mark)
    return False


def _operand(el: etree._Element, text: str) -> str:
    """A fraction operand or script base, grouped unless it is one token or already bracketed.

    One token: a token element (``mi``, ``mn``, ``mo``...), alone or in ``mrow`` wrappers of one child
    (``a/2``, ``Airy_2``); bracketed: :func:`_bracketed` (``|u|^2``, ``(a+b)/2``). Anything else is put
    in parentheses: ``<mfrac><mrow><mi>N</mi><mi>p</mi></mrow>…`` reads ``(Np)/(N−p)``, as the anchor
    renders it.
    """
    inner = _unwrapped(el)
    if not text or local_name(inner) in _MML_TOKENS or _bracketed(inner):
        return text
    return f"({text})"


def math_text(el: etree._Element) -> str:
    """Read a MathML ``<math>`` element: its TeX annotation if present, else a linear form, else alttext."""
    for node in el.iter("annotation"):
        if "tex" in (node.get("encoding") or "").lower():
            tex = "".join(node.itertext()).strip()
            if tex:
                return _WS.sub(" ", tex)
    linear = _WS.sub(" ", _mml(el)).strip()
    return linear or (el.get("alttext") or "").strip()


def _mml(el: etree._Element) -> str:
    name = local_name(el)
    nodes = list(element_children(el))
    kids = [_mml(c) for c in nodes]
    if name in _MML_TOKENS:
        return "".join(el.itertext()).strip()
    if name in ("annotation", "annotation-xml", "mphantom", "none", "mprescripts"):
        return ""
    if name == "mspace":
        return " "
    if name == "semantics":
        return kids[0] if kids else ""
    if name in ("msub", "munder") and len(kids) >= 2:
        return f"{_operand(nodes[0], kids[0])}_{_group(kids[1])}"
    if name in ("msup", "mover") and len(kids) >= 2:
        return f"{_operand(nodes[0], kids[0])}^{_group(kids[1])}"
    if name in ("msubsup", "munderover") and len(kids) >= 3:
        return f"{_operand(nodes[0], kids[0])}_{_group(kids[1])}^{_group(kids[2])}"
    if name == "mfrac" and len(kids) >= 2:
        return f"{_operand(nodes[0], kids[0])}/{_operand(nodes[1], kids[1])}"
    if name == "msqrt":
        return f"√({''.join(kids)})"
    if name == "mroot" and len(kids) >= 2:
        return f"√[{kids[1]}]({kids[0]})"
    if name == "mfenced":
        return _mfenced(el, kids)
    if name == "mmultiscripts" and kids:
        return _multiscripts(el, kids)
    if name == "mtable":
        return "; ".join(k for k in kids if k)
    if name in ("mtr", "mlabeledtr"):
        return ", ".join(k for k in kids if k)
    if name == "maction":
        return kids[0] if kids else ""
    if not kids:
        return "".join(el.itertext()).strip()
    return "".join(kids)


def _multiscripts(el: etree._Element, kids: list[str]) -> str:
    """``mmultiscripts``: prescripts ahead of the base, postscripts after it (``^{33}Si``, ``R_i^j``).

    Children after the base come in (sub, sup) pairs, postscripts first; ``mprescripts`` starts the
    prescripts; ``none`` is an empty script.
    """
    names = [local_name(c) for c in element_children(el)]
    split = names.index("mprescripts") if "mprescripts" in names else len(names)

    def scripts(pairs: list[str]) -> str:
        out = ""
        for i in range(0, len(pairs), 2):
            sub, sup = pairs[i], pairs[i + 1] if i + 1 < len(pairs) else ""
            out += (f"_{_group(sub)}" if sub else "") + (f"^{_group(sup)}" if sup else "")
        return out

    return scripts(kids[split + 1 :]) + _paren(kids[0]) + scripts(kids[1:split])


def _mfenced(el: etree._Element, kids: list[str]) -> str:
    seps = el.get("separators")
    seps = "," if seps is None else seps.replace(" ", "")
    parts: list[str] = []
    for i, kid in enumerate(kids):
        if i and seps:
            parts.append(seps[min(i - 1, len(seps) - 1)])
        parts.append(kid)
    return f"{el.get('open', '(')}{''.join(parts)}{el.get('close', ')')}"
