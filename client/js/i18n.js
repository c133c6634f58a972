// The page's words in the player's language (contract section 18; docs/i18n.md).
//
// Every text the page shows is a key of a catalogue (client/js/i18n/<lang>.js), worded there
// whole with named placeholders ({name}); a text that depends on a number has one form per
// plural category of its language (Intl.PluralRules: "one", "other", Spanish's "many"…).
// Numbers, dates and times go through Intl in the same language. The language is the first
// of the browser's that the page has (English otherwise), or the one chosen with the header's
// switch, remembered in localStorage; <html lang> follows it.
import en from "./i18n/en.js";
import es from "./i18n/es.js";

/** The catalogues by language code, and each language's own name for the switch. */
export const CATALOGUES = { en, es };
export const LANGUAGE_NAMES = { en: "English", es: "Español" };
const FALLBACK = "en";
const STORE_KEY = "tablas-lang";

/** The first of `wanted` (BCP 47 tags, most wanted first) that the page has, else English. */
export function pickLanguage(wanted) {
  for (const tag of wanted || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (Object.hasOwn(CATALOGUES, base)) return base;
  }
  return FALLBACK;
}

function stored() {
  try { return localStorage.getItem(STORE_KEY); } catch { return null; }
}

function browserLanguages() {
  if (typeof navigator === "undefined") return [];
  return navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
}

let current = pickLanguage([stored(), ...browserLanguages()].filter(Boolean));
const listeners = new Set();

/** The page's language now ("en", "es"). */
export function lang() {
  return current;
}

/** Whether the catalogue has `key` (for texts worded from data: a reason, a code). */
export function has(key) {
  return Object.hasOwn(CATALOGUES[current], key) || Object.hasOwn(CATALOGUES[FALLBACK], key);
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!Object.hasOwn(params, name)) return whole;
    const v = params[name];
    return typeof v === "number" ? fmtNumber(v) : String(v);
  });
}

/** The text of `key` in the page's language, its {placeholders} filled from `params`; a
 * plural entry picks its form by `params.count`. A key no catalogue has comes back as itself
 * (the catalogue check in the tests keeps that from happening). */
export function t(key, params = {}) {
  let entry = CATALOGUES[current][key];
  if (entry === undefined) entry = CATALOGUES[FALLBACK][key];
  if (entry === undefined) return key;
  if (typeof entry === "object") {
    const n = Number(params.count);
    const form = new Intl.PluralRules(current).select(Number.isFinite(n) ? n : 0);
    entry = entry[form] ?? entry.other;
  }
  return fill(entry, params);
}

/** The text of `key` as a list of pieces for an element: a placeholder whose value is a DOM
 * node (a link, a name in bold) is put in whole, the rest is text; so a sentence with a link
 * in it is still one sentence of the catalogue, in the language's order. */
export function tParts(key, params = {}) {
  const nodes = {}, plain = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof Node !== "undefined" && v instanceof Node) nodes[k] = v; else plain[k] = v;
  }
  const text = t(key, plain);
  return text.split(/(\{\w+\})/).filter((x) => x !== "").map((piece) => {
    const m = /^\{(\w+)\}$/.exec(piece);
    return m && Object.hasOwn(nodes, m[1]) ? nodes[m[1]] : piece;
  });
}

/** A word from data (a bot level, a room's status, a reason) under `prefix`, or the word
 * itself when the catalogue has none for it (a server newer than the page). */
export function tWord(prefix, word) {
  const key = `${prefix}.${word}`;
  return has(key) ? t(key) : String(word ?? "").replace(/_/g, " ");
}

/** A number as the language writes it (1,234.5 / 1234,5); `opts` are Intl.NumberFormat's. */
export function fmtNumber(n, opts = {}) {
  return new Intl.NumberFormat(current, opts).format(n);
}

