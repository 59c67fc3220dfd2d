// The JavaScript API (platforms/wasm/edgemt.mjs) on the WebAssembly build,
// held to the native runtime (issue 43): each text's result (text, token
// ids, score, sentences) and its attention details (each sentence's pieces
// and weights) against the Python module (runtime/python/edgemt over
// libedgemt.so, through python_results.py), word alignments against
// `edgemt translate --json --align`, per-text errors where the CLI and the
// module fail a text, and misuse raising. The bundled int8 Transformer and
// an RNN fixture (tests/fixtures/torch_rnn, fp32).
//
// ctest wasm.js_api (tests/platform/wasm.cmake) runs it after wasm.build;
// without the build's stamp (EDGEMT_WASM_BUILT: no emcc or node) it prints
// "SKIPPED: ..." and passes. By hand, after platforms/wasm/build.sh:
//
//   EDGEMT_WASM_BUILT=/dev/null node tests/platform/wasm/js_api_test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import test from "node:test";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const built = process.env.EDGEMT_WASM_BUILT;
if (!built || !existsSync(built)) {
  console.log("SKIPPED: the WebAssembly build did not run (wasm.build: no emcc or node)");
  process.exit(0);
}
const { load, version, EdgemtError } = await import(`${ROOT}platforms/wasm/edgemt.mjs`);

const CLI = process.env.EDGEMT_CLI ?? `${ROOT}build/edgemt`;
const PYTHON = process.env.EDGEMT_PYTHON ?? "/usr/bin/python3";
const PYTHON_ENV = {
  ...process.env,
  PYTHONPATH: process.env.PYTHONPATH ?? `${ROOT}runtime/python`,
  EDGEMT_LIBRARY: process.env.EDGEMT_LIBRARY ?? `${ROOT}build/runtime/libedgemt.so.0`,
  PYTHONDONTWRITEBYTECODE: "1",
};
const BUNDLED = `${ROOT}models/multi30k-en-de.int8.emt`;
const RNN = `${ROOT}tests/fixtures/torch_rnn/luong-general-gru.fp32.emt`;

// Lines as in tests/runtime/python/test_edgemt_results.py: two sentences
// (split and joined), a NUL byte, a blank and an empty text, quotes.
const TEXTS = ["Two dogs play. A cat sleeps.", "A man.", "A b\0c.", "   ",
               'Er sagte: "Halt." Dann ging er.', ""];
// Over the 256 tokens the models take, in one sentence.
const TOO_LONG = "Dogs " + Array(300).fill("dog").join(" ") + ".";

// A Translator per model and limits, loaded once.
const loaded = new Map();
function translator(path, limits = {}) {
  const key = `${path} ${JSON.stringify(limits)}`;
  if (!loaded.has(key)) loaded.set(key, load(readFileSync(path), limits));
  return loaded.get(key);
}

// translate() of the Python module: {model, translator: keywords, texts, options}.
function python(request) {
  const done = spawnSync(PYTHON, [`${ROOT}tests/platform/wasm/python_results.py`],
                         { input: JSON.stringify(request), env: PYTHON_ENV, maxBuffer: 1 << 28 });
  assert.equal(done.status, 0, `python_results.py: ${done.stderr}`);
  return JSON.parse(done.stdout.toString("utf-8"));
}

// `edgemt translate --json` of the lines (as UTF-8), one object per line.
function cli(path, lines, ...options) {
  const done = spawnSync(CLI, ["translate", "-m", path, "--json", "--threads", "1", ...options],
                         { input: lines.map((line) => line + "\n").join(""), maxBuffer: 1 << 28 });
  assert.ok(done.status === 0 || done.status === 1, `edgemt translate: ${done.stderr}`);
  return done.stdout.toString("utf-8").split("\n").slice(0, -1).map((line) => JSON.parse(line));
}

function assertClose(got, want, tolerance, what) {
  assert.ok(Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want)),
            `${what}: ${got} against ${want}`);
}

