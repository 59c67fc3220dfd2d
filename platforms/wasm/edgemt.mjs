// edgemt in JavaScript: the WebAssembly build (build.sh) behind a small API
// for web pages, workers and Node.js.
//
//   import { load } from "./edgemt.mjs";
//   const translator = await load(modelBytes);           // an .emt file's bytes
//   const [r] = translator.translate(["Two dogs play."]);
//   r.text, r.tokens, r.score, r.error                   // as `edgemt translate`
//
// load(bytes, limits) verifies the model and plans memory once; translate()
// then runs without allocating in the runtime (its text glue allocates).
// A text that cannot be translated gets `error` (a string) and text "",
// the others are translated: the C API's per-line results. With
// attention: true at load, translate(texts, { attention: true }) adds each
// sentence's pieces and attention weights (`details`), and { align: true }
// the word alignment (pairs [source word, target word]).
const isNode = typeof process !== "undefined" && process.versions != null &&
               process.versions.node != null;

// The module, made once per page or process. Node's fetch cannot read file
// paths, so there the .wasm bytes are read and handed over; and Emscripten
// 3.1.6's Node code, even in an ES module, reads the CommonJS globals
// `require` and `__dirname`, which are given to it first.
let modulePromise = null;
function edgemtModule() {
  if (modulePromise === null) {
    modulePromise = (async () => {
      const settings = {};
      if (isNode) {
        const { readFile } = await import("node:fs/promises");
        const { createRequire } = await import("node:module");
        const { fileURLToPath } = await import("node:url");
        const dist = new URL("./dist/", import.meta.url);
        globalThis.require ??= createRequire(import.meta.url);
        globalThis.__dirname ??= fileURLToPath(dist);
        settings.wasmBinary = await readFile(new URL("edgemt-module.wasm", dist));
      }
      const { default: createEdgemt } = await import("./dist/edgemt-module.mjs");
      return createEdgemt(settings);
    })();
  }
  return modulePromise;
}

export class EdgemtError extends Error {}

// Bytes of `text` as a NUL-terminated string in the module's memory (0 for
// null/undefined); the caller frees it.
function cString(m, text) {
  if (text == null) return 0;
  const bytes = new TextEncoder().encode(String(text));
  const pointer = m._malloc(bytes.length + 1);
  m.HEAPU8.set(bytes, pointer);
  m.HEAPU8[pointer + bytes.length] = 0;
  return pointer;
}

// The bytes the library reads for `text`: UTF-8, except that a lone
// surrogate (which TextEncoder would silently turn into U+FFFD, and the
// sentence would be translated with it) becomes its 3-byte WTF-8 form. That
// is not UTF-8, so the library gives the text its per-text error, as it does
// a line of bytes that are not UTF-8 (the CLI) or a Python str with one.
function utf8Bytes(encoder, text) {
  if (!/[\uD800-\uDFFF]/.test(text) || text.isWellFormed?.()) return encoder.encode(text);
  const parts = [];
  for (const character of text) {  // code points; a lone surrogate alone
    const unit = character.charCodeAt(0);
    if (character.length === 1 && unit >= 0xD800 && unit <= 0xDFFF) {
      parts.push(Uint8Array.of(0xE0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3F), 0x80 | (unit & 0x3F)));
    } else {
      parts.push(encoder.encode(character));
    }
  }
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}

function lastError(m) {
  return m.UTF8ToString(m._ejs_last_error());
}

// The JSON string a call returned (freed here), parsed.
function takeJson(m, pointer) {
  if (pointer === 0) throw new EdgemtError(lastError(m));
  try {
    return JSON.parse(m.UTF8ToString(pointer));
  } finally {
    m._ejs_free(pointer);
  }
}

function positiveInteger(name, value) {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return value;
}

export class Translator {
  constructor(m, session, limits) {
    this._m = m;
    this._session = session;
    this.limits = limits;
    this.info = takeJson(m, m._ejs_model_info(session));
  }

