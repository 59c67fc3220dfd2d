// The demo page: picks a model, sends it and the text to the worker
// (worker.js, where edgemt runs), shows the translations, the status and a
// sentence's attention heat map. The page itself never blocks on the runtime.
//
// Query parameters: ?model=URL fetches and loads a model (one hosted beside
// the page); &beam=N chooses the beam; &test=URL&lines=N (with a model) is
// the test mode of test_page.py: the first N lines of that text file (all
// when N is 0 or absent) are translated as the button would, and the
// translations, a line each, go to <pre id="test-output" data-state="done">
// (data-state="error" and the message when something failed).
import { heatmap } from "./heatmap.js";

const byId = (id) => document.getElementById(id);
const ui = {
  form: byId("form"), model: byId("model"), beam: byId("beam"), info: byId("model-info"),
  source: byId("source"), output: byId("output"), translate: byId("translate"),
  status: byId("status"), attention: byId("attention"), sentence: byId("sentence"),
  heatmap: byId("heatmap"), testOutput: byId("test-output"),
};

let modelLoaded = false;
let busy = false;
let sentences = [];  // every translated sentence: { line, detail }

function showStatus(message, isError = false) {
  ui.status.textContent = message;
  ui.status.classList.toggle("error", isError);
}

function setBusy(value) {
  busy = value;
  ui.translate.disabled = busy || !modelLoaded;
  ui.model.disabled = busy;
}

const seconds = (milliseconds) => milliseconds < 1000 ? `${Math.round(milliseconds)} ms`
                                                       : `${(milliseconds / 1000).toFixed(1)} s`;
const plural = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;
const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

// --- The worker: one request at a time is enough for a page, but answers are
// matched by id all the same.
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const pending = new Map();  // id -> { resolve, reject, progress }
let nextId = 1;

worker.onmessage = ({ data }) => {
  const request = pending.get(data.id);
  if (request === undefined) return;
  if (data.type === "progress") {
    request.progress?.(data);
    return;
  }
  pending.delete(data.id);
  if (data.type === "error") request.reject(new Error(data.message));
  else request.resolve(data);
};

// The worker itself failed: its module or edgemt.mjs could not be loaded.
worker.onerror = (event) => {
  event.preventDefault();
  const reason = event.message || "worker.js or ../edgemt.mjs could not be loaded";
  const message = `the worker failed: ${reason}`;
  for (const request of pending.values()) request.reject(new Error(message));
  pending.clear();
  showStatus(message, true);
};

function ask(message, { transfer = [], progress = null } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, progress });
    worker.postMessage({ ...message, id }, transfer);
  });
}

// --- Loading a model.
async function loadModel(bytes, name) {
  setBusy(true);
  modelLoaded = false;
  showStatus(`Loading ${name} (${megabytes(bytes.byteLength)})…`);
  const started = performance.now();
  try {
    const { info, version } = await ask({ type: "load", bytes }, { transfer: [bytes] });
    modelLoaded = true;
    ui.info.textContent = `${name}: ${info.family}, ${info.source_language} → ` +
        `${info.target_language}, ${info.weight_dtype} weights, beam ${info.beam_size} ` +
        `(edgemt ${version})`;
    showStatus(`Model loaded in ${seconds(performance.now() - started)}. ` +
               "Type or paste text and press Translate.");
  } catch (error) {
    ui.info.textContent = "No model loaded.";
    throw new Error(`Could not load ${name}: ${error.message}`);
  } finally {
    setBusy(false);
  }
}

async function fetchOk(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Error(`Could not fetch ${what} ${url}: ${error.message}`);
  }
  if (!response.ok) {
    throw new Error(`Could not fetch ${what} ${url}: ${response.status} ${response.statusText}`);
  }
  return response;
}

// --- Translating and showing the results.
function sourceText(pieces) {
  return pieces.filter((piece) => piece !== "</s>").join("").replaceAll("\u2581", " ").trim();
}

function chooseSentence(index) {
  const chosen = sentences[index];
  if (chosen === undefined) return;
  ui.sentence.value = String(index);
  for (const item of ui.output.children) {
    item.classList.toggle("chosen", Number(item.dataset.line) === chosen.line);
  }
  const source = sourceText(chosen.detail.source_pieces);
  const caption = document.createElement("figcaption");
  caption.textContent = `${source} → ${chosen.detail.translation}`;
  ui.heatmap.replaceChildren(caption, heatmap(chosen.detail, source));
}

