"""A small, safe expression language for a spec's `formula`: numbers, names, + - * /, unary minus,
parentheses and the functions min, max, abs, ceil and floor.

Written by hand, a tokenizer and a recursive-descent parser into a tree of frozen values, and an evaluator
that walks the tree: no `eval`, no Python `ast`, nothing a formula can reach beyond the values it is given.
`parse` refuses, with the 1-based column of the problem, a syntax error, an unknown function, a function
with the wrong number of arguments, a division by a constant zero (`x / 0`, `x / (2 - 2)`), a formula
too long or too deeply nested; `names` lists the names a formula reads, so the spec layer can refuse a name
that is not an input. `evaluate` raises `FormulaEvaluationError` on a division by zero at run time and on a
result that is not a finite number, never returning a made-up value. Standard library only.

Grammar (the usual precedence; binary operators associate to the left):

    formula := sum END
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/") unary)*
    unary   := ("-" | "+") unary | primary
    primary := NUMBER | NAME | NAME "(" sum ("," sum)* ")" | "(" sum ")"
    NUMBER  := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   (or "." digits ...)
    NAME    := [A-Za-z_][A-Za-z0-9_]*
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from autoscaler.core.errors import CoreError

MAX_LENGTH = 512  # characters: far above any real formula; keeps parsing and evaluation small
MAX_DEPTH = 32  # nesting of parentheses, calls and unary signs: keeps the recursion far from Python's limit


class FormulaError(CoreError):
    """A formula that cannot be used; `column` (1-based) points at the problem, `message` says what it is."""

    def __init__(self, message: str, *, column: int) -> None:
        super().__init__(f"column {column}: {message}")
        self.message = message
        self.column = column


class FormulaEvaluationError(CoreError):
    """A formula that has no value for these inputs (a division by zero, a result too large)."""

    def __init__(self, message: str, *, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


# --- the tree ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Number:
    value: float
    column: int


@dataclass(frozen=True, slots=True)
class Name:
    name: str
    column: int


@dataclass(frozen=True, slots=True)
class Negate:
    operand: Node
    column: int


@dataclass(frozen=True, slots=True)
class Binary:
    operator: str  # one of + - * /
    left: Node
    right: Node
    column: int  # the operator's


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    arguments: tuple[Node, ...]
    column: int


Node = Number | Name | Negate | Binary | Call


@dataclass(frozen=True, slots=True)
class _Function:
    minimum: int  # arguments
    maximum: int | None  # None: no upper bound
    apply: Callable[[list[float]], float]


FUNCTIONS: dict[str, _Function] = {
    "abs": _Function(1, 1, lambda a: abs(a[0])),
    "ceil": _Function(1, 1, lambda a: float(math.ceil(a[0]))),
    "floor": _Function(1, 1, lambda a: float(math.floor(a[0]))),
    "max": _Function(2, None, max),
    "min": _Function(2, None, min),
}


@dataclass(frozen=True, slots=True)
class Formula:
    """A parsed formula: its text and its tree."""

    text: str
    tree: Node

    @property
    def names(self) -> tuple[str, ...]:
        """The names the formula reads, in order of first appearance."""
        return tuple(dict.fromkeys(_names(self.tree)))


# --- tokens --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "number", "name", "op" (one of + - * / ( ) ,), "end"
    text: str
    column: int


def _number_end(text: str, start: int) -> int:
    """Where the number starting at `start` ends (digits, a fraction, an exponent)."""
    i = start
    while i < len(text) and text[i].isascii() and text[i].isdigit():
        i += 1
    if i < len(text) and text[i] == ".":
        i += 1
        while i < len(text) and text[i].isascii() and text[i].isdigit():
            i += 1
    if i < len(text) and text[i] in "eE":
        j = i + 1
        if j < len(text) and text[j] in "+-":
            j += 1
        if j < len(text) and text[j].isascii() and text[j].isdigit():
            while j < len(text) and text[j].isascii() and text[j].isdigit():
                j += 1
            i = j
    return i


def _is_name_start(char: str) -> bool:
    return char == "_" or (char.isascii() and char.isalpha())


def _is_name_part(char: str) -> bool:
    return char == "_" or (char.isascii() and char.isalnum())


def tokenize(text: str) -> list[_Token]:
    """The tokens of `text`, ending with an "end" token; raises FormulaError at an unknown character."""
    tokens: list[_Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in " \t\r\n":
            i += 1
        elif (char.isascii() and char.isdigit()) or (
            char == "." and i + 1 < len(text) and text[i + 1].isascii() and text[i + 1].isdigit()
        ):
            end = _number_end(text, i)
            tokens.append(_Token("number", text[i:end], i + 1))
            i = end
        elif _is_name_start(char):
            end = i + 1
            while end < len(text) and _is_name_part(text[end]):
                end += 1
            tokens.append(_Token("name", text[i:end], i + 1))
            i = end
        elif char in "+-*/(),":
            tokens.append(_Token("op", char, i + 1))
            i += 1
        else:
            raise FormulaError(f"unexpected character {char!r}", column=i + 1)
    tokens.append(_Token("end", "", len(text) + 1))
    return tokens


# --- the parser ----------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._at = 0
        self._depth = 0

    def _peek(self) -> _Token:
        return self._tokens[self._at]

    def _next(self) -> _Token:
        token = self._tokens[self._at]
        if token.kind != "end":
            self._at += 1
        return token

    def _is(self, *ops: str) -> bool:
        token = self._peek()
        return token.kind == "op" and token.text in ops

    def _expect(self, op: str, what: str) -> _Token:
        token = self._peek()
        if token.kind == "op" and token.text == op:
            return self._next()
        raise FormulaError(f"expected {what}, found {_describe(token)}", column=token.column)

    def _nested(self, column: int) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise FormulaError(f"nested more than {MAX_DEPTH} levels deep", column=column)

    def formula(self) -> Node:
        tree = self.sum()
        token = self._peek()
        if token.kind != "end":
            raise FormulaError(f"expected an operator or the end, found {_describe(token)}", column=token.column)
        return tree

    def sum(self) -> Node:
        left = self.product()
        while self._is("+", "-"):
            op = self._next()
            left = Binary(op.text, left, self.product(), op.column)
        return left

    def product(self) -> Node:
        left = self.unary()
        while self._is("*", "/"):
            op = self._next()
            right = self.unary()
            if op.text == "/":
                divisor = _constant(right)
                if divisor == 0:
                    raise FormulaError("division by zero (the divisor is a constant 0)", column=op.column)
            left = Binary(op.text, left, right, op.column)
        return left

    def unary(self) -> Node:
        if self._is("-", "+"):
            op = self._next()
            self._nested(op.column)
            operand = self.unary()
            self._depth -= 1
            return Negate(operand, op.column) if op.text == "-" else operand
        return self.primary()

    def primary(self) -> Node:
        token = self._next()
        if token.kind == "number":
            try:
                value = float(token.text)
            except ValueError as err:  # pragma: no cover - the tokenizer only forms valid numbers
                raise FormulaError(f"{token.text!r} is not a number", column=token.column) from err
            if not math.isfinite(value):
                raise FormulaError(f"{token.text} is too large", column=token.column)
            return Number(value, token.column)
        if token.kind == "name":
            if self._is("("):
                return self.call(token)
            if token.text in FUNCTIONS:
                raise FormulaError(f"{token.text} is a function: call it as {token.text}(...)", column=token.column)
            return Name(token.text, token.column)
        if token.kind == "op" and token.text == "(":
            self._nested(token.column)
            inner = self.sum()
            self._expect(")", "')'")
            self._depth -= 1
            return inner
        raise FormulaError(f"expected a number, a name or '(', found {_describe(token)}", column=token.column)

    def call(self, name: _Token) -> Node:
        function = FUNCTIONS.get(name.text)
        if function is None:
            known = ", ".join(sorted(FUNCTIONS))
            raise FormulaError(f"unknown function {name.text!r} (known: {known})", column=name.column)
        self._nested(name.column)
        self._expect("(", "'('")
        arguments = [self.sum()]
        while self._is(","):
            self._next()
            arguments.append(self.sum())
        self._expect(")", "',' or ')'")
        self._depth -= 1
        count = len(arguments)
        if count < function.minimum or (function.maximum is not None and count > function.maximum):
            raise FormulaError(
                f"{name.text}() takes {_arity(function)}, not {count}",
                column=name.column,
            )
        return Call(name.text, tuple(arguments), name.column)


def _arity(function: _Function) -> str:
    if function.maximum == function.minimum:
        return f"{function.minimum} argument{'s' if function.minimum != 1 else ''}"
    return f"{function.minimum} or more arguments"


def _describe(token: _Token) -> str:
    if token.kind == "end":
        return "the end of the formula"
    return f"{token.text!r}"


def _names(node: Node) -> list[str]:
    match node:
        case Name():
            return [node.name]
        case Negate():
            return _names(node.operand)
        case Binary():
            return _names(node.left) + _names(node.right)
        case Call():
            return [name for argument in node.arguments for name in _names(argument)]
    return []


def _constant(node: Node) -> float | None:
    """The value of a part without names (None when it reads a name or has no value)."""
    if _names(node):
        return None
    try:
        return evaluate_tree(node, {})
    except FormulaEvaluationError:
        return None


def parse(text: str) -> Formula:
    """Parse a formula, raising FormulaError (with the column) for anything it refuses."""
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"longer than {MAX_LENGTH} characters", column=MAX_LENGTH + 1)
    if not text.strip():
        raise FormulaError("empty formula", column=1)
    return Formula(text, _Parser(tokenize(text)).formula())


def check_names(formula: Formula, known: Mapping[str, object] | frozenset[str] | set[str]) -> None:
    """Raise FormulaError at the first name of `formula` that is not in `known`."""
    for node in _name_nodes(formula.tree):
        if node.name not in known:
            choices = ", ".join(sorted(known)) or "none"
            raise FormulaError(f"unknown name {node.name!r} (the inputs: {choices})", column=node.column)


def _name_nodes(node: Node) -> list[Name]:
    match node:
        case Name():
            return [node]
        case Negate():
            return _name_nodes(node.operand)
        case Binary():
            return _name_nodes(node.left) + _name_nodes(node.right)
        case Call():
            return [n for argument in node.arguments for n in _name_nodes(argument)]
    return []


# --- evaluation ----------------------------------------------------------------------------------------


def evaluate(formula: Formula, values: Mapping[str, float]) -> float:
    """The formula's value for `values` (one per name); FormulaEvaluationError when it has none."""
    return evaluate_tree(formula.tree, values)


