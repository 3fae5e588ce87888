/**
 * A generated Python library in a `src/` layout, shaped like a real one for the forge's benchmark and quality test:
 * `pyproject.toml` with `[project]` and `[tool.pytest.ini_options] testpaths = ["tests"]`, `src/tally/` with
 * thirteen modules (public functions and classes, private `_helpers`, a few one-liners, two sibling functions with
 * identical bodies, an `__init__.py` re-exporting the public API), and `tests/` with pytest files using
 * parametrize, test classes, and a parametrize id holding a `.` and a `/`.
 *
 * The suite's cost is real CPU work, not sleep: an autouse fixture in `tests/conftest.py` derives a key with
 * `pbkdf2_hmac` for `workRounds` rounds per test (default tuned so the suite takes about 10 s on an idle core).
 * Deterministic, no network. Optional plants for the leak classes: a stale `__pycache__` and a `build/lib/` copy
 * (tracked leftovers holding every function), and an untracked `.venv` with an installed copy of some modules.
 */
import { writeRepoFiles } from './write-files.ts';

export const PYTHON_PACKAGE = 'tally';
/** The README-style test command the issue tried on a `src/` layout. */
export const PYTHON_SRC_TEST_COMMAND = 'PYTHONPATH=src python3 -m pytest -q';

export interface PythonSrcOptions {
  /** pbkdf2 rounds per test (0: no added cost). Default 450 000 (≈ 110 ms a test, ≈ 10 s for the 86 tests). */
  workRounds?: number;
  /** Commit stale leftovers: `src/tally/__pycache__/*.pyc` and `build/lib/tally/*.py` (copies of the sources). */
  leftovers?: boolean;
  /** Modules (file stems) copied, untracked, into `.venv/lib/python3/site-packages/tally/` (an installed older copy). */
  installedModules?: string[];
  /** Commit the repository (default true). */
  git?: boolean;
}

export interface GeneratedRepo {
  files: number;
  tests: number;
  commit?: string;
}

