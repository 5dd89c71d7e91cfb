"""Low-value web pages: boilerplate-heavy pages, spam/SEO pages, and same-template shop/place pages."""

from __future__ import annotations

import random

from _common import CITIES, MONTHS, fill, person
from _web_articles import _Pool
from _web_banks import TOPICS

MENU = ["Home", "About us", "Services", "Blog", "Contact", "Log in", "Sign up", "Cart (0)", "Search", "Menu",
        "Shop", "FAQ", "Careers", "Press", "Events", "Gallery", "Support", "My account", "Wishlist",
        "Store locator", "Skip to content", "Toggle navigation"]
COOKIE = ["We use cookies to improve your experience on our website. By continuing to browse, you agree to our use of cookies.",
          "Accept all cookies", "Manage preferences", "Reject non-essential cookies",
          "This site uses cookies. Learn more.", "Cookie settings", "We value your privacy"]
NEWSLETTER = ["Subscribe to our newsletter", "Enter your email address", "Sign up for weekly updates and exclusive offers!",
              "Subscribe", "No spam, unsubscribe at any time.", "Get 10% off your first order when you sign up"]
JS = ["JavaScript is disabled in your browser. Please enable JavaScript to view this page.",
      "Your browser is out of date. Update your browser for more security, speed and the best experience on this site.",
      "Loading...", "Please wait...", "javascript is disabled"]
SOCIAL = ["Share on Facebook", "Tweet", "Pin it", "Share via email", "Follow us", "Like us on Facebook",
          "Follow us on Instagram", "Share", "Copy link"]
FOOTER = ["© {year} {site}. All rights reserved.", "Privacy Policy", "Terms & Conditions", "Sitemap",
          "Accessibility", "Powered by WordPress", "Back to top", "Contact us: info@{domain}",
          "Registered office: {n} High Street, {city}", "Cookie policy", "Imprint"]
MISC = ["Read more", "Related posts", "Previous post", "Next post", "Leave a comment",
        "You must be logged in to post a comment.", "Tags: news, events, {city}", "Posted in Uncategorized",
        "{n} comments", "Page 1 of {n}", "Most popular", "Trending now", "Advertisement", "Sponsored content"]
SITE_WORDS = ["Green", "Blue", "Happy", "Smart", "City", "Home", "Daily", "Prime", "Bright", "Local"]
SITE_NOUNS = ["Hub", "Corner", "Life", "Guide", "Spot", "Times", "Zone", "Point", "Source", "Place"]


def _lines(rng: random.Random, bank: list[str], k: int, slots: dict[str, str]) -> list[str]:
    return [fill(x, slots) for x in rng.sample(bank, min(k, len(bank)))]


def boilerplate_page(rng: random.Random) -> dict:
    """A page whose extracted text is mostly menus, banners and footers around a scrap of content."""
    site = f"{rng.choice(SITE_WORDS)}{rng.choice(SITE_NOUNS)}"
    domain = f"{site.lower()}.example.com"
    slots = {"site": site, "domain": domain, "city": rng.choice(CITIES), "n": str(rng.randint(2, 40)),
             "year": str(rng.randint(2015, 2024))}
    topic = rng.choice(TOPICS)
    pool = _Pool(rng, topic)
    title = fill(rng.choice(topic["titles"]), {**slots, "n2": str(rng.randint(10, 90))})
    parts: list[tuple] = [
        ("div_lines", _lines(rng, MENU, rng.randint(6, 14), slots), "menu"),
        ("div_lines", _lines(rng, COOKIE, rng.randint(2, 4), slots), "cookie-banner"),
    ]
    if rng.random() < 0.4:
        parts.insert(0, ("div_lines", _lines(rng, JS, rng.randint(1, 2), slots), "noscript-warning"))
    parts.append(("div_lines", [title], "title"))
    parts.append(("div_lines", [f"Posted by {person(rng)} on {rng.choice(MONTHS)} {rng.randint(1, 28)}"], "meta"))
    for _ in range(rng.randint(0, 2)):
        parts.append(("p", pool.paragraph(1, 3)))
    parts.append(("div_lines", _lines(rng, SOCIAL, rng.randint(3, 6), slots), "share"))
    related = [fill(rng.choice(t["titles"]), {**slots, "n2": "12"}) for t in rng.sample(TOPICS, 4)]
    parts.append(("div_lines", [fill(rng.choice(MISC), slots)] + related, "related"))
    parts.append(("div_lines", _lines(rng, NEWSLETTER, rng.randint(2, 5), slots), "newsletter"))
    parts.append(("div_lines", _lines(rng, MISC, rng.randint(3, 6), slots), "widgets"))
    parts.append(("div_lines", _lines(rng, FOOTER, rng.randint(4, 8), slots), "site-footer"))
    return {"title": title, "site": site, "domain": domain, "blocks": parts, "topic": topic["key"]}


