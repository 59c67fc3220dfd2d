#!/usr/bin/env node
// `edgemt translate` in Node.js on the WebAssembly build: one line in, one
// line out (an empty line for a blank one, and for a line that cannot be
// translated, with a message on stderr).
//
//   node platforms/wasm/translate.mjs -m MODEL [options] < input > output
import { readFileSync } from "node:fs";
import { load, EdgemtError } from "./edgemt.mjs";

const HELP = `usage: node translate.mjs -m MODEL [options] < input > output

Translates standard input line by line with an edgemt model file (.emt),
as 'edgemt translate' does, on the WebAssembly build.

options:
  -m, --model FILE      the model file (required)
      --beam N          beam size                       [the model's]
      --length-penalty X                                [the model's]
      --max-len-a A     at most floor(A * source tokens + B) generated
      --max-len-b B     tokens (Marian models: ceil)    [the model's]
      --batch N         lines per call (1..256)         [16]
      --no-split-sentences  translate each line whole (default: sentence
                        by sentence, translations joined)
  -h, --help            show this help
`;

function fail(message, status = 2) {
  process.stderr.write(`translate.mjs: ${message}\n`);
  process.exit(status);
}

function parse(argv) {
  const settings = { model: null, batch: 16, split: true, options: {} };
  const numberAfter = (i, name) => {
    if (i + 1 >= argv.length) fail(`${name} needs a value`);
    const value = Number(argv[i + 1]);
    if (!Number.isFinite(value)) fail(`${name}: '${argv[i + 1]}' is not a number`);
    return value;
  };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      process.stdout.write(HELP);
      process.exit(0);
    } else if (arg === "-m" || arg === "--model") {
      if (i + 1 >= argv.length) fail(`${arg} needs a file`);
      settings.model = argv[++i];
    } else if (arg === "--beam") {
      const beam = numberAfter(i++, arg);
      if (!Number.isInteger(beam) || beam < 1 || beam > 64) fail("--beam must be 1..64");
      settings.options.beam = beam;
    } else if (arg === "--length-penalty") {
      settings.options.lengthPenalty = numberAfter(i++, arg);
    } else if (arg === "--max-len-a") {
      settings.options.maxLenA = numberAfter(i++, arg);
    } else if (arg === "--max-len-b") {
      settings.options.maxLenB = numberAfter(i++, arg);
    } else if (arg === "--batch") {
      const batch = numberAfter(i++, arg);
      if (!Number.isInteger(batch) || batch < 1 || batch > 256) fail("--batch must be 1..256");
      settings.batch = batch;
    } else if (arg === "--no-split-sentences") {
      settings.split = false;
    } else {
      fail(`unknown option '${arg}' (see --help)`);
    }
  }
  if (settings.model === null) fail("give the model with -m FILE (see --help)");
  return settings;
}

// Standard input's lines: split at "\n" (a final newline ends the last
// line; a "\r" before "\n" is dropped), each decoded as UTF-8, or null for a
// line that is not UTF-8, which fails alone as in `edgemt translate` (Node's
// own decoding would turn its bytes into U+FFFD and translate that). A byte
// order mark stays a character, as the CLI reads it.
function readLines() {
  const input = readFileSync(0);
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const lines = [];
  for (let start = 0; start < input.length;) {
    const newline = input.indexOf(10, start);
    const end = newline < 0 ? input.length : newline;
    try {
      lines.push(decoder.decode(input.subarray(start, end)).replace(/\r$/, ""));
    } catch {
      lines.push(null);
    }
    start = end + 1;
  }
  return lines;
}

async function main() {
  const settings = parse(process.argv.slice(2));
  let bytes;
  try {
    bytes = readFileSync(settings.model);
  } catch (error) {
    fail(`cannot read model '${settings.model}': ${error.message}`, 1);
  }
  let translator;
  try {
    translator = await load(bytes, { maxBatch: settings.batch, maxBeam: settings.options.beam ?? 4 });
  } catch (error) {
    if (error instanceof EdgemtError) fail(`cannot load model '${settings.model}': ${error.message}`, 1);
    throw error;
  }
  const lines = readLines();
  const out = [];
  let status = 0;
  const failLine = (number, error) => {
    process.stderr.write(`translate.mjs: line ${number}: ${error}; line left empty\n`);
    status = 1;
  };
  for (let first = 0; first < lines.length; first += settings.batch) {
    const chunk = lines.slice(first, first + settings.batch);
    const texts = chunk.filter((line) => line !== null);
    const results = translator.translate(texts, { ...settings.options, splitSentences: settings.split });
    let next = 0;
    chunk.forEach((line, i) => {
      if (line === null) {
        failLine(first + i + 1, "the line is not valid UTF-8");
        out.push("");
        return;
      }
      const result = results[next++];
      if (result.error !== null) failLine(first + i + 1, result.error);
      out.push(result.text);
    });
  }
  process.stdout.write(out.map((line) => line + "\n").join(""));
  translator.close();
  process.exitCode = status;
}

main().catch((error) => fail(error.message, 1));
