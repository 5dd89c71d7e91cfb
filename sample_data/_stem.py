r"""Worked STEM explainers with LaTeX: theorems, physics derivations, chemistry lab notes.

Each generator takes an RNG, draws its own numbers, computes the results and returns
``(title, blocks)``; blocks are ``("h2"|"p", text)`` or ``("ul"|"ol", [text])``. Placeholders are
written ``<<name>>`` so that LaTeX braces (``\frac{a}{b}``) need no escaping.
"""

from __future__ import annotations

import math
import random
import re


def T(template: str, **values: object) -> str:
    return re.sub(r"<<(\w+)>>", lambda m: str(values[m.group(1)]), template)


def _fmt(x: float, nd: int = 2) -> str:
    return f"{x:.{nd}f}".rstrip("0").rstrip(".")


def pythagoras(rng: random.Random) -> tuple[str, list]:
    a, b = rng.randint(3, 20), rng.randint(3, 20)
    c = math.hypot(a, b)
    k = rng.randint(2, 6)
    return "The Pythagorean theorem: statement, proof and examples", [
        ("p", r"In a right triangle with legs $a$ and $b$ and hypotenuse $c$, the Pythagorean theorem states that $a^2 + b^2 = c^2$. The hypotenuse is the side opposite the right angle, and it is always the longest side."),
        ("h2", "Why it is true"),
        ("p", r"Place four copies of the triangle inside a square of side $a + b$ so that their hypotenuses form a smaller, tilted square of side $c$. The big square has area $(a+b)^2$. It is also the sum of the four triangles, each of area $\frac{1}{2}ab$, and the inner square of area $c^2$. Therefore $(a+b)^2 = 2ab + c^2$. Expanding the left side gives $a^2 + 2ab + b^2 = 2ab + c^2$, and subtracting $2ab$ from both sides leaves $a^2 + b^2 = c^2$."),
        ("h2", "Worked example"),
        ("p", T(r"Suppose the legs measure $a = <<a>>$ cm and $b = <<b>>$ cm. Then $c^2 = <<a>>^2 + <<b>>^2 = <<a2>> + <<b2>> = <<s>>$, so $c = \sqrt{<<s>>} \approx <<c>>$ cm.", a=a, b=b, a2=a * a, b2=b * b, s=a * a + b * b, c=_fmt(c))),
        ("p", T(r"Scaling the classic triple $(3, 4, 5)$ by $<<k>>$ gives $(<<x>>, <<y>>, <<z>>)$, and indeed $<<x>>^2 + <<y>>^2 = <<xx>> + <<yy>> = <<zz>> = <<z>>^2$.", k=k, x=3 * k, y=4 * k, z=5 * k, xx=9 * k * k, yy=16 * k * k, zz=25 * k * k)),
        ("h2", "The converse"),
        ("p", r"If the side lengths of a triangle satisfy $a^2 + b^2 = c^2$, then the angle opposite $c$ is a right angle. Builders have used this for centuries: a rope with knots at 3, 4 and 5 units makes a reliable right angle."),
    ]


