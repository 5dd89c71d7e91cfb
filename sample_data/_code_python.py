"""Python repositories: ``acme-labs/pyinventory`` (a small inventory service) and ``acme-labs/mlkit``.

Both are multi-file packages with relative and absolute imports between modules, tests and a
README; they also hold the awkward files that code filters must handle: a ``# @generated`` module,
a big CSV, a big YAML, a big JSON, a base64 blob, and poor-quality scripts next to good code.
"""

from __future__ import annotations

import random

from _common import CITIES

ENTITIES = [
    ("product", "products", [("name", "str"), ("sku", "str"), ("price_cents", "int"), ("category_id", "int")]),
    ("warehouse", "warehouses", [("name", "str"), ("city", "str"), ("capacity", "int")]),
    ("supplier", "suppliers", [("name", "str"), ("email", "str"), ("lead_time_days", "int")]),
    ("customer", "customers", [("name", "str"), ("email", "str"), ("credit_limit_cents", "int")]),
    ("order", "orders", [("customer_id", "int"), ("status", "str"), ("total_cents", "int")]),
    ("shipment", "shipments", [("order_id", "int"), ("carrier", "str"), ("weight_grams", "int")]),
    ("invoice", "invoices", [("order_id", "int"), ("number", "str"), ("amount_cents", "int")]),
    ("category", "categories", [("name", "str"), ("parent_id", "int")]),
    ("stock_level", "stock_levels", [("product_id", "int"), ("warehouse_id", "int"), ("quantity", "int")]),
    ("price_rule", "price_rules", [("name", "str"), ("percent_off", "int"), ("min_quantity", "int")]),
    ("refund", "refunds", [("order_id", "int"), ("reason", "str"), ("amount_cents", "int")]),
    ("coupon", "coupons", [("code", "str"), ("percent_off", "int")]),
    ("address", "addresses", [("customer_id", "int"), ("street", "str"), ("city", "str")]),
    ("carrier", "carriers", [("name", "str"), ("email", "str"), ("max_weight_grams", "int")]),
]


def _cls(name: str) -> str:
    return "".join(p.title() for p in name.split("_"))


def _sample(field: str, kind: str, rng: random.Random) -> str:
    if kind == "int":
        return str(rng.randint(1, 500))
    if field == "email":
        return f'"{rng.choice(["ops", "sales", "billing"])}@example.com"'
    if field == "city":
        return f'"{rng.choice(CITIES)}"'
    return f'"{rng.choice(["alpha", "north", "blue", "standard", "express"])}-{rng.randint(1, 99)}"'


def entity_module(name: str, plural: str, fields: list) -> str:
    cls = _cls(name)
    args = ", ".join(f"{f}: {t}" for f, t in fields)
    checks = []
    for f, t in fields:
        if t == "int":
            checks.append(f'    require_positive("{f}", {f})')
        elif f == "email":
            checks.append(f'    if "@" not in {f}:\n        raise ValueError(f"invalid email address: {{{f}!r}}")')
        else:
            checks.append(f'    if not {f}.strip():\n        raise ValueError("{f} must not be empty")')
    kw = ", ".join(f"{f}={f}" for f, _ in fields)
    return f'''"""Service functions for {plural.replace("_", " ")}: validation, creation and lookup."""

from __future__ import annotations

from ..models import {cls}
from ..storage import Store
from ..utils import require_positive

TABLE = "{plural}"


def create_{name}(store: Store, {args}) -> {cls}:
    """Validate the fields, store a new {name.replace("_", " ")} and return it."""
{chr(10).join(checks)}
    record = {cls}(id=store.next_id(TABLE), {kw})
    store.insert(TABLE, record.to_row())
    return record


def get_{name}(store: Store, {name}_id: int) -> {cls} | None:
    """The {name.replace("_", " ")} with this id, or None."""
    row = store.get(TABLE, {name}_id)
    return {cls}.from_row(row) if row else None


def list_{plural}(store: Store, limit: int = 100) -> list[{cls}]:
    """Up to ``limit`` {plural.replace("_", " ")}, oldest first."""
    return [{cls}.from_row(row) for row in store.list(TABLE, limit=limit)]


def delete_{name}(store: Store, {name}_id: int) -> bool:
    """Delete by id; returns whether a row was removed."""
    return store.delete(TABLE, {name}_id)
'''


