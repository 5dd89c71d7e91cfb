"""``northwind/webdash``: a TypeScript/JavaScript dashboard with ES-module and CommonJS imports,
tests, a generated ``package-lock.json``, a minified bundle and a legacy file of poor quality."""

from __future__ import annotations

import json
import random

WIDGETS = [("Chart", "points", "number[]"), ("Table", "rows", "string[][]"), ("Counter", "value", "number"),
           ("Gauge", "level", "number"), ("Map", "markers", "[number, number][]"), ("Log", "lines", "string[]"),
           ("Status", "healthy", "boolean"), ("Sparkline", "series", "number[]"), ("Heatmap", "cells", "number[][]"),
           ("Alert", "messages", "string[]"), ("Timeline", "events", "string[]"),
           ("Leaderboard", "entries", "[string, number][]"), ("Calendar", "days", "number[]"), ("Progress", "percent", "number")]

WIDGET_BASE = '''import { fetchJson } from '../api/client';

export interface WidgetOptions {
  id: string;
  title: string;
  refreshMs?: number;
}

/**
 * Base class for dashboard widgets: fetches its data on a timer and re-renders.
 * Subclasses implement `endpoint()` and `render()`.
 */
export abstract class Widget<T> {
  protected data: T | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(protected readonly options: WidgetOptions, protected readonly root: HTMLElement) {}

  abstract endpoint(): string;
  abstract render(data: T): string;

  async refresh(): Promise<void> {
    try {
      this.data = await fetchJson<T>(this.endpoint());
      this.root.innerHTML = this.render(this.data);
    } catch (err) {
      this.root.innerHTML = `<p class="error">${this.options.title}: ${(err as Error).message}</p>`;
    }
  }

  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs ?? 30_000);
  }

  stop(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
'''

CLIENT = '''export class HttpError extends Error {
  constructor(public readonly status: number, message: string) {
    super(message);
  }
}

const BASE_URL = '/api/v1';

/** GET a JSON document, throwing HttpError on non-2xx responses. */
export async function fetchJson<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, {
    headers: { Accept: 'application/json' },
    ...init,
  });
  if (!response.ok) {
    throw new HttpError(response.status, `GET ${path} failed with ${response.status}`);
  }
  return (await response.json()) as T;
}
'''

FORMAT = '''/**
 * Number and text formatting helpers shared by widgets.
 */

function formatNumber(value, digits = 1) {
  if (!Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  if (abs >= 1e9) return (value / 1e9).toFixed(digits) + 'B';
  if (abs >= 1e6) return (value / 1e6).toFixed(digits) + 'M';
  if (abs >= 1e3) return (value / 1e3).toFixed(digits) + 'k';
  return String(Math.round(value * 10 ** digits) / 10 ** digits);
}

function escapeHtml(text) {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function pluralize(count, word) {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

module.exports = { formatNumber, escapeHtml, pluralize };
'''

DEBOUNCE = '''/**
 * Delay calls to `fn` until `wait` ms have passed without another call.
 * @param {Function} fn
 * @param {number} wait
 */
function debounce(fn, wait) {
  let timer = null;
  function debounced(...args) {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn.apply(this, args);
    }, wait);
  }
  debounced.cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  return debounced;
}

module.exports = { debounce };
'''

DATES = '''const MS_PER_MINUTE = 60 * 1000;

/** "5 minutes ago", "3 hours ago", or a date for anything older than a week. */
function timeAgo(date, now = new Date()) {
  const minutes = Math.floor((now - date) / MS_PER_MINUTE);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  const days = Math.floor(hours / 24);
  if (days < 7) return `${days} day${days === 1 ? '' : 's'} ago`;
  return date.toISOString().slice(0, 10);
}

module.exports = { timeAgo };
'''

STORE = '''type Listener<S> = (state: S) => void;
export type Reducer<S, A> = (state: S, action: A) => S;

/** A minimal Redux-style store. */
export function createStore<S, A>(reducer: Reducer<S, A>, initial: S) {
  let state = initial;
  const listeners = new Set<Listener<S>>();
  return {
    getState: () => state,
    dispatch(action: A) {
      state = reducer(state, action);
      listeners.forEach((l) => l(state));
    },
    subscribe(listener: Listener<S>) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
'''