def quadratic(rng: random.Random) -> tuple[str, list]:
    r1, r2 = rng.randint(-9, 9), rng.randint(-9, 9)
    b, c = -(r1 + r2), r1 * r2
    disc = b * b - 4 * c
    return "Deriving the quadratic formula by completing the square", [
        ("p", r"Every quadratic equation $ax^2 + bx + c = 0$ with $a \neq 0$ can be solved with the formula $x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}$. The expression under the root, $\Delta = b^2 - 4ac$, is called the discriminant."),
        ("h2", "Derivation"),
        ("p", r"Divide by $a$ to get $x^2 + \frac{b}{a}x + \frac{c}{a} = 0$. Add and subtract $\left(\frac{b}{2a}\right)^2$ to complete the square: $\left(x + \frac{b}{2a}\right)^2 = \frac{b^2 - 4ac}{4a^2}$. Taking square roots of both sides gives $x + \frac{b}{2a} = \pm\frac{\sqrt{b^2-4ac}}{2a}$, which rearranges to the formula."),
        ("h2", "Worked example"),
        ("p", T(r"Solve $x^2 + (<<b>>)x + (<<c>>) = 0$. Here $a = 1$, $b = <<b>>$ and $c = <<c>>$, so $\Delta = (<<b>>)^2 - 4 \cdot 1 \cdot (<<c>>) = <<d>>$. Since $\sqrt{<<d>>} = <<sd>>$, the roots are $x = \frac{<<mb>> \pm <<sd>>}{2}$, that is $x_1 = <<r1>>$ and $x_2 = <<r2>>$.", b=b, c=c, d=disc, sd=int(math.isqrt(disc)), mb=-b, r1=max(r1, r2), r2=min(r1, r2))),
        ("p", T(r"Check: $(<<r1>>)^2 + (<<b>>)(<<r1>>) + (<<c>>) = <<v>>$. The sum of the roots is $-b/a = <<s>>$ and the product is $c/a = <<c>>$, as Vieta's formulas predict.", r1=r1, b=b, c=c, v=r1 * r1 + b * r1 + c, s=r1 + r2)),
        ("h2", "What the discriminant tells you"),
        ("ul", [r"If $\Delta > 0$, there are two distinct real roots.", r"If $\Delta = 0$, there is one repeated real root.", r"If $\Delta < 0$, the roots are complex conjugates."]),
    ]