def entity_test(name: str, plural: str, fields: list, rng: random.Random) -> str:
    sample = ", ".join(_sample(f, t, rng) for f, t in fields)
    bad_f, bad_t = fields[-1] if fields[-1][1] == "int" else fields[0]
    bad = ", ".join(("-1" if f == bad_f and bad_t == "int" else '""' if f == bad_f else _sample(f, t, rng))
                    for f, t in fields)
    return f'''import pytest

from inventory.entities.{name} import create_{name}, delete_{name}, get_{name}, list_{plural}
from inventory.storage import MemoryStore


def test_create_then_get_returns_same_record():
    store = MemoryStore()
    record = create_{name}(store, {sample})
    assert get_{name}(store, record.id) == record


def test_list_is_in_insertion_order():
    store = MemoryStore()
    first = create_{name}(store, {sample})
    second = create_{name}(store, {sample})
    assert [r.id for r in list_{plural}(store)] == [first.id, second.id]


def test_invalid_{bad_f}_is_rejected():
    with pytest.raises(ValueError):
        create_{name}(MemoryStore(), {bad})


def test_delete_missing_returns_false():
    assert delete_{name}(MemoryStore(), 12345) is False
'''


def models_module() -> str:
    parts = ['"""Plain dataclasses for every stored entity; rows are dicts of column -> value."""\n',
             "from __future__ import annotations\n", "from dataclasses import asdict, dataclass\n",
             "from typing import Any\n\n"]
    for name, _, fields in ENTITIES:
        body = "\n".join(f"    {f}: {t}" for f, t in fields)
        parts.append(f'''
@dataclass(frozen=True)
class {_cls(name)}:
    id: int
{body}

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "{_cls(name)}":
        return cls(**row)

''')
    return "\n".join(parts).rstrip() + "\n"


UTILS = '''"""Small helpers shared by the inventory modules."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from typing import TypeVar

T = TypeVar("T")
_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """Lower-case ASCII slug: ``"Blue Tent (2P)"`` -> ``"blue-tent-2p"``."""
    return _SLUG.sub("-", text.lower()).strip("-")


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield lists of at most ``size`` items."""
    if size <= 0:
        raise ValueError("size must be positive")
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def parse_money(text: str) -> int:
    """Parse ``"12.50"`` or ``"$1,299"`` into cents."""
    cleaned = text.replace("$", "").replace(",", "").strip()
    try:
        value = Decimal(cleaned)
    except InvalidOperation as exc:
        raise ValueError(f"not a price: {text!r}") from exc
    return int((value * 100).quantize(Decimal(1)))


def format_money(cents: int) -> str:
    """Format cents as ``"$12.50"``."""
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def require_positive(name: str, value: int) -> None:
    """Raise ValueError unless ``value`` is a positive integer."""
    if not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
'''

RETRY = '''"""Retry a flaky call with exponential backoff and jitter.

>>> calls = []
>>> @retry(attempts=3, base_delay=0)
... def flaky():
...     calls.append(1)
...     if len(calls) < 2:
...         raise ConnectionError("try again")
...     return "ok"
>>> flaky()
'ok'
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
logger = logging.getLogger(__name__)


def retry(
    attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 10.0,
    exceptions: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError),
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: call the function up to ``attempts`` times while it raises ``exceptions``."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")

    def decorate(func: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(func)
        def wrapper(*args, **kwargs) -> T:
            for attempt in range(1, attempts + 1):
                try:
                    return func(*args, **kwargs)
                except exceptions as exc:
                    if attempt == attempts:
                        raise
                    delay = min(max_delay, base_delay * 2 ** (attempt - 1))
                    delay *= random.uniform(0.5, 1.0)
                    logger.warning("%s failed (%s); retry %d/%d in %.2fs", func.__name__, exc, attempt, attempts, delay)
                    time.sleep(delay)
            raise AssertionError("unreachable")

        return wrapper

    return decorate
'''

