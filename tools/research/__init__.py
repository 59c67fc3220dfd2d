"""research: studies behind edgemt's design decisions, not part of the product.

  quant_study     `edgemt-quant-study`: what static int8 activation scales
                  (the only kind Debian's XNNPACK offers) would cost in BLEU
                  against the shipped per-row dynamic scheme; its findings are
                  in models/MODEL_CARD.md ("Quality").

They import edgemt_tools (put tools/ on sys.path) and are tested like it
(tests/tools/test_quant_study.py).
"""