/** A signed number (+0,125 / −3), as for scores. */
export function fmtSigned(n, digits = 0) {
  return fmtNumber(n, { signDisplay: "exceptZero", minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A day (a Date, or milliseconds since the epoch). */
export function fmtDate(when, opts = { year: "numeric", month: "short", day: "numeric" }) {
  return new Intl.DateTimeFormat(current, opts).format(new Date(when));
}

/** A day and a time. */
export function fmtDateTime(when) {
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(new Date(when));
}

/** A time of day. */
export function fmtTime(when) {
  return new Intl.DateTimeFormat(current, { timeStyle: "short" }).format(new Date(when));
}

/** Words joined as the language joins a list ("a, b and c" / "a, b y c"). */
export function fmtList(items) {
  return new Intl.ListFormat(current, { style: "long", type: "conjunction" }).format(items.map(String));
}

/** The server's refusal (an `error` message, or the page's own `offline`) in the page's
 * words: its `reason` when the catalogue words that kind of refusal (with the error's
 * `params`), else its `code`. The server's English `message` is for programs and logs. */
export function errorText(err) {
  const e = err || {};
  const params = { ...(e.params || {}) };
  if (e.reason && has(`error.reason.${e.reason}`)) return t(`error.reason.${e.reason}`, params);
  if (e.code && has(`error.${e.code}`)) return t(`error.${e.code}`, params);
  return t("error.unknown");
}

/** Texts written into the HTML: data-i18n="key" sets the text, data-i18n-attr="title:key;
 * aria-label:key" attributes. The HTML's own English stays for a page without scripts. */
export function applyStatic(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of el.dataset.i18nAttr.split(";")) {
      const [attr, key] = pair.split(":").map((x) => x.trim());
      if (attr && key) el.setAttribute(attr, t(key));
    }
  }
  const title = document.querySelector("title[data-i18n]");
  if (title) document.title = t(title.dataset.i18n);
}

/** Calls `fn` after each switch of language (the page redraws what it drew from data). */
export function onLanguageChange(fn) {
  listeners.add(fn);
}

/** Switches the page to `code`, remembered on this browser. A page that registered no redraw
 * is reloaded (every text is drawn again). */
export function setLanguage(code) {
  if (!Object.hasOwn(CATALOGUES, code)) return;
  try { localStorage.setItem(STORE_KEY, code); } catch { /* private mode: this page only */ }
  if (code === current) return;
  current = code;
  document.documentElement.lang = code;
  applyStatic();
  syncSwitch();
  if (!listeners.size) { location.reload(); return; }
  for (const fn of listeners) fn(code);
}

function syncSwitch() {
  const sel = document.getElementById("lang-switch");
  if (sel) {
    sel.value = current;
    sel.setAttribute("aria-label", t("header.language"));
    sel.title = t("header.language");
  }
}

/** The header's switch: a select of the languages, each in its own name (on a phone's narrow
 * header, its two-letter code). */
function mountSwitch() {
  const bar = document.querySelector(".topbar");
  if (!bar || document.getElementById("lang-switch")) return;
  const sel = document.createElement("select");
  sel.id = "lang-switch";
  sel.className = "lang-switch";
  const narrow = window.matchMedia ? window.matchMedia("(max-width: 560px)") : null;
  for (const [code, name] of Object.entries(LANGUAGE_NAMES)) {
    const o = document.createElement("option");
    o.value = code;
    o.lang = code;
    o.title = name;
    sel.append(o);
  }
  const label = () => {
    for (const o of sel.options) {
      o.textContent = narrow && narrow.matches ? o.value.toUpperCase() : LANGUAGE_NAMES[o.value];
    }
  };
  label();
  if (narrow) narrow.addEventListener("change", label);
  sel.addEventListener("change", () => setLanguage(sel.value));
  bar.append(sel);
  syncSwitch();
}

if (typeof document !== "undefined") {
  document.documentElement.lang = current;
  applyStatic();
  mountSwitch();
}