const MODULES: Record<string, string> = {
  '_helpers.py': `"""Private helpers shared by the modules."""


def _require_positive(value, name):
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def _chunks(items, size):
    _require_positive(size, "size")
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
    return out
`,
  'money.py': `"""Amounts of money in integer cents."""
from ._helpers import _require_positive


def _round_half_even(value):
    whole = int(value)
    frac = value - whole
    if frac > 0.5 or (frac == 0.5 and whole % 2 == 1):
        whole += 1
    return whole


class Money:
    """An amount in cents with a currency code."""

    def __init__(self, cents, currency="EUR"):
        self.cents = int(cents)
        self.currency = currency

    def add(self, other):
        if other.currency != self.currency:
            raise ValueError("currency mismatch")
        return Money(self.cents + other.cents, self.currency)

    def scale(self, factor):
        return Money(_round_half_even(self.cents * factor), self.currency)

    def split(self, parts):
        _require_positive(parts, "parts")
        share, rest = divmod(self.cents, parts)
        return [Money(share + (1 if i < rest else 0), self.currency) for i in range(parts)]

    def format(self):
        sign = "-" if self.cents < 0 else ""
        units, cents = divmod(abs(self.cents), 100)
        return f"{sign}{units}.{cents:02d} {self.currency}"

    def __eq__(self, other):
        return isinstance(other, Money) and (self.cents, self.currency) == (other.cents, other.currency)


def parse_money(text):
    """Parses '12.50 EUR' into Money."""
    amount, _, currency = text.strip().partition(" ")
    units, _, cents = amount.partition(".")
    negative = units.startswith("-")
    value = abs(int(units)) * 100 + int((cents + "00")[:2])
    return Money(-value if negative else value, currency or "EUR")
`,
  'text.py': `"""Text utilities."""


def _collapse_spaces(text):
    out = []
    previous_space = False
    for ch in text:
        if ch.isspace():
            if not previous_space:
                out.append(" ")
            previous_space = True
        else:
            out.append(ch)
            previous_space = False
    return "".join(out).strip()


def slugify(text):
    """Lower-case words joined by dashes."""
    cleaned = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return "-".join(_collapse_spaces(cleaned).split(" "))


def truncate(text, width, marker="..."):
    if len(text) <= width:
        return text
    keep = max(0, width - len(marker))
    return text[:keep].rstrip() + marker


def is_blank(text):
    return not text.strip()


def word_count(text):
    words = _collapse_spaces(text)
    return 0 if not words else len(words.split(" "))
`,
  'dates.py': `"""Calendar arithmetic without datetime."""

_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    if month == 2 and _is_leap(year):
        return 29
    return _DAYS[month - 1]


def parse_iso_date(text):
    """'2024-02-29' → (2024, 2, 29), validated."""
    parts = text.split("-")
    if len(parts) != 3:
        raise ValueError(f"not an ISO date: {text}")
    year, month, day = (int(p) for p in parts)
    if not 1 <= month <= 12 or not 1 <= day <= days_in_month(year, month):
        raise ValueError(f"no such day: {text}")
    return year, month, day


def day_of_year(year, month, day):
    total = day
    for m in range(1, month):
        total += days_in_month(year, m)
    return total


def days_between(a, b):
    """Days from date a to date b (ISO strings)."""
    def ordinal(text):
        y, m, d = parse_iso_date(text)
        days = d
        for year in range(1, y):
            days += 366 if _is_leap(year) else 365
        return days + day_of_year(y, m, d) - d
    return ordinal(b) - ordinal(a)
`,
  'stats.py': `"""Descriptive statistics."""


def _check_nonempty(values):
    if not values:
        raise ValueError("no values")
    return list(values)


def mean(values):
    values = _check_nonempty(values)
    return sum(values) / len(values)


def median(values):
    ordered = sorted(_check_nonempty(values))
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def variance(values):
    values = _check_nonempty(values)
    centre = mean(values)
    return sum((v - centre) ** 2 for v in values) / len(values)


def percentile(values, share):
    ordered = sorted(_check_nonempty(values))
    rank = share * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
`,
  'matrix.py': `"""Small dense matrices."""


class Matrix:
    """Rows of numbers."""

    def __init__(self, rows):
        self.rows = [list(r) for r in rows]

    @classmethod
    def identity(cls, n):
        return cls([[1 if i == j else 0 for j in range(n)] for i in range(n)])

    def shape(self):
        return len(self.rows), len(self.rows[0]) if self.rows else 0

    def transpose(self):
        n, m = self.shape()
        return Matrix([[self.rows[i][j] for i in range(n)] for j in range(m)])

    def multiply(self, other):
        n, m = self.shape()
        m2, p = other.shape()
        if m != m2:
            raise ValueError("shape mismatch")
        out = [[0] * p for _ in range(n)]
        for i in range(n):
            for j in range(p):
                out[i][j] = sum(self.rows[i][k] * other.rows[k][j] for k in range(m))
        return Matrix(out)

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows
`,
  'paths.py': `"""URL and path joining."""


def normalize_path(path):
    """Resolves '.' and '..' segments; keeps a leading slash."""
    absolute = path.startswith("/")
    parts = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(segment)
    joined = "/".join(parts)
    return "/" + joined if absolute else joined or "."


def join_url(base, *parts):
    url = base.rstrip("/")
    for part in parts:
        url += "/" + part.strip("/")
    return url


def split_ext(name):
    dot = name.rfind(".")
    if dot <= 0:
        return name, ""
    return name[:dot], name[dot:]
`,
  'schemes.py': `"""URL schemes; the two setters are siblings with identical bodies (as in real libraries)."""


def _strip_scheme(url):
    marker = url.find("://")
    return url[marker + 3:] if marker >= 0 else url


def with_http(url, scheme="http"):
    rest = _strip_scheme(url)
    return f"{scheme}://{rest}"


def with_https(url, scheme="https"):
    rest = _strip_scheme(url)
    return f"{scheme}://{rest}"


def has_scheme(url):
    return "://" in url
`,
  'cache.py': `"""A least-recently-used cache."""
from ._helpers import _require_positive


class LRUCache:
    def __init__(self, capacity):
        self.capacity = _require_positive(capacity, "capacity")
        self._items = {}
        self._order = []

    def get(self, key, default=None):
        if key not in self._items:
            return default
        self._order.remove(key)
        self._order.append(key)
        return self._items[key]

    def put(self, key, value):
        if key in self._items:
            self._order.remove(key)
        elif len(self._items) >= self.capacity:
            oldest = self._order.pop(0)
            del self._items[oldest]
        self._items[key] = value
        self._order.append(key)

    def __len__(self):
        return len(self._items)
`,
  'expr.py': `"""A tiny arithmetic evaluator."""

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def tokenize(text):
    tokens = []
    number = ""
    for ch in text:
        if ch.isdigit() or ch == ".":
            number += ch
            continue
        if number:
            tokens.append(number)
            number = ""
        if ch in "+-*/()":
            tokens.append(ch)
        elif not ch.isspace():
            raise ValueError(f"unexpected {ch!r}")
    if number:
        tokens.append(number)
    return tokens


def _apply(op, right, left):
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left / right


def evaluate(text):
    """Evaluates + - * / and parentheses with the usual precedence."""
    values, ops = [], []
    for token in tokenize(text):
        if token == "(":
            ops.append(token)
        elif token == ")":
            while ops[-1] != "(":
                values.append(_apply(ops.pop(), values.pop(), values.pop()))
            ops.pop()
        elif token in _PRECEDENCE:
            while ops and ops[-1] != "(" and _PRECEDENCE[ops[-1]] >= _PRECEDENCE[token]:
                values.append(_apply(ops.pop(), values.pop(), values.pop()))
            ops.append(token)
        else:
            values.append(float(token))
    while ops:
        values.append(_apply(ops.pop(), values.pop(), values.pop()))
    return values[0]
`,
  'codec.py': `"""Base-36 numbers and run-length encoding."""

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def encode_base36(number):
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    number = abs(number)
    out = ""
    while number:
        number, digit = divmod(number, 36)
        out = _DIGITS[digit] + out
    return sign + out


def decode_base36(text):
    return int(text, 36)


def rle_encode(text):
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{j - i}{text[i]}")
        i = j
    return "".join(out)


def rle_decode(text):
    out = []
    count = ""
    for ch in text:
        if ch.isdigit():
            count += ch
        else:
            out.append(ch * int(count))
            count = ""
    return "".join(out)
`,
  'graph.py': `"""Directed graphs as adjacency dicts."""
from collections import deque


def _neighbours(graph, node):
    return sorted(graph.get(node, ()))


def topological_sort(graph):
    """Nodes with every edge pointing forward; raises on a cycle."""
    indegree = {node: 0 for node in graph}
    for node in graph:
        for nxt in graph[node]:
            indegree[nxt] = indegree.get(nxt, 0) + 1
    ready = sorted(n for n, d in indegree.items() if d == 0)
    order = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for nxt in _neighbours(graph, node):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
                ready.sort()
    if len(order) != len(indegree):
        raise ValueError("cycle")
    return order


def shortest_path(graph, start, goal):
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = previous[node]
            return path[::-1]
        for nxt in _neighbours(graph, node):
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return None
`,
  'inventory.py': `"""Stock levels and their value."""
from .money import Money


class Inventory:
    def __init__(self):
        self._stock = {}
        self._prices = {}

    def receive(self, sku, quantity, unit_price):
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._stock[sku] = self._stock.get(sku, 0) + quantity
        self._prices[sku] = unit_price

    def ship(self, sku, quantity):
        have = self._stock.get(sku, 0)
        if quantity > have:
            raise ValueError(f"only {have} of {sku} in stock")
        self._stock[sku] = have - quantity

    def count(self, sku):
        return self._stock.get(sku, 0)

    def value(self):
        total = Money(0)
        for sku, quantity in self._stock.items():
            total = total.add(self._prices[sku].scale(quantity))
        return total
`,
};

