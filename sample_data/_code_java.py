"""``acme-labs/ledger``: Java 17 with Maven, package imports, JUnit tests, a protoc-generated class,
a big XML data file and a poor-quality legacy exporter."""

from __future__ import annotations

import random

from _common import FIRST_NAMES, LAST_NAMES

PKG = "com.acme.ledger"
JAVA_ENTITIES = [("Account", [("String", "name"), ("long", "balanceCents")]),
                 ("Entry", [("String", "accountId"), ("long", "amountCents")]),
                 ("Journal", [("String", "title"), ("int", "entryCount")]),
                 ("Customer", [("String", "name"), ("String", "email")]),
                 ("Vendor", [("String", "name"), ("int", "paymentTermsDays")]),
                 ("Invoice", [("String", "number"), ("long", "totalCents")]),
                 ("Payment", [("String", "invoiceNumber"), ("long", "amountCents")]),
                 ("TaxRate", [("String", "region"), ("int", "basisPoints")]),
                 ("Budget", [("String", "department"), ("long", "limitCents")]),
                 ("CostCenter", [("String", "code"), ("int", "headcount")]),
                 ("ExchangeRate", [("String", "pair"), ("long", "microUnits")]),
                 ("Period", [("String", "label"), ("int", "days")]),
                 ("Transfer", [("String", "fromAccount"), ("long", "amountCents")]),
                 ("Statement", [("String", "accountId"), ("int", "lineCount")])]

MONEY = f'''package {PKG};

import java.util.Objects;

/**
 * An amount of money in minor units (cents) of one currency. Immutable.
 */
public final class Money implements Comparable<Money> {{
    private final long cents;
    private final String currency;

    private Money(long cents, String currency) {{
        this.cents = cents;
        this.currency = Objects.requireNonNull(currency, "currency");
    }}

    public static Money of(long cents, String currency) {{
        return new Money(cents, currency);
    }}

    public static Money zero(String currency) {{
        return new Money(0, currency);
    }}

    public Money plus(Money other) {{
        requireSameCurrency(other);
        return new Money(Math.addExact(cents, other.cents), currency);
    }}

    public Money minus(Money other) {{
        requireSameCurrency(other);
        return new Money(Math.subtractExact(cents, other.cents), currency);
    }}

    public boolean isNegative() {{
        return cents < 0;
    }}

    public long cents() {{
        return cents;
    }}

    public String currency() {{
        return currency;
    }}

    private void requireSameCurrency(Money other) {{
        if (!currency.equals(other.currency)) {{
            throw new IllegalArgumentException("currency mismatch: " + currency + " vs " + other.currency);
        }}
    }}

    @Override
    public int compareTo(Money o) {{
        requireSameCurrency(o);
        return Long.compare(cents, o.cents);
    }}

    @Override
    public boolean equals(Object o) {{
        return o instanceof Money m && m.cents == cents && m.currency.equals(currency);
    }}

    @Override
    public int hashCode() {{
        return Objects.hash(cents, currency);
    }}

    @Override
    public String toString() {{
        return String.format("%s %d.%02d", currency, cents / 100, Math.abs(cents % 100));
    }}
}}
'''

REPOSITORY = f'''package {PKG}.repository;

import java.util.List;
import java.util.Optional;

/** Storage for entities keyed by a string id. */
public interface Repository<T> {{
    Optional<T> findById(String id);

    List<T> findAll();

    void save(String id, T entity);

    boolean delete(String id);
}}
'''

IN_MEMORY = f'''package {PKG}.repository;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Insertion-ordered, not thread-safe; for tests and the demo app. */
public class InMemoryRepository<T> implements Repository<T> {{
    private final Map<String, T> items = new LinkedHashMap<>();

    @Override
    public Optional<T> findById(String id) {{
        return Optional.ofNullable(items.get(id));
    }}

    @Override
    public List<T> findAll() {{
        return new ArrayList<>(items.values());
    }}

    @Override
    public void save(String id, T entity) {{
        items.put(id, entity);
    }}

    @Override
    public boolean delete(String id) {{
        return items.remove(id) != null;
    }}
}}
'''

TRANSFER = f'''package {PKG}.service;

import {PKG}.Money;
import {PKG}.model.Account;
import {PKG}.repository.Repository;

/** Moves money between accounts, refusing overdrafts. */
public class TransferService {{
    private final Repository<Account> accounts;

    public TransferService(Repository<Account> accounts) {{
        this.accounts = accounts;
    }}

    public void transfer(String fromId, String toId, Money amount) {{
        if (amount.isNegative() || amount.cents() == 0) {{
            throw new IllegalArgumentException("amount must be positive");
        }}
        Account from = accounts.findById(fromId).orElseThrow(() -> new IllegalArgumentException("no account " + fromId));
        Account to = accounts.findById(toId).orElseThrow(() -> new IllegalArgumentException("no account " + toId));
        if (from.balanceCents() < amount.cents()) {{
            throw new IllegalStateException("insufficient funds in " + fromId);
        }}
        accounts.save(fromId, new Account(from.id(), from.name(), from.balanceCents() - amount.cents()));
        accounts.save(toId, new Account(to.id(), to.name(), to.balanceCents() + amount.cents()));
    }}
}}
'''

