// A rating's history drawn by hand in SVG (no charting library): one point per rated game,
// oldest on the left, the rating's line over its RD band (rating ± RD), the lowest and
// highest ratings on the left axis, the first and last days under it.
import { s } from "./dom.js";
import { t, fmtDate } from "./i18n.js";

const W = 600, H = 180, PAD = { left: 46, right: 12, top: 12, bottom: 24 };

function day(ms) {
  return fmtDate(ms, { month: "short", day: "numeric" });
}

/** The graph of `points` ([{at_ms, rating, rd}], oldest first) for `title` (its label). */
export function ratingGraph(points, title) {
  const svg = s("svg", { class: "rating-graph", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": points.length
      ? t("graph.label", { title, count: points.length, from: String(Math.round(points[0].rating)),
        to: String(Math.round(points[points.length - 1].rating)) })
      : t("graph.empty", { title }) });
  if (!points.length) return svg;
  const lo = Math.min(...points.map((p) => p.rating - p.rd));
  const hi = Math.max(...points.map((p) => p.rating + p.rd));
  const span = Math.max(hi - lo, 1);
  const n = points.length;
  const x = (i) => PAD.left + (n === 1 ? (W - PAD.left - PAD.right) / 2 : i * (W - PAD.left - PAD.right) / (n - 1));
  const y = (r) => PAD.top + (hi - r) * (H - PAD.top - PAD.bottom) / span;
  const band = points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating + p.rd).toFixed(1)}`)
    .concat(points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating - p.rd).toFixed(1)}`).reverse());
  svg.append(s("polygon", { class: "rg-band", points: band.join(" ") }));
  svg.append(s("polyline", { class: "rg-line",
    points: points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ") }));
  points.forEach((p, i) => {
    const dot = s("circle", { class: "rg-point", cx: x(i).toFixed(1), cy: y(p.rating).toFixed(1), r: 3,
      "data-rating": Math.round(p.rating) });
    dot.append(s("title", {}, `${Math.round(p.rating)} ± ${Math.round(p.rd)} · ${day(p.at_ms)}`));
    svg.append(dot);
  });
  const ratings = points.map((p) => p.rating);
  for (const r of [Math.min(...ratings), Math.max(...ratings)]) {
    svg.append(s("text", { class: "rg-axis", x: PAD.left - 6, y: (y(r) + 4).toFixed(1), "text-anchor": "end" },
      String(Math.round(r))));
  }
  svg.append(s("text", { class: "rg-axis", x: PAD.left, y: H - 6 }, day(points[0].at_ms)));
  if (n > 1) svg.append(s("text", { class: "rg-axis", x: W - PAD.right, y: H - 6, "text-anchor": "end" }, day(points[n - 1].at_ms)));
  return svg;
}
