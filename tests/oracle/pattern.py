"""The oracle's pattern matcher: a sequence of variables against the parsed pattern.

A pattern is taken from the optimizer's AST (``optimizer.ast``: Atom, Seq,
Kleene, Not), never from the plan's template. It is turned into a small tree

    ("var", name) | ("plus", node) | ("seq", [node | ("not", (negated var, ...)), ...])

and a word (the variables of a candidate trend, in order) is matched against
it like a regular expression by plain backtracking (memoised). Each way of
matching reports the negations that sit in the gaps it crosses: a ``NOT`` between
two items of a SEQ lies in the gap between the last event of the item before
and the first event of the item after (DESIGN §5). Leading and trailing NOTs of
the outermost SEQ are returned apart: they depend on the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Node = tuple[Any, ...]
PARTIAL = -1  # the word ended inside the pattern: it is a proper prefix of a longer match
Gap = tuple[int, tuple[str, ...]]  # (k, negated vars): no match between word[k-1] and word[k]


def _neg_vars(node: Any) -> list[str]:
    """``NOT P``: its variables in order, ``+`` dropped and SEQs flattened (docs/language.md)."""
    kind = type(node).__name__
    if kind == "Atom":
        return [node.var]
    if kind == "Kleene":
        return _neg_vars(node.inner)
    if kind == "Seq":
        return [v for item in node.items for v in _neg_vars(item)]
    raise ValueError(f"oracle: NOT inside NOT ({kind})")


def tree(node: Any) -> Node:
    """The oracle's tree of an AST pattern node."""
    kind = type(node).__name__
    if kind == "Atom":
        return ("var", node.var)
    if kind == "Kleene":
        return ("plus", tree(node.inner))
    if kind == "Seq":
        items: list[Node] = []
        for item in node.items:
            if type(item).__name__ == "Not":
                items.append(("not", tuple(_neg_vars(item.inner))))
            else:
                items.append(tree(item))
        return ("seq", items)
    raise ValueError(f"oracle: unexpected pattern node {kind}")


@dataclass(frozen=True)
class Pattern:
    """A query's pattern: the body to match and the outermost SEQ's leading/trailing NOTs."""

    body: Node
    leading: tuple[tuple[str, ...], ...]
    trailing: tuple[tuple[str, ...], ...]
    _known: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, ast_pattern: Any) -> Pattern:
        t = tree(ast_pattern)
        lead: list[tuple[str, ...]] = []
        trail: list[tuple[str, ...]] = []
        if t[0] == "seq":
            items = list(t[1])
            while items and items[0][0] == "not":
                lead.append(items.pop(0)[1])
            while items and items[-1][0] == "not":
                trail.insert(0, items.pop()[1])
            t = ("seq", items)
        return cls(t, tuple(lead), tuple(trail))

    def variables(self) -> list[str]:
        found: list[str] = []

        def walk(n: Node) -> None:
            if n[0] == "var":
                found.append(n[1])
            elif n[0] == "plus":
                walk(n[1])
            elif n[0] == "seq":
                for item in n[1]:
                    if item[0] != "not":
                        walk(item)

        walk(self.body)
        return found

    def parses(self, word: tuple[str, ...]) -> set[tuple[int, frozenset[Gap]]]:
        """Every way the body matches a prefix of ``word``: (end, gaps); end PARTIAL when the
        word ran out inside the pattern."""
        if word not in self._known:
            self._known[word] = self._parses(word)
        return self._known[word]

    def _parses(self, word: tuple[str, ...]) -> set[tuple[int, frozenset[Gap]]]:
        memo: dict[tuple[int, int], frozenset[tuple[int, frozenset[Gap]]]] = {}
        n = len(word)

        def match(node: Node, i: int) -> frozenset[tuple[int, frozenset[Gap]]]:
            key = (id(node), i)
            if key in memo:
                return memo[key]
            out: set[tuple[int, frozenset[Gap]]] = set()
            kind = node[0]
            if kind == "var":
                if i == n:
                    out.add((PARTIAL, frozenset()))
                elif word[i] == node[1]:
                    out.add((i + 1, frozenset()))
            elif kind == "plus":
                for j, g in match(node[1], i):
                    out.add((j, g))
                    if j != PARTIAL:
                        for j2, g2 in match(node, j):  # one more repetition (or more)
                            out.add((j2, g | g2))
            else:
                out |= seq(node[1], 0, i, ())
            memo[key] = frozenset(out)
            return memo[key]

        def seq(items: list[Node], k: int, i: int, pending: tuple) -> set:
            if k == len(items):
                return {(i, frozenset())}
            item = items[k]
            if item[0] == "not":
                return seq(items, k + 1, i, pending + (item[1],))
            out = set()
            gap = frozenset((i, neg) for neg in pending)
            for j, g in match(item, i):
                if j == PARTIAL:
                    out.add((PARTIAL, gap | g))
                    continue
                for j2, g2 in seq(items, k + 1, j, ()):
                    out.add((j2, gap | g | g2))
            return out

        return set(match(self.body, 0))

    def complete(self, word: tuple[str, ...]) -> list[frozenset[Gap]]:
        """The gap negations of each way ``word`` matches the whole body (empty: no match)."""
        return [g for j, g in self.parses(word) if j == len(word)]

    def viable(self, word: tuple[str, ...]) -> bool:
        """Whether ``word`` is a (possibly complete) prefix of a matching word."""
        return any(j == PARTIAL or j == len(word) for j, _ in self.parses(word))
