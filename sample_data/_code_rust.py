"""``ferrous/rustkv``: a Rust key-value server with ``mod``/``use crate::`` imports, unit and
integration tests, a Cargo-generated lock file and a build-script-generated module."""

from __future__ import annotations

import random

RUST_ERROR = '''use std::fmt;

/// Errors returned by the key-value engine.
#[derive(Debug, PartialEq, Eq)]
pub enum KvError {
    NotFound(String),
    WrongType { key: String, expected: &'static str },
    Protocol(String),
    Io(String),
}

impl fmt::Display for KvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KvError::NotFound(k) => write!(f, "key not found: {k}"),
            KvError::WrongType { key, expected } => write!(f, "key {key} does not hold a {expected}"),
            KvError::Protocol(msg) => write!(f, "protocol error: {msg}"),
            KvError::Io(msg) => write!(f, "io error: {msg}"),
        }
    }
}

impl std::error::Error for KvError {}

impl From<std::io::Error> for KvError {
    fn from(e: std::io::Error) -> Self {
        KvError::Io(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, KvError>;
'''

RUST_ENGINE = '''use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::{KvError, Result};

/// A stored value with an optional expiry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    pub expires_at: Option<Instant>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
}

/// The in-memory engine; expired keys are removed lazily on access.
#[derive(Default)]
pub struct Engine {
    data: HashMap<String, Entry>,
}

impl Engine {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&mut self, key: &str) -> Result<&Value> {
        self.evict_if_expired(key);
        self.data.get(key).map(|e| &e.value).ok_or_else(|| KvError::NotFound(key.to_string()))
    }

    pub fn set(&mut self, key: &str, value: Value, ttl: Option<Duration>) {
        let expires_at = ttl.map(|d| Instant::now() + d);
        self.data.insert(key.to_string(), Entry { value, expires_at });
    }

    pub fn delete(&mut self, key: &str) -> bool {
        self.data.remove(key).is_some()
    }

    pub fn keys(&mut self) -> Vec<String> {
        let now = Instant::now();
        self.data.retain(|_, e| e.expires_at.map_or(true, |t| t > now));
        let mut keys: Vec<String> = self.data.keys().cloned().collect();
        keys.sort();
        keys
    }

    pub fn entry_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.evict_if_expired(key);
        self.data.get_mut(key)
    }

    fn evict_if_expired(&mut self, key: &str) {
        if let Some(e) = self.data.get(key) {
            if e.expires_at.map_or(false, |t| t <= Instant::now()) {
                self.data.remove(key);
            }
        }
    }
}
'''

RUST_PROTOCOL = '''use crate::error::{KvError, Result};

/// A parsed client command.
#[derive(Debug, PartialEq)]
pub struct Command {
    pub name: String,
    pub args: Vec<String>,
}

/// Parse one line such as `SET key "hello world"`; double quotes group words.
pub fn parse_line(line: &str) -> Result<Command> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.trim().chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !current.is_empty() {
                    parts.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if quoted {
        return Err(KvError::Protocol("unterminated quote".into()));
    }
    if !current.is_empty() {
        parts.push(current);
    }
    let mut iter = parts.into_iter();
    let name = iter.next().ok_or_else(|| KvError::Protocol("empty command".into()))?;
    Ok(Command { name: name.to_uppercase(), args: iter.collect() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_group_words() {
        let cmd = parse_line(r#"set greeting "hello world""#).unwrap();
        assert_eq!(cmd.name, "SET");
        assert_eq!(cmd.args, vec!["greeting", "hello world"]);
    }

    #[test]
    fn unterminated_quote_is_an_error() {
        assert!(parse_line(r#"SET k "oops"#).is_err());
    }
}
'''

