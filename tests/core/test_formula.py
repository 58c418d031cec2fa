"""The formula language (autoscaler/core/formula.py): what it reads, what it refuses and where, what it computes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autoscaler.core.formula import (
    MAX_DEPTH,
    MAX_LENGTH,
    Binary,
    Call,
    FormulaError,
    FormulaEvaluationError,
    Name,
    Negate,
    Node,
    Number,
    evaluate,
    evaluate_tree,
    parse,
    render,
)

VALUES = {"queue": 120.0, "consumers": 4.0, "zero": 0.0, "neg": -2.5, "_x1": 3.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("42", 42.0, id="an integer"),
        pytest.param("1.5", 1.5, id="a decimal"),
        pytest.param(".5", 0.5, id="a decimal without its leading zero"),
        pytest.param("2.", 2.0, id="a decimal without digits after the point"),
        pytest.param("1e3", 1000.0, id="an exponent"),
        pytest.param("2.5E-1", 0.25, id="a signed exponent in capitals"),
        pytest.param("queue", 120.0, id="a name"),
        pytest.param("_x1", 3.0, id="a name with an underscore and a digit"),
        pytest.param("queue / max(consumers, 1)", 30.0, id="the issue's example"),
        pytest.param("queue / max(zero, 1)", 120.0, id="max keeps a zero divisor away"),
        pytest.param("1 + 2 * 3", 7.0, id="* before +"),
        pytest.param("(1 + 2) * 3", 9.0, id="parentheses first"),
        pytest.param("10 - 4 - 3", 3.0, id="- associates to the left"),
        pytest.param("64 / 4 / 2", 8.0, id="/ associates to the left"),
        pytest.param("-3", -3.0, id="unary minus"),
        pytest.param("--3", 3.0, id="two unary minuses"),
        pytest.param("+3", 3.0, id="unary plus"),
        pytest.param("-queue * 2", -240.0, id="unary minus binds tighter than *"),
        pytest.param("2 * -neg", 5.0, id="unary minus after an operator"),
        pytest.param("abs(neg)", 2.5, id="abs"),
        pytest.param("ceil(neg)", -2.0, id="ceil of a negative"),
        pytest.param("floor(neg)", -3.0, id="floor of a negative"),
        pytest.param("ceil(queue / 7)", 18.0, id="ceil of a fraction"),
        pytest.param("min(queue, consumers, 3)", 3.0, id="min of three"),
        pytest.param("max(1, 2)", 2.0, id="max of two constants"),
        pytest.param("max(min(queue, 100), consumers) - floor(1.9)", 99.0, id="nested calls"),
        pytest.param("  queue\t/\n consumers ", 30.0, id="white space anywhere"),
        pytest.param("queue/consumers", 30.0, id="no white space"),
        pytest.param("((((queue))))", 120.0, id="redundant parentheses"),
        pytest.param("0 / queue", 0.0, id="a zero dividend"),
        pytest.param("queue / 0.5", 240.0, id="a fractional divisor"),
    ],
)
def test_a_valid_formula_has_its_value(text: str, expected: float) -> None:
    assert evaluate(parse(text), VALUES) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        pytest.param("", "empty formula", 1, id="empty"),
        pytest.param("   ", "empty formula", 1, id="only spaces"),
        pytest.param("queue +", "expected a number, a name or '(', found the end of the formula", 8, id="a dangling +"),
        pytest.param("* queue", "expected a number, a name or '(', found '*'", 1, id="a leading *"),
        pytest.param("queue consumers", "expected an operator or the end, found 'consumers'", 7, id="two names"),
        pytest.param("(queue", "expected ')', found the end of the formula", 7, id="an open parenthesis"),
        pytest.param("queue)", "expected an operator or the end, found ')'", 6, id="a closing parenthesis"),
        pytest.param("()", "expected a number, a name or '(', found ')'", 2, id="empty parentheses"),
        pytest.param("queue % 2", "unexpected character '%'", 7, id="an unknown operator"),
        pytest.param("queue ** 2", "expected a number, a name or '(', found '*'", 8, id="a power"),
        pytest.param("queue == 2", "unexpected character '='", 7, id="a comparison"),
        pytest.param("queue.depth", "unexpected character '.'", 6, id="an attribute"),
        pytest.param("__import__(os)", "unknown function '__import__' (known: abs, ceil, floor, max, min)", 1,
                     id="an import"),
        pytest.param("queue[0]", "unexpected character '['", 6, id="an index"),
        pytest.param("'a'", "unexpected character \"'\"", 1, id="a string"),
        pytest.param("sqrt(queue)", "unknown function 'sqrt' (known: abs, ceil, floor, max, min)", 1,
                     id="an unknown function"),
        pytest.param("max(queue)", "max() takes 2 or more arguments, not 1", 1, id="max with one argument"),
        pytest.param("min()", "expected a number, a name or '(', found ')'", 5, id="min with none"),
        pytest.param("abs(queue, 1)", "abs() takes 1 argument, not 2", 1, id="abs with two arguments"),
        pytest.param("1 + ceil(1, 2)", "ceil() takes 1 argument, not 2", 5, id="ceil with two, at its column"),
        pytest.param("max(queue,)", "expected a number, a name or '(', found ')'", 11, id="a trailing comma"),
        pytest.param("max + 1", "max is a function: call it as max(...)", 1, id="a function used as a value"),
        pytest.param("queue / 0", "division by zero (the divisor is a constant 0)", 7, id="a literal zero divisor"),
        pytest.param("queue / (2 - 2)", "division by zero (the divisor is a constant 0)", 7,
                     id="a constant zero divisor"),
        pytest.param("queue / -0.0", "division by zero (the divisor is a constant 0)", 7, id="minus zero"),
        pytest.param("queue / abs(0)", "division by zero (the divisor is a constant 0)", 7, id="a zero call"),
        pytest.param("1e999", "1e999 is too large", 1, id="an infinite number"),
        pytest.param("queue ¹", "unexpected character '¹'", 7, id="a non-ASCII digit"),
        pytest.param("é", "unexpected character 'é'", 1, id="a non-ASCII letter"),
        pytest.param("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} levels deep",
                     MAX_DEPTH + 1, id="too deep"),
        pytest.param("-" * (MAX_DEPTH + 1) + "1", f"nested more than {MAX_DEPTH} levels deep", MAX_DEPTH + 1,
                     id="too many signs"),
        pytest.param("1" + "+1" * MAX_LENGTH, f"longer than {MAX_LENGTH} characters", MAX_LENGTH + 1, id="too long"),
    ],
)  # fmt: skip
def test_an_invalid_formula_is_refused_at_its_column(text: str, message: str, column: int) -> None:
    with pytest.raises(FormulaError) as caught:
        parse(text)
    assert (caught.value.message, caught.value.column) == (message, column)
    assert str(caught.value) == f"column {column}: {message}"


@pytest.mark.parametrize(
    ("text", "values", "message"),
    [
        pytest.param("queue / consumers", {"queue": 1.0, "consumers": 0.0}, "division by zero at column 7",
                     id="a divisor that is zero now"),
        pytest.param("queue / (consumers - 4)", {"queue": 1.0, "consumers": 4.0}, "division by zero at column 7",
                     id="a divisor that computes to zero"),
        pytest.param("queue * queue", {"queue": 1e200}, "the value at column 7 is not a finite number",
                     id="an overflow"),
        pytest.param("queue", {"queue": math.nan}, "the value at column 1 is not a finite number", id="a NaN input"),
        pytest.param("queue", {}, "no value for 'queue'", id="a missing input"),
    ],
)  # fmt: skip
def test_a_formula_without_a_value_raises_never_a_number(text: str, values: dict[str, float], message: str) -> None:
    with pytest.raises(FormulaEvaluationError, match=message):
        evaluate(parse(text), values)


def test_names_are_listed_once_in_order_of_appearance() -> None:
    assert parse("b + a * max(b, c, 1) - a").names == ("b", "a", "c")


# --- properties ---------------------------------------------------------------------------------------------

NAMES = ("queue", "consumers", "rate")
_leaf = st.one_of(
    st.builds(Number, st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False), st.just(0)),
    st.builds(Name, st.sampled_from(NAMES), st.just(0)),
)


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.builds(Negate, children, st.just(0)),
        st.builds(Binary, st.sampled_from("+-*"), children, children, st.just(0)),
        st.builds(Binary, st.just("/"), children, st.builds(Name, st.sampled_from(NAMES), st.just(0)), st.just(0)),
        st.builds(Call, st.sampled_from(("abs", "ceil", "floor")), st.tuples(children), st.just(0)),
        st.builds(Call, st.sampled_from(("min", "max")), st.tuples(children, children), st.just(0)),
    )


TREES = st.recursive(_leaf, _extend, max_leaves=12)
INPUTS = st.fixed_dictionaries(
    {name: st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False) for name in NAMES}
)


@given(tree=TREES, values=INPUTS)
@settings(max_examples=300, deadline=None)
def test_a_rendered_tree_parses_back_to_the_same_value(tree: Node, values: dict[str, float]) -> None:
    """Precedence and associativity: the fully parenthesized text of any tree means that tree."""
    text = render(tree)
    if len(text) > MAX_LENGTH:
        return
    try:
        expected = evaluate_tree(tree, values)
    except FormulaEvaluationError:
        with pytest.raises(FormulaEvaluationError):
            evaluate(parse(text), values)
        return
    assert evaluate(parse(text), values) == pytest.approx(expected, rel=1e-9, abs=1e-9)


@given(text=st.text(alphabet="0123456789.eE+-*/(), abcmxinflorsqu_", max_size=60))
@settings(max_examples=500, deadline=None)
def test_any_text_parses_or_is_refused_with_a_column_never_anything_else(text: str) -> None:
    try:
        formula = parse(text)
    except FormulaError as err:
        assert 1 <= err.column <= len(text) + 1
        return
    try:
        value = evaluate(formula, dict.fromkeys(formula.names, 1.5))
    except FormulaEvaluationError:
        return
    assert math.isfinite(value)
