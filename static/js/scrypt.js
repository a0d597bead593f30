// scrypt (RFC 7914) for the waiting room's proof-of-work: PBKDF2-HMAC-SHA256 from WebCrypto,
// Salsa20/8, BlockMix and ROMix written out here.  No third-party code; the server checks
// every proof with Python's hashlib.scrypt, and tests/waitroom/test_proof_of_work_js.py runs
// this file under Node against hashlib on fixed inputs.
(function (root) {
  "use strict";

  function salsa208(X) {
    var x0 = X[0], x1 = X[1], x2 = X[2], x3 = X[3], x4 = X[4], x5 = X[5], x6 = X[6], x7 = X[7];
    var x8 = X[8], x9 = X[9], x10 = X[10], x11 = X[11], x12 = X[12], x13 = X[13], x14 = X[14], x15 = X[15];
    var u;
    for (var i = 0; i < 8; i += 2) {
      u = x0 + x12; x4 ^= (u << 7) | (u >>> 25);
      u = x4 + x0; x8 ^= (u << 9) | (u >>> 23);
      u = x8 + x4; x12 ^= (u << 13) | (u >>> 19);
      u = x12 + x8; x0 ^= (u << 18) | (u >>> 14);
      u = x5 + x1; x9 ^= (u << 7) | (u >>> 25);
      u = x9 + x5; x13 ^= (u << 9) | (u >>> 23);
      u = x13 + x9; x1 ^= (u << 13) | (u >>> 19);
      u = x1 + x13; x5 ^= (u << 18) | (u >>> 14);
      u = x10 + x6; x14 ^= (u << 7) | (u >>> 25);
      u = x14 + x10; x2 ^= (u << 9) | (u >>> 23);
      u = x2 + x14; x6 ^= (u << 13) | (u >>> 19);
      u = x6 + x2; x10 ^= (u << 18) | (u >>> 14);
      u = x15 + x11; x3 ^= (u << 7) | (u >>> 25);
      u = x3 + x15; x7 ^= (u << 9) | (u >>> 23);
      u = x7 + x3; x11 ^= (u << 13) | (u >>> 19);
      u = x11 + x7; x15 ^= (u << 18) | (u >>> 14);
      u = x0 + x3; x1 ^= (u << 7) | (u >>> 25);
      u = x1 + x0; x2 ^= (u << 9) | (u >>> 23);
      u = x2 + x1; x3 ^= (u << 13) | (u >>> 19);
      u = x3 + x2; x0 ^= (u << 18) | (u >>> 14);
      u = x5 + x4; x6 ^= (u << 7) | (u >>> 25);
      u = x6 + x5; x7 ^= (u << 9) | (u >>> 23);
      u = x7 + x6; x4 ^= (u << 13) | (u >>> 19);
      u = x4 + x7; x5 ^= (u << 18) | (u >>> 14);
      u = x10 + x9; x11 ^= (u << 7) | (u >>> 25);
      u = x11 + x10; x8 ^= (u << 9) | (u >>> 23);
      u = x8 + x11; x9 ^= (u << 13) | (u >>> 19);
      u = x9 + x8; x10 ^= (u << 18) | (u >>> 14);
      u = x15 + x14; x12 ^= (u << 7) | (u >>> 25);
      u = x12 + x15; x13 ^= (u << 9) | (u >>> 23);
      u = x13 + x12; x14 ^= (u << 13) | (u >>> 19);
      u = x14 + x13; x15 ^= (u << 18) | (u >>> 14);
    }
    // Uint32Array stores wrap the sums modulo 2^32.
    X[0] += x0; X[1] += x1; X[2] += x2; X[3] += x3; X[4] += x4; X[5] += x5; X[6] += x6; X[7] += x7;
    X[8] += x8; X[9] += x9; X[10] += x10; X[11] += x11; X[12] += x12; X[13] += x13; X[14] += x14; X[15] += x15;
  }

  // BlockMix_{Salsa20/8, r}: B (32r words) -> Y, even blocks first, then odd ones.
  function blockMix(B, Y, X, r) {
    X.set(B.subarray((2 * r - 1) * 16, 2 * r * 16));
    for (var i = 0; i < 2 * r; i++) {
      for (var k = 0; k < 16; k++) X[k] ^= B[i * 16 + k];
      salsa208(X);
      Y.set(X, ((i & 1) ? r + (i >> 1) : (i >> 1)) * 16);
    }
  }

  // ROMix: N blocks of memory (128 r N bytes): what makes each try cost memory, not only time.
  function roMix(B, N, r) {
    var len = 32 * r;
    var V = new Uint32Array(len * N);
    var X = new Uint32Array(B);
    var Y = new Uint32Array(len);
    var T = new Uint32Array(16);
    var swap, i, k, j;
    for (i = 0; i < N; i++) {
      V.set(X, i * len);
      blockMix(X, Y, T, r);
      swap = X; X = Y; Y = swap;
    }
    for (i = 0; i < N; i++) {
      j = X[(2 * r - 1) * 16] & (N - 1);
      for (k = 0; k < len; k++) X[k] ^= V[j * len + k];
      blockMix(X, Y, T, r);
      swap = X; X = Y; Y = swap;
    }
    B.set(X);
  }

  function toWords(bytes) {
    var words = new Uint32Array(bytes.length / 4);
    for (var i = 0; i < words.length; i++) {
      words[i] = bytes[4 * i] | (bytes[4 * i + 1] << 8) | (bytes[4 * i + 2] << 16) | (bytes[4 * i + 3] << 24);
    }
    return words;
  }

  function toBytes(words, bytes) {
    for (var i = 0; i < words.length; i++) {
      bytes[4 * i] = words[i] & 255;
      bytes[4 * i + 1] = (words[i] >>> 8) & 255;
      bytes[4 * i + 2] = (words[i] >>> 16) & 255;
      bytes[4 * i + 3] = (words[i] >>> 24) & 255;
    }
  }

  function subtle() {
    var c = root.crypto || (typeof globalThis !== "undefined" && globalThis.crypto);
    if (!c || !c.subtle) throw new Error("WebCrypto is not available (needs https or localhost)");
    return c.subtle;
  }

  function pbkdf2(key, salt, dkLen) {
    return subtle()
      .deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: salt, iterations: 1 }, key, dkLen * 8)
      .then(function (bits) { return new Uint8Array(bits); });
  }

  // A password imported once serves every try of a proof (the challenge does not change).
  function importPassword(password) {
    return subtle().importKey("raw", password, "PBKDF2", false, ["deriveBits"]);
  }

  function scryptWithKey(key, salt, N, r, p, dkLen) {
    return pbkdf2(key, salt, p * 128 * r).then(function (B) {
      var size = 128 * r;
      for (var i = 0; i < p; i++) {
        var words = toWords(B.subarray(i * size, (i + 1) * size));
        roMix(words, N, r);
        toBytes(words, B.subarray(i * size, (i + 1) * size));
      }
      return pbkdf2(key, B, dkLen);
    });
  }

  function scrypt(password, salt, N, r, p, dkLen) {
    return importPassword(password).then(function (key) {
      return scryptWithKey(key, salt, N, r, p, dkLen);
    });
  }

  function leadingZeroBits(bytes) {
    var bits = 0;
    for (var i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0) { bits += 8; continue; }
      var b = bytes[i];
      while ((b & 128) === 0) { bits++; b <<= 1; }
      break;
    }
    return bits;
  }

  // Tries solutions 0, 1, 2, ... until scrypt(challenge, solution) starts with `difficulty`
  // zero bits; about 2^difficulty tries.  onProgress(tries) after each.
  async function solve(challenge, difficulty, params, onProgress) {
    var encoder = new TextEncoder();
    var key = await importPassword(encoder.encode(challenge));
    for (var n = 0; ; n++) {
      var digest = await scryptWithKey(key, encoder.encode(String(n)), params.n, params.r, params.p, params.dkLen);
      if (onProgress) onProgress(n + 1);
      if (leadingZeroBits(digest) >= difficulty) return { solution: String(n), tries: n + 1 };
    }
  }

  var api = { scrypt: scrypt, solve: solve, leadingZeroBits: leadingZeroBits };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.SeatkeeperScrypt = api;
})(typeof window !== "undefined" ? window : globalThis);
