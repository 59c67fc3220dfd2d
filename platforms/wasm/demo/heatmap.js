// The attention heat map of one sentence as an SVG: a row per target piece
// (then "</s>" when the model's end-of-sentence row is there), a column per
// source piece, each cell shaded by its weight; the colours and labels are
// those of `edgemt attention --svg` (tools/cli/attention_svg.cc).
const kSvg = "http://www.w3.org/2000/svg";

// White, then blues darkening to navy, evenly spaced over [0, 1].
const kScale = [[255, 255, 255], [200, 221, 240], [112, 168, 214], [38, 108, 178], [10, 42, 100]];

export function colourOf(weight) {
  if (weight === null || Number.isNaN(weight)) return "rgb(214, 39, 40)";  // JSON's NaN
  const steps = kScale.length - 1;
  const position = Math.min(Math.max(weight, 0), 1) * steps;
  const step = Math.min(Math.floor(position), steps - 1);
  const t = position - step;
  const mix = (channel) => Math.round(kScale[step][channel] +
                                      (kScale[step + 1][channel] - kScale[step][channel]) * t);
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

// Layout, in px.
const kCell = 22;
const kFont = 12;
const kCharWidth = 7.5;  // a generous average for the labels' font
const kGap = 6;          // between labels and grid
const kLegend = 14;      // the colour scale's height, under the grid
const kFrame = { fill: "none", stroke: "#d0d7de" };

function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(kSvg, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

// A piece as a label: SentencePiece's word mark "▁" drawn light, special
// pieces ("</s>", ">>fra<<") in grey italics.
function label(piece, attributes) {
  const special = /^<\/?s>$|^>>.*<<$/.test(piece);
  const text = element("text", special ? { ...attributes, fill: "#7a828e", "font-style": "italic" }
                                        : { ...attributes, fill: "#1f2328" });
  if (piece.startsWith("\u2581")) {
    text.append(element("tspan", { fill: "#a0a8b4" }, "\u2581"), piece.slice(1));
  } else {
    text.textContent = piece;
  }
  return text;
}

// detail: { source_pieces, target_pieces, translation, attention: rows x cols }.
// Returns the <svg> element.
export function heatmap(detail, source) {
  const columns = detail.source_pieces;
  const rows = detail.target_pieces.slice();
  if (detail.attention.length === rows.length + 1) rows.push("</s>");
  const longest = (pieces) => Math.max(1, ...pieces.map((piece) => piece.length));
  const left = Math.ceil(longest(rows) * kCharWidth) + kGap;
  const top = Math.ceil(longest(columns) * kCharWidth) + kGap;
  const gridWidth = columns.length * kCell;
  const legendWidth = Math.max(gridWidth, 120);
  const width = left + legendWidth + 1;
  const gridBottom = top + rows.length * kCell;
  const legendTop = gridBottom + 2 * kGap;
  const height = legendTop + kLegend + kFont + 4;

  const svg = element("svg", {
    width, height, viewBox: `0 0 ${width} ${height}`, role: "img", class: "heatmap",
    "font-family": "DejaVu Sans, Verdana, Arial, sans-serif", "font-size": kFont,
    "aria-label": `Attention weights of "${source}": ${rows.length} target pieces ` +
                  `(rows) by ${columns.length} source pieces (columns); darker is more weight.`,
  });
  columns.forEach((piece, c) => {
    const x = left + c * kCell + kCell / 2 + kFont / 3;
    const y = top - kGap;
    svg.append(label(piece, { x, y, transform: `rotate(-90 ${x} ${y})` }));
  });
  rows.forEach((piece, r) => {
    svg.append(label(piece, { x: left - kGap, y: top + r * kCell + kCell / 2 + kFont / 3,
                              "text-anchor": "end" }));
  });
  const grid = element("g", { class: "cells" });
  detail.attention.forEach((weights, r) => {
    weights.forEach((weight, c) => {
      const cell = element("rect", { x: left + c * kCell, y: top + r * kCell,
                                     width: kCell, height: kCell, fill: colourOf(weight) });
      const shown = weight === null ? "NaN" : weight.toFixed(3);
      cell.append(element("title", {}, `${rows[r]} \u2192 ${columns[c]}: ${shown}`));
      grid.append(cell);
    });
  });
  grid.append(element("rect", { x: left, y: top, width: gridWidth,
                                height: rows.length * kCell, ...kFrame }));
  svg.append(grid);

  // The colour scale from 0 to 1 under the grid, as wide (at least 120 px).
  const gradient = element("linearGradient", { id: "edgemt-scale" });
  kScale.forEach((_, i) => {
    const offset = i / (kScale.length - 1);
    gradient.append(element("stop", { offset, "stop-color": colourOf(offset) }));
  });
  svg.append(element("defs"), element("rect", {
    x: left, y: legendTop, width: legendWidth, height: kLegend, fill: "url(#edgemt-scale)",
    stroke: kFrame.stroke }));
  svg.querySelector("defs").append(gradient);
  const legendText = { y: legendTop + kLegend + kFont + 2, fill: "#57606a" };
  svg.append(element("text", { ...legendText, x: left }, "0"),
             element("text", { ...legendText, x: left + legendWidth, "text-anchor": "end" }, "1"));
  return svg;
}