OLD_EXPORTER = f'''package {PKG}.util;

import java.io.*;
import java.util.*;

public class OldCsvExporter {{
    public static void x(List<String[]> a, String f) throws Exception {{
        FileWriter w = new FileWriter(f);
        for (int i = 0; i < a.size(); i++) {{
            String[] r = a.get(i);
            String s = "";
            for (int j = 0; j < r.length; j++) {{
                if (r[j] != null) {{
                    if (r[j].indexOf(",") >= 0) {{
                        if (r[j].indexOf("\\"") >= 0) {{
                            s = s + "\\"" + r[j].replace("\\"", "\\"\\"") + "\\"";
                        }} else {{
                            s = s + "\\"" + r[j] + "\\"";
                        }}
                    }} else {{
                        s = s + r[j];
                    }}
                }}
                if (j < r.length - 1) s = s + ",";
            }}
            w.write(s + "\\n");
        }}
        w.close();
    }}

    public static void y(List<String[]> a, String f) throws Exception {{
        FileWriter w = new FileWriter(f);
        for (int i = 0; i < a.size(); i++) {{
            String[] r = a.get(i);
            String s = "";
            for (int j = 0; j < r.length; j++) {{
                if (r[j] != null) {{
                    if (r[j].indexOf(";") >= 0) {{
                        s = s + "\\"" + r[j] + "\\"";
                    }} else {{
                        s = s + r[j];
                    }}
                }}
                if (j < r.length - 1) s = s + ";";
            }}
            w.write(s + "\\n");
        }}
        w.close();
    }}
}}
'''


def java_record(name: str, fields: list) -> str:
    comps = ", ".join(["String id"] + [f"{t} {n}" for t, n in fields])
    checks = ['        if (id == null || id.isBlank()) {\n            throw new IllegalArgumentException("id is required");\n        }']
    for t, n in fields:
        if t == "String":
            checks.append(f'        if ({n} == null || {n}.isBlank()) {{\n            throw new IllegalArgumentException("{n} is required");\n        }}')
        elif not n.startswith("balance"):
            checks.append(f'        if ({n} < 0) {{\n            throw new IllegalArgumentException("{n} must not be negative: " + {n});\n        }}')
    return f'''package {PKG}.model;

/**
 * {name} as stored in the ledger. Validated on construction.
 */
public record {name}({comps}) {{
    public {name} {{
{chr(10).join(checks)}
    }}
}}
'''


def java_test(name: str, fields: list) -> str:
    good = ", ".join(['"id-1"'] + ['"value"' if t == "String" else "1" for t, _ in fields])
    bad = ", ".join(['" "'] + ['"value"' if t == "String" else "1" for t, _ in fields])
    return f'''package {PKG}.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class {name}Test {{
    @Test
    void keepsItsFields() {{
        {name} value = new {name}({good});
        assertEquals("id-1", value.id());
    }}

    @Test
    void rejectsBlankId() {{
        assertThrows(IllegalArgumentException.class, () -> new {name}({bad}));
    }}
}}
'''


def accounts_xml(rng: random.Random, n: int) -> str:
    rows = ['<?xml version="1.0" encoding="UTF-8"?>', "<!-- Opening balances imported from the old system. -->", "<accounts>"]
    for i in range(n):
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        rows.append(f'  <account id="ACC-{10000 + i}" currency="{rng.choice(["EUR", "USD", "GBP"])}">')
        rows.append(f"    <name>{name}</name>")
        rows.append(f"    <balance>{rng.randint(-5000, 900000)}</balance>")
        rows.append(f"    <opened>{rng.randint(2005, 2023)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}</opened>")
        rows.append("  </account>")
    rows.append("</accounts>")
    return "\n".join(rows) + "\n"


def protos(rng: random.Random) -> str:
    lines = ["// Generated by the protocol buffer compiler.  DO NOT EDIT!", "// source: ledger.proto", "",
             f"package {PKG}.proto;", "", "public final class LedgerProtos {", "  private LedgerProtos() {}", ""]
    for msg in ["AccountMsg", "EntryMsg", "TransferRequest", "TransferResponse"]:
        lines += [f"  public interface {msg}OrBuilder extends com.google.protobuf.MessageOrBuilder {{",
                  "    java.lang.String getId();", "    com.google.protobuf.ByteString getIdBytes();",
                  "    long getAmountCents();", "  }",
                  f"  public static final class {msg} extends com.google.protobuf.GeneratedMessageV3 implements {msg}OrBuilder {{",
                  "    private static final long serialVersionUID = 0L;",
                  f"    private {msg}(com.google.protobuf.GeneratedMessageV3.Builder<?> builder) {{ super(builder); }}",
                  "    private volatile java.lang.Object id_ = \"\";", "    private long amountCents_ = 0L;",
                  "    @java.lang.Override public java.lang.String getId() { return (java.lang.String) id_; }",
                  "    @java.lang.Override public com.google.protobuf.ByteString getIdBytes() { return com.google.protobuf.ByteString.copyFromUtf8(getId()); }",
                  "    @java.lang.Override public long getAmountCents() { return amountCents_; }", "  }", ""]
    desc = "".join(f"\\{rng.randint(0, 3)}{rng.randint(0, 7)}{rng.randint(0, 7)}" for _ in range(300))
    lines += ["  private static final java.lang.String[] descriptorData = {", f'    "{desc[:600]}" +', f'    "{desc[600:]}"', "  };", "}", ""]
    return "\n".join(lines)