const INIT = `"""tally: small utilities (the public API)."""
from .cache import LRUCache
from .codec import decode_base36, encode_base36, rle_decode, rle_encode
from .dates import day_of_year, days_between, days_in_month, parse_iso_date
from .expr import evaluate, tokenize
from .graph import shortest_path, topological_sort
from .inventory import Inventory
from .matrix import Matrix
from .money import Money, parse_money
from .paths import join_url, normalize_path, split_ext
from .schemes import has_scheme, with_http, with_https
from .stats import mean, median, percentile, variance
from .text import is_blank, slugify, truncate, word_count

__version__ = "1.4.0"
`;

const TESTS: Record<string, string> = {
  'test_money.py': `import pytest
from tally import Money, parse_money


class TestMoney:
    def test_add(self):
        assert Money(150).add(Money(275)) == Money(425)

    def test_add_mismatch(self):
        with pytest.raises(ValueError):
            Money(1, "EUR").add(Money(1, "USD"))

    @pytest.mark.parametrize("cents,factor,expected", [(100, 1.5, 150), (5, 0.5, 2), (15, 0.5, 8), (-300, 2, -600)])
    def test_scale(self, cents, factor, expected):
        assert Money(cents).scale(factor).cents == expected

    def test_split(self):
        assert [m.cents for m in Money(100).split(3)] == [34, 33, 33]

    @pytest.mark.parametrize("cents,text", [(1250, "12.50 EUR"), (-5, "-0.05 EUR"), (0, "0.00 EUR")])
    def test_format(self, cents, text):
        assert Money(cents).format() == text


@pytest.mark.parametrize("text,cents", [("12.50 EUR", 1250), ("3 USD", 300), ("-1.5 EUR", -150)])
def test_parse_money(text, cents):
    assert parse_money(text).cents == cents
`,
  'test_text.py': `import pytest
from tally import is_blank, slugify, truncate, word_count


@pytest.mark.parametrize("text,slug", [("Hello World", "hello-world"), ("  a  b ", "a-b"), ("Café / Bar", "café-bar")])
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_truncate_keeps_short():
    assert truncate("short", 10) == "short"


def test_truncate_cuts():
    assert truncate("a long sentence here", 10) == "a long..."


@pytest.mark.parametrize("text,blank", [("", True), ("  ", True), (" x ", False)])
def test_is_blank(text, blank):
    assert is_blank(text) is blank


@pytest.mark.parametrize("text,n", [("", 0), ("one", 1), (" two   words ", 2)])
def test_word_count(text, n):
    assert word_count(text) == n
`,
  'test_dates.py': `import pytest
from tally import day_of_year, days_between, days_in_month, parse_iso_date


class TestParse:
    def test_valid(self):
        assert parse_iso_date("2024-02-29") == (2024, 2, 29)

    @pytest.mark.parametrize("text", ["2023-02-29", "2024-13-01", "2024-1"])
    def test_invalid(self, text):
        with pytest.raises(ValueError):
            parse_iso_date(text)


@pytest.mark.parametrize("year,month,days", [(2024, 2, 29), (1900, 2, 28), (2000, 2, 29), (2023, 4, 30)])
def test_days_in_month(year, month, days):
    assert days_in_month(year, month) == days


def test_day_of_year():
    assert day_of_year(2024, 3, 1) == 61


@pytest.mark.parametrize("a,b,n", [("2024-01-01", "2024-03-01", 60), ("2023-12-31", "2024-01-01", 1)])
def test_days_between(a, b, n):
    assert days_between(a, b) == n
`,
  'test_stats.py': `import pytest
from tally import mean, median, percentile, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


@pytest.mark.parametrize("values,m", [([3, 1, 2], 2), ([4, 1, 3, 2], 2.5)])
def test_median(values, m):
    assert median(values) == m


def test_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4


@pytest.mark.parametrize("share,value", [(0, 1), (0.5, 3), (1, 5), (0.25, 2)])
def test_percentile(share, value):
    assert percentile([5, 1, 4, 2, 3], share) == value


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        mean([])
`,
  'test_matrix.py': `import pytest
from tally import Matrix


class TestMatrix:
    def test_identity(self):
        assert Matrix.identity(2) == Matrix([[1, 0], [0, 1]])

    def test_transpose(self):
        assert Matrix([[1, 2, 3]]).transpose() == Matrix([[1], [2], [3]])

    def test_multiply(self):
        assert Matrix([[1, 2], [3, 4]]).multiply(Matrix([[5], [6]])) == Matrix([[17], [39]])

    def test_multiply_mismatch(self):
        with pytest.raises(ValueError):
            Matrix([[1, 2]]).multiply(Matrix([[1, 2]]))
`,
  'test_paths.py': `import pytest
from tally import join_url, normalize_path, split_ext


# Ids hold a "." and a "/": the test ids must keep them whole.
@pytest.mark.parametrize(
    "path,expected",
    [("a/./b", "a/b"), ("/a/../b", "/b"), ("../x", "../x"), ("", ".")],
    ids=["dot/slash.case", "parent.dir/abs", "leading..", "empty"],
)
def test_normalize_path(path, expected):
    assert normalize_path(path) == expected


def test_join_url():
    assert join_url("https://x.org/", "/api/", "v1") == "https://x.org/api/v1"


@pytest.mark.parametrize("name,parts", [("a.tar.gz", ("a.tar", ".gz")), (".bashrc", (".bashrc", "")), ("README", ("README", ""))])
def test_split_ext(name, parts):
    assert split_ext(name) == parts
`,
  'test_schemes.py': `import pytest
from tally import has_scheme, with_http, with_https


@pytest.mark.parametrize("url,out", [("example.com", "http://example.com"), ("https://a.b/c", "http://a.b/c")])
def test_with_http(url, out):
    assert with_http(url) == out


@pytest.mark.parametrize("url,out", [("example.com", "https://example.com"), ("http://a.b/c", "https://a.b/c")])
def test_with_https(url, out):
    assert with_https(url) == out


def test_has_scheme():
    assert has_scheme("ftp://x") and not has_scheme("x")
`,
  'test_cache.py': `import pytest
from tally import LRUCache


class TestLRUCache:
    def test_get_default(self):
        assert LRUCache(2).get("x", 0) == 0

    def test_evicts_oldest(self):
        c = LRUCache(2)
        c.put("a", 1)
        c.put("b", 2)
        c.get("a")
        c.put("c", 3)
        assert c.get("b") is None and c.get("a") == 1 and len(c) == 2

    def test_update_keeps_size(self):
        c = LRUCache(1)
        c.put("a", 1)
        c.put("a", 2)
        assert c.get("a") == 2 and len(c) == 1

    def test_capacity_must_be_positive(self):
        with pytest.raises(ValueError):
            LRUCache(0)
`,
  'test_expr.py': `import pytest
from tally import evaluate, tokenize


def test_tokenize():
    assert tokenize("12+(3.5*2)") == ["12", "+", "(", "3.5", "*", "2", ")"]


def test_tokenize_rejects():
    with pytest.raises(ValueError):
        tokenize("1 $ 2")


@pytest.mark.parametrize("text,value", [("1+2*3", 7), ("(1+2)*3", 9), ("8/4/2", 1), ("10-4-3", 3)])
def test_evaluate(text, value):
    assert evaluate(text) == value
`,
  'test_codec.py': `import pytest
from tally import decode_base36, encode_base36, rle_decode, rle_encode


@pytest.mark.parametrize("n,text", [(0, "0"), (35, "z"), (36, "10"), (-71, "-1z")])
def test_encode_base36(n, text):
    assert encode_base36(n) == text


def test_decode_base36():
    assert decode_base36("zz") == 1295


class TestRle:
    def test_encode(self):
        assert rle_encode("aaabcc") == "3a1b2c"

    def test_round_trip(self):
        assert rle_decode(rle_encode("xxxxxxxxxxxxyz")) == "xxxxxxxxxxxxyz"
`,
  'test_graph.py': `import pytest
from tally import shortest_path, topological_sort


def test_topological_sort():
    assert topological_sort({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}) == ["a", "b", "c", "d"]


def test_cycle():
    with pytest.raises(ValueError):
        topological_sort({"a": ["b"], "b": ["a"]})


@pytest.mark.parametrize("goal,path", [("d", ["a", "b", "d"]), ("a", ["a"]), ("z", None)])
def test_shortest_path(goal, path):
    assert shortest_path({"a": ["b", "c"], "b": ["d"], "c": ["d"]}, "a", goal) == path
`,
  'test_inventory.py': `import pytest
from tally import Inventory, Money


class TestInventory:
    def test_receive_and_count(self):
        inv = Inventory()
        inv.receive("apple", 3, Money(50))
        inv.receive("apple", 2, Money(50))
        assert inv.count("apple") == 5

    def test_ship_too_many(self):
        inv = Inventory()
        inv.receive("pear", 1, Money(80))
        with pytest.raises(ValueError):
            inv.ship("pear", 2)

    def test_value(self):
        inv = Inventory()
        inv.receive("apple", 4, Money(25))
        inv.receive("pear", 2, Money(80))
        inv.ship("apple", 1)
        assert inv.value() == Money(235)
`,
};

