// Backgammon play building, independent of the DOM.
//
// Boards are 26 counts from their owner's side: 0 = off, 1..24 points, 25 = bar; the mover's
// point p is the opponent's point 25 - p. The server lists every legal play (one per distinct
// resulting position). The builder lets the player make single checker steps in any order and
// only allows steps after which some continuation still reaches the final position of a listed
// play; when the position reached is such a final position, the listed play is what is sent.

export const BAR = 25;
export const OFF = 0;

export function key(me, opp) {
  return me.join(",") + "|" + opp.join(",");
}

export function applyStep(me, opp, step) {
  const [f, t] = step;
  const m = me.slice(), o = opp.slice();
  m[f] -= 1;
  m[t] += 1;
  if (t !== OFF && o[25 - t] === 1) {
    o[25 - t] = 0;
    o[BAR] += 1;
  }
  return [m, o];
}

export function applyPlay(me, opp, play) {
  let m = me, o = opp;
  for (const st of play) [m, o] = applyStep(m, o, st);
  return [m, o];
}

/** Every single step the mover can make with one die (bar first, blocks, bearing off). */
export function stepsFor(me, opp, die) {
  const out = [];
  const open = (t) => opp[25 - t] < 2;
  if (me[BAR] > 0) {
    const t = 25 - die;
    if (open(t)) out.push([BAR, t]);
    return out;
  }
  let outside = 0;
  for (let p = 7; p <= 25; p++) outside += me[p];
  const allHome = outside === 0;
  for (let p = 24; p >= 1; p--) {
    if (!me[p]) continue;
    const t = p - die;
    if (t >= 1) {
      if (open(t)) out.push([p, t]);
    } else if (allHome) {
      if (t === 0) out.push([p, OFF]);
      else {
        let higher = false;
        for (let q = p + 1; q <= 6; q++) if (me[q]) { higher = true; break; }
        if (!higher) out.push([p, OFF]);
      }
    }
  }
  return out;
}

function removeOne(dice, d) {
  const i = dice.indexOf(d);
  const out = dice.slice();
  out.splice(i, 1);
  return out;
}

export class PlayBuilder {
  /**
   * me, opp: the mover's and the opponent's boards (each from its own side);
   * dice: [a, b]; plays: the listed legal plays (arrays of [from, to]).
   */
  constructor(me, opp, dice, plays) {
    this.me0 = me.slice();
    this.opp0 = opp.slice();
    this.dice0 = dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : dice.slice();
    this.finals = new Map();
    for (const p of plays) this.finals.set(key(...applyPlay(me, opp, p)), p);
    this.memo = new Map();
    this.steps = [];  // [{step: [f, t], die}]
  }

  get me() { return this._pos()[0]; }
  get opp() { return this._pos()[1]; }

  _pos() {
    let m = this.me0, o = this.opp0;
    for (const s of this.steps) [m, o] = applyStep(m, o, s.step);
    return [m, o];
  }

  get diceLeft() {
    let d = this.dice0;
    for (const s of this.steps) d = removeOne(d, s.die);
    return d;
  }

  /** Can some continuation (possibly none) from here reach a listed play's final position? */
  useful(me, opp, dice) {
    const k = key(me, opp) + "#" + dice.slice().sort().join("");
    if (this.memo.has(k)) return this.memo.get(k);
    let ok = this.finals.has(key(me, opp));
    if (!ok) {
      for (const d of new Set(dice)) {
        for (const st of stepsFor(me, opp, d)) {
          const [m, o] = applyStep(me, opp, st);
          if (this.useful(m, o, removeOne(dice, d))) { ok = true; break; }
        }
        if (ok) break;
      }
    }
    this.memo.set(k, ok);
    return ok;
  }

  /**
   * Where the checker on `from` can go now: a Map destination -> list of {step, die}
   * (one step, or several steps of the same checker), shortest path first.
   */
  destinations(from) {
    const out = new Map();
    const [me0, opp0] = this._pos();
    const queue = [[me0, opp0, this.diceLeft, from, []]];
    while (queue.length) {
      const [me, opp, dice, at, path] = queue.shift();
      for (const d of new Set(dice)) {
        for (const st of stepsFor(me, opp, d)) {
          if (st[0] !== at) continue;
          const [m, o] = applyStep(me, opp, st);
          const left = removeOne(dice, d);
          if (!this.useful(m, o, left)) continue;
          const p = [...path, { step: st, die: d }];
          if (!out.has(st[1])) out.set(st[1], p);
          if (st[1] !== OFF) queue.push([m, o, left, st[1], p]);
        }
      }
    }
    return out;
  }

  /** Points (mover's numbering, 25 = bar) holding a checker that can move now. */
  sources() {
    const me = this.me;
    const out = [];
    for (let p = 25; p >= 1; p--) if (me[p] > 0 && this.destinations(p).size) out.push(p);
    return out;
  }

  push(path) { for (const s of path) this.steps.push(s); }
  undo() { this.steps.pop(); }
  reset() { this.steps = []; }

  /** The listed play reaching the current position, or null when not complete. */
  complete() {
    const [m, o] = this._pos();
    return this.finals.get(key(m, o)) || null;
  }

  /** True if nothing more can be added (every die used or no useful step left). */
  exhausted() {
    return this.sources().length === 0;
  }
}

export function pips(board) {
  let n = 0;
  for (let p = 1; p <= 25; p++) n += p * board[p];
  return n;
}