// The results of a text both sides translated: same text, ids, sentences
// and (when both have one) score.
function assertSameResults(got, want, what) {
  assert.equal(got.length, want.length, what);
  got.forEach((g, i) => {
    const w = want[i];
    const where = `${what}, text ${i + 1}`;
    assert.equal(g.error, w.error, where);
    assert.equal(g.text, w.text, where);
    assert.deepEqual(g.tokens, w.tokens, where);
    assert.equal(g.sentences, w.sentences.length, where);
    if (w.score !== null) assertClose(g.score, w.score, 1e-4, `${where}: score`);
  });
}

for (const [name, path] of [["bundled Transformer", BUNDLED], ["RNN fixture", RNN]]) {
  test(`${name}: each text's result is the Python module's`, async () => {
    const t = await translator(path, { greedyScores: true, maxBatch: 4 });
    const want = python({ model: path, translator: { max_batch: 4 }, texts: TEXTS });
    assertSameResults(t.translate(TEXTS), want, "greedy");
  });

  test(`${name}: word alignments are the CLI's --align`, async () => {
    const t = await translator(path, { attention: true });
    const lines = [...TEXTS, "A man in a blue shirt is riding a bike."];
    const got = t.translate(lines, { align: true });
    const want = cli(path, lines, "--align");
    assert.deepEqual(got.map((r) => r.alignment), want.map((w) => w.alignment ?? []));
    assert.deepEqual(got.map((r) => r.text), want.map((w) => w.translation));
  });

  test(`${name}: attention details are the Python module's`, async () => {
    const t = await translator(path, { attention: true });
    const got = t.translate(TEXTS, { attention: true });
    const want = python({ model: path, translator: { attention: true }, texts: TEXTS,
                          options: { attention: true } });
    got.forEach((g, i) => {
      const w = want[i];
      assert.equal(g.details.length, w.sentences.length, `text ${i + 1}: sentences`);
      g.details.forEach((d, k) => {
        const s = w.sentences[k];
        const where = `text ${i + 1}, sentence ${k + 1}`;
        assert.equal(d.translation, s.text, where);
        assert.deepEqual(d.source_pieces, s.source_pieces, where);
        assert.deepEqual(d.target_pieces, s.pieces, where);
        assert.equal(d.attention.length, s.attention.length, `${where}: rows`);
        d.attention.forEach((row, r) => {
          assert.equal(row.length, s.attention[r].length, `${where}, row ${r}: columns`);
          row.forEach((x, c) => assertClose(x, s.attention[r][c], 1e-4, `${where} [${r}][${c}]`));
        });
      });
    });
  });
}

test("beam 4: each text's result is the Python module's", async () => {
  const t = await translator(BUNDLED, { greedyScores: true, maxBatch: 4 });
  const want = python({ model: BUNDLED, translator: { max_batch: 4 }, texts: TEXTS,
                        options: { beam_size: 4 } });
  assertSameResults(t.translate(TEXTS, { beam: 4 }), want, "beam 4");
});