function render(results) {
  sentences = [];
  const options = [];
  const items = results.map((result, line) => {
    const item = document.createElement("li");
    item.dataset.line = String(line);
    if (result.error !== null) {
      item.textContent = result.error;
      item.classList.add("failed");
      return item;
    }
    item.textContent = result.text;
    const details = result.details ?? [];
    if (details.length > 0) item.dataset.sentence = String(sentences.length);
    details.forEach((detail, k) => {
      const option = document.createElement("option");
      option.value = String(sentences.length);
      option.textContent = `Line ${line + 1}${details.length > 1 ? `, sentence ${k + 1}` : ""}: ` +
                           sourceText(detail.source_pieces);
      options.push(option);
      sentences.push({ line, detail });
    });
    return item;
  });
  ui.output.replaceChildren(...items);
  ui.sentence.replaceChildren(...options);
  ui.attention.hidden = sentences.length === 0;
  if (sentences.length > 0) chooseSentence(0);
}

async function translate() {
  const text = ui.source.value.replaceAll("\r", "");
  const texts = text.split("\n");
  if (texts.length > 1 && texts[texts.length - 1] === "") texts.pop();  // the final newline
  setBusy(true);
  showStatus(`Translating ${plural(texts.length, "line")}…`);
  try {
    const { results, milliseconds } = await ask(
        { type: "translate", texts, beam: Number(ui.beam.value) },
        { progress: ({ done, total }) => showStatus(`Translating… ${done}/${total} lines`) });
    render(results);
    const failed = results.findIndex((result) => result.error !== null);
    const count = results.reduce((sum, result) => sum + result.sentences, 0);
    const failures = results.filter((result) => result.error !== null).length;
    showStatus(`Translated ${plural(results.length, "line")} (${plural(count, "sentence")}) ` +
               `in ${seconds(milliseconds)}.` +
               (failed < 0 ? "" : ` ${plural(failures, "line")} could not be translated ` +
                                  `(line ${failed + 1}: ${results[failed].error}).`),
               failed >= 0);
    return results;
  } finally {
    setBusy(false);
  }
}

// --- The test mode (test_page.py).
async function runTest(url, lines) {
  const response = await fetchOk(url, "test text");
  let texts = (await response.text()).replaceAll("\r", "").split("\n");
  if (texts[texts.length - 1] === "") texts.pop();
  if (lines > 0) texts = texts.slice(0, lines);
  ui.source.value = texts.join("\n");
  const results = await translate();
  ui.testOutput.textContent = results.map((result) => result.text).join("\n");
  ui.testOutput.dataset.state = "done";
}

// --- Wiring.
ui.model.addEventListener("change", async () => {
  const file = ui.model.files[0];
  if (file === undefined) return;
  try {
    await loadModel(await file.arrayBuffer(), file.name);
  } catch (error) {
    showStatus(error.message, true);
  }
});

ui.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (busy || !modelLoaded) return;
  try {
    await translate();
  } catch (error) {
    showStatus(`Could not translate: ${error.message}`, true);
  }
});

ui.sentence.addEventListener("change", () => chooseSentence(Number(ui.sentence.value)));
ui.output.addEventListener("click", (event) => {
  const item = event.target.closest("li");
  if (item?.dataset.sentence !== undefined) chooseSentence(Number(item.dataset.sentence));
});

async function start() {
  const params = new URLSearchParams(location.search);
  if (params.has("beam")) ui.beam.value = params.get("beam");
  const modelUrl = params.get("model");
  const testUrl = params.get("test");
  try {
    if (modelUrl !== null) {
      showStatus(`Fetching ${modelUrl}…`);
      const response = await fetchOk(modelUrl, "model");
      await loadModel(await response.arrayBuffer(), modelUrl.split("/").pop());
    } else {
      showStatus("Choose a model file (.emt) to start.");
    }
    if (testUrl !== null) {
      if (modelUrl === null) throw new Error("the test mode needs ?model=URL");
      await runTest(testUrl, Number(params.get("lines") ?? 0));
    }
  } catch (error) {
    showStatus(error.message, true);
    if (testUrl !== null) {
      ui.testOutput.textContent = error.message;
      ui.testOutput.dataset.state = "error";
    }
  }
}

start();