STORAGE = '''"""Storage backends: an in-memory store for tests and a SQLite store for the CLI."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Protocol

from .retry import retry

Row = dict[str, Any]


class Store(Protocol):
    def next_id(self, table: str) -> int: ...
    def insert(self, table: str, row: Row) -> None: ...
    def get(self, table: str, row_id: int) -> Row | None: ...
    def list(self, table: str, limit: int = 100) -> list[Row]: ...
    def delete(self, table: str, row_id: int) -> bool: ...


class MemoryStore:
    """Dict-backed store; rows keep insertion order."""

    def __init__(self) -> None:
        self._tables: dict[str, dict[int, Row]] = {}
        self._ids: dict[str, int] = {}

    def next_id(self, table: str) -> int:
        self._ids[table] = self._ids.get(table, 0) + 1
        return self._ids[table]

    def insert(self, table: str, row: Row) -> None:
        self._tables.setdefault(table, {})[row["id"]] = dict(row)

    def get(self, table: str, row_id: int) -> Row | None:
        row = self._tables.get(table, {}).get(row_id)
        return dict(row) if row else None

    def list(self, table: str, limit: int = 100) -> list[Row]:
        return [dict(r) for r in list(self._tables.get(table, {}).values())[:limit]]

    def delete(self, table: str, row_id: int) -> bool:
        return self._tables.get(table, {}).pop(row_id, None) is not None


class SqliteStore:
    """One JSON column per row; good enough for a single-user tool."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(path)

    def _ensure(self, table: str) -> None:
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")

    def next_id(self, table: str) -> int:
        self._ensure(table)
        (max_id,) = self._conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()
        return max_id + 1

    @retry(attempts=3, base_delay=0.1, exceptions=(sqlite3.OperationalError,))
    def insert(self, table: str, row: Row) -> None:
        self._ensure(table)
        with self._conn:
            self._conn.execute(f"INSERT INTO {table} (id, body) VALUES (?, ?)", (row["id"], json.dumps(row)))

    def get(self, table: str, row_id: int) -> Row | None:
        self._ensure(table)
        found = self._conn.execute(f"SELECT body FROM {table} WHERE id = ?", (row_id,)).fetchone()
        return json.loads(found[0]) if found else None

    def list(self, table: str, limit: int = 100) -> list[Row]:
        self._ensure(table)
        rows = self._conn.execute(f"SELECT body FROM {table} ORDER BY id LIMIT ?", (limit,))
        return [json.loads(body) for (body,) in rows]

    def delete(self, table: str, row_id: int) -> bool:
        self._ensure(table)
        with self._conn:
            cur = self._conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
        return cur.rowcount > 0
'''

PRICING = '''"""Price rules: quantity discounts applied to order lines."""

from __future__ import annotations

from dataclasses import dataclass

from .models import PriceRule
from .utils import format_money


@dataclass(frozen=True)
class Line:
    product_id: int
    unit_cents: int
    quantity: int

    @property
    def subtotal(self) -> int:
        return self.unit_cents * self.quantity


def best_rule(rules: list[PriceRule], quantity: int) -> PriceRule | None:
    """The applicable rule with the largest discount, or None."""
    eligible = [r for r in rules if quantity >= r.min_quantity]
    return max(eligible, key=lambda r: r.percent_off, default=None)


def line_total(line: Line, rules: list[PriceRule]) -> int:
    """Subtotal after the best quantity discount, rounded down to whole cents."""
    rule = best_rule(rules, line.quantity)
    if rule is None:
        return line.subtotal
    return line.subtotal * (100 - rule.percent_off) // 100


def describe(line: Line, rules: list[PriceRule]) -> str:
    total = line_total(line, rules)
    saved = line.subtotal - total
    note = f" (saved {format_money(saved)})" if saved else ""
    return f"{line.quantity} x product {line.product_id}: {format_money(total)}{note}"
'''