SPAM_KEYWORDS = [
    ["cheap flights", "last minute flights", "cheap airline tickets", "flight deals"],
    ["online casino", "free spins", "casino bonus", "jackpot slots", "no deposit bonus"],
    ["cheap pills", "weight loss pills", "diet pills online", "buy pills without prescription"],
    ["payday loans", "fast cash loans", "instant loan approval", "bad credit loans"],
    ["replica watches", "luxury watches cheap", "designer watches discount"],
    ["seo services", "buy backlinks", "rank number one on google", "cheap seo package"],
]
LOREM = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim", "ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi", "aliquip", "ex", "ea", "commodo", "consequat", "duis", "aute", "irure", "in", "reprehenderit", "voluptate", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "excepteur", "sint", "occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt", "mollit", "anim", "id", "est", "laborum"]
CAPS = ["WIN BIG TODAY!!!", "100% GUARANTEED RESULTS", "CLICK HERE NOW", "LIMITED TIME OFFER", "ACT FAST!!!",
        "NO PRESCRIPTION NEEDED", "BEST PRICES ONLINE", "FREE SHIPPING WORLDWIDE", "DOCTORS HATE THIS TRICK",
        "MAKE $5000 A WEEK FROM HOME", "CALL NOW", "DON'T MISS OUT"]


def spam_page(rng: random.Random, index: int) -> dict:
    """Keyword stuffing, lorem ipsum, ALL-CAPS ad copy and link lists, in several mixes."""
    kws = SPAM_KEYWORDS[index % len(SPAM_KEYWORDS)]
    city = rng.choice(CITIES)
    domain = f"{kws[0].replace(' ', '-')}-{rng.randint(10, 999)}.example.biz"
    style = index % 5
    blocks: list[tuple] = [("h1", f"{kws[0].upper()} {city.upper()} - BEST {kws[1].upper()} {rng.randint(2019, 2025)}")]
    if style == 0:  # keyword stuffing in sentences
        for _ in range(rng.randint(4, 9)):
            words = []
            for _ in range(rng.randint(4, 8)):
                words.append(rng.choice([f"best {rng.choice(kws)}", rng.choice(kws), f"{rng.choice(kws)} in {city}",
                                         f"cheap {rng.choice(kws)}", f"{rng.choice(kws)} online"]))
            blocks.append(("p", ", ".join(words) + "."))
    elif style == 1:  # lorem ipsum filler
        for _ in range(rng.randint(3, 7)):
            words = [rng.choice(LOREM) for _ in range(rng.randint(30, 80))]
            blocks.append(("p", (" ".join(words)).capitalize() + "."))
        blocks.append(("p", f"Visit us for {kws[0]}. {kws[1]}. {kws[2]}."))
    elif style == 2:  # all caps ad copy
        blocks.append(("div_lines", [rng.choice(CAPS) for _ in range(rng.randint(10, 25))], "promo"))
    elif style == 3:  # link list of short lines
        blocks.append(("div_lines", [f"{rng.choice(kws)} {c}" for c in rng.sample(CITIES, rng.randint(12, 20))], "links"))
        blocks.append(("div_lines", [rng.choice(CAPS) for _ in range(4)], "promo"))
    else:  # repeated phrase
        phrase = f"{rng.choice(kws)} {rng.choice(kws)} {rng.choice(CAPS)}"
        blocks.append(("p", " ".join([phrase] * rng.randint(15, 40))))
    blocks.append(("div_lines", [rng.choice(CAPS), f"{kws[0]} | {kws[-1]} | {kws[1]}"], "footer-links"))
    return {"title": blocks[0][1], "site": domain, "domain": domain, "blocks": blocks, "topic": "spam"}


# ------------------------------------------------------------------------ template pages