function conftest(rounds: number): string {
  return `"""The suite's per-test cost: real CPU work (a key derivation), standing in for a real suite's fixtures and I/O."""
import hashlib

import pytest

WORK_ROUNDS = ${rounds}


@pytest.fixture(autouse=True)
def _workload():
    if WORK_ROUNDS:
        hashlib.pbkdf2_hmac("sha256", b"tally", b"salt", WORK_ROUNDS)
    yield
`;
}

/** Tests in the generated suite (parametrized cases counted one by one). */
export const PYTHON_SRC_TEST_COUNT = 86;

/**
 * The files of the generated Python repository (tracked ones).
 *
 * @example
 * const files = pythonSrcFiles({ workRounds: 0 }); // files['src/tally/money.py'], files['tests/test_money.py'], …
 */
export function pythonSrcFiles(options: Pick<PythonSrcOptions, 'workRounds' | 'leftovers'> = {}): Record<string, string> {
  const files: Record<string, string> = {
    'pyproject.toml': `[project]\nname = "${PYTHON_PACKAGE}"\nversion = "1.4.0"\nrequires-python = ">=3.9"\n\n[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n`,
    'README.md': `# ${PYTHON_PACKAGE}\n\nSmall utilities: money, text, dates, statistics, matrices, paths, caches, expressions, codecs, graphs, inventory.\n`,
    '.gitignore': '.venv/\n.pytest_cache/\n',
    [`src/${PYTHON_PACKAGE}/__init__.py`]: INIT,
    'tests/conftest.py': conftest(options.workRounds ?? 450_000),
  };
  for (const [name, text] of Object.entries(MODULES)) files[`src/${PYTHON_PACKAGE}/${name}`] = text;
  for (const [name, text] of Object.entries(TESTS)) files[`tests/${name}`] = text;
  if (options.leftovers) {
    // What a developer's checkout carries by accident: a build folder and bytecode, both holding the full sources.
    for (const [name, text] of Object.entries(MODULES)) {
      files[`build/lib/${PYTHON_PACKAGE}/${name}`] = text;
      files[`src/${PYTHON_PACKAGE}/__pycache__/${name.replace(/\.py$/, '')}.cpython-311.pyc`] = `# stale bytecode stand-in\n${text}`;
    }
  }
  return files;
}

/**
 * Writes the repository under `dir` (and commits it unless `git: false`).
 *
 * @example
 * const { tests } = generatePythonSrcRepo('/tmp/tally', { workRounds: 0 });
 * // then: flywheel forge run --repo /tmp/tally --test-cmd 'PYTHONPATH=src python3 -m pytest -q'
 */
export function generatePythonSrcRepo(dir: string, options: PythonSrcOptions = {}): GeneratedRepo {
  const files = pythonSrcFiles(options);
  const commit = writeRepoFiles(dir, files, { git: options.git ?? true });
  const untracked: Record<string, string> = {};
  for (const stem of options.installedModules ?? []) {
    const text = MODULES[`${stem}.py`];
    if (text === undefined) throw new Error(`no module ${stem} in the generated package`);
    untracked[`.venv/lib/python3/site-packages/${PYTHON_PACKAGE}/${stem}.py`] = text;
  }
  if (Object.keys(untracked).length) {
    untracked[`.venv/lib/python3/site-packages/${PYTHON_PACKAGE}/__init__.py`] = '';
    writeRepoFiles(dir, untracked, { git: false });
  }
  return { files: Object.keys(files).length, tests: PYTHON_SRC_TEST_COUNT, ...(commit ? { commit } : {}) };
}