  // texts: an array of strings (lines). options: beam (the model's default
  // when absent), lengthPenalty, maxLenA, maxLenB, splitSentences (true),
  // language (the splitting rules' language; the model's source language),
  // targetPrefix (">>fra<<" of a multi-target model), align, attention.
  // Returns one result per text, in order.
  translate(texts, options = {}) {
    if (this._session === 0) throw new EdgemtError("translate() after close()");
    if (!Array.isArray(texts)) throw new TypeError("translate() takes an array of strings");
    const m = this._m;
    const encoder = new TextEncoder();
    const encoded = texts.map((text, i) => {
      if (typeof text !== "string") throw new TypeError(`texts[${i}] is not a string`);
      return utf8Bytes(encoder, text);
    });
    const total = encoded.reduce((sum, bytes) => sum + bytes.length, 0);
    const textsPointer = m._malloc(Math.max(total, 1));
    const lengthsPointer = m._malloc(Math.max(texts.length, 1) * 4);  // size_t: 4 bytes
    const language = cString(m, options.language);
    const prefix = cString(m, options.targetPrefix);
    try {
      let offset = 0;
      encoded.forEach((bytes, i) => {
        m.HEAPU8.set(bytes, textsPointer + offset);
        m.HEAPU32[(lengthsPointer >> 2) + i] = bytes.length;
        offset += bytes.length;
      });
      const number = (name, fallback) => {
        const value = options[name];
        if (value === undefined || value === null) return fallback;
        if (typeof value !== "number" || !Number.isFinite(value)) {
          throw new TypeError(`${name} must be a finite number, got ${value}`);
        }
        return value;
      };
      const beam = options.beam === undefined ? 0 : positiveInteger("beam", options.beam);
      return takeJson(m, m._ejs_translate(
          this._session, textsPointer, lengthsPointer, texts.length, beam,
          number("lengthPenalty", NaN), number("maxLenA", NaN), number("maxLenB", NaN),
          options.splitSentences === false ? 0 : 1, language, prefix, options.align ? 1 : 0,
          options.attention ? 1 : 0));
    } finally {
      m._free(textsPointer);
      m._free(lengthsPointer);
      if (language !== 0) m._free(language);
      if (prefix !== 0) m._free(prefix);
    }
  }

  // Frees the model and the translator's memory.
  close() {
    if (this._session !== 0) this._m._ejs_close(this._session);
    this._session = 0;
  }
}

// Loads a model from its bytes (an ArrayBuffer or typed array of an .emt
// file). limits: maxBatch (16 sentences per call), maxLength (tokens each
// way; 0: the model's longest, at most 256), maxBeam (4, or the model's
// default beam if larger), attention (false: plan for attention weights),
// greedyScores (false: greedy results get score null, computed faster;
// the tokens are the same).
export async function load(bytes, limits = {}) {
  const m = await edgemtModule();
  const view = bytes instanceof Uint8Array ? bytes
             : ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
             : new Uint8Array(bytes);
  const pointer = m._malloc(Math.max(view.length, 1));
  m.HEAPU8.set(view, pointer);
  const session = m._ejs_open(pointer, view.length);
  m._free(pointer);
  if (session === 0) throw new EdgemtError(lastError(m));
  const chosen = {
    maxBatch: positiveInteger("maxBatch", limits.maxBatch ?? 16),
    maxLength: positiveInteger("maxLength", limits.maxLength ?? 0),
    maxBeam: positiveInteger("maxBeam", limits.maxBeam ?? 4),
    attention: Boolean(limits.attention),
    greedyScores: Boolean(limits.greedyScores),
  };
  const info = takeJson(m, m._ejs_model_info(session));
  const maxBeam = Math.max(chosen.maxBeam, info.beam_size);
  if (m._ejs_prepare(session, chosen.maxBatch, chosen.maxLength, maxBeam,
                     chosen.attention ? 1 : 0, chosen.greedyScores ? 1 : 0) !== 0) {
    const message = lastError(m);
    m._ejs_close(session);
    throw new EdgemtError(message);
  }
  return new Translator(m, session, { ...chosen, maxBeam });
}

// The library's version ("0.2.0").
export async function version() {
  const m = await edgemtModule();
  return m.UTF8ToString(m._ejs_version());
}