PRODUCTS = [("Summit", "2-person tent"), ("Ridge", "hiking backpack"), ("Glacier", "sleeping bag"),
            ("Canyon", "trekking poles"), ("Tundra", "insulated jacket"), ("Harbor", "rain shell"),
            ("Meadow", "camping stove"), ("Cascade", "water filter"), ("Alder", "headlamp"),
            ("Boulder", "climbing harness"), ("Fjord", "dry bag"), ("Sierra", "camp chair"),
            ("Willow", "hammock"), ("Basalt", "trail shoes"), ("Prairie", "fleece pullover"),
            ("Delta", "cooler box"), ("Granite", "belay device"), ("Cedar", "camp table"),
            ("Aurora", "down vest"), ("Vista", "compact binoculars"), ("Timber", "folding saw")]
COLOURS = ["forest green", "slate grey", "burnt orange", "navy", "sand", "black", "red"]
HOTELS = ["Grand", "Harbour View", "Old Town", "Riverside", "Park Lane", "Station", "Garden", "Lighthouse",
          "Market Square", "Cathedral", "Seaside", "Hilltop", "Meridian", "Kings Arms", "Bellevue"]
CARS = ["Golf", "Polo", "Golf", "Passat", "Golf"]  # a dealer that sells mostly one make
TRIMS = ["S", "SE", "SEL", "GTI", "Life", "Style", "R-Line", "Match"]


def _product_page(rng: random.Random, i: int) -> tuple[str, list[tuple]]:
    name = PRODUCTS[i % len(PRODUCTS)][0]
    people = rng.randint(1, 4)
    price = f"{rng.randint(119, 649)}.{rng.choice(['00', '95', '99'])}"
    sku = f"TG-{rng.randint(10000, 99999)}"
    title = f"TrailGear {name} {people}P Tent"
    blocks = [
        ("p", "Home > Camping > Tents > Backpacking tents"),
        ("h1", title),
        ("p", f"Price: ${price}. SKU: {sku}. In stock: {rng.randint(2, 80)} units. Rated {rng.randint(35, 50) / 10} out of 5 by {rng.randint(4, 900)} customers."),
        ("p", "This backpacking tent is built for hikers who want dependable shelter without extra weight. Made from "
              "recycled materials and tested in the field by our team, it pitches in minutes with a single hubbed "
              f"pole set and packs down small enough to fit in any pack. Trail weight {rng.randint(900, 2900)} g."),
        ("table", [["Specification", "Value"], ["Sleeps", str(people)], ["Trail weight", f"{rng.randint(900, 2900)} g"],
                   ["Floor area", f"{rng.randint(18, 45) / 10} m2"], ["Peak height", f"{rng.randint(95, 125)} cm"],
                   ["Fabric", "Recycled nylon ripstop, 20D"], ["Warranty", f"{rng.randint(1, 5)} years"], ["Item number", sku]]),
        ("h2", "Shipping and returns"),
        ("p", "Free standard shipping on orders over $75. Orders placed before 2 pm ship the same business day. "
              "Returns are accepted within 60 days of delivery for unused items in their original packaging. "
              "To start a return, log in to your account and select the order you wish to return. Refunds are "
              "issued to the original payment method within 5 to 7 business days after we receive the item."),
        ("p", f"Estimated delivery: {rng.choice(MONTHS)} {rng.randint(1, 28)} to {rng.choice(MONTHS)} {rng.randint(1, 28)}."),
        ("h2", "Customers also bought"),
        ("ul", [f"Tent footprint - ${rng.randint(19, 60)}.99", f"Ultralight stakes, set of 8 - ${rng.randint(12, 30)}.99",
                f"Seam sealer - ${rng.randint(6, 15)}.99"]),
        ("p", "Questions about sizing or fit? Our gear specialists are available seven days a week by chat or "
              "phone. TrailGear Outfitters has supported outdoor adventures since 1998 and donates one percent "
              "of every sale to trail maintenance."),
    ]
    return f"{title} | TrailGear Outfitters", blocks