REDUCERS = '''import { Reducer } from './createStore';

export interface DashboardState {
  layout: string[];
  theme: 'light' | 'dark';
  paused: boolean;
}

export type Action =
  | { type: 'add'; widgetId: string }
  | { type: 'remove'; widgetId: string }
  | { type: 'toggleTheme' }
  | { type: 'pause'; paused: boolean };

export const initialState: DashboardState = { layout: [], theme: 'light', paused: false };

export const dashboard: Reducer<DashboardState, Action> = (state, action) => {
  switch (action.type) {
    case 'add':
      return state.layout.includes(action.widgetId) ? state : { ...state, layout: [...state.layout, action.widgetId] };
    case 'remove':
      return { ...state, layout: state.layout.filter((id) => id !== action.widgetId) };
    case 'toggleTheme':
      return { ...state, theme: state.theme === 'light' ? 'dark' : 'light' };
    case 'pause':
      return { ...state, paused: action.paused };
    default:
      return state;
  }
};
'''

LEGACY = '''var d = null, t = null, x = 0;
function go(a, b, c) {
  var r = [];
  for (var i = 0; i < a.length; i++) {
    if (a[i]) {
      if (a[i].v) {
        if (a[i].v > b) {
          if (a[i].k) {
            if (a[i].k.indexOf(c) > -1) {
              r.push(a[i]);
            } else {
              if (c == '') { r.push(a[i]); }
            }
          }
        }
      }
    }
  }
  return r;
}
function go2(a, b, c) {
  var r = [];
  for (var i = 0; i < a.length; i++) {
    if (a[i]) {
      if (a[i].v) {
        if (a[i].v < b) {
          if (a[i].k) {
            if (a[i].k.indexOf(c) > -1) {
              r.push(a[i]);
            } else {
              if (c == '') { r.push(a[i]); }
            }
          }
        }
      }
    }
  }
  return r;
}
function draw(e) {
  var h = '';
  for (var i = 0; i < d.length; i++) { h = h + '<tr><td>' + d[i].k + '</td><td>' + d[i].v + '</td></tr>'; }
  document.getElementById('tbl').innerHTML = '<table>' + h + '</table>';
  x = x + 1;
  if (x > 100) { x = 0; }
}
function load() {
  var q = new XMLHttpRequest();
  q.open('GET', '/api/old/data?x=' + x, false);
  q.send();
  d = JSON.parse(q.responseText);
  d = go(d, 0, document.getElementById('f').value);
  draw();
  t = setTimeout(load, 5000);
}
'''


def widget_module(name: str, field: str, ftype: str) -> str:
    lower = name.lower()
    return f'''import {{ Widget, WidgetOptions }} from './Widget';
import {{ escapeHtml, formatNumber }} from '../utils/format';

export interface {name}Data {{
  title: string;
  {field}: {ftype};
  updatedAt: string;
}}

/** Dashboard widget that shows {lower} data from `/widgets/{lower}/:id`. */
export class {name}Widget extends Widget<{name}Data> {{
  constructor(options: WidgetOptions, root: HTMLElement) {{
    super(options, root);
  }}

  endpoint(): string {{
    return `/widgets/{lower}/${{encodeURIComponent(this.options.id)}}`;
  }}

  render(data: {name}Data): string {{
    const body = this.renderBody(data.{field});
    return `<section class="widget widget-{lower}"><h3>${{escapeHtml(data.title)}}</h3>${{body}}<small>${{escapeHtml(data.updatedAt)}}</small></section>`;
  }}

  private renderBody(value: {ftype}): string {{
    if (Array.isArray(value)) {{
      return `<p>${{formatNumber(value.length, 0)}} items</p>`;
    }}
    return `<p>${{escapeHtml(String(value))}}</p>`;
  }}
}}
'''


def widget_test(name: str, field: str) -> str:
    lower = name.lower()
    return f'''const {{ {name}Widget }} = require('../src/components/{name}Widget');

describe('{name}Widget', () => {{
  const root = {{ innerHTML: '' }};
  const widget = new {name}Widget({{ id: 'w-1', title: '{name} <test>' }}, root);

  test('builds the endpoint from the id', () => {{
    expect(widget.endpoint()).toBe('/widgets/{lower}/w-1');
  }});

  test('escapes the title when rendering', () => {{
    const html = widget.render({{ title: '{name} <test>', {field}: [], updatedAt: 'now' }});
    expect(html).toContain('&lt;test&gt;');
    expect(html).toContain('widget-{lower}');
  }});
}});
'''


