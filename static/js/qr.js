/* A small QR code encoder (ISO/IEC 18004): byte mode, error correction level M, versions 1-40,
 * the mask with the lowest penalty.  The ticket page draws its rotating code with it, on the
 * phone, without a network and without a CDN.  tests/pages/test_live_ticket_browser.py checks
 * its modules against the Python `qrcode` package and decodes what it draws.
 *
 * SeatkeeperQR.encode(text) -> {version, mask, size, modules: [[bool]]} (row-major, true = dark)
 * SeatkeeperQR.svg(text, label) -> an <svg> element with role="img" and the label. */
(function (global) {
  "use strict";

  // Level M, by version: error correction codewords per block, and number of blocks.
  var ECC_PER_BLOCK = [-1, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26,
    26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28];
  var NUM_BLOCKS = [-1, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17,
    18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49];
  var FORMAT_BITS_M = 0;

  function rawDataModules(ver) {
    var result = (16 * ver + 128) * ver + 64;
    if (ver >= 2) {
      var numAlign = Math.floor(ver / 7) + 2;
      result -= (25 * numAlign - 10) * numAlign - 55;
      if (ver >= 7) result -= 36;
    }
    return result;
  }

  function dataCodewords(ver) {
    return Math.floor(rawDataModules(ver) / 8) - ECC_PER_BLOCK[ver] * NUM_BLOCKS[ver];
  }

  // --- Reed-Solomon over GF(2^8), polynomial 0x11D ---
  function gfMul(x, y) {
    var z = 0;
    for (var i = 7; i >= 0; i--) {
      z = (z << 1) ^ ((z >>> 7) * 0x11d);
      z ^= ((y >>> i) & 1) * x;
    }
    return z & 0xff;
  }

  function rsDivisor(degree) {
    var result = [];
    for (var i = 0; i < degree - 1; i++) result.push(0);
    result.push(1);
    var root = 1;
    for (var k = 0; k < degree; k++) {
      for (var j = 0; j < result.length; j++) {
        result[j] = gfMul(result[j], root);
        if (j + 1 < result.length) result[j] ^= result[j + 1];
      }
      root = gfMul(root, 0x02);
    }
    return result;
  }

  function rsRemainder(data, divisor) {
    var result = divisor.map(function () { return 0; });
    data.forEach(function (b) {
      var factor = b ^ result.shift();
      result.push(0);
      divisor.forEach(function (coef, i) { result[i] ^= gfMul(coef, factor); });
    });
    return result;
  }

  function utf8(text) {
    var bytes = [];
    var encoded = unescape(encodeURIComponent(text));
    for (var i = 0; i < encoded.length; i++) bytes.push(encoded.charCodeAt(i));
    return bytes;
  }

  function dataBits(bytes, ver) {
    var bits = [];
    function put(value, length) {
      for (var i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
    }
    put(4, 4); // byte mode
    put(bytes.length, ver <= 9 ? 8 : 16);
    bytes.forEach(function (b) { put(b, 8); });
    var capacity = dataCodewords(ver) * 8;
    put(0, Math.min(4, capacity - bits.length));
    put(0, (8 - (bits.length % 8)) % 8);
    for (var pad = 0xec; bits.length < capacity; pad ^= 0xec ^ 0x11) put(pad, 8);
    var codewords = [];
    for (var i = 0; i < bits.length; i += 8) {
      var byte = 0;
      for (var j = 0; j < 8; j++) byte = (byte << 1) | bits[i + j];
      codewords.push(byte);
    }
    return codewords;
  }

  function interleave(data, ver) {
    var numBlocks = NUM_BLOCKS[ver], eccLen = ECC_PER_BLOCK[ver];
    var rawCodewords = Math.floor(rawDataModules(ver) / 8);
    var numShort = numBlocks - (rawCodewords % numBlocks);
    var shortLen = Math.floor(rawCodewords / numBlocks);
    var divisor = rsDivisor(eccLen);
    var blocks = [];
    for (var i = 0, k = 0; i < numBlocks; i++) {
      var dat = data.slice(k, k + shortLen - eccLen + (i < numShort ? 0 : 1));
      k += dat.length;
      var ecc = rsRemainder(dat, divisor);
      if (i < numShort) dat.push(0);
      blocks.push(dat.concat(ecc));
    }
    var result = [];
    for (var c = 0; c < blocks[0].length; c++) {
      blocks.forEach(function (block, j) {
        if (c !== shortLen - eccLen || j >= numShort) result.push(block[c]);
      });
    }
    return result;
  }

  function alignmentPositions(ver) {
    if (ver === 1) return [];
    var size = ver * 4 + 17;
    var numAlign = Math.floor(ver / 7) + 2;
    var step = Math.floor((ver * 8 + numAlign * 3 + 5) / (numAlign * 4 - 4)) * 2;
    var result = [6];
    for (var pos = size - 7; result.length < numAlign; pos -= step) result.splice(1, 0, pos);
    return result;
  }

  function Grid(ver) {
    this.size = ver * 4 + 17;
    this.modules = [];
    this.isFunction = [];
    for (var y = 0; y < this.size; y++) {
      this.modules.push(new Array(this.size).fill(false));
      this.isFunction.push(new Array(this.size).fill(false));
    }
  }

  Grid.prototype.fn = function (x, y, dark) {
    this.modules[y][x] = dark;
    this.isFunction[y][x] = true;
  };

  Grid.prototype.drawFunctionPatterns = function (ver) {
    var size = this.size, self = this;
    for (var i = 0; i < size; i++) {
      this.fn(6, i, i % 2 === 0);
      this.fn(i, 6, i % 2 === 0);
    }
    [[3, 3], [size - 4, 3], [3, size - 4]].forEach(function (c) {
      for (var dy = -4; dy <= 4; dy++) {
        for (var dx = -4; dx <= 4; dx++) {
          var x = c[0] + dx, y = c[1] + dy;
          if (x < 0 || x >= size || y < 0 || y >= size) continue;
          var dist = Math.max(Math.abs(dx), Math.abs(dy));
          self.fn(x, y, dist !== 2 && dist !== 4);
        }
      }
    });
    var align = alignmentPositions(ver), n = align.length;
    for (var a = 0; a < n; a++) {
      for (var b = 0; b < n; b++) {
        if ((a === 0 && b === 0) || (a === 0 && b === n - 1) || (a === n - 1 && b === 0)) continue;
        for (var ddy = -2; ddy <= 2; ddy++) {
          for (var ddx = -2; ddx <= 2; ddx++) {
            this.fn(align[a] + ddx, align[b] + ddy, Math.max(Math.abs(ddx), Math.abs(ddy)) !== 1);
          }
        }
      }
    }
    this.drawFormatBits(0); // reserve the areas; redrawn with the chosen mask
    if (ver >= 7) {
      var rem = ver;
      for (var r = 0; r < 12; r++) rem = (rem << 1) ^ ((rem >>> 11) * 0x1f25);
      var bits = (ver << 12) | rem;
      for (var v = 0; v < 18; v++) {
        var bit = ((bits >>> v) & 1) === 1;
        var p = size - 11 + (v % 3), q = Math.floor(v / 3);
        this.fn(p, q, bit);
        this.fn(q, p, bit);
      }
    }
  };

  Grid.prototype.drawFormatBits = function (mask) {
    var data = (FORMAT_BITS_M << 3) | mask;
    var rem = data;
    for (var i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
    var bits = ((data << 10) | rem) ^ 0x5412;
    var size = this.size;
    function bit(k) { return ((bits >>> k) & 1) === 1; }
    for (var a = 0; a <= 5; a++) this.fn(8, a, bit(a));
    this.fn(8, 7, bit(6));
    this.fn(8, 8, bit(7));
    this.fn(7, 8, bit(8));
    for (var b = 9; b < 15; b++) this.fn(14 - b, 8, bit(b));
    for (var c = 0; c < 8; c++) this.fn(size - 1 - c, 8, bit(c));
    for (var d = 8; d < 15; d++) this.fn(8, size - 15 + d, bit(d));
    this.fn(8, size - 8, true); // the dark module
  };

  Grid.prototype.drawCodewords = function (codewords) {
    var size = this.size, i = 0;
    for (var right = size - 1; right >= 1; right -= 2) {
      if (right === 6) right = 5;
      for (var vert = 0; vert < size; vert++) {
        for (var j = 0; j < 2; j++) {
          var x = right - j;
          var upward = ((right + 1) & 2) === 0;
          var y = upward ? size - 1 - vert : vert;
          if (!this.isFunction[y][x] && i < codewords.length * 8) {
            this.modules[y][x] = ((codewords[i >>> 3] >>> (7 - (i & 7))) & 1) === 1;
            i++;
          }
        }
      }
    }
  };

  var MASKS = [
    function (x, y) { return (x + y) % 2 === 0; },
    function (x, y) { return y % 2 === 0; },
    function (x) { return x % 3 === 0; },
    function (x, y) { return (x + y) % 3 === 0; },
    function (x, y) { return (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0; },
    function (x, y) { return ((x * y) % 2) + ((x * y) % 3) === 0; },
    function (x, y) { return (((x * y) % 2) + ((x * y) % 3)) % 2 === 0; },
    function (x, y) { return (((x + y) % 2) + ((x * y) % 3)) % 2 === 0; },
  ];

  Grid.prototype.applyMask = function (mask) {
    for (var y = 0; y < this.size; y++) {
      for (var x = 0; x < this.size; x++) {
        if (!this.isFunction[y][x] && MASKS[mask](x, y)) this.modules[y][x] = !this.modules[y][x];
      }
    }
  };

  // The standard's four penalty rules (runs, 2x2 blocks, finder-like patterns, balance).
  Grid.prototype.penalty = function () {
    var size = this.size, m = this.modules, total = 0, dark = 0;
    function lines(get) {
      for (var a = 0; a < size; a++) {
        var run = 1;
        for (var b = 1; b <= size; b++) {
          if (b < size && get(a, b) === get(a, b - 1)) {
            run++;
          } else {
            if (run >= 5) total += run - 2;
            run = 1;
          }
        }
        for (var c = 0; c + 10 < size; c++) {
          var s = "";
          for (var d = 0; d < 11; d++) s += get(a, c + d) ? "1" : "0";
          if (s === "10111010000" || s === "00001011101") total += 40;
        }
      }
    }
    lines(function (y, x) { return m[y][x]; });
    lines(function (x, y) { return m[y][x]; });
    for (var y = 0; y < size; y++) {
      for (var x = 0; x < size; x++) {
        if (m[y][x]) dark++;
        if (y + 1 < size && x + 1 < size && m[y][x] === m[y][x + 1] &&
            m[y][x] === m[y + 1][x] && m[y][x] === m[y + 1][x + 1]) total += 3;
      }
    }
    total += Math.floor(Math.abs(dark * 20 - size * size * 10) / (size * size)) * 10;
    return total;
  };

  function encode(text, forcedMask) {
    var bytes = utf8(text), ver;
    for (ver = 1; ver <= 40; ver++) {
      if (4 + (ver <= 9 ? 8 : 16) + bytes.length * 8 <= dataCodewords(ver) * 8) break;
    }
    if (ver > 40) throw new Error("too long for a QR code");
    var codewords = interleave(dataBits(bytes, ver), ver);
    var best = null;
    var masks = forcedMask === undefined ? [0, 1, 2, 3, 4, 5, 6, 7] : [forcedMask];
    masks.forEach(function (mask) {
      var grid = new Grid(ver);
      grid.drawFunctionPatterns(ver);
      grid.drawCodewords(codewords);
      grid.applyMask(mask);
      grid.drawFormatBits(mask);
      var score = grid.penalty();
      if (best === null || score < best.score) best = { score: score, mask: mask, grid: grid };
    });
    return { version: ver, mask: best.mask, size: best.grid.size, modules: best.grid.modules };
  }

  var SVG = "http://www.w3.org/2000/svg";

  function svg(text, label) {
    var qr = encode(text), quiet = 4, n = qr.size + quiet * 2, path = "";
    qr.modules.forEach(function (row, y) {
      row.forEach(function (dark, x) {
        if (dark) path += "M" + (x + quiet) + " " + (y + quiet) + "h1v1h-1z";
      });
    });
    var el = document.createElementNS(SVG, "svg");
    el.setAttribute("viewBox", "0 0 " + n + " " + n);
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", label);
    el.setAttribute("shape-rendering", "crispEdges");
    var background = document.createElementNS(SVG, "rect");
    background.setAttribute("width", n);
    background.setAttribute("height", n);
    background.setAttribute("fill", "#fff");
    var modules = document.createElementNS(SVG, "path");
    modules.setAttribute("d", path);
    modules.setAttribute("fill", "#000");
    el.appendChild(background);
    el.appendChild(modules);
    return el;
  }

  global.SeatkeeperQR = { encode: encode, svg: svg };
})(window);