RUST_BLOOM = '''use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// A Bloom filter with `k` hash functions derived by double hashing.
pub struct Bloom {
    bits: Vec<u64>,
    m: usize,
    k: u32,
}

impl Bloom {
    /// Size the filter for `n` items at false-positive rate `p`.
    pub fn with_rate(n: usize, p: f64) -> Self {
        let m = (-(n as f64) * p.ln() / (2f64.ln().powi(2))).ceil().max(64.0) as usize;
        let k = ((m as f64 / n.max(1) as f64) * 2f64.ln()).round().max(1.0) as u32;
        Bloom { bits: vec![0; (m + 63) / 64], m, k }
    }

    fn hashes<T: Hash>(&self, item: &T) -> (u64, u64) {
        let mut h1 = DefaultHasher::new();
        item.hash(&mut h1);
        let a = h1.finish();
        let mut h2 = DefaultHasher::new();
        (a ^ 0x9e37_79b9_7f4a_7c15).hash(&mut h2);
        (a, h2.finish() | 1)
    }

    pub fn insert<T: Hash>(&mut self, item: &T) {
        let (a, b) = self.hashes(item);
        for i in 0..self.k as u64 {
            let bit = (a.wrapping_add(i.wrapping_mul(b)) % self.m as u64) as usize;
            self.bits[bit / 64] |= 1 << (bit % 64);
        }
    }

    pub fn contains<T: Hash>(&self, item: &T) -> bool {
        let (a, b) = self.hashes(item);
        (0..self.k as u64).all(|i| {
            let bit = (a.wrapping_add(i.wrapping_mul(b)) % self.m as u64) as usize;
            self.bits[bit / 64] & (1 << (bit % 64)) != 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Bloom;

    #[test]
    fn inserted_items_are_found() {
        let mut b = Bloom::with_rate(1000, 0.01);
        for i in 0..1000 {
            b.insert(&i);
        }
        assert!((0..1000).all(|i| b.contains(&i)));
    }
}
'''

RUST_COMMANDS = {
    "get": ("GET key", 1, 'match engine.get(&args[0])? {\n        Value::Str(s) => Ok(s.clone()),\n        Value::Int(n) => Ok(n.to_string()),\n    }'),
    "set": ("SET key value", 2, 'engine.set(&args[0], parse_value(&args[1]), None);\n    Ok("OK".into())'),
    "del": ("DEL key", 1, 'Ok(if engine.delete(&args[0]) { "1" } else { "0" }.into())'),
    "exists": ("EXISTS key", 1, 'Ok(if engine.get(&args[0]).is_ok() { "1" } else { "0" }.into())'),
    "incr": ("INCR key", 1, 'let entry = engine.entry_mut(&args[0]);\n    match entry {\n        Some(e) => match &mut e.value {\n            Value::Int(n) => {\n                *n += 1;\n                Ok(n.to_string())\n            }\n            Value::Str(_) => Err(KvError::WrongType { key: args[0].clone(), expected: "integer" }),\n        },\n        None => {\n            engine.set(&args[0], Value::Int(1), None);\n            Ok("1".into())\n        }\n    }'),
    "decr": ("DECR key", 1, 'let entry = engine.entry_mut(&args[0]);\n    match entry {\n        Some(e) => match &mut e.value {\n            Value::Int(n) => {\n                *n -= 1;\n                Ok(n.to_string())\n            }\n            Value::Str(_) => Err(KvError::WrongType { key: args[0].clone(), expected: "integer" }),\n        },\n        None => {\n            engine.set(&args[0], Value::Int(-1), None);\n            Ok("-1".into())\n        }\n    }'),
    "expire": ("EXPIRE key seconds", 2, 'let secs: u64 = args[1].parse().map_err(|_| KvError::Protocol("seconds must be a number".into()))?;\n    match engine.entry_mut(&args[0]) {\n        Some(e) => {\n            e.expires_at = Some(Instant::now() + Duration::from_secs(secs));\n            Ok("1".into())\n        }\n        None => Ok("0".into()),\n    }'),
    "keys": ("KEYS", 0, 'Ok(engine.keys().join(" "))'),
    "append": ("APPEND key suffix", 2, 'match engine.entry_mut(&args[0]) {\n        Some(e) => match &mut e.value {\n            Value::Str(s) => {\n                s.push_str(&args[1]);\n                Ok(s.len().to_string())\n            }\n            Value::Int(_) => Err(KvError::WrongType { key: args[0].clone(), expected: "string" }),\n        },\n        None => {\n            engine.set(&args[0], Value::Str(args[1].clone()), None);\n            Ok(args[1].len().to_string())\n        }\n    }'),
    "strlen": ("STRLEN key", 1, 'match engine.get(&args[0]) {\n        Ok(Value::Str(s)) => Ok(s.len().to_string()),\n        Ok(Value::Int(n)) => Ok(n.to_string().len().to_string()),\n        Err(_) => Ok("0".into()),\n    }'),
}