def package_lock(rng: random.Random) -> str:
    names = ["typescript", "jest", "ts-jest", "esbuild", "eslint", "@types/jest", "@types/node", "chalk",
             "semver", "minimist", "ms", "debug", "lodash.merge", "picomatch", "glob", "yargs", "ansi-styles",
             "supports-color", "has-flag", "color-convert", "color-name", "escape-string-regexp", "micromatch",
             "braces", "fill-range", "to-regex-range", "is-number", "argparse", "js-yaml", "import-fresh"]
    packages = {"": {"name": "webdash", "version": "1.3.0",
                     "devDependencies": {n: f"^{rng.randint(1, 9)}.{rng.randint(0, 20)}.0" for n in names[:6]}}}
    for n in names:
        for depth in range(rng.randint(1, 3)):
            key = "node_modules/" + ("" if depth == 0 else f"{rng.choice(names)}/node_modules/") + n
            ver = f"{rng.randint(0, 12)}.{rng.randint(0, 30)}.{rng.randint(0, 15)}"
            digest = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(86))
            entry = {"version": ver, "resolved": f"https://registry.npmjs.org/{n}/-/{n.split('/')[-1]}-{ver}.tgz",
                     "integrity": f"sha512-{digest}==", "dev": True}
            deps = rng.sample(names, rng.randint(0, 3))
            if deps:
                entry["dependencies"] = {d: f"^{rng.randint(1, 5)}.0.0" for d in deps if d != n}
            packages[key] = entry
    return json.dumps({"name": "webdash", "version": "1.3.0", "lockfileVersion": 3, "requires": True,
                       "packages": packages}, indent=2) + "\n"


def minified_bundle(rng: random.Random) -> str:
    parts = ['/*! webdash v1.3.0 | MIT */!function(e,t){"object"==typeof exports?module.exports=t():e.webdash=t()}(this,function(){"use strict";'
             'class W{constructor(o,r){this.options=o,this.root=r}}function E(s){return String(s).replace(/[&<>"]/g,function(c){return"&#"+c.charCodeAt(0)+";"})}'
             'function F(n,d){return Number(n).toFixed(d)}']
    letters = "abcdefghijklmnopqrstuvwxyz"
    i = 0
    while sum(len(p) for p in parts) < 7200:
        a, b, c = rng.sample(letters, 3)
        name, field = WIDGETS[i % len(WIDGETS)][:2]
        parts.append(f'class {name}W{i} extends W{{constructor({a},{b}){{super({a},{b})}}endpoint(){{return"/widgets/{name.lower()}/"+encodeURIComponent(this.options.id)}}'
                     f'render({c}){{return\'<section class="widget widget-{name.lower()}"><h3>\'+E({c}.title)+"</h3>"+(Array.isArray({c}.{field})?"<p>"+F({c}.{field}.length,0)+" items</p>":"<p>"+E(String({c}.{field}))+"</p>")+"</section>"}}}}')
        parts.append(f"function {a}{i}({b},{c}){{return {b}&&{c}?{b}.filter(function(x){{return x.k!=={c}}}).map(function(x){{return x.v*{rng.randint(2, 9)}}}):[]}}")
        i += 1
    parts.append('return{Widget:W,version:"1.3.0"}});')
    return "".join(parts) + "\n//# sourceMappingURL=app.min.js.map\n"


