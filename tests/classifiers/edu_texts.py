"""English texts the edu scorers' tests share: math and science teaching against commerce, gossip and humanities."""

SCIENCE = [
    "The derivative of a function measures how the output changes as the input changes. For f(x) = x^2 the "
    "difference quotient (f(x+h) - f(x))/h equals 2x + h, and letting h tend to zero gives f'(x) = 2x. "
    "Exercise: differentiate g(x) = 3x^3 - x and find where the tangent line is horizontal.",
    "Newton's second law states that the net force on a body equals its mass times its acceleration, F = ma. "
    "Example: a 2 kg cart pushed with a net force of 6 N accelerates at 3 m/s^2. Friction opposes the motion.",
    "In a chemical equilibrium the forward and reverse reaction rates are equal. Le Chatelier's principle "
    "predicts that adding reactant shifts the equilibrium toward the products; the constant K is unchanged.",
    "Theorem. Every bounded monotone sequence of real numbers converges. Proof. Let (a_n) be increasing and "
    "bounded above and let s be the supremum of its terms. For every epsilon > 0 there is N with a_N > s - epsilon.",
]
OTHER = [
    "Free shipping on all orders over $50! Our bestselling leather boots are now 30% off. Add to cart, choose "
    "your size and checkout in seconds. Returns accepted within 30 days.",
    "Book a demo today and see how our CRM helps your sales team close more deals. Trusted by 10,000 companies. "
    "Contact sales for pricing.",
    "The singer wore a stunning red gown at the premiere last night, sparking rumours of a new romance with "
    "her co-star. Fans flooded social media with comments.",
    "This essay reads the novel's fragmented narration as a critique of late-capitalist subjectivity, drawing "
    "on the postmodern theory of the simulacrum.",
]
