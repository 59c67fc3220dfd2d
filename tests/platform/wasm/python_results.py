"""The Python module's results for texts, as JSON: what js_api_test.mjs holds
the JavaScript API's results to.

Reads one request on stdin:
  {"model": PATH, "translator": {Translator(...) keywords},
   "texts": [...], "options": {translate(...) keywords}}
and writes one JSON array, an object per text: text, score (null for NaN),
tokens, pieces, error, alignment, and sentences (each: source_pieces,
pieces, text, attention). Needs EDGEMT_LIBRARY and PYTHONPATH=runtime/python
(ctest sets them).
"""

import json
import math
import sys

import edgemt


def number(value):
    return None if value is None or math.isnan(value) else value


def sentence(s):
    return {"source_pieces": s.source_pieces, "pieces": s.pieces, "text": s.text,
            "attention": s.attention}


def result(t):
    return {"text": t.text, "score": number(t.score), "tokens": t.tokens, "pieces": t.pieces,
            "error": t.error,
            "alignment": None if t.alignment is None else [list(p) for p in t.alignment],
            "sentences": [sentence(s) for s in t.sentences]}


def main():
    request = json.load(sys.stdin)
    translator = edgemt.Translator(edgemt.Model(request["model"]), **request.get("translator", {}))
    got = translator.translate(request["texts"], **request.get("options", {}))
    json.dump([result(t) for t in got], sys.stdout)


if __name__ == "__main__":
    main()