def _hotel_page(rng: random.Random, i: int) -> tuple[str, list[tuple]]:
    city = CITIES[i % len(CITIES)]
    hotel = f"{HOTELS[i % len(HOTELS)]} Hotel {city}"
    price = rng.randint(59, 389)
    blocks = [
        ("p", "StayNest > Hotels > Europe > City breaks"),
        ("h1", f"{HOTELS[i % len(HOTELS)]} Hotel"),
        ("p", f"{rng.randint(2, 5)}-star hotel. Guest rating {rng.randint(60, 98) / 10}/10 from {rng.randint(20, 4000)} reviews. "
              f"{rng.randint(1, 15) / 10} km from the centre. {rng.randint(12, 240)} rooms."),
        ("p", "Located in the heart of the old town, the hotel offers comfortable rooms, free WiFi and a 24-hour front "
              "desk. Guests can enjoy breakfast in the on-site restaurant and relax in the lounge bar. The railway "
              f"station is {rng.randint(3, 25)} minutes away on foot, and the nearest airport is {rng.randint(8, 60)} km from the property."),
        ("h2", "Popular amenities"),
        ("ul", ["Free WiFi", "Non-smoking rooms", "Family rooms", "Restaurant", "Room service", "Bar",
                "24-hour front desk", "Elevator", "Heating", "Luggage storage"]),
        ("h2", "House rules"),
        ("p", f"Check-in from {rng.randint(13, 16)}:00. Check-out until {rng.randint(10, 12)}:00. Children of all ages are welcome. "
              "Pets are not allowed. Cards accepted at this property: Visa, Mastercard, American Express. "
              "Cancellation and prepayment policies vary according to room type; please check the conditions "
              "when selecting your room."),
        ("h2", "Availability"),
        ("p", f"Prices shown for {rng.choice(MONTHS)} {rng.randint(1, 28)} - {rng.choice(MONTHS)} {rng.randint(1, 28)}, 2 adults. "
              f"Double room from ${price}, twin room from ${price + rng.randint(5, 40)}, suite from ${price + rng.randint(60, 200)}. "
              "Taxes and fees included. Book now and pay at the property. Free cancellation on most rooms."),
        ("p", "StayNest compares thousands of hotels, guesthouses and apartments so you always get the best price. "
              "Our customer service team is available around the clock in more than 30 languages."),
    ]
    return f"{hotel} - Book from ${price} per night | StayNest", blocks


def _car_page(rng: random.Random, i: int) -> tuple[str, list[tuple]]:
    make, model = "Volkswagen", f"{CARS[i % len(CARS)]} 1.{rng.randint(0, 6)} {rng.choice(TRIMS)}"
    year = rng.randint(2012, 2022)
    km = rng.randint(15, 190) * 1000
    price = rng.randint(45, 260) * 100
    ref = f"AM{rng.randint(100000, 999999)}"
    blocks = [
        ("p", "AutoMart > Used cars > Hatchbacks"),
        ("h1", f"{year} {make} {model}"),
        ("p", f"Price: ${price:,}. Mileage: {km:,} km. Fuel: {rng.choice(['petrol', 'diesel', 'hybrid'])}. "
              f"Transmission: {rng.choice(['manual', 'automatic'])}. Listing reference {ref}."),
        ("p", "This car has been inspected by our technicians and comes with a full service history. "
              f"It has had {rng.randint(1, 3)} previous owners and passed its last inspection in {rng.choice(MONTHS)} {rng.randint(2022, 2024)}. "
              "All our vehicles are cleaned, checked and ready to drive away."),
        ("table", [["Detail", "Value"], ["Year", str(year)], ["Mileage", f"{km:,} km"],
                   ["Engine", f"{rng.randint(10, 25) / 10} L"], ["Colour", rng.choice(COLOURS)],
                   ["Doors", str(rng.choice([3, 5]))], ["Reference", ref]]),
        ("h2", "Why buy from AutoMart"),
        ("ul", ["150-point inspection", "12-month warranty included", "7-day money-back guarantee",
                "Finance available", "Part exchange welcome"]),
        ("p", "Finance is subject to status and available to applicants aged 18 and over. A deposit may be "
              "required. Contact our sales team to arrange a test drive or a video walkaround. Opening hours: "
              "Monday to Saturday 9:00 - 18:00, Sunday 10:00 - 16:00."),
        ("p", f"Listed on {rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2023, 2024)}. Viewed {rng.randint(20, 3000)} times."),
    ]
    return f"Used {year} {make} {model} for sale - {km:,} km | AutoMart", blocks


TEMPLATE_SITES = [("TrailGear Outfitters", "trailgear.example.com", "products", _product_page),
                  ("StayNest", "staynest.example.com", "hotels", _hotel_page),
                  ("AutoMart", "automart.example.com", "cars", _car_page)]


def template_pages(rng: random.Random, per_site: int) -> list[dict]:
    out = []
    for site, domain, section, make in TEMPLATE_SITES:
        for i in range(per_site):
            title, blocks = make(rng, i)
            out.append({"title": title, "site": site, "domain": domain, "blocks": blocks,
                        "topic": f"template:{section}", "section": section})
    return out
