"""``web/web_zh.jsonl.gz``: Chinese web pages — tutorials, short reviews, boilerplate, spam, exact and
near copies, template pages — so the sample run exercises language identification, script-aware
MinHash and per-language quality buckets.

Every sentence bank, product name and template is written here (nothing is copied from any corpus).
``meta.kind`` says what a record is; copies name their original in ``meta.duplicate_of`` /
``meta.near_duplicate_of``; near copies have 2 % of their Han characters replaced (``meta.edit_rate``).
"""

from __future__ import annotations

import random
import re

from _common import rng_for

COUNTS = {"article": 70, "review": 30, "boilerplate": 8, "spam": 10, "exact_copy": 6, "near_copy": 14, "template": 24}

TOPICS = [
    ("缓存", "Redis"), ("数据库索引", "MySQL"), ("消息队列", "Kafka"), ("容器", "Docker"), ("版本控制", "Git"),
    ("负载均衡", "Nginx"), ("进程与线程", "Linux"), ("网络协议", "TCP"), ("事务隔离", "PostgreSQL"),
    ("日志分析", "Elasticsearch"), ("定时任务", "cron"), ("接口设计", "HTTP"), ("单元测试", "pytest"),
    ("内存管理", "JVM"), ("配置管理", "YAML"),
]
OPENERS = [
    "很多刚接触{t}的同学都会问同一个问题：它到底解决了什么？",
    "在实际项目中，{t}几乎是绕不开的一环。",
    "这篇笔记整理了我在使用{k}时踩过的坑，希望对大家有帮助。",
    "如果你只记住一件事，那就是：{t}不是银弹，要先弄清楚场景。",
]
BODY = [
    "首先要理解{t}的基本原理，否则遇到问题时只能靠猜。",
    "以{k}为例，它把最常用的数据放在离计算最近的地方，从而减少等待的时间。",
    "需要注意的是，{t}会带来额外的复杂度，团队里每个人都要明白它的边界。",
    "当请求量上升时，{k}的配置往往比代码本身更重要。",
    "我们可以先在测试环境里模拟一次故障，看看{t}在最坏情况下会怎样表现。",
    "很多性能问题并不是{k}本身慢，而是使用方式不对。",
    "监控是必不可少的：没有指标，就无法判断{t}是否真的起了作用。",
    "在设计阶段就要想好数据的生命周期，包括何时写入、何时过期、何时删除。",
    "如果多个服务同时修改同一份数据，就必须考虑一致性的问题。",
    "为了便于排查，建议把关键操作的耗时和结果都写进日志。",
    "另外，{k}的版本差异也值得关注，升级之前一定要阅读变更说明。",
    "一个常见的误区是把{t}当成万能的解决方案，结果反而让系统更难维护。",
    "对于读多写少的场景，这种做法的收益最明显。",
    "而在写多读少的场景下，就要权衡额外的开销是否值得。",
    "最后，别忘了为异常情况准备回退方案，比如超时以后直接访问后端。",
    "实践中我们通常会先做一个最小可用的版本，再根据压测结果逐步调整参数。",
    "文档和注释同样重要，半年以后的你会感谢现在认真写说明的自己。",
    "遇到疑难问题时，先缩小范围，再逐一验证假设，往往比盲目修改更快。",
]
CLOSERS = ["总结一下：理解原理、做好监控、留出回退，这三点比任何技巧都重要。",
           "以上就是本文的全部内容，欢迎在评论区交流你的经验。",
           "下一篇我们会结合具体案例，继续讨论{t}的调优方法。"]
CODE = ["```bash\n{k_lower} --version\n{k_lower} status\n```", "```python\ndef handle(request):\n    return process(request)\n```",
        "```sql\nSELECT id, name FROM users WHERE id = 42;\n```"]
REVIEWS = ["物流很快，包装也很好，好评！", "质量一般，和图片有点色差。", "客服态度不错，有问题都及时回复了。",
           "用了一个星期，感觉还可以，性价比挺高。", "房间干净，早餐种类有点少。", "第二次购买了，一如既往的好。",
           "尺码偏小，建议买大一号。", "味道不错，孩子很喜欢吃。", "发货太慢了，等了五天才到。", "一般般吧，没有想象中那么好。"]
BOILER = ["首页\n登录\n注册\n购物车\n联系我们\n版权所有 © 本站", "本站使用 Cookie 以提升浏览体验。\n同意\n拒绝\n隐私政策",
          "订阅我们的新闻通讯\n输入邮箱\n提交\n关于我们\n网站地图"]
SPAM = ["特价！特价！全场一折起！点击这里立即抢购！", "免费领取！免费领取！限时优惠，错过再等一年！", "最低价 最低价 最低价 加微信领取优惠券",
        "赚钱秘籍，日赚千元，点击链接马上开始！"]