def evaluate_tree(node: Node, values: Mapping[str, float]) -> float:
    """The value of one tree; every step must stay a finite number."""
    match node:
        case Number():
            return node.value
        case Name():
            if node.name not in values:
                raise FormulaEvaluationError(f"no value for {node.name!r}", column=node.column)
            return _finite(float(values[node.name]), node.column)
        case Negate():
            return -evaluate_tree(node.operand, values)
        case Binary():
            left = evaluate_tree(node.left, values)
            right = evaluate_tree(node.right, values)
            if node.operator == "+":
                return _finite(left + right, node.column)
            if node.operator == "-":
                return _finite(left - right, node.column)
            if node.operator == "*":
                return _finite(left * right, node.column)
            if right == 0:
                raise FormulaEvaluationError(f"division by zero at column {node.column}", column=node.column)
            return _finite(left / right, node.column)
        case Call():
            arguments = [evaluate_tree(argument, values) for argument in node.arguments]
            return _finite(FUNCTIONS[node.function].apply(arguments), node.column)
    raise FormulaEvaluationError(f"unknown node {node!r}")  # pragma: no cover


def _finite(value: float, column: int) -> float:
    if not math.isfinite(value):
        raise FormulaEvaluationError(f"the value at column {column} is not a finite number", column=column)
    return value


def render(node: Node) -> str:
    """The tree back as text, fully parenthesized (for explanations and tests)."""
    match node:
        case Number():
            return repr(node.value)
        case Name():
            return node.name
        case Negate():
            return f"(-{render(node.operand)})"
        case Binary():
            return f"({render(node.left)} {node.operator} {render(node.right)})"
        case Call():
            return f"{node.function}({', '.join(render(a) for a in node.arguments)})"
    raise FormulaEvaluationError(f"unknown node {node!r}")  # pragma: no cover


__all__ = [
    "FUNCTIONS",
    "Formula",
    "FormulaError",
    "FormulaEvaluationError",
    "check_names",
    "evaluate",
    "parse",
    "render",
    "tokenize",
]
