// "Verify dice" (docs/dice.md): check sha256(seed) against the commitment published at the
// start of the game, then recompute every roll from
// HMAC-SHA256(seed, "room:ply[:attempt]:seed0:seed1") with the seats' seeds (a room from
// before seat seeds has `seeds: null` and the message without them).
// WebCrypto does the hashing; pages served over plain http from another host have no
// crypto.subtle (it needs a secure context), so a small SHA-256 in JavaScript stands in.

const enc = new TextEncoder();

function hexToBytes(hex) {
  if (!/^([0-9a-f]{2})*$/i.test(hex)) throw new Error("not hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(b) {
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

// --- fallback SHA-256 / HMAC (FIPS 180-4, RFC 2104) -----------------------------------------

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

export function sha256js(data) {
  const len = data.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const buf = new Uint8Array(total);
  buf.set(data);
  buf[len] = 0x80;
  const bits = len * 8;
  const view = new DataView(buf.buffer);
  view.setUint32(total - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(total - 4, bits >>> 0);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const W = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
      const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[i] + W[i]) >>> 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, H[i]);
  return out;
}

export function hmacSha256js(key, msg) {
  let k = key.length > 64 ? sha256js(key) : key;
  const block = new Uint8Array(64);
  block.set(k);
  const ipad = new Uint8Array(64 + msg.length), opad = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) { ipad[i] = block[i] ^ 0x36; opad[i] = block[i] ^ 0x5c; }
  ipad.set(msg, 64);
  opad.set(sha256js(ipad), 64);
  return sha256js(opad);
}

// --- the crypto in use ------------------------------------------------------------------------

function subtle() {
  return globalThis.crypto && globalThis.crypto.subtle ? globalThis.crypto.subtle : null;
}

async function sha256(bytes) {
  const s = subtle();
  if (s) return new Uint8Array(await s.digest("SHA-256", bytes));
  return sha256js(bytes);
}

async function hmacFactory(seed) {
  const s = subtle();
  if (s) {
    const key = await s.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return async (msg) => new Uint8Array(await s.sign("HMAC", key, enc.encode(msg)));
  }
  return async (msg) => hmacSha256js(seed, enc.encode(msg));
}

/** The seats' seeds of a roll: a random one for the page's "random" button (16 characters). */
export function randomSeatSeed() {
  const abc = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => abc[b % abc.length]).join("");
}

/** The roll [a, b] for `ply` and `attempt`, exactly as docs/dice.md reads it (`seeds`: the
 * seats' seeds [S0, S1], or null for a room from before them). */
export async function rollFromSeed(hmac, roomId, ply, attempt, seeds = null) {
  const base = attempt === 0 ? `${roomId}:${ply}` : `${roomId}:${ply}:${attempt}`;
  const message = seeds ? `${base}:${seeds[0]}:${seeds[1]}` : base;
  const dice = [];
  for (let block = 0; block < 1000; block++) {
    const bytes = await hmac(block === 0 ? message : `${message}#${block}`);
    for (const b of bytes) {
      if (b < 252) {
        dice.push((b % 6) + 1);
        if (dice.length === 2) return dice;
      }
    }
  }
  throw new Error("no dice in the stream");
}

/**
 * Verifies a finished room: {commitmentOk, rows: [{ply, shown, computed, ok}], ok}.
 * An opening roll that is a tie is refused by the game and re-rolled with the next attempt,
 * so the shown opening roll is the first attempt that is not a tie. Openings are at ply 0 and,
 * in a match, wherever a new game starts; a computed tie where a different roll is shown can
 * only be such a refused roll (any other roll accepts a double), so it is skipped there too.
 */
export async function verifyDice(roomId, seedHex, commitment, rolls, useFallback = false,
  seeds = null) {
  const seed = hexToBytes(seedHex);
  const digest = useFallback ? sha256js(seed) : await sha256(seed);
  const commitmentOk = bytesToHex(digest) === String(commitment || "").toLowerCase();
  const hmac = useFallback
    ? async (msg) => hmacSha256js(seed, enc.encode(msg))
    : await hmacFactory(seed);
  const attempts = new Map();
  const rows = [];
  for (const r of rolls) {
    let attempt = attempts.get(r.ply) || 0;
    let computed;
    for (;;) {
      computed = await rollFromSeed(hmac, roomId, r.ply, attempt, seeds);
      attempt += 1;
      const tie = computed[0] === computed[1];
      if (tie && (r.ply === 0 || r.dice[0] !== r.dice[1]) && attempt < 100) continue;
      break;
    }
    attempts.set(r.ply, attempt);
    const ok = computed[0] === r.dice[0] && computed[1] === r.dice[1];
    rows.push({ ply: r.ply, shown: r.dice, computed, ok });
  }
  return { commitmentOk, rows, ok: commitmentOk && rows.every((x) => x.ok) };
}