PRODUCTS = [("帐篷", "户外露营", "防水面料"), ("酒店", "商务出行", "免费早餐"), ("二手车", "城市代步", "一年质保")]
FEATURES = ["轻便易携带，适合周末短途出行", "做工细致，细节处理得很好", "配件齐全，开箱即可使用", "颜色有多种可选，满足不同喜好",
            "通过多项质量检测，品质有保障", "支持七天无理由退换，购物无忧", "会员下单可享积分返还", "本周下单赠送精美小礼品",
            "适合家庭使用，老人小孩都方便", "售后服务网点覆盖全国主要城市"]
NAMES = ["山海", "晨光", "远行", "青松", "星河", "云帆", "明月", "长风", "清泉", "海岸", "枫林", "银杏"]


def _article(rng: random.Random, n: int) -> tuple[str, str]:
    topic, tool = TOPICS[n % len(TOPICS)]
    fill = {"t": topic, "k": tool, "k_lower": tool.lower()}
    title = f"{topic}入门笔记（{n // len(TOPICS) + 1}）：{tool} 实践"
    parts = [f"# {title}", rng.choice(OPENERS).format(**fill)]
    for s in range(rng.randint(2, 4)):
        parts.append(f"## {['原理', '配置', '常见问题', '调优', '小结'][s]}")
        para = "".join(rng.sample(BODY, rng.randint(3, 6))).format(**fill)
        parts.append(para)
        if rng.random() < 0.4:
            parts.append(rng.choice(CODE).format(**fill))
    parts.append(rng.choice(CLOSERS).format(**fill))
    return title, "\n\n".join(parts)


def _template(rng: random.Random, site: int, i: int) -> str:
    thing, use, feature = PRODUCTS[site]
    name = f"{rng.choice(NAMES)}{thing}"
    return (f"{name}\n\n适用场景：{use}\n特点：{feature}，做工扎实\n价格：{rng.randint(199, 9999)} 元\n"
            f"库存：{rng.randint(1, 300)} 件\n编号：{site}{i:03d}\n亮点：{'；'.join(rng.sample(FEATURES, 3))}\n\n购买须知：下单后四十八小时内发货，七天无理由退换。"
            "如有疑问请联系在线客服，我们会尽快为您处理。")


_HAN = re.compile(r"[\u4e00-\u9fff]")


def near_copy(rng: random.Random, text: str, rate: float) -> str:
    """``text`` with ``rate`` of its Han characters replaced by other Han characters of the text."""
    pos = [m.start() for m in _HAN.finditer(text)]
    chars = list(text)
    pool = [text[p] for p in pos]
    for p in rng.sample(pos, max(1, round(rate * len(pos)))):
        chars[p] = rng.choice([c for c in pool if c != chars[p]])
    return "".join(chars)


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "web_zh")
    items: list[dict] = []

    def add(kind: str, text: str, url: str, **meta) -> dict:
        items.append({"kind": kind, "text": text, "url": url, "meta": meta, "key": len(items)})
        return items[-1]

    arts = []
    for n in range(COUNTS["article"]):
        title, text = _article(rng, n)
        arts.append(add("article", text, f"https://jishu-biji.example.cn/p/{n}", topic=TOPICS[n % len(TOPICS)][0]))
    for n in range(COUNTS["review"]):
        add("review", " ".join(rng.sample(REVIEWS, rng.randint(1, 2))), f"https://shop.example.cn/review/{n}")
    for n in range(COUNTS["boilerplate"]):
        add("boilerplate", BOILER[n % len(BOILER)] + f"\n第 {n} 页", f"https://portal.example.cn/page/{n}")
    for n in range(COUNTS["spam"]):
        add("spam", "\n".join(rng.choice(SPAM) for _ in range(rng.randint(4, 9))), f"https://cuxiao-{n}.example.cn/")
    for site in range(len(PRODUCTS)):
        for i in range(COUNTS["template"] // len(PRODUCTS)):
            add("template", _template(rng, site, i), f"https://site{site}.example.cn/item/{i}", template=PRODUCTS[site][0])
    for i, src in enumerate(rng.sample(arts, COUNTS["near_copy"])):
        add("near_copy", near_copy(rng, src["text"], 0.02), f"https://mirror.example.cn/p/{i}", edit_rate=0.02,
            near_duplicate_of=src["key"])
    for i, src in enumerate(rng.sample(arts, COUNTS["exact_copy"])):
        add("exact_copy", src["text"], f"https://caiji-{i}.example.cn/p", duplicate_of=src["key"])

    rng.shuffle(items)
    ids = {item["key"]: f"web-zh-{n:04d}" for n, item in enumerate(items)}
    records = []
    for item in items:
        meta = {"kind": item["kind"], "lang": "zh"}
        for k, v in item["meta"].items():
            meta[k] = ids[v] if k in ("duplicate_of", "near_duplicate_of") else v
        records.append({"id": ids[item["key"]], "source": "web", "url": item["url"], "text": item["text"], "meta": meta})
    return records
