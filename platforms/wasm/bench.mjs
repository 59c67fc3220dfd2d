#!/usr/bin/env node
// Speed of the WebAssembly build in Node.js against the native build, in one
// run on one machine (issue 43's target: int8, batch 1, greedy, 1 thread,
// node at >= 40% of native): `edgemt bench` for native, the JS API
// (edgemt.mjs) timed here for node, on the same sentences. Prints both
// sentences/s, the ratio, the .wasm's size (and gzip -9) and the CPU.
//
//   node platforms/wasm/bench.mjs [--edgemt build/edgemt] [-m MODEL] [--sentences N]
//                                 [--native-features default,avx2,...]
//
// Both sides time translate() calls after one warm-up call, one sentence
// per call, greedy without scores, the model loaded before. Native times
// token ids (Translator::translate); node times text in and text out
// (SentencePiece, the JSON of the result), so the ratio is, if anything,
// low for node. --native-features adds native rows with other kernels
// (EDGEMT_CPU_FEATURES, docs/usage.md: avx2, portable, ...) for context.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { load } from "./edgemt.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HELP = `usage: node platforms/wasm/bench.mjs [options]

  --edgemt FILE     the native CLI                  [build/edgemt]
  -m, --model FILE  the model (.emt)                [models/multi30k-en-de.int8.emt]
  --sentences N     first N lines of models/reference/test_2016_flickr.en [500]
  --native-features LIST  native rows: 'default' (the CPU's own kernels) and
                    EDGEMT_CPU_FEATURES values (avx2, portable, ...)   [default]
`;

function fail(message) {
  process.stderr.write(`bench.mjs: ${message}\n`);
  process.exit(2);
}

function parse(argv) {
  const settings = { edgemt: `${ROOT}build/edgemt`, model: `${ROOT}models/multi30k-en-de.int8.emt`,
                     sentences: 500, features: ["default"] };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${argv[i]} needs a value`));
    if (argv[i] === "-h" || argv[i] === "--help") {
      process.stdout.write(HELP);
      process.exit(0);
    } else if (argv[i] === "--edgemt") {
      settings.edgemt = value();
    } else if (argv[i] === "-m" || argv[i] === "--model") {
      settings.model = value();
    } else if (argv[i] === "--native-features") {
      settings.features = value().split(",");
    } else if (argv[i] === "--sentences") {
      settings.sentences = Number(value());
      if (!Number.isInteger(settings.sentences) || settings.sentences < 1) fail("--sentences must be >= 1");
    } else {
      fail(`unknown option '${argv[i]}' (see --help)`);
    }
  }
  return settings;
}

// "cpu family 25, AMD EPYC" from /proc/cpuinfo (Linux).
function cpu() {
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    const field = (name) => (info.match(new RegExp(`^${name}\\s*: (.*)$`, "m")) ?? [])[1];
    return `cpu family ${field("cpu family") ?? "?"}, model ${field("model") ?? "?"}, ${field("model name") ?? "?"}`;
  } catch {
    return `cpu: ${process.arch} (no /proc/cpuinfo)`;
  }
}

// `edgemt bench` at 1 thread, batch 1, greedy without scores: its sent/s
// and tok/s, and the int8 kernel it chose. features: "default", or a value
// of EDGEMT_CPU_FEATURES.
function native(settings, input, features) {
  const env = { ...process.env };
  if (features === "default") delete env.EDGEMT_CPU_FEATURES;
  else env.EDGEMT_CPU_FEATURES = features;
  const done = spawnSync(settings.edgemt, [
    "bench", "-m", settings.model, "-i", input, "--sentences", String(settings.sentences),
    "--threads", "1", "--batch", "1", "--beam", "1", "--greedy-scores", "off", "--idle-seconds", "0"],
    { env });
  if (done.error) fail(`cannot run ${settings.edgemt}: ${done.error.message}`);
  const out = done.stdout.toString();
  if (done.status !== 0) fail(`${settings.edgemt} bench failed:\n${out}${done.stderr}`);
  const row = out.match(/^\s*1\s+1\s+1\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)/m);
  if (row === null) fail(`no result row in ${settings.edgemt} bench's output:\n${out}`);
  const kernel = (out.match(/own int8 GEMM, ([^;)]+)/) ?? [])[1] ?? (out.match(/^load [^;]*; (.*)$/m) ?? [])[1];
  const label = `native, ${kernel ?? "?"}${features === "default" ? "" : ` (EDGEMT_CPU_FEATURES=${features})`}`;
  return { label, sentencesPerSecond: Number(row[4]), tokensPerSecond: Number(row[5]) };
}

async function node(settings, lines) {
  const translator = await load(readFileSync(settings.model), { maxBatch: 1, maxBeam: 1 });
  const options = { beam: 1, splitSentences: false };
  translator.translate([lines[0]], options);  // warm-up, as edgemt bench's
  let tokens = 0;
  const start = performance.now();
  for (const line of lines) {
    const [result] = translator.translate([line], options);
    if (result.error !== null) fail(`node: '${line}': ${result.error}`);
    tokens += result.tokens.length;  // without EOS, as edgemt bench counts them
  }
  const seconds = (performance.now() - start) / 1000;
  translator.close();
  return { sentencesPerSecond: lines.length / seconds, tokensPerSecond: tokens / seconds };
}

async function main() {
  const settings = parse(process.argv.slice(2));
  const input = `${ROOT}models/reference/test_2016_flickr.en`;
  const lines = readFileSync(input, "utf8").split("\n").filter((line) => line.trim() !== "")
    .slice(0, settings.sentences);
  settings.sentences = lines.length;
  const wasm = readFileSync(`${ROOT}platforms/wasm/dist/edgemt-module.wasm`);
  const gzip = spawnSync("gzip", ["-9", "-c"], { input: wasm, maxBuffer: 1 << 28 });
  const gzipped = gzip.status === 0 ? gzip.stdout.length : gzipSync(wasm, { level: 9 }).length;

  const name = (path) => path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
  settings.edgemtName = name(settings.edgemt);
  const natives = settings.features.map((features) => native(settings, input, features));
  const w = await node(settings, lines);
  w.label = `node ${process.version} (WebAssembly SIMD)`;
  const width = Math.max(...[...natives, w].map((r) => r.label.length));
  const percent = (r) => `${(100 * w.sentencesPerSecond / r.sentencesPerSecond).toFixed(1)}%`;
  const row = (r) => `  ${r.label.padEnd(width)} ${r.sentencesPerSecond.toFixed(1).padStart(7)} sent/s ` +
                     `${r.tokensPerSecond.toFixed(0).padStart(6)} tok/s` +
                     (r === w ? "" : `   node: ${percent(r)}`);
  console.log([
    `${cpu()}; ${settings.sentences} sentences of ${name(input)}`,
    `model ${name(settings.model)}: batch 1, greedy, 1 thread; native: ${settings.edgemtName} bench`,
    `edgemt-module.wasm: ${wasm.length} bytes, ${gzipped} gzipped (-9)`,
    ...natives.map(row),
    row(w),
    `  node / native: ${percent(natives[0])}`,
  ].join("\n"));
}

main().catch((error) => fail(error.stack ?? error.message));