CLI = '''"""Command-line entry point: ``python -m inventory.cli add-product "Tent" TG-1 129.00 3``."""

from __future__ import annotations

import argparse
import sys

import inventory.storage
from inventory.entities.product import create_product, list_products
from inventory.utils import format_money, parse_money


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inventory")
    parser.add_argument("--db", default="inventory.db", help="SQLite file")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add-product", help="add a product")
    add.add_argument("name")
    add.add_argument("sku")
    add.add_argument("price")
    add.add_argument("category_id", type=int)
    sub.add_parser("list-products", help="list products")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = inventory.storage.SqliteStore(args.db)
    if args.command == "add-product":
        product = create_product(store, args.name, args.sku, parse_money(args.price), args.category_id)
        print(f"added product {product.id}")
    else:
        for p in list_products(store):
            print(f"{p.id:>5}  {p.sku:<10} {format_money(p.price_cents):>10}  {p.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

LEGACY_REPORT = '''import csv,sys
def r(f):
    d={}
    t=0
    for x in csv.reader(open(f)):
        if len(x)>3:
            if x[0]!="id":
                if x[3]!="":
                    if int(x[3])>0:
                        if x[2] in d:
                            d[x[2]]=d[x[2]]+int(x[3])
                            t=t+int(x[3])
                        else:
                            d[x[2]]=int(x[3])
                            t=t+int(x[3])
                    else:
                        if x[2] in d:
                            d[x[2]]=d[x[2]]+0
                        else:
                            d[x[2]]=0
    return d,t
def p(d,t):
    for k in d:
        print(k,d[k],d[k]*100/t)
    for k in d:
        if d[k]>100:
            print("big",k,d[k])
    for k in d:
        if d[k]<10:
            print("small",k,d[k])
def q(f):
    d={}
    t=0
    for x in csv.reader(open(f)):
        if len(x)>3:
            if x[0]!="id":
                if x[3]!="":
                    if int(x[3])>0:
                        if x[1] in d:
                            d[x[1]]=d[x[1]]+int(x[3])
                            t=t+int(x[3])
                        else:
                            d[x[1]]=int(x[3])
                            t=t+int(x[3])
    return d,t
a,b=r(sys.argv[1])
p(a,b)
a,b=q(sys.argv[1])
p(a,b)
'''

SUMMARY = '''"""Stock summary per warehouse, built from stock levels."""

from __future__ import annotations

from collections import defaultdict

from ..entities.stock_level import list_stock_levels
from ..storage import Store


def stock_by_warehouse(store: Store) -> dict[int, int]:
    """Total units held in each warehouse."""
    totals: dict[int, int] = defaultdict(int)
    for level in list_stock_levels(store, limit=10_000):
        totals[level.warehouse_id] += level.quantity
    return dict(totals)


def low_stock(store: Store, threshold: int = 5) -> list[tuple[int, int]]:
    """(product_id, quantity) pairs at or below ``threshold``, lowest first."""
    levels = list_stock_levels(store, limit=10_000)
    return sorted(((l.product_id, l.quantity) for l in levels if l.quantity <= threshold), key=lambda x: x[1])
