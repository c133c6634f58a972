// The catalogues' check (docs/i18n.md), run by tests/test_i18n.py with node: every key in
// every language, the same placeholders and plural forms in each, and every key the page's
// code and HTML name present. Prints one problem a line; exits 1 if there is any.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

// The client folder: the argument, or the repository's.
const client = process.argv[2] || join(dirname(fileURLToPath(import.meta.url)), "..", "client");
const folder = join(client, "js", "i18n");

async function load(file) {
  const text = readFileSync(join(folder, file), "utf8");
  const mod = await import(`data:text/javascript;charset=utf-8,${encodeURIComponent(text)}`);
  return mod.default;
}

const langs = readdirSync(folder).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3)).sort();
const cats = {};
for (const l of langs) cats[l] = await load(`${l}.js`);
const problems = [];
const holes = (text) => new Set([...String(text).matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
const forms = (v) => (typeof v === "object" ? Object.values(v) : [v]);
const placeholders = (v) => new Set(forms(v).flatMap((f) => [...holes(f)]));

const en = cats.en;
if (!en) problems.push("no English catalogue (en.js)");
for (const l of langs) {
  const cat = cats[l];
  const pr = new Intl.PluralRules(l);
  for (const key of Object.keys(en)) {
    if (!Object.hasOwn(cat, key)) { problems.push(`${l}: missing ${key}`); continue; }
    const a = placeholders(en[key]), b = placeholders(cat[key]);
    for (const p of a) if (!b.has(p)) problems.push(`${l}: ${key} does not use {${p}}`);
    for (const p of b) if (!a.has(p)) problems.push(`${l}: ${key} uses {${p}}, which English does not give`);
    const v = cat[key];
    if (typeof en[key] === "object" !== (typeof v === "object")) problems.push(`${l}: ${key} is plural in one language only`);
    if (typeof v === "object") {
      if (!("other" in v)) problems.push(`${l}: ${key} has no "other" form`);
      for (const c of pr.resolvedOptions().pluralCategories) {
        if (!(c in v) && c !== "other" && !(c === "many")) problems.push(`${l}: ${key} lacks the plural form "${c}"`);
      }
      for (const f of Object.keys(v)) if (!pr.resolvedOptions().pluralCategories.includes(f)) problems.push(`${l}: ${key} has a form "${f}" the language has not`);
      if (!("count" in Object.fromEntries([...placeholders(en[key])].map((p) => [p, 1]))) && l === "en") problems.push(`${key}: a plural text must use {count}`);
    }
    for (const f of forms(v)) if (typeof f !== "string" || !f.trim()) problems.push(`${l}: ${key} is empty`);
  }
  for (const key of Object.keys(cat)) if (!Object.hasOwn(en, key)) problems.push(`${l}: ${key} is not in English`);
}

// The keys the page names: t("key"), has("key"), t(`prefix.${x}`) (some key has the prefix),
// and data-i18n / data-i18n-attr in the HTML.
function files(dir, ext) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === "i18n" ? [] : files(p, ext);
    return p.endsWith(ext) ? [p] : [];
  });
}
const used = new Map(), prefixes = new Map();
for (const p of files(join(client, "js"), ".js")) {
  const text = readFileSync(p, "utf8");
  for (const m of text.matchAll(/\b(?:t|tr|has|tParts)\(\s*["']([\w.-]+)["']/g)) used.set(m[1], p);
  for (const m of text.matchAll(/\b(?:t|tr|has|tParts)\(\s*`([\w.-]+)\$\{/g)) prefixes.set(m[1], p);
  for (const m of text.matchAll(/\btWord\(\s*["']([\w.-]+)["']/g)) prefixes.set(`${m[1]}.`, p);
  for (const m of text.matchAll(/\/\/ i18n-keys: (.*)/g)) for (const k of m[1].split(/\s+/).filter(Boolean)) used.set(k, p);
}
for (const p of files(client, ".html")) {
  const text = readFileSync(p, "utf8");
  for (const m of text.matchAll(/data-i18n="([\w.-]+)"/g)) used.set(m[1], p);
  for (const m of text.matchAll(/data-i18n-attr="([^"]+)"/g)) {
    for (const pair of m[1].split(";")) used.set(pair.split(":")[1].trim(), p);
  }
}
for (const [key, p] of used) if (!Object.hasOwn(en || {}, key)) problems.push(`${p}: uses ${key}, which no catalogue has`);
for (const [pre, p] of prefixes) {
  if (!Object.keys(en || {}).some((k) => k.startsWith(pre))) problems.push(`${p}: uses keys ${pre}…, none of which exists`);
}
for (const line of problems) console.log(line);
console.log(`${langs.join(", ")}: ${Object.keys(en || {}).length} keys; ${used.size} named by the page`);
process.exit(problems.length ? 1 : 0);