def ledger(rng: random.Random) -> list[tuple[str, str]]:
    base = f"src/main/java/{PKG.replace('.', '/')}"
    test = f"src/test/java/{PKG.replace('.', '/')}"
    files = [
        ("README.md", "# ledger\n\nDouble-entry bookkeeping library in Java 17: accounts, journals, invoices and "
                      "transfers with overdraft checks.\n\n```\nmvn -q test\n```\n\n`LedgerProtos.java` is generated from "
                      "`ledger.proto`; `OldCsvExporter` is deprecated and will be removed in 2.0.\n"),
        ("pom.xml", '<?xml version="1.0" encoding="UTF-8"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
                    "  <modelVersion>4.0.0</modelVersion>\n  <groupId>com.acme</groupId>\n  <artifactId>ledger</artifactId>\n"
                    "  <version>1.4.2</version>\n  <properties>\n    <maven.compiler.release>17</maven.compiler.release>\n"
                    "    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n  </properties>\n  <dependencies>\n"
                    "    <dependency>\n      <groupId>com.google.protobuf</groupId>\n      <artifactId>protobuf-java</artifactId>\n"
                    "      <version>3.25.3</version>\n    </dependency>\n    <dependency>\n      <groupId>org.junit.jupiter</groupId>\n"
                    "      <artifactId>junit-jupiter</artifactId>\n      <version>5.10.2</version>\n      <scope>test</scope>\n"
                    "    </dependency>\n  </dependencies>\n</project>\n"),
        (f"{base}/Money.java", MONEY),
        (f"{base}/App.java", f'package {PKG};\n\nimport {PKG}.model.Account;\nimport {PKG}.repository.InMemoryRepository;\n'
                             f'import {PKG}.service.TransferService;\n\npublic final class App {{\n    public static void main(String[] args) {{\n'
                             "        var accounts = new InMemoryRepository<Account>();\n"
                             '        accounts.save("a", new Account("a", "Alice", 10_000));\n        accounts.save("b", new Account("b", "Bob", 0));\n'
                             '        new TransferService(accounts).transfer("a", "b", Money.of(2_500, "EUR"));\n'
                             "        accounts.findAll().forEach(System.out::println);\n    }\n}\n"),
        (f"{base}/repository/Repository.java", REPOSITORY),
        (f"{base}/repository/InMemoryRepository.java", IN_MEMORY),
        (f"{base}/service/TransferService.java", TRANSFER),
        (f"{base}/util/OldCsvExporter.java", OLD_EXPORTER),
        (f"{base}/proto/LedgerProtos.java", protos(rng)),
        ("src/main/resources/accounts.xml", accounts_xml(rng, 700)),
        ("src/main/resources/application.properties", "ledger.currency.default=EUR\nledger.overdraft.allowed=false\nledger.import.path=accounts.xml\n"),
        (f"{test}/MoneyTest.java", f'package {PKG};\n\nimport static org.junit.jupiter.api.Assertions.*;\n\nimport org.junit.jupiter.api.Test;\n\n'
                                   "class MoneyTest {\n    @Test\n    void addsSameCurrency() {\n"
                                   '        assertEquals(Money.of(350, "EUR"), Money.of(100, "EUR").plus(Money.of(250, "EUR")));\n    }\n\n'
                                   "    @Test\n    void refusesMixedCurrencies() {\n"
                                   '        assertThrows(IllegalArgumentException.class, () -> Money.of(1, "EUR").plus(Money.of(1, "USD")));\n    }\n\n'
                                   '    @Test\n    void formats() {\n        assertEquals("EUR 12.05", Money.of(1205, "EUR").toString());\n    }\n}\n'),
        (f"{test}/service/TransferServiceTest.java",
         f"package {PKG}.service;\n\nimport static org.junit.jupiter.api.Assertions.*;\n\nimport {PKG}.Money;\nimport {PKG}.model.Account;\n"
         f"import {PKG}.repository.InMemoryRepository;\nimport org.junit.jupiter.api.Test;\n\nclass TransferServiceTest {{\n"
         "    @Test\n    void refusesOverdraft() {\n        var repo = new InMemoryRepository<Account>();\n"
         '        repo.save("a", new Account("a", "A", 100));\n        repo.save("b", new Account("b", "B", 0));\n'
         '        var service = new TransferService(repo);\n        assertThrows(IllegalStateException.class, () -> service.transfer("a", "b", Money.of(500, "EUR")));\n'
         "    }\n}\n"),
    ]
    for name, fields in JAVA_ENTITIES:
        files.append((f"{base}/model/{name}.java", java_record(name, fields)))
        files.append((f"{test}/model/{name}Test.java", java_test(name, fields)))
    return files