'''


def generated_schema(rng: random.Random) -> str:
    lines = ["# @generated by tools/gen_schema.py from schema/inventory.json -- DO NOT EDIT", "",
             '"""Column definitions for every table (generated)."""', "", "SCHEMA = {"]
    for _name, plural, fields in ENTITIES:
        cols = ", ".join(f'("{f}", "{"INTEGER" if t == "int" else "TEXT"}")' for f, t in [("id", "int"), *fields])
        lines.append(f'    "{plural}": [{cols}],')
    lines += ["}", "", f'SCHEMA_VERSION = "{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"', ""]
    return "\n".join(lines)


def products_csv(rng: random.Random, rows: int) -> str:
    kinds = ["tent", "backpack", "stove", "lamp", "jacket", "boots", "rope", "bottle", "map", "knife"]
    out = ["id,sku,category,quantity,price,warehouse"]
    for i in range(1, rows + 1):
        out.append(f"{i},TG-{10000 + i},{rng.choice(kinds)},{rng.randint(0, 400)},"
                   f"{rng.randint(3, 600)}.{rng.randint(0, 99):02d},{rng.choice(CITIES)}")
    return "\n".join(out) + "\n"


def pyinventory(rng: random.Random) -> list[tuple[str, str]]:
    files = [
        ("README.md", "# pyinventory\n\nA small inventory service: products, warehouses, orders and invoices stored in "
                      "SQLite, with a command-line interface.\n\n## Install\n\n```\npip install -e .\n```\n\n## Usage\n\n"
                      "```\npython -m inventory.cli add-product \"Summit tent\" TG-1001 129.00 3\n"
                      "python -m inventory.cli list-products\n```\n\n## Layout\n\n- `inventory/models.py` dataclasses\n"
                      "- `inventory/storage.py` memory and SQLite stores\n- `inventory/entities/` one module per entity\n"
                      "- `inventory/reports/` reports (the legacy one is scheduled for removal)\n\n## Tests\n\n```\npytest -q\n```\n"),
        ("pyproject.toml", '[project]\nname = "pyinventory"\nversion = "0.4.1"\nrequires-python = ">=3.10"\n\n'
                           '[project.scripts]\ninventory = "inventory.cli:main"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'),
        (".github/workflows/ci.yml", "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
                                     "    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n"
                                     "        with:\n          python-version: '3.11'\n      - run: pip install -e . pytest\n      - run: pytest -q\n"),
        ("inventory/__init__.py", '"""pyinventory: a small inventory service."""\n\nfrom .models import Product, Warehouse\n'
                                  'from .storage import MemoryStore, SqliteStore\n\n__all__ = ["MemoryStore", "Product", "SqliteStore", "Warehouse"]\n'),
        ("inventory/_version.py", "# @generated by setuptools-scm -- DO NOT EDIT\n# don't track in version control\n"
                                  "__version__ = version = '0.4.1.dev7+g3f2a91c'\n__version_tuple__ = version_tuple = (0, 4, 1, 'dev7', 'g3f2a91c')\n"),
        ("inventory/schema_gen.py", generated_schema(rng)),
        ("inventory/utils.py", UTILS),
        ("inventory/retry.py", RETRY),
        ("inventory/models.py", models_module()),
        ("inventory/storage.py", STORAGE),
        ("inventory/pricing.py", PRICING),
        ("inventory/cli.py", CLI),
        ("inventory/entities/__init__.py", '"""One module per stored entity."""\n'),
        ("inventory/reports/__init__.py", ""),
        ("inventory/reports/summary.py", SUMMARY),
        ("inventory/reports/legacy_report.py", LEGACY_REPORT),
        ("data/products.csv", products_csv(rng, 2500)),
    ]
    for name, plural, fields in ENTITIES:
        files.append((f"inventory/entities/{name}.py", entity_module(name, plural, fields)))
        files.append((f"tests/test_{name}.py", entity_test(name, plural, fields, rng)))
    files.append(("tests/test_utils.py", '''import pytest

from inventory.utils import chunked, format_money, parse_money, slugify


def test_slugify():
    assert slugify("Blue Tent (2P)") == "blue-tent-2p"


def test_chunked_sizes():
    assert [len(c) for c in chunked(range(7), 3)] == [3, 3, 1]


@pytest.mark.parametrize("text, cents", [("12.50", 1250), ("$1,299", 129900), (" 0.99 ", 99)])
def test_parse_money(text, cents):
    assert parse_money(text) == cents


def test_format_money_round_trip():
    assert format_money(parse_money("1234.05")) == "$1,234.05"
'''))
    files.append(("tests/test_pricing.py", '''from inventory.models import PriceRule
from inventory.pricing import Line, best_rule, line_total

RULES = [PriceRule(id=1, name="bulk", percent_off=10, min_quantity=10),
         PriceRule(id=2, name="pallet", percent_off=25, min_quantity=100)]


def test_no_rule_below_minimum():
    assert best_rule(RULES, 3) is None


def test_best_rule_wins():
    assert best_rule(RULES, 150).name == "pallet"


def test_line_total_applies_discount():
    assert line_total(Line(product_id=1, unit_cents=1000, quantity=10), RULES) == 9000
'''))
    return files
