// The demo page's translator, in a module worker so that loading a model
// and translating never block the page. It holds one model at a time.
//
// Messages in (each with an `id` that the answer repeats):
//   { type: "load", id, bytes }           bytes: the .emt file's ArrayBuffer
//   { type: "translate", id, texts, beam } texts: lines; beam: 0 = model's
// Messages out:
//   { type: "loaded", id, info, limits, version }
//   { type: "progress", id, done, total }  after each batch of lines
//   { type: "translated", id, results, milliseconds }
//   { type: "error", id, message }         the library's message
import { load, version } from "../edgemt.mjs";

// The page asks for beams of at most 4 and wants every sentence's attention
// weights for the heat map; a batch is 16 lines, so a long text reports
// its progress every 16 lines.
const kLimits = { maxBatch: 16, maxBeam: 4, attention: true };

let translator = null;

async function loadModel(bytes) {
  if (translator !== null) translator.close();
  translator = null;
  translator = await load(bytes, kLimits);
  return { info: translator.info, limits: translator.limits, version: await version() };
}

function translate(id, texts, beam) {
  if (translator === null) throw new Error("no model loaded");
  const started = performance.now();
  const results = [];
  const batch = translator.limits.maxBatch;
  for (let first = 0; first < texts.length; first += batch) {
    const chunk = texts.slice(first, first + batch);
    results.push(...translator.translate(chunk, { beam, attention: true }));
    self.postMessage({ type: "progress", id, done: results.length, total: texts.length });
  }
  return { results, milliseconds: performance.now() - started };
}

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  try {
    if (type === "load") {
      self.postMessage({ type: "loaded", id, ...(await loadModel(data.bytes)) });
    } else if (type === "translate") {
      self.postMessage({ type: "translated", id, ...translate(id, data.texts, data.beam) });
    } else {
      throw new Error(`unknown message type '${type}'`);
    }
  } catch (error) {
    self.postMessage({ type: "error", id, message: error.message ?? String(error) });
  }
};
