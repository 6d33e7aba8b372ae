"""Writes libs/objects/src/emoji-names.json: what a reaction's payload gets (alias, detoned,
detoned_alias), computed by the `emoji` package the reference server computes them with.

    python3 -m venv /tmp/emoji && /tmp/emoji/bin/pip install emoji==2.15.0
    /tmp/emoji/bin/python scripts/emoji-names.py

`alias`: every emoji's English shortcode (`emoji.demojize`). `detoned`: only the emoji that
carry a skin tone, mapped to the same emoji without it (their shortcode less the tone, emojized).
"""

import json
import pathlib
import re

import emoji

TONE = re.compile(r"_(light|medium-light|medium|medium-dark|dark)_skin_tone")

alias = {}
detoned = {}
for e in sorted(emoji.EMOJI_DATA):
    name = emoji.demojize(e)
    if name == e:
        continue
    alias[e] = name
    untoned = emoji.emojize(TONE.sub("", name))
    if untoned != e:
        detoned[e] = untoned

out = pathlib.Path(__file__).resolve().parent.parent / "libs" / "objects" / "src" / "emoji-names.json"
out.write_text(
    json.dumps({"emoji": emoji.__version__, "alias": alias, "detoned": detoned}, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    + "\n",
    encoding="utf-8",
)
print(f"{out}: {len(alias)} aliases, {len(detoned)} toned")
