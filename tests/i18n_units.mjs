// The page's i18n module run under node (tests/test_i18n.py): the language picked from the
// browser's list, plural forms, placeholders, numbers and dates, refusals worded. Prints one
// JSON object of results; the test compares them.
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const js = join(dirname(fileURLToPath(import.meta.url)), "..", "client", "js");
const store = new Map();
globalThis.localStorage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, String(v)) };
const lang = process.argv[2] || "en";
store.set("tablas-lang", lang);

// The module and its catalogues, loaded as data: URLs (node has no fetch of file: imports of
// relative paths from a data: module), the catalogues' imports rewritten to them.
const url = (text) => `data:text/javascript;charset=utf-8,${encodeURIComponent(text)}`;
const en = url(readFileSync(join(js, "i18n", "en.js"), "utf8"));
const es = url(readFileSync(join(js, "i18n", "es.js"), "utf8"));
const src = readFileSync(join(js, "i18n.js"), "utf8")
  .replace('"./i18n/en.js"', JSON.stringify(en)).replace('"./i18n/es.js"', JSON.stringify(es));
const m = await import(url(src));

const out = {
  lang: m.lang(),
  pick: [
    m.pickLanguage(["es-ES", "en"]), m.pickLanguage(["fr-FR", "es-MX"]), m.pickLanguage(["de", "fr"]),
    m.pickLanguage([]), m.pickLanguage(["EN-gb"]),
  ],
  rooms: [0, 1, 2, 5].map((count) => m.t("lobby.roomCount", { count })),
  named: m.t("turn.waitingFor", { name: "Ana" }),
  missing: m.t("no.such.key"),
  number: m.fmtNumber(1234.5),
  signed: m.fmtSigned(0.125, 3),
  date: m.fmtDate(Date.UTC(2026, 10, 28, 12)),
  error: m.errorText({ code: "not_your_turn", message: "not your turn" }),
  reason: m.errorText({ code: "bad_request", reason: "claim_too_early", params: { away: 12, wait: 60 }, message: "…" }),
  unknownReason: m.errorText({ code: "seat_taken", reason: "some_new_reason", message: "…" }),
  unknownCode: m.errorText({ code: "brand_new_code", message: "…" }),
  word: m.tWord("reason", "four_in_a_row"),
  newWord: m.tWord("reason", "some_new_reason"),
};
console.log(JSON.stringify(out));