def webdash(rng: random.Random) -> list[tuple[str, str]]:
    files = [
        ("README.md", "# webdash\n\nA lightweight dashboard of auto-refreshing widgets (charts, tables, gauges, logs) "
                      "that read from a JSON API.\n\n## Development\n\n```\nnpm ci\nnpm test\nnpm run build\n```\n\n"
                      "`dist/app.min.js` is built by esbuild and committed for the CDN; do not edit it by hand.\n\n"
                      "`legacy/dashboard-old.js` is the pre-1.0 dashboard, kept until the old admin page is retired.\n"),
        ("package.json", json.dumps({"name": "webdash", "version": "1.3.0", "private": True, "main": "dist/app.min.js",
                                     "scripts": {"build": "node scripts/build.js", "test": "jest", "lint": "eslint src"},
                                     "devDependencies": {"esbuild": "^0.20.0", "jest": "^29.7.0", "ts-jest": "^29.1.0",
                                                         "typescript": "^5.4.0"}}, indent=2) + "\n"),
        ("package-lock.json", package_lock(rng)),
        ("tsconfig.json", json.dumps({"compilerOptions": {"target": "ES2020", "module": "ESNext", "strict": True,
                                                          "outDir": "build", "lib": ["ES2020", "DOM"]},
                                      "include": ["src"]}, indent=2) + "\n"),
        ("src/index.ts", "import { createStore } from './store/createStore';\nimport { dashboard, initialState } from './store/reducers';\n"
                         + "".join(f"import {{ {w}Widget }} from './components/{w}Widget';\n" for w, _, _ in WIDGETS)
                         + "\nexport const store = createStore(dashboard, initialState);\n\nexport const registry = {\n"
                         + "".join(f"  {w.lower()}: {w}Widget,\n" for w, _, _ in WIDGETS) + "};\n"),
        ("src/api/client.ts", CLIENT),
        ("src/store/createStore.ts", STORE),
        ("src/store/reducers.ts", REDUCERS),
        ("src/utils/format.js", FORMAT),
        ("src/utils/debounce.js", DEBOUNCE),
        ("src/utils/dates.js", DATES),
        ("src/components/Widget.ts", WIDGET_BASE),
        ("scripts/build.js", "const path = require('path');\nconst esbuild = require('esbuild');\nconst { pluralize } = require('../src/utils/format');\n\n"
                             "esbuild\n  .build({\n    entryPoints: [path.join(__dirname, '../src/index.ts')],\n    bundle: true,\n"
                             "    minify: true,\n    format: 'iife',\n    globalName: 'webdash',\n    outfile: path.join(__dirname, '../dist/app.min.js'),\n"
                             "  })\n  .then((result) => console.log(`built with ${pluralize(result.warnings.length, 'warning')}`))\n"
                             "  .catch(() => process.exit(1));\n"),
        ("dist/app.min.js", minified_bundle(rng)),
        ("legacy/dashboard-old.js", LEGACY),
        ("test/format.test.js", "const { formatNumber, escapeHtml, pluralize } = require('../src/utils/format');\n\n"
                                "test('formats thousands', () => {\n  expect(formatNumber(1530)).toBe('1.5k');\n});\n\n"
                                "test('escapes html', () => {\n  expect(escapeHtml('<a href=\"x\">')).toBe('&lt;a href=&quot;x&quot;&gt;');\n});\n\n"
                                "test('pluralizes', () => {\n  expect(pluralize(1, 'item')).toBe('1 item');\n  expect(pluralize(3, 'item')).toBe('3 items');\n});\n"),
        ("test/debounce.test.js", "const { debounce } = require('../src/utils/debounce');\n\njest.useFakeTimers();\n\n"
                                  "test('calls once after the wait', () => {\n  const fn = jest.fn();\n  const d = debounce(fn, 100);\n"
                                  "  d(1);\n  d(2);\n  jest.advanceTimersByTime(100);\n  expect(fn).toHaveBeenCalledTimes(1);\n"
                                  "  expect(fn).toHaveBeenCalledWith(2);\n});\n"),
        ("test/reducers.test.js", "const { dashboard, initialState } = require('../src/store/reducers');\n\n"
                                  "test('add is idempotent', () => {\n  const s1 = dashboard(initialState, { type: 'add', widgetId: 'a' });\n"
                                  "  const s2 = dashboard(s1, { type: 'add', widgetId: 'a' });\n  expect(s2.layout).toEqual(['a']);\n});\n\n"
                                  "test('toggles theme', () => {\n  expect(dashboard(initialState, { type: 'toggleTheme' }).theme).toBe('dark');\n});\n"),
    ]
    for name, field, ftype in WIDGETS:
        files.append((f"src/components/{name}Widget.ts", widget_module(name, field, ftype)))
        files.append((f"test/{name}Widget.test.js", widget_test(name, field)))
    return files