test("a text that cannot be translated fails alone, where the CLI and Python fail it", async () => {
  const t = await translator(BUNDLED, { greedyScores: true, maxBatch: 4 });
  const lines = ["A man.", TOO_LONG, "A dog. " + TOO_LONG];
  const got = t.translate(lines, { splitSentences: false });
  const module = python({ model: BUNDLED, texts: lines, options: { split_sentences: false } });
  const command = cli(BUNDLED, lines, "--no-split-sentences");
  assert.deepEqual(got.map((r) => r.error !== null), [false, true, true]);
  assert.deepEqual(module.map((r) => r.error !== null), [false, true, true]);
  assert.deepEqual(command.map((r) => "error" in r), [false, true, true]);
  assert.equal(got[0].text, module[0].text);
  for (const failed of got.slice(1)) {
    // The C API's code and message (the CLI and the module say how many
    // tokens the sentence has; this API does not count them).
    assert.match(failed.error, /^out-of-range: .*max_source_len/);
    assert.deepEqual([failed.text, failed.tokens, failed.score, failed.sentences], ["", [], null, 0]);
  }
  // The translator's own limit: a sentence over 8 tokens fails unsplit, and
  // is cut into pieces that fit otherwise, as the module cuts it.
  const small = await translator(BUNDLED, { maxLength: 8, greedyScores: true });
  const long = ["A man in a blue shirt is riding a bike.", "A man."];
  const limits = { max_source_len: 8, max_target_len: 8 };
  const unsplit = small.translate(long, { splitSentences: false });
  const unsplitWant = python({ model: BUNDLED, translator: limits, texts: long,
                               options: { split_sentences: false } });
  assert.deepEqual(unsplit.map((r) => r.error !== null), [true, false]);
  assert.deepEqual(unsplitWant.map((r) => r.error !== null), [true, false]);
  assert.equal(unsplit[1].text, unsplitWant[1].text);
  assertSameResults(small.translate(long), python({ model: BUNDLED, translator: limits, texts: long }),
                    "cut to 8 tokens");
});

test("a text with a lone surrogate fails alone, as the Python module fails it", async () => {
  // TextEncoder would turn it into U+FFFD and translate that; the API hands
  // the library the surrogate's own bytes, which are not UTF-8 (the CLI's
  // error for such a line; Python's for such a str). Surrogate pairs are
  // characters, translated as usual.
  const t = await translator(BUNDLED, { greedyScores: true });
  const texts = ["A \ud800 cat.", "A dog.\udc00", "\udfff", "A \ud83d\ude00 cat.", "A man."];
  const got = t.translate(texts);
  const want = python({ model: BUNDLED, texts });
  assert.deepEqual(got.map((r) => r.error !== null), [true, true, true, false, false]);
  assert.deepEqual(want.map((r) => r.error !== null), [true, true, true, false, false]);
  for (const failed of got.slice(0, 3)) {
    // The C API's message (the module's names the byte).
    assert.equal(failed.error, "invalid-argument: the line is not valid UTF-8");
    assert.deepEqual([failed.text, failed.tokens, failed.score, failed.sentences], ["", [], null, 0]);
  }
  assertSameResults(got.slice(3), want.slice(3), "well-formed texts beside them");
});

test("misuse raises: EdgemtError from the runtime, TypeError from the arguments", async () => {
  await assert.rejects(load(new Uint8Array([1, 2, 3, 4])),
                       (e) => e instanceof EdgemtError && /^invalid-model: /.test(e.message));
  const t = await load(readFileSync(BUNDLED), { maxBatch: 2 });
  assert.throws(() => t.translate(["A dog."], { attention: true }),
                (e) => e instanceof EdgemtError && /^failed-precondition: /.test(e.message));
  assert.throws(() => t.translate(["A dog."], { align: true }), EdgemtError);
  assert.throws(() => t.translate("A dog."), TypeError);
  assert.throws(() => t.translate([1]), TypeError);
  assert.throws(() => t.translate(["A dog."], { beam: -1 }), TypeError);
  assert.throws(() => t.translate(["A dog."], { lengthPenalty: "x" }), TypeError);
  // More texts than maxBatch are translated in several batches.
  assert.equal(t.translate(["A dog.", "A cat.", "A man."]).filter((r) => r.error === null).length, 3);
  t.close();
  assert.throws(() => t.translate(["A dog."]), EdgemtError);
});

test("version and model info are the CLI's", async () => {
  const done = spawnSync(CLI, ["--version"]);
  assert.match(done.stdout.toString(), new RegExp(`^edgemt ${(await version()).replace(/\./g, "\\.")} `));
  const t = await translator(BUNDLED, { greedyScores: true, maxBatch: 4 });
  assert.equal(t.info.family, "transformer");
  assert.deepEqual([t.info.source_language, t.info.target_language, t.info.weight_dtype],
                   ["en", "de", "i8"]);
});
