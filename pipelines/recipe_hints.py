"""What an unknown recipe key likely means, for the messages of :mod:`pipelines.recipe_schema`."""

from __future__ import annotations

from typing import Any

from curation.errors import brief, nearest


def top_hint(key: str, owners: list[str], options: set[str], stages: list[str]) -> str:
    """What an unknown top-level key likely means: a key of stages ``owners`` written without its
    stage (``phases`` for ``mixture.phases``; every stage that has it), a stage's section outside
    ``stages:``, a profile's dotted setting in a file given as the recipe, or the nearest of
    ``options`` (a recipe file's top-level keys, where a stage name is no option, or an override's
    first keys, which may be a stage).

    >>> top_hint("threshold", ["edu_score", "minhash_dedup"], {"name"}, ["edu_score", "ingest", "minhash_dedup"])
    '; threshold is a key of stages edu_score and minhash_dedup: write edu_score.threshold or minhash_dedup.threshold'
    >>> top_hint("minhash_dedupe", [], {"name", "seed", "stages"}, ["minhash_dedup"])
    "; did you mean stage 'minhash_dedup'? A stage's section goes under stages: (stages:\\n  minhash_dedup:\\n    key: value)"
    """
    if len(owners) == 1:
        return f"; {key} is a key of stage {owners[0]}: write {owners[0]}.{key}"
    if owners and len(owners) == len(stages):
        return f"; {key} is a key of every stage: write <stage>.{key} (e.g. {owners[0]}.{key})"
    if owners:
        return (f"; {key} is a key of stages {', '.join(owners[:-1])} and {owners[-1]}: write "
                f"{' or '.join(f'{o}.{key}' for o in owners)}")
    if key in stages:  # a stage's section written at the top of a recipe file
        return f"; {key} is a stage: put its section under stages: (stages:\n  {key}:\n    key: value)"
    if "." in key and key.split(".", 1)[0] in stages:
        return "; a dotted key is a setting (key=value on the command line), not a recipe key: apply a profile with --profile cpu|gpu"
    if not set(stages) & options and not nearest(key, sorted(options), cutoff=0.5) and (match := nearest(key, sorted(stages), cutoff=0.5)):
        return f"; did you mean stage {brief(match)}? A stage's section goes under stages: (stages:\n  {match}:\n    key: value)"
    return hint(key, options)


def hint(word: str, options: Any) -> str:
    """The nearest option (``; did you mean 'x'?``), else all of them when they are few enough to read."""
    names = sorted(str(o) for o in options)
    if match := nearest(word, names, cutoff=0.5):
        return f"; did you mean {brief(match)}?"
    return f"; valid: {', '.join(names)}" if 0 < len(names) <= 40 else ""
