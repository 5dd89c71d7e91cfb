"""``reasoning/reasoning.jsonl``: synthetic reasoning samples with step-by-step solutions and a final
answer: math word problems, science questions, coding-competition problems (whose reference
solutions are run here to produce the sample outputs), and a few long worked traces."""

from __future__ import annotations

import math
import random

from _common import FIRST_NAMES, rng_for
from _stem import ALL as STEM
from _stem import as_text


def _word_problem(rng: random.Random, kind: int) -> tuple[str, list[str], str]:
    name = rng.choice(FIRST_NAMES)
    if kind == 0:
        a, b = rng.randint(3, 12), rng.randint(3, 12)
        t = a * b / (a + b)
        return (f"{name} can paint a fence in {a} hours and a friend can paint it in {b} hours. How long does it take "
                f"them working together?",
                [f"{name} paints 1/{a} of the fence per hour and the friend paints 1/{b} per hour.",
                 f"Together they paint 1/{a} + 1/{b} = {a + b}/{a * b} of the fence per hour.",
                 f"The time is the reciprocal: {a * b}/{a + b} hours = {t:.2f} hours."], f"{t:.2f} hours")
    if kind == 1:
        price, d1, d2 = rng.randint(40, 400), rng.choice([10, 20, 25, 30]), rng.choice([5, 10, 15])
        p1 = price * (100 - d1) / 100
        p2 = p1 * (100 - d2) / 100
        return (f"A jacket costs ${price}. It is discounted by {d1}%, and then a further {d2}% is taken off the sale "
                f"price. What is the final price, and what single discount is equivalent?",
                [f"After the first discount the price is {price} x {(100 - d1) / 100:.2f} = ${p1:.2f}.",
                 f"After the second discount it is {p1:.2f} x {(100 - d2) / 100:.2f} = ${p2:.2f}.",
                 f"The total reduction is {price} - {p2:.2f} = {price - p2:.2f}, which is {100 * (price - p2) / price:.1f}% of {price}.",
                 f"Note that this is less than {d1 + d2}%, because the second discount applies to a smaller amount."],
                f"${p2:.2f}, equivalent to {100 * (price - p2) / price:.1f}%")
    if kind == 2:
        v1, v2, d = rng.randint(40, 90), rng.randint(40, 90), rng.randint(100, 600)
        t = d / (v1 + v2)
        return (f"Two trains start {d} km apart and travel towards each other at {v1} km/h and {v2} km/h. "
                f"After how long do they meet, and how far has the first train travelled?",
                [f"The distance between them shrinks at {v1} + {v2} = {v1 + v2} km/h.",
                 f"They meet after {d}/{v1 + v2} = {t:.3f} hours, about {t * 60:.0f} minutes.",
                 f"The first train covers {v1} x {t:.3f} = {v1 * t:.1f} km."], f"{t:.2f} h; {v1 * t:.1f} km")
    if kind == 3:
        p, r, n = rng.randint(10, 90) * 100, rng.choice([2, 3, 4, 5]), rng.randint(2, 10)
        amount = p * (1 + r / 100) ** n
        steps = [f"Each year the balance is multiplied by 1 + {r}/100 = {1 + r / 100}."]
        bal = p
        for year in range(1, n + 1):
            bal *= 1 + r / 100
            steps.append(f"After year {year}: {bal:.2f}.")
        steps.append(f"Check with the formula: {p} x {1 + r / 100}^{n} = {amount:.2f}.")
        return (f"${p} is invested at {r}% interest compounded yearly. What is the balance after {n} years?",
                steps, f"${amount:.2f}")
    if kind == 4:
        n, k = rng.randint(6, 14), rng.randint(2, 5)
        return (f"A club has {n} members. In how many ways can it choose a committee of {k}? In how many ways can it "
                f"choose a president, a secretary and a treasurer (three different people)?",
                [f"Order does not matter for a committee: C({n},{k}) = {n}! / ({k}! x {n - k}!) = {math.comb(n, k)}.",
                 f"For three distinct roles order matters: {n} x {n - 1} x {n - 2} = {n * (n - 1) * (n - 2)}."],
                f"{math.comb(n, k)} committees; {n * (n - 1) * (n - 2)} ways to fill the roles")
    if kind == 5:
        a, ca, cb = rng.randint(2, 10), rng.choice([10, 20, 30]), rng.choice([50, 60, 70])
        cm = rng.choice(range(ca + 5, cb, 5))
        b = a * (cm - ca) / (cb - cm)
        return (f"How many litres of a {cb}% salt solution must be added to {a} litres of a {ca}% solution to get a {cm}% solution?",
                [f"Let x be the litres of {cb}% solution. Salt balance: {ca / 100}*{a} + {cb / 100}x = {cm / 100}({a} + x).",
                 f"So {ca * a / 100:g} + {cb / 100}x = {cm * a / 100:g} + {cm / 100}x, giving {(cb - cm) / 100:g}x = {(cm - ca) * a / 100:g}.",
                 f"x = {b:.3f} litres."], f"{b:.2f} litres")
    age_now = rng.randint(25, 50)
    child = rng.randint(3, age_now // 3)
    years = (age_now - 2 * child)
    return (f"{name} is {age_now} and her daughter is {child}. In how many years will {name} be exactly twice as old as her daughter?",
            [f"In y years the ages are {age_now} + y and {child} + y.",
             f"Set {age_now} + y = 2({child} + y), so y = {age_now} - {2 * child} = {years}.",
             "A negative answer would mean it happened in the past." if years < 0 else f"Check: {age_now + years} = 2 x {child + years}."],
            f"{years} years")


SCIENCE_MCQ = [
    ("A ball is thrown straight up. At the top of its path, what is its acceleration?",
     ["Zero, because it stops.", "9.8 m/s^2 upwards.", "9.8 m/s^2 downwards.", "It depends on the mass."],
     2, ["Velocity is zero at the top, but acceleration is the rate of change of velocity.",
         "Gravity acts the whole time, so the velocity keeps changing from upward to downward.",
         "Ignoring air resistance, the acceleration is g = 9.8 m/s^2 towards the ground at every point."]),
    ("Which sample contains the most atoms: 12 g of carbon, 16 g of oxygen gas (O2) or 4 g of helium?",
     ["12 g of carbon", "16 g of O2", "4 g of helium", "They all contain the same number"], 3,
     ["12 g of carbon is 1 mol of C atoms.", "16 g of O2 is 0.5 mol of molecules, each with 2 atoms: 1 mol of atoms.",
      "4 g of helium is 1 mol of He atoms.", "All three contain one mole of atoms, about 6.02 x 10^23."]),
    ("Why does ice float on liquid water?",
     ["Ice is less dense because hydrogen bonds hold the molecules in an open lattice.", "Ice contains trapped air.",
      "Ice is lighter because it is colder.", "Surface tension holds it up."], 0,
     ["An object floats if it is less dense than the liquid.", "In ice, each molecule forms four hydrogen bonds in a hexagonal lattice with a lot of empty space.",
      "Liquid water is more compact, so ice is about 9% less dense."]),
    ("In a closed circuit with a battery and two identical bulbs in series, one bulb is removed. What happens to the other?",
     ["It gets brighter.", "It goes out.", "It stays the same.", "It flickers."], 1,
     ["In series there is only one path for the current.", "Removing a bulb breaks the path, so no current flows anywhere.",
      "The other bulb goes out."]),
    ("Which process releases energy in the Sun's core?",
     ["Nuclear fission of uranium", "Chemical burning of hydrogen", "Nuclear fusion of hydrogen into helium", "Gravitational collapse only"], 2,
     ["The core is at about 15 million kelvin, hot enough for protons to overcome their repulsion.",
      "Four protons are converted, through several steps, into a helium-4 nucleus.",
      "The helium nucleus has slightly less mass than the four protons; the difference is released as energy by E = mc^2."]),
    ("A plant is kept in the dark for several days. Which test on a leaf would show the clearest change?",
     ["Iodine test for starch", "Test for protein", "Test for water", "Test for cellulose"], 0,
     ["Without light there is no photosynthesis, so no new glucose is made.", "The plant uses up its stored starch for respiration.",
      "An iodine test would stay orange-brown instead of turning blue-black."]),
]

PROBLEMS = [
    ("Maximum subarray", "Given n integers, find the largest sum of a non-empty contiguous subarray.",
     ["A brute force over all O(n^2) subarrays is too slow for n up to 2*10^5.",
      "Kadane's algorithm: keep the best sum of a subarray ending at the current position.",
      "Either extend the previous subarray or start fresh: cur = max(x, cur + x); the answer is the maximum cur seen.",
      "This is O(n) time and O(1) memory."],
     "def solve(a):\n    best = cur = a[0]\n    for x in a[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n",
     lambda r: [[r.randint(-20, 20) for _ in range(r.randint(6, 10))]]),
    ("Coin change", "Given coin denominations and a target amount, find the fewest coins that sum to the amount, or -1 if impossible.",
     ["Greedy fails for coins like {1, 3, 4} and amount 6 (greedy gives 4+1+1, optimal is 3+3).",
      "Dynamic programming: dp[v] is the fewest coins for value v, with dp[0] = 0.",
      "dp[v] = 1 + min(dp[v - c]) over coins c <= v; unreachable values stay infinite.",
      "Time O(amount x number of coins)."],
     "def solve(coins, amount):\n    INF = float('inf')\n    dp = [0] + [INF] * amount\n    for v in range(1, amount + 1):\n        for c in coins:\n            if c <= v and dp[v - c] + 1 < dp[v]:\n                dp[v] = dp[v - c] + 1\n    return dp[amount] if dp[amount] != INF else -1\n",
     lambda r: [sorted(r.sample(range(1, 12), 3)), r.randint(10, 40)]),
    ("Longest increasing subsequence", "Find the length of the longest strictly increasing subsequence of a sequence.",
     ["Keep tails[k] = the smallest possible tail of an increasing subsequence of length k + 1.",
      "tails is sorted, so each element can be placed with binary search: replace the first tail >= x, or append.",
      "The length of tails at the end is the answer. Time O(n log n)."],
     "from bisect import bisect_left\n\n\ndef solve(a):\n    tails = []\n    for x in a:\n        i = bisect_left(tails, x)\n        if i == len(tails):\n            tails.append(x)\n        else:\n            tails[i] = x\n    return len(tails)\n",
     lambda r: [[r.randint(1, 30) for _ in range(r.randint(8, 12))]]),
    ("Balanced brackets", "Decide whether a string of the brackets ()[]{} is balanced.",
     ["Scan left to right with a stack of open brackets.", "A closing bracket must match the top of the stack; otherwise the string is unbalanced.",
      "At the end the stack must be empty."],
     "def solve(s):\n    pairs = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for ch in s:\n        if ch in '([{':\n            stack.append(ch)\n        elif not stack or stack.pop() != pairs[ch]:\n            return False\n    return not stack\n",
     lambda r: ["".join(r.choice("()[]{}") for _ in range(r.randint(4, 8))) if r.random() < 0.5 else r.choice(["([]{})", "{[()()]}", "(()[{}])"])]),
    ("Merge intervals", "Given closed intervals, merge all overlapping ones and return them sorted.",
     ["Sort by start.", "Walk through the intervals, extending the last merged interval while the next one starts before it ends.",
      "Sorting dominates: O(n log n)."],
     "def solve(intervals):\n    merged = []\n    for lo, hi in sorted(intervals):\n        if merged and lo <= merged[-1][1]:\n            merged[-1][1] = max(merged[-1][1], hi)\n        else:\n            merged.append([lo, hi])\n    return merged\n",
     lambda r: [[[s, s + r.randint(1, 6)] for s in (r.randint(0, 20) for _ in range(5))]]),
    ("Grid shortest path", "On a grid of '.' (free) and '#' (wall), find the fewest steps from the top-left to the bottom-right corner, moving in four directions; -1 if unreachable.",
     ["All moves cost 1, so breadth-first search finds shortest paths.", "Store the distance of each visited cell; the first time the target is popped, its distance is the answer.",
      "Each cell is visited once: O(rows x cols)."],
     "from collections import deque\n\n\ndef solve(grid):\n    rows, cols = len(grid), len(grid[0])\n    if grid[0][0] == '#' or grid[-1][-1] == '#':\n        return -1\n    dist = {(0, 0): 0}\n    queue = deque([(0, 0)])\n    while queue:\n        r, c = queue.popleft()\n        if (r, c) == (rows - 1, cols - 1):\n            return dist[(r, c)]\n        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):\n            nr, nc = r + dr, c + dc\n            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == '.' and (nr, nc) not in dist:\n                dist[(nr, nc)] = dist[(r, c)] + 1\n                queue.append((nr, nc))\n    return -1\n",
     lambda r: [["".join("#" if r.random() < 0.25 and (i, j) not in ((0, 0), (4, 5)) else "." for j in range(6)) for i in range(5)]]),
    ("Count inversions", "Count pairs i < j with a[i] > a[j].",
     ["Merge sort counts inversions while merging: when an element of the right half is taken before the remaining left elements, it forms an inversion with each of them.",
      "Total time O(n log n)."],
     "def solve(a):\n    def sort(xs):\n        if len(xs) <= 1:\n            return xs, 0\n        mid = len(xs) // 2\n        left, x = sort(xs[:mid])\n        right, y = sort(xs[mid:])\n        merged, inv, i, j = [], x + y, 0, 0\n        while i < len(left) and j < len(right):\n            if left[i] <= right[j]:\n                merged.append(left[i])\n                i += 1\n            else:\n                merged.append(right[j])\n                inv += len(left) - i\n                j += 1\n        return merged + left[i:] + right[j:], inv\n    return sort(a)[1]\n",
     lambda r: [r.sample(range(1, 20), r.randint(6, 10))]),
    ("Edit distance", "Find the minimum number of single-character insertions, deletions and substitutions that turn one word into another.",
     ["dp[i][j] is the distance between the first i letters of the first word and the first j letters of the second.",
      "dp[i][j] = dp[i-1][j-1] if the letters match, else 1 + min(dp[i-1][j], dp[i][j-1], dp[i-1][j-1]).",
      "Time and memory O(len(a) x len(b))."],
     "def solve(a, b):\n    prev = list(range(len(b) + 1))\n    for i, ca in enumerate(a, 1):\n        cur = [i]\n        for j, cb in enumerate(b, 1):\n            cur.append(prev[j - 1] if ca == cb else 1 + min(prev[j], cur[j - 1], prev[j - 1]))\n        prev = cur\n    return prev[-1]\n",
     lambda r: r.sample(["kitten", "sitting", "flaw", "lawn", "intention", "execution", "sunday", "saturday",
                         "garden", "gardener", "distance", "instance", "algorithm", "altruistic", "horse", "rose"], 2)),
]


def _run(code: str, args: list):
    namespace: dict = {}
    exec(compile(code, "<solution>", "exec"), namespace)  # our own reference solutions, run to get sample outputs
    return namespace["solve"](*args)


def _coding(rng: random.Random, i: int) -> tuple[str, list[str], str]:
    title, statement, ideas, code, make_input = PROBLEMS[i % len(PROBLEMS)]
    args = make_input(rng)
    out = _run(code, args)
    shown = ", ".join(repr(a) for a in args)
    steps = ideas + [f"Reference implementation in Python:\n\n```python\n{code}```",
                     f"Sample: solve({shown}) returns {out!r}."]
    return f"{title}. {statement}\nSample input: {shown}", steps, repr(out)


def _long_collatz(rng: random.Random) -> tuple[str, list[str], str]:
    hi = rng.randint(30, 48)
    steps, best = [], (0, 0)
    for n in range(1, hi + 1):
        seq, x = [n], n
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            seq.append(x)
        steps.append(f"n = {n}: {' -> '.join(map(str, seq))} ({len(seq) - 1} steps).")
        if len(seq) - 1 > best[1]:
            best = (n, len(seq) - 1)
            steps.append(f"New longest chain so far: {n} with {best[1]} steps.")
    return (f"For each starting value from 1 to {hi}, follow the Collatz rule (halve even numbers, map odd n to 3n + 1) "
            f"until reaching 1. Which start gives the most steps?", steps, f"{best[0]} ({best[1]} steps)")


def _long_knapsack(rng: random.Random) -> tuple[str, list[str], str]:
    items = [(rng.randint(1, 9), rng.randint(3, 30)) for _ in range(rng.randint(6, 8))]
    cap = rng.randint(14, 20)
    dp = [0] * (cap + 1)
    steps = [f"Items (weight, value): {items}. Capacity {cap}. dp[c] is the best value with capacity c, starting at 0."]
    for k, (w, v) in enumerate(items, 1):
        for c in range(cap, w - 1, -1):
            if dp[c - w] + v > dp[c]:
                steps.append(f"Item {k} (w={w}, v={v}), capacity {c}: taking it gives dp[{c - w}] + {v} = {dp[c - w] + v} > {dp[c]}, so dp[{c}] = {dp[c - w] + v}.")
                dp[c] = dp[c - w] + v
            else:
                steps.append(f"Item {k} (w={w}, v={v}), capacity {c}: dp[{c - w}] + {v} = {dp[c - w] + v} is not better than {dp[c]}; keep it.")
        steps.append(f"After item {k}: dp = {dp}.")
    return (f"0/1 knapsack: choose a subset of the items {items} (weight, value) with total weight at most {cap} and "
            f"maximum total value. Show the dynamic programme.", steps, str(dp[cap]))


def _long_bisection(rng: random.Random) -> tuple[str, list[str], str]:
    c = rng.randint(3, 40)
    f = lambda x: x**3 - c  # noqa: E731
    lo, hi = 0.0, float(c)
    steps = [f"We need the root of f(x) = x^3 - {c} on [0, {c}]; f(0) < 0 < f({c}), so a root lies between."]
    for it in range(1, 46):
        mid = (lo + hi) / 2
        fm = f(mid)
        side = "left" if fm > 0 else "right"
        steps.append(f"Iteration {it}: mid = {mid:.12f}, f(mid) = {fm:+.6e}; the root is in the {side} half, "
                     f"so the interval becomes [{lo if fm > 0 else mid:.12f}, {mid if fm > 0 else hi:.12f}].")
        lo, hi = (lo, mid) if fm > 0 else (mid, hi)
    return (f"Use bisection to compute the cube root of {c} to about 12 decimal places, showing every iteration.",
            steps, f"{(lo + hi) / 2:.10f}")


def _long_primes(rng: random.Random) -> tuple[str, list[str], str]:
    n = rng.randint(2000, 3000)
    sieve = [True] * (n + 1)
    sieve[0] = sieve[1] = False
    steps = [f"Sieve of Eratosthenes up to {n}: cross out multiples of each prime p starting at p^2, for p <= sqrt({n}) = {math.isqrt(n)}."]
    for p in range(2, math.isqrt(n) + 1):
        if sieve[p]:
            crossed = list(range(p * p, n + 1, p))
            steps.append(f"p = {p}: cross out {', '.join(map(str, crossed[:12]))}{', ...' if len(crossed) > 12 else ''} ({len(crossed)} {'number' if len(crossed) == 1 else 'numbers'}).")
            for m in crossed:
                sieve[m] = False
    primes = [i for i in range(n + 1) if sieve[i]]
    total = 0
    for k in range(0, len(primes), 10):
        chunk = primes[k:k + 10]
        total += sum(chunk)
        steps.append(f"Primes {', '.join(map(str, chunk))}: running total {total}.")
    return f"Find the sum of all primes below {n}, showing the sieve and the running sums.", steps, str(total)


def _format(problem: str, steps: list[str], answer: str) -> str:
    body = "\n".join(f"Step {i}: {s}" for i, s in enumerate(steps, 1))
    return f"Problem: {problem}\n\nSolution:\n{body}\n\nFinal answer: {answer}"


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "reasoning")
    items = []
    for i in range(24):
        items.append(("math", *_word_problem(rng, i % 7)))
    for i in range(15):
        if i < len(SCIENCE_MCQ):
            q, options, right, why = SCIENCE_MCQ[i]
            opts = "\n".join(f"({'ABCD'[k]}) {o}" for k, o in enumerate(options))
            items.append(("science", f"{q}\n{opts}", why + [f"So the answer is ({'ABCD'[right]})."], f"({'ABCD'[right]}) {options[right]}"))
        else:
            title, blocks = STEM[6 + i % 8](rng)
            example = [b[1] for b in blocks if b[0] == "p"][-1]
            items.append(("science", f"{title}: work the example below and give the final number.\n{as_text(title, blocks[:1])}",
                          [b[1] for b in blocks if b[0] == "p"][1:] or [example], example.split("=")[-1].strip().rstrip(".$")))
    for i in range(16):
        items.append(("code", *_coding(rng, i)))
    for make in (_long_collatz, _long_knapsack, _long_bisection, _long_primes, _long_collatz):
        items.append(("long", *make(rng)))
    rng.shuffle(items)
    return [{"id": f"reasoning-{n + 1:04d}", "source": "reasoning", "text": _format(problem, steps, answer),
             "meta": {"kind": kind, "answer": answer}} for n, (kind, problem, steps, answer) in enumerate(items)]