def am_gm(rng: random.Random) -> tuple[str, list]:
    p = rng.randint(8, 60) * 2
    side = p / 4
    return "The AM-GM inequality and the largest rectangle", [
        ("p", r"For non-negative numbers $x$ and $y$, the arithmetic mean is at least the geometric mean: $\frac{x+y}{2} \ge \sqrt{xy}$, with equality exactly when $x = y$."),
        ("h2", "Proof"),
        ("p", r"Because a square is never negative, $(\sqrt{x} - \sqrt{y})^2 \ge 0$. Expanding gives $x - 2\sqrt{xy} + y \ge 0$, and dividing by 2 yields $\frac{x+y}{2} \ge \sqrt{xy}$. Equality holds only if $\sqrt{x} = \sqrt{y}$."),
        ("h2", "Application"),
        ("p", T(r"Among all rectangles with perimeter $<<p>>$, which has the largest area? If the sides are $x$ and $y$, then $x + y = <<h>>$ and the area is $xy$. By AM-GM, $\sqrt{xy} \le \frac{x+y}{2} = <<q>>$, so $xy \le <<q>>^2 = <<a>>$. The maximum is reached when $x = y = <<q>>$: the square.", p=p, h=p // 2, q=_fmt(side), a=_fmt(side * side))),
        ("p", r"The same idea extends to $n$ numbers: $\frac{x_1 + \dots + x_n}{n} \ge \sqrt[n]{x_1 \cdots x_n}$, which can be proved by induction or with Jensen's inequality for the concave logarithm."),
    ]


def fermat_little(rng: random.Random) -> tuple[str, list]:
    p = rng.choice([7, 11, 13, 17, 19, 23, 29, 31])
    a = rng.randint(2, p - 1)
    k = rng.randint(50, 400)
    r = k % (p - 1)
    return "Fermat's little theorem with worked examples", [
        ("p", r"Fermat's little theorem says that if $p$ is prime and $a$ is not divisible by $p$, then $a^{p-1} \equiv 1 \pmod{p}$. It is one of the basic tools of number theory and the reason the RSA cryptosystem works."),
        ("h2", "A short proof"),
        ("p", r"Consider the numbers $a, 2a, \dots, (p-1)a$ modulo $p$. None is $0$, and no two are equal, because $ia \equiv ja$ would force $p \mid (i-j)$. So they are a rearrangement of $1, 2, \dots, p-1$. Multiplying them all gives $a^{p-1}(p-1)! \equiv (p-1)! \pmod p$, and since $(p-1)!$ is invertible modulo $p$, we can cancel it."),
        ("h2", "Example"),
        ("p", T(r"Compute $<<a>>^{<<k>>} \bmod <<p>>$. Since $<<a>>^{<<pm>>} \equiv 1 \pmod{<<p>>}$, reduce the exponent: $<<k>> = <<q>> \cdot <<pm>> + <<r>>$. Hence $<<a>>^{<<k>>} \equiv <<a>>^{<<r>>} \equiv <<v>> \pmod{<<p>>}$.", a=a, k=k, p=p, pm=p - 1, q=k // (p - 1), r=r, v=pow(a, k, p))),
        ("p", T(r"Direct check for the theorem itself: $<<a>>^{<<pm>>} \bmod <<p>> = <<v>>$.", a=a, pm=p - 1, p=p, v=pow(a, p - 1, p))),
    ]


def binomial(rng: random.Random) -> tuple[str, list]:
    n, k, m = rng.randint(4, 9), rng.randint(1, 3), rng.randint(2, 4)
    row = [math.comb(n, i) for i in range(n + 1)]
    return "The binomial theorem and Pascal's triangle", [
        ("p", r"The binomial theorem expands a power of a sum: $(x + y)^n = \sum_{k=0}^{n} \binom{n}{k} x^{n-k} y^k$, where $\binom{n}{k} = \frac{n!}{k!(n-k)!}$ counts the ways to choose $k$ objects from $n$."),
        ("h2", "Pascal's triangle"),
        ("p", T(r"Each entry is the sum of the two above it, because $\binom{n}{k} = \binom{n-1}{k-1} + \binom{n-1}{k}$. Row $<<n>>$ reads <<row>>.", n=n, row=", ".join(map(str, row)))),
        ("h2", "Worked example"),
        ("p", T(r"Find the coefficient of $x^<<k>>$ in $(1 + <<m>>x)^<<n>>$. The general term is $\binom{<<n>>}{j}(<<m>>x)^j$, so we need $j = <<k>>$: $\binom{<<n>>}{<<k>>} \cdot <<m>>^<<k>> = <<c>> \cdot <<mk>> = <<v>>$.", k=k, m=m, n=n, c=math.comb(n, k), mk=m**k, v=math.comb(n, k) * m**k)),
        ("p", T(r"Setting $x = y = 1$ shows that the entries of row $n$ add up to $2^n$; for row $<<n>>$ that is $<<s>>$.", n=n, s=2**n)),
    ]


def euclid(rng: random.Random) -> tuple[str, list]:
    g = rng.randint(2, 30)
    a, b = g * rng.randint(20, 90), g * rng.randint(5, 19)
    steps, x, y = [], a, b
    while y:
        steps.append(T(r"$<<x>> = <<q>> \cdot <<y>> + <<r>>$", x=x, q=x // y, y=y, r=x % y))
        x, y = y, x % y
    return "The Euclidean algorithm for the greatest common divisor", [
        ("p", r"The greatest common divisor of two integers is the largest number dividing both. Euclid's algorithm rests on one fact: $\gcd(a, b) = \gcd(b, a \bmod b)$, because any common divisor of $a$ and $b$ also divides the remainder $a - qb$."),
        ("h2", "Worked example"),
        ("p", T(r"Find $\gcd(<<a>>, <<b>>)$ by repeated division:", a=a, b=b)),
        ("ol", steps),
        ("p", T(r"The last non-zero remainder is the answer: $\gcd(<<a>>, <<b>>) = <<g>>$.", a=a, b=b, g=math.gcd(a, b))),
        ("p", r"The algorithm is fast: the remainders at least halve every two steps, so the number of steps grows only like the logarithm of the inputs."),
    ]


def projectile(rng: random.Random) -> tuple[str, list]:
    v, th, g = rng.randint(10, 40), rng.choice([15, 30, 40, 45, 50, 60]), 9.81
    rad = math.radians(th)
    return "Deriving the range of a projectile", [
        ("p", r"A ball launched with speed $v_0$ at angle $\theta$ above level ground, ignoring air resistance, moves with constant horizontal velocity $v_0\cos\theta$ and constant downward acceleration $g$."),
        ("h2", "Derivation"),
        ("p", r"The vertical position is $y(t) = v_0 \sin\theta \, t - \frac{1}{2} g t^2$. Setting $y = 0$ gives the flight time $t_f = \frac{2 v_0 \sin\theta}{g}$. The horizontal distance travelled in that time is $R = v_0 \cos\theta \cdot t_f = \frac{v_0^2 \sin 2\theta}{g}$, using $2\sin\theta\cos\theta = \sin 2\theta$."),
        ("p", r"Because $\sin 2\theta$ is largest at $2\theta = 90^\circ$, the range is greatest for a launch angle of $45^\circ$, and complementary angles such as $30^\circ$ and $60^\circ$ give the same range."),
        ("h2", "Numerical example"),
        ("p", T(r"With $v_0 = <<v>>$ m/s and $\theta = <<th>>^\circ$: $t_f = \frac{2 \cdot <<v>> \cdot \sin <<th>>^\circ}{9.81} \approx <<tf>>$ s, the maximum height is $\frac{v_0^2 \sin^2\theta}{2g} \approx <<h>>$ m, and the range is $R \approx <<r>>$ m.", v=v, th=th, tf=_fmt(2 * v * math.sin(rad) / g), h=_fmt((v * math.sin(rad)) ** 2 / (2 * g)), r=_fmt(v * v * math.sin(2 * rad) / g))),
    ]


def pendulum(rng: random.Random) -> tuple[str, list]:
    L = rng.randint(20, 300) / 100
    return "The period of a simple pendulum", [
        ("p", r"A simple pendulum is a point mass $m$ on a light string of length $L$. Displaced by a small angle $\theta$, gravity pulls it back with a torque $-mgL\sin\theta$."),
        ("h2", "Derivation"),
        ("p", r"Newton's second law for rotation gives $mL^2 \ddot\theta = -mgL \sin\theta$. For small angles, $\sin\theta \approx \theta$, so $\ddot\theta = -\frac{g}{L}\theta$. This is simple harmonic motion with angular frequency $\omega = \sqrt{g/L}$ and period $T = 2\pi\sqrt{\frac{L}{g}}$."),
        ("p", r"The period does not depend on the mass or, for small swings, on the amplitude. Galileo is said to have noticed this while watching a swinging lamp."),
        ("h2", "Example"),
        ("p", T(r"For $L = <<L>>$ m, $T = 2\pi\sqrt{<<L>>/9.81} \approx <<T>>$ s. Quadrupling the length to $<<L4>>$ m doubles the period to about $<<T2>>$ s.", L=L, T=_fmt(2 * math.pi * math.sqrt(L / 9.81)), L4=_fmt(4 * L), T2=_fmt(4 * math.pi * math.sqrt(L / 9.81)))),
    ]


def work_energy(rng: random.Random) -> tuple[str, list]:
    m, F, d = rng.randint(2, 40), rng.randint(5, 200), rng.randint(2, 30)
    v = math.sqrt(2 * F * d / m)
    return "The work-energy theorem and kinetic energy", [
        ("p", r"Work done by a constant force $F$ along a displacement $d$ in the same direction is $W = Fd$. The work-energy theorem says that the net work on an object equals the change in its kinetic energy."),
        ("h2", "Derivation"),
        ("p", r"With constant acceleration $a = F/m$, kinematics gives $v^2 = v_0^2 + 2ad$. Multiplying by $\frac{m}{2}$: $\frac{1}{2}mv^2 - \frac{1}{2}mv_0^2 = mad = Fd = W$. So kinetic energy is $K = \frac{1}{2}mv^2$."),
        ("h2", "Example"),
        ("p", T(r"A cart of mass $<<m>>$ kg starts at rest and is pushed with a net force of $<<F>>$ N over $<<d>>$ m. The work is $W = <<F>> \times <<d>> = <<W>>$ J, so $\frac{1}{2} \cdot <<m>> \cdot v^2 = <<W>>$ and $v = \sqrt{2 \cdot <<W>> / <<m>>} \approx <<v>>$ m/s.", m=m, F=F, d=d, W=F * d, v=_fmt(v))),
    ]


def escape_velocity(rng: random.Random) -> tuple[str, list]:
    mass, radius = rng.randint(2, 90) / 10, rng.randint(20, 90) / 10
    G, M, R = 6.674e-11, mass * 1e24, radius * 1e6
    return "Escape velocity from energy conservation", [
        ("p", r"Escape velocity is the launch speed at which an object just barely escapes a planet's gravity, ending with zero speed infinitely far away."),
        ("h2", "Derivation"),
        ("p", r"The gravitational potential energy at distance $r$ is $U = -\frac{GMm}{r}$. Conservation of energy between the surface and infinity gives $\frac{1}{2}mv_e^2 - \frac{GMm}{R} = 0$, so $v_e = \sqrt{\frac{2GM}{R}}$. The mass of the rocket cancels."),
        ("h2", "Example"),
        ("p", T(r"For a planet with $M = <<M>> \times 10^{24}$ kg and $R = <<R>> \times 10^{6}$ m: $v_e = \sqrt{2 \cdot 6.674\times10^{-11} \cdot <<M>>\times10^{24} / <<R>>\times10^{6}} \approx <<v>>$ km/s. For Earth the same formula gives about 11.2 km/s.", M=mass, R=radius, v=_fmt(math.sqrt(2 * G * M / R) / 1000))),
    ]


def resistors(rng: random.Random) -> tuple[str, list]:
    r1, r2, r3, V = rng.randint(2, 50), rng.randint(2, 50), rng.randint(2, 50), rng.choice([6, 9, 12, 24])
    par = r2 * r3 / (r2 + r3)
    tot = r1 + par
    return "Series and parallel resistors with Ohm's law", [
        ("p", r"Ohm's law relates voltage, current and resistance: $V = IR$. Resistors in series add, $R_s = R_1 + R_2$; in parallel their reciprocals add, $\frac{1}{R_p} = \frac{1}{R_1} + \frac{1}{R_2}$."),
        ("h2", "Why the rules hold"),
        ("p", r"In series the same current flows through each resistor, so the voltages add: $V = IR_1 + IR_2$. In parallel each resistor sees the same voltage, so the currents add: $I = V/R_1 + V/R_2$."),
        ("h2", "Worked example"),
        ("p", T(r"A $<<V>>$ V battery drives $R_1 = <<r1>>\,\Omega$ in series with the parallel pair $R_2 = <<r2>>\,\Omega$ and $R_3 = <<r3>>\,\Omega$. The pair gives $R_p = \frac{<<r2>> \cdot <<r3>>}{<<r2>> + <<r3>>} \approx <<p>>\,\Omega$, the total is $R \approx <<t>>\,\Omega$, and the current from the battery is $I = V/R \approx <<i>>$ A.", V=V, r1=r1, r2=r2, r3=r3, p=_fmt(par), t=_fmt(tot), i=_fmt(V / tot, 3))),
    ]


def titration(rng: random.Random) -> tuple[str, list]:
    c_naoh = rng.choice([0.100, 0.105, 0.098, 0.110])
    vols = [round(rng.uniform(18.0, 26.0), 2)]
    vols += [round(vols[0] + rng.uniform(-0.15, 0.15), 2) for _ in range(2)]
    mean = sum(vols) / 3
    v_acid = 25.00
    c_hcl = c_naoh * mean / v_acid
    return "Lab note: standardising hydrochloric acid by titration", [
        ("h2", "Aim"),
        ("p", "To determine the concentration of a hydrochloric acid solution by titration against standard sodium hydroxide, using phenolphthalein as indicator."),
        ("h2", "Procedure"),
        ("ol", ["Rinse the burette with the NaOH solution and fill it, removing air bubbles from the tip.",
                "Pipette 25.00 mL of the HCl solution into a conical flask and add three drops of phenolphthalein.",
                "Titrate until the first permanent pale pink colour appears, swirling constantly.",
                "Repeat until three concordant titres (within 0.20 mL) are obtained."]),
        ("h2", "Results"),
        ("p", T(r"NaOH concentration: $<<c>>$ mol/L. Titres: <<v1>> mL, <<v2>> mL, <<v3>> mL. Mean titre: $<<m>>$ mL.", c=f"{c_naoh:.3f}", v1=vols[0], v2=vols[1], v3=vols[2], m=f"{mean:.2f}")),
        ("h2", "Calculation"),
        ("p", T(r"The reaction is $\mathrm{HCl + NaOH \rightarrow NaCl + H_2O}$, a 1:1 ratio. Moles of NaOH $= <<c>> \times <<m>> \times 10^{-3} = <<n>>$ mol, equal to the moles of HCl in 25.00 mL. So $c(\mathrm{HCl}) = \frac{<<n>>}{0.02500} \approx <<ch>>$ mol/L.", c=f"{c_naoh:.3f}", m=f"{mean:.2f}", n=f"{c_naoh * mean / 1000:.3e}", ch=f"{c_hcl:.4f}")),
        ("h2", "Discussion"),
        ("p", "The main uncertainty comes from judging the end point; a white tile under the flask helps. Burette readings were taken at eye level to avoid parallax. Carbon dioxide absorbed by the NaOH solution would lower its effective concentration, so the standard solution should be freshly prepared."),
    ]


def gas_yield(rng: random.Random) -> tuple[str, list]:
    m_mg = round(rng.uniform(0.040, 0.120), 3)
    T_c, P = rng.randint(18, 25), rng.randint(99, 103)
    n = m_mg / 24.31
    v_theory = n * 8.314 * (T_c + 273.15) / (P * 1000) * 1e6
    v_meas = round(v_theory * rng.uniform(0.86, 0.98), 1)
    return "Lab note: hydrogen from magnesium and hydrochloric acid", [
        ("h2", "Aim"),
        ("p", "To measure the volume of hydrogen released when magnesium reacts with excess hydrochloric acid and to compare it with the ideal gas prediction."),
        ("h2", "Method"),
        ("p", T(r"A strip of magnesium ribbon of mass $<<m>>$ g was dropped into 20 mL of 1 mol/L HCl in a flask connected to an inverted measuring cylinder filled with water. The room was at $<<t>>\,^\circ$C and $<<p>>$ kPa.", m=m_mg, t=T_c, p=P)),
        ("h2", "Calculation"),
        ("p", T(r"$\mathrm{Mg + 2HCl \rightarrow MgCl_2 + H_2}$, so one mole of hydrogen forms per mole of magnesium. $n = \frac{<<m>>}{24.31} \approx <<n>>$ mol. From $PV = nRT$: $V = \frac{nRT}{P} \approx <<v>>$ mL. Measured: $<<vm>>$ mL, that is <<pct>> % of the prediction.", m=m_mg, n=f"{n:.2e}", v=_fmt(v_theory, 1), vm=v_meas, pct=_fmt(100 * v_meas / v_theory, 1))),
        ("h2", "Sources of error"),
        ("ul", ["An oxide layer on the ribbon adds mass that does not produce hydrogen.",
                "Some gas escapes before the bung is fitted.",
                "The collected gas is saturated with water vapour, so its partial pressure is lower than the room pressure."]),
    ]


def half_life(rng: random.Random) -> tuple[str, list]:
    t_half, n0, t = rng.choice([5, 8, 12, 30]), rng.randint(2, 9) * 1000, rng.randint(2, 6)
    return "Radioactive decay and half-life", [
        ("p", r"A radioactive sample decays at a rate proportional to the number of undecayed nuclei: $\frac{dN}{dt} = -\lambda N$. The solution is $N(t) = N_0 e^{-\lambda t}$."),
        ("h2", "Half-life"),
        ("p", r"The half-life $t_{1/2}$ is the time for half the nuclei to decay. Setting $N = N_0/2$ gives $e^{-\lambda t_{1/2}} = \frac{1}{2}$, so $t_{1/2} = \frac{\ln 2}{\lambda}$. Equivalently $N(t) = N_0 \left(\frac{1}{2}\right)^{t/t_{1/2}}$."),
        ("h2", "Example"),
        ("p", T(r"A sample with $N_0 = <<n0>>$ nuclei and $t_{1/2} = <<th>>$ days is left for $<<tt>>$ days, that is $<<t>>$ half-lives. The remaining number is $<<n0>> \cdot (1/2)^{<<t>>} = <<n>>$. The decay constant is $\lambda = \ln 2 / <<th>> \approx <<lam>>$ per day.", n0=n0, th=t_half, tt=t * t_half, t=t, n=_fmt(n0 / 2**t, 1), lam=f"{math.log(2) / t_half:.4f}")),
    ]


def dice(rng: random.Random) -> tuple[str, list]:
    s = rng.randint(3, 11)
    ways = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b == s)
    g = math.gcd(ways, 36)
    return "Probability with two dice", [
        ("p", r"When two fair dice are rolled there are $6 \times 6 = 36$ equally likely outcomes. The probability of an event is the number of favourable outcomes divided by 36."),
        ("h2", "Worked example"),
        ("p", T(r"What is the probability that the sum is $<<s>>$? The favourable pairs are <<pairs>>, which is $<<w>>$ outcomes, so $P = \frac{<<w>>}{36} = \frac{<<a>>}{<<b>>} \approx <<p>>$.", s=s, pairs=", ".join(f"({a},{s - a})" for a in range(1, 7) if 1 <= s - a <= 6), w=ways, a=ways // g, b=36 // g, p=f"{ways / 36:.3f}")),
        ("p", r"The most likely sum is 7, with 6 favourable outcomes, and the expected value of the sum is $2 \times 3.5 = 7$, by linearity of expectation."),
    ]



def kepler(rng: random.Random) -> tuple[str, list]:
    a = rng.choice([0.39, 0.72, 1.52, 2.8, 5.2, 9.5])
    return "Kepler's third law from Newton's gravity", [
        ("p", r"Kepler found that the square of a planet's orbital period is proportional to the cube of its mean distance from the Sun: $T^2 \propto a^3$. Newton's law of gravitation explains why."),
        ("h2", "Derivation for a circular orbit"),
        ("p", r"For a circular orbit of radius $a$, gravity supplies the centripetal force: $\frac{GMm}{a^2} = m\frac{4\pi^2 a}{T^2}$. Cancelling $m$ and rearranging gives $T^2 = \frac{4\pi^2}{GM}a^3$. The constant depends only on the mass of the Sun, so it is the same for every planet."),
        ("h2", "Example"),
        ("p", T(r"Measuring $a$ in astronomical units and $T$ in years makes the constant equal to 1, so $T = a^{3/2}$. A body at $a = <<a>>$ AU has $T = <<a>>^{1.5} \approx <<t>>$ years.", a=a, t=_fmt(a**1.5))),
    ]


def hardy_weinberg(rng: random.Random) -> tuple[str, list]:
    q2 = rng.choice([0.01, 0.04, 0.09, 0.16, 0.0025])
    q = math.sqrt(q2)
    p = 1 - q
    return "Hardy-Weinberg equilibrium with a worked example", [
        ("p", r"In a large, randomly mating population with no selection, mutation or migration, allele frequencies stay constant from one generation to the next. If a gene has alleles $A$ and $a$ with frequencies $p$ and $q = 1 - p$, the genotype frequencies are $p^2$, $2pq$ and $q^2$."),
        ("h2", "Why"),
        ("p", r"Random mating combines two alleles drawn independently from the gene pool. The chance of drawing $A$ twice is $p^2$, of drawing $a$ twice is $q^2$, and of one of each, in either order, is $2pq$. These add to $(p+q)^2 = 1$."),
        ("h2", "Worked example"),
        ("p", T(r"A recessive condition affects a fraction $q^2 = <<q2>>$ of a population. Then $q = \sqrt{<<q2>>} = <<q>>$ and $p = <<p>>$. The fraction of carriers is $2pq = 2 \cdot <<p>> \cdot <<q>> \approx <<c>>$, much larger than the fraction affected.", q2=q2, q=_fmt(q, 3), p=_fmt(p, 3), c=_fmt(2 * p * q, 4))),
    ]


def rayleigh(rng: random.Random) -> tuple[str, list]:
    blue, red = rng.choice([440, 450, 460]), rng.choice([650, 680, 700])
    return "Why the sky is blue: Rayleigh scattering", [
        ("p", r"Sunlight contains all visible wavelengths. Air molecules are much smaller than those wavelengths, and such small particles scatter light with an intensity proportional to $\frac{1}{\lambda^4}$."),
        ("h2", "Estimate"),
        ("p", T(r"Compare blue light at $<<b>>$ nm with red light at $<<r>>$ nm: $\left(\frac{<<r>>}{<<b>>}\right)^4 \approx <<x>>$. Blue light is scattered about <<x>> times more strongly, so light reaching us from all directions of the sky is dominated by short wavelengths.", b=blue, r=red, x=_fmt((red / blue) ** 4, 1))),
        ("p", r"At sunset, sunlight crosses much more air before reaching us. Most of the blue has been scattered out of the direct beam, and the Sun looks orange or red. Violet is scattered even more than blue, but sunlight contains less of it and our eyes are less sensitive to it."),
    ]


def photosynthesis(rng: random.Random) -> tuple[str, list]:
    g = rng.randint(10, 90)
    n = g / 44.01
    return "Photosynthesis by the numbers", [
        ("p", r"The overall equation of photosynthesis is $\mathrm{6CO_2 + 6H_2O \rightarrow C_6H_{12}O_6 + 6O_2}$, driven by light energy captured by chlorophyll."),
        ("h2", "Stoichiometry example"),
        ("p", T(r"How much glucose can be made from $<<g>>$ g of carbon dioxide? The molar mass of $\mathrm{CO_2}$ is 44.01 g/mol, so $n = <<g>>/44.01 \approx <<n>>$ mol. Six moles of $\mathrm{CO_2}$ give one mole of glucose, so $n(\mathrm{glucose}) \approx <<ng>>$ mol, or about $<<m>>$ g at 180.16 g/mol.", g=g, n=_fmt(n, 3), ng=_fmt(n / 6, 4), m=_fmt(n / 6 * 180.16))),
        ("p", r"The light-dependent reactions split water and release oxygen; the Calvin cycle then fixes carbon dioxide into sugars using the ATP and NADPH produced."),
    ]


def ideal_gas(rng: random.Random) -> tuple[str, list]:
    n, t, v = rng.randint(1, 5), rng.randint(250, 400), rng.randint(10, 50)
    return "Using the ideal gas law", [
        ("p", r"The ideal gas law $PV = nRT$ links pressure, volume, amount of gas and absolute temperature, with $R = 8.314$ J/(mol K). It works well for gases at low pressure and high temperature."),
        ("h2", "Example"),
        ("p", T(r"What is the pressure of $<<n>>$ mol of gas at $<<t>>$ K in a $<<v>>$ L container? Converting the volume to cubic metres, $V = <<vm>>$ m$^3$, so $P = \frac{nRT}{V} = \frac{<<n>> \cdot 8.314 \cdot <<t>>}{<<vm>>} \approx <<p>>$ kPa.", n=n, t=t, v=v, vm=v / 1000, p=_fmt(n * 8.314 * t / (v / 1000) / 1000, 1))),
        ("p", r"Doubling the temperature at fixed volume doubles the pressure; this is Gay-Lussac's law, a special case of the ideal gas law."),
    ]

ALL = [pythagoras, quadratic, am_gm, fermat_little, binomial, euclid, projectile, pendulum, work_energy,
       escape_velocity, resistors, titration, gas_yield, half_life, dice, kepler, hardy_weinberg, rayleigh,
       photosynthesis, ideal_gas]


def as_text(title: str, blocks: list) -> str:
    """Plain-text rendering (markdown-ish headings, numbered lists)."""
    out = [title]
    for kind, payload in blocks:
        if kind == "h2":
            out.append(f"## {payload}")
        elif kind == "p":
            out.append(payload)
        else:
            out.append("\n".join((f"{i}. " if kind == "ol" else "- ") + x for i, x in enumerate(payload, 1)))
    return "\n\n".join(out)
