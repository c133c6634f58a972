// Short sounds for a move, a roll and the player's turn, made with WebAudio (no files to
// fetch). Off unless the player turns them on; the choice is kept in localStorage.
import { t } from "./i18n.js";

const KEY = "tablas-sound";
let ctx = null;

export function soundOn() {
  return localStorage.getItem(KEY) === "1";
}

function audio() {
  if (!ctx) {
    const AC = window.AudioContext || window.webkitAudioContext;
    if (!AC) return null;
    ctx = new AC();
  }
  // A context made before any click starts suspended; a click lets it run.
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

/** One tone: frequency (Hz), start (s from now), length (s), loudness, wave. */
function tone(ac, freq, at, len, gain = 0.08, type = "sine") {
  const t = ac.currentTime + at;
  const osc = ac.createOscillator(), g = ac.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t);
  g.gain.setValueAtTime(gain, t);
  g.gain.exponentialRampToValueAtTime(0.0001, t + len);
  osc.connect(g).connect(ac.destination);
  osc.start(t);
  osc.stop(t + len + 0.02);
}

const SOUNDS = {
  move: (ac) => tone(ac, 520, 0, 0.07, 0.09, "triangle"),
  roll: (ac) => { for (let i = 0; i < 4; i++) tone(ac, 900 + 150 * (i % 2), i * 0.05, 0.03, 0.05, "square"); },
  turn: (ac) => { tone(ac, 660, 0, 0.14); tone(ac, 880, 0.12, 0.2); },
};

export function play(name) {
  if (!soundOn() || !SOUNDS[name]) return;
  const ac = audio();
  if (ac) SOUNDS[name](ac);
}

/** Wires the header's toggle: its label and aria-pressed follow the stored choice
 * (`relabel`: only its words again, after a switch of language). */
export function setupSoundToggle(button, relabel = false) {
  const show = () => {
    const on = soundOn();
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = on ? t("sound.on") : t("sound.off");
    button.title = on ? t("sound.onTitle") : t("sound.offTitle");
  };
  if (relabel) { show(); return; }
  button.addEventListener("click", () => {
    localStorage.setItem(KEY, soundOn() ? "0" : "1");
    show();
    if (soundOn()) play("turn");  // the click is the gesture that lets audio start
  });
  show();
}
