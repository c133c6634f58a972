// The leaderboard (/leaderboard): a game's rated players, best first, from
// GET /api/leaderboard?game=G; each links to the player's page. Read only: no WebSocket.
import { h, clear } from "./dom.js";
import { gameTitle } from "./notation.js";
import { serverGames } from "./net.js";

const $ = (id) => document.getElementById(id);

async function show(game) {
  $("lb-status").hidden = false;
  $("lb-status").textContent = "Loading…";
  const r = await fetch(`api/leaderboard?game=${encodeURIComponent(game)}`);
  const body = await r.json();
  if (!r.ok) {
    $("lb-status").textContent = body.error || `the server answered ${r.status}`;
    $("lb-table").hidden = true;
    return;
  }
  const rows = clear($("lb-rows"));
  body.players.forEach((p, i) => {
    rows.append(h("tr", { "data-player": p.player_id },
      h("td", {}, String(i + 1)),
      h("td", {}, h("a", { href: `players/${encodeURIComponent(p.player_id)}`, class: p.bot ? "pname bot" : "pname" }, p.name || p.player_id),
        p.bot ? h("span", { class: "tag bot" }, " bot") : ""),
      h("td", { class: "lb-rating" }, String(Math.round(p.rating))),
      h("td", {}, String(Math.round(p.rd))),
      h("td", {}, String(p.games))));
  });
  $("lb-table").hidden = !body.players.length;
  $("lb-status").hidden = !!body.players.length;
  $("lb-status").textContent = body.players.length ? "" : `No rated ${gameTitle(game)} game yet.`;
}

async function main() {
  const picker = $("lb-game");
  const info = await serverGames();
  picker.append(...info.games.map((g) => h("option", { value: g.game }, g.title || gameTitle(g.game))));
  const wanted = new URLSearchParams(location.search).get("game");
  if (wanted && info.games.some((g) => g.game === wanted)) picker.value = wanted;
  picker.addEventListener("change", () => {
    history.replaceState(null, "", `?game=${encodeURIComponent(picker.value)}`);
    show(picker.value);
  });
  await show(picker.value);
}

main().catch((e) => { $("lb-status").textContent = `Cannot load the leaderboard: ${e.message || e}`; });