def rust_command(name: str, usage: str, arity: int, body: str) -> str:
    uses = ["use crate::engine::{Engine, Value};", "use crate::error::{KvError, Result};"]
    if name == "expire":
        uses.append("use std::time::{Duration, Instant};")
    if name == "set":
        uses.append("use crate::commands::parse_value;")
    return f'''//! `{usage}`
{chr(10).join(uses)}

/// Number of arguments `{name.upper()}` takes.
pub const ARITY: usize = {arity};

pub fn run(engine: &mut Engine, args: &[String]) -> Result<String> {{
    if args.len() != ARITY {{
        return Err(KvError::Protocol(format!("{name.upper()} takes {{}} argument(s), got {{}}", ARITY, args.len())));
    }}
    {body}
}}

#[cfg(test)]
mod tests {{
    use super::*;

    #[test]
    fn wrong_arity_is_rejected() {{
        let mut engine = Engine::new();
        let args: Vec<String> = (0..ARITY + 1).map(|i| i.to_string()).collect();
        assert!(run(&mut engine, &args).is_err());
    }}
}}
'''


def rustkv(rng: random.Random) -> list[tuple[str, str]]:
    names = list(RUST_COMMANDS)
    mod_rs = ("use crate::engine::{Engine, Value};\nuse crate::error::{KvError, Result};\nuse crate::protocol::Command;\n\n"
              + "".join(f"pub mod {n};\n" for n in names)
              + "\n/// Integers are stored as integers, everything else as strings.\npub fn parse_value(raw: &str) -> Value {\n"
              "    raw.parse::<i64>().map(Value::Int).unwrap_or_else(|_| Value::Str(raw.to_string()))\n}\n\n"
              "/// Dispatch a parsed command to its handler.\npub fn dispatch(engine: &mut Engine, cmd: &Command) -> Result<String> {\n"
              "    match cmd.name.as_str() {\n"
              + "".join(f'        "{n.upper()}" => {n}::run(engine, &cmd.args),\n' for n in names)
              + '        other => Err(KvError::Protocol(format!("unknown command {other}"))),\n    }\n}\n')
    lock = ["# This file is automatically @generated by Cargo.", "# It is not intended for manual editing.",
            "version = 3", ""]
    for pkg in ["rustkv", "criterion", "anes", "cast", "ciborium", "clap", "itertools", "num-traits", "oorandom",
                "plotters", "regex", "serde", "serde_json", "tinytemplate", "walkdir", "either", "memchr"]:
        lock += ["[[package]]", f'name = "{pkg}"', f'version = "{rng.randint(0, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"']
        if pkg != "rustkv":
            lock += ['source = "registry+https://github.com/rust-lang/crates.io-index"',
                     f'checksum = "{"".join(rng.choice("0123456789abcdef") for _ in range(64))}"']
        lock.append("")
    gen = ["// @generated by build.rs from protocol/commands.txt -- do not edit", "",
           "/// Command names and arities, in the order of the protocol table.",
           f"pub const COMMANDS: [(&str, usize); {len(names)}] = ["]
    gen += [f'    ("{n.upper()}", {RUST_COMMANDS[n][1]}),' for n in names] + ["];", ""]
    files = [
        ("README.md", "# rustkv\n\nA tiny Redis-like key-value server: a line protocol, string and integer values, "
                      "expiry, and a Bloom filter for fast negative lookups.\n\n```\ncargo run --release -- --port 7070\n"
                      "printf 'SET a 1\\nINCR a\\nGET a\\n' | nc localhost 7070\n```\n\nCommands: "
                      + ", ".join(f"`{RUST_COMMANDS[n][0]}`" for n in names) + ".\n"),
        ("Cargo.toml", '[package]\nname = "rustkv"\nversion = "0.3.0"\nedition = "2021"\n\n[dev-dependencies]\n'
                       'criterion = "0.5"\n\n[[bench]]\nname = "engine"\nharness = false\n'),
        ("Cargo.lock", "\n".join(lock)),
        ("src/lib.rs", "//! rustkv: a small in-memory key-value store.\n\npub mod bloom;\npub mod commands;\npub mod engine;\n"
                       "pub mod error;\npub mod generated;\npub mod protocol;\n\npub use engine::{Engine, Value};\npub use error::{KvError, Result};\n"),
        ("src/main.rs", "use std::io::{BufRead, BufReader, Write};\nuse std::net::TcpListener;\n\nuse rustkv::commands::dispatch;\n"
                        "use rustkv::protocol::parse_line;\nuse rustkv::Engine;\n\nfn main() -> std::io::Result<()> {\n"
                        '    let listener = TcpListener::bind("127.0.0.1:7070")?;\n    let mut engine = Engine::new();\n'
                        "    for stream in listener.incoming() {\n        let mut stream = stream?;\n"
                        "        let reader = BufReader::new(stream.try_clone()?);\n        for line in reader.lines() {\n"
                        "            let reply = match parse_line(&line?) {\n                Ok(cmd) => dispatch(&mut engine, &cmd).unwrap_or_else(|e| format!(\"ERR {e}\")),\n"
                        '                Err(e) => format!("ERR {e}"),\n            };\n            writeln!(stream, "{reply}")?;\n'
                        "        }\n    }\n    Ok(())\n}\n"),
        ("src/error.rs", RUST_ERROR),
        ("src/engine.rs", RUST_ENGINE),
        ("src/protocol.rs", RUST_PROTOCOL),
        ("src/bloom.rs", RUST_BLOOM),
        ("src/generated.rs", "\n".join(gen)),
        ("src/commands/mod.rs", mod_rs),
        ("tests/integration.rs", "use rustkv::commands::dispatch;\nuse rustkv::protocol::parse_line;\nuse rustkv::Engine;\n\n"
                                 "fn run(engine: &mut Engine, line: &str) -> String {\n    dispatch(engine, &parse_line(line).unwrap()).unwrap_or_else(|e| format!(\"ERR {e}\"))\n}\n\n"
                                 "#[test]\nfn set_incr_get() {\n    let mut e = Engine::new();\n    assert_eq!(run(&mut e, \"SET n 41\"), \"OK\");\n"
                                 "    assert_eq!(run(&mut e, \"INCR n\"), \"42\");\n    assert_eq!(run(&mut e, \"GET n\"), \"42\");\n}\n\n"
                                 "#[test]\nfn incr_on_string_fails() {\n    let mut e = Engine::new();\n    run(&mut e, \"SET s hello\");\n"
                                 "    assert!(run(&mut e, \"INCR s\").starts_with(\"ERR\"));\n}\n"),
        ("benches/engine.rs", "use criterion::{criterion_group, criterion_main, Criterion};\nuse rustkv::{Engine, Value};\n\n"
                              "fn bench_set_get(c: &mut Criterion) {\n    c.bench_function(\"set+get 1k\", |b| {\n        b.iter(|| {\n"
                              "            let mut e = Engine::new();\n            for i in 0..1000 {\n                let k = format!(\"k{i}\");\n"
                              "                e.set(&k, Value::Int(i), None);\n                let _ = e.get(&k);\n            }\n        })\n    });\n}\n\n"
                              "criterion_group!(benches, bench_set_get);\ncriterion_main!(benches);\n"),
        ("examples/embedded.rs", "use rustkv::{Engine, Value};\nuse std::time::Duration;\n\nfn main() {\n    let mut e = Engine::new();\n"
                                 '    e.set("session", Value::Str("abc".into()), Some(Duration::from_secs(60)));\n'
                                 '    println!("{:?}", e.get("session"));\n}\n'),
    ]
    for n in names:
        usage, arity, body = RUST_COMMANDS[n]
        files.append((f"src/commands/{n}.rs", rust_command(n, usage, arity, body)))
    return files
