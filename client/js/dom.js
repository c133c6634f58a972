// Tiny DOM helpers. Text is always inserted as text nodes (never parsed as HTML), so names,
// chat lines and anything else that came from another person cannot inject markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "on") {
        for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      } else if (k === "text") {
        el.textContent = String(v);
      } else if (k === "dataset") {
        for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
      } else if (k === "style" && typeof v === "object") {
        for (const [sk, sv] of Object.entries(v)) el.style.setProperty(sk, String(sv));
      } else {
        el.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** An HTML element: h("button", {class: "x", on: {click}}, "text", child, ...). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, same calling convention as h(). */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function $(sel, root = document) {
  return root.querySelector(sel);
}

/** Makes an SVG element behave like a button for keyboard users too. */
export function clickable(el, label, fn) {
  el.setAttribute("tabindex", "0");
  el.setAttribute("role", "button");
  if (label) el.setAttribute("aria-label", label);
  el.classList.add("hot");
  el.addEventListener("click", (ev) => { ev.stopPropagation(); fn(ev); });
  el.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); fn(ev); }
  });
  return el;
}

export function fmtClock(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–:––";
  const t = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(t / 60), sec = t % 60;
  if (m >= 60) return `${Math.floor(m / 60)}:${String(m % 60).padStart(2, "0")}:${String(sec).padStart(2, "0")}`;
  return `${m}:${String(sec).padStart(2, "0")}`;
}
