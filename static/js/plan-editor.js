/* The admin's seat-map editor (templates/admin/events/venue/plan_editor.html; issue 29,
 * item 5).  One section is drawn at a time, on its grid of cells.  Drag across empty cells
 * to add a row; click a seat (or focus it and press Enter or Space) to apply the chosen tool:
 * an aisle after it (the columns to its right move one step out; again closes it),
 * accessible, restricted view, a quality score, or removal.  Curve and angle bend the rows
 * of the section by column, so no two seats ever meet.  Saving posts where each seat ends
 * up (events/plan_drawn.py); the server checks the whole plan and saves all or nothing.
 *
 * No library, no CDN: plain DOM and SVG.
 */
(function () {
  "use strict";
  var C = 24; // one cell, in SVG units
  var SVG = "http://www.w3.org/2000/svg";

  function fill(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (_, key) {
      return values[key] === undefined ? "" : String(values[key]);
    });
  }

  function nextLabel(label) {
    if (/^\d+$/.test(label)) return String(parseInt(label, 10) + 1);
    if (/^[A-Ya-y]$/.test(label)) return String.fromCharCode(label.charCodeAt(0) + 1);
    return label;
  }

  function setUp() {
    var canvas = document.getElementById("pe-canvas");
    if (!canvas) return;
    var drawing = JSON.parse(document.getElementById("pe-drawing").textContent);
    var words = JSON.parse(document.getElementById("pe-strings").textContent);
    var $ = function (id) { return document.getElementById(id); };
    var sectionSelect = $("pe-section"), status = $("pe-status");
    var rowLabel = $("pe-row-label");
    var current = 0, drag = null, focusKey = null;
    if (!Array.isArray(drawing.sections)) drawing.sections = [];

    function section() { return drawing.sections[current]; }
    function seats() { return section() ? section().seats : []; }
    function say(text) { status.textContent = text; }
    function tool() { return document.querySelector("input[name=pe-tool]:checked").value; }
    function at(x, y) {
      return seats().filter(function (s) { return s.x === x && s.y === y; })[0];
    }
    function extent() {
      var cols = 24, lines = 10;
      seats().forEach(function (s) {
        cols = Math.max(cols, s.x + 4);
        lines = Math.max(lines, s.y + 3);
      });
      return { cols: cols, lines: lines };
    }
    function seatName(s) {
      var name = fill(words.seat, { row: s.row, number: s.number });
      if (s.accessible) name += ", " + words.accessible;
      if (s.restricted_view) name += ", " + words.restricted;
      if (s.quality !== null && s.quality !== undefined && s.quality !== "") {
        name += ", " + fill(words.quality, { q: s.quality });
      }
      return name;
    }

    function fillSections() {
      sectionSelect.textContent = "";
      drawing.sections.forEach(function (s, i) {
        var option = document.createElement("option");
        option.value = String(i);
        option.textContent = s.name;
        sectionSelect.appendChild(option);
      });
      sectionSelect.value = String(current);
    }

    function suggestRow() {
      var labels = seats().map(function (s) { return s.row; });
      if (!labels.length) { rowLabel.value = "1"; return; }
      var last = labels.reduce(function (a, b) {
        var na = parseInt(a, 10), nb = parseInt(b, 10);
        if (!isNaN(na) && !isNaN(nb)) return nb > na ? b : a;
        return b > a ? b : a;
      });
      rowLabel.value = nextLabel(last);
    }

    function el(name, attrs) {
      var node = document.createElementNS(SVG, name);
      Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      return node;
    }

    function render() {
      var size = extent();
      canvas.textContent = "";
      canvas.setAttribute("viewBox", "0 0 " + size.cols * C + " " + size.lines * C);
      canvas.setAttribute("data-cols", String(size.cols));
      canvas.setAttribute("data-lines", String(size.lines));
      canvas.setAttribute(
        "aria-label", section() ? fill(words.map, { name: section().name }) : words.noSection
      );
      var grid = el("g", { "aria-hidden": "true" });
      for (var y = 1; y <= size.lines; y++) {
        for (var x = 1; x <= size.cols; x++) {
          grid.appendChild(el("rect", {
            "class": "pe-cell", x: (x - 1) * C, y: (y - 1) * C, width: C, height: C,
          }));
        }
      }
      canvas.appendChild(grid);
      var ordered = seats().slice().sort(function (a, b) { return a.y - b.y || a.x - b.x; });
      ordered.forEach(function (s) {
        var key = s.row + "/" + s.number;
        var g = el("g", {
          "class": "pe-seat" + (s.accessible ? " accessible" : "") +
            (s.restricted_view ? " restricted" : ""),
          tabindex: "0", role: "button", "aria-label": seatName(s),
          "data-row": s.row, "data-number": String(s.number),
        });
        g.appendChild(el("rect", {
          x: (s.x - 1) * C + 2, y: (s.y - 1) * C + 2, width: C - 4, height: C - 4, rx: 4,
        }));
        var text = el("text", { x: (s.x - 0.5) * C, y: (s.y - 0.5) * C + 4, "aria-hidden": "true" });
        text.textContent = s.accessible ? "A" : s.restricted_view ? "R" : String(s.number);
        g.appendChild(text);
        var title = el("title");
        title.textContent = seatName(s);
        g.appendChild(title);
        g.addEventListener("click", function () { apply(s); });
        g.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            apply(s);
          }
        });
        canvas.appendChild(g);
        if (key === focusKey) g.focus();
      });
      focusKey = null;
    }

    function addRow(x1, x2, y) {
      if (!section()) { say(words.noSection); return; }
      var label = (rowLabel.value || "").trim().toUpperCase();
      var numbers = seats().filter(function (s) { return s.row === label; })
        .map(function (s) { return s.number; });
      var number = numbers.length ? Math.max.apply(null, numbers) : 0;
      var added = 0;
      for (var x = Math.min(x1, x2); x <= Math.max(x1, x2); x++) {
        if (at(x, y)) continue;
        number += 1;
        added += 1;
        seats().push({ row: label, number: number, x: x, y: y,
          accessible: false, restricted_view: false, quality: null });
      }
      if (!added) { say(words.noRoom); render(); return; }
      say(fill(words.added, { row: label, n: added }));
      rowLabel.value = nextLabel(label);
      render();
    }

    function toggleAisle(seat) {
      var after = seat.x;
      var right = seats().filter(function (s) { return s.x > after; });
      var gapEmpty = !seats().some(function (s) { return s.x === after + 1; });
      if (gapEmpty && right.length) {
        right.forEach(function (s) { s.x -= 1; });
        say(fill(words.aisleClosed, { number: seat.number }));
      } else {
        right.forEach(function (s) { s.x += 1; });
        say(fill(words.aisle, { number: seat.number }));
      }
    }

    function apply(seat) {
      var which = tool();
      focusKey = seat.row + "/" + seat.number;
      if (which === "aisle") toggleAisle(seat);
      else if (which === "accessible") { seat.accessible = !seat.accessible; say(words.changed); }
      else if (which === "restricted") {
        seat.restricted_view = !seat.restricted_view;
        say(words.changed);
      } else if (which === "quality") {
        var value = $("pe-quality").value.trim();
        seat.quality = value === "" ? null : parseFloat(value);
        say(words.changed);
      } else if (which === "remove") {
        section().seats = seats().filter(function (s) { return s !== seat; });
        focusKey = null;
        say(words.removed);
      } else return;
      render();
    }

    function reshape() {
      var list = seats();
      if (!list.length) return;
      var xs = list.map(function (s) { return s.x; });
      var low = Math.min.apply(null, xs), high = Math.max.apply(null, xs);
      var middle = (low + high) / 2, half = Math.max(1, (high - low) / 2);
      var curve = parseInt($("pe-curve").value, 10) || 0;
      var slope = (parseInt($("pe-angle").value, 10) || 0) / 10;
      // One shift per column, the same for every row: two seats never land on one cell.
      function shift(x) {
        var bend = curve - Math.round(curve * Math.pow((x - middle) / half, 2));
        var tilt = slope >= 0 ? Math.round(slope * (x - low)) : Math.round(-slope * (high - x));
        return bend + tilt;
      }
      list.forEach(function (s) { s.y += shift(s.x); });
      var top = Math.min.apply(null, list.map(function (s) { return s.y; }));
      list.forEach(function (s) { s.y -= top - 1; });
      say(words.shaped);
      render();
    }

    function cellAt(event) {
      var box = canvas.getBoundingClientRect();
      var cols = parseInt(canvas.getAttribute("data-cols"), 10);
      var lines = parseInt(canvas.getAttribute("data-lines"), 10);
      var x = Math.floor((event.clientX - box.left) / box.width * cols) + 1;
      var y = Math.floor((event.clientY - box.top) / box.height * lines) + 1;
      return { x: Math.max(1, Math.min(cols, x)), y: Math.max(1, Math.min(lines, y)) };
    }

    function preview(from, to) {
      var old = canvas.querySelector(".pe-preview");
      if (old) old.remove();
      var x = Math.min(from.x, to.x);
      canvas.appendChild(el("rect", {
        "class": "pe-preview", x: (x - 1) * C, y: (from.y - 1) * C,
        width: (Math.abs(to.x - from.x) + 1) * C, height: C, "aria-hidden": "true",
      }));
    }

    canvas.addEventListener("pointerdown", function (event) {
      if (tool() !== "row" || event.target.closest(".pe-seat")) return;
      drag = { from: cellAt(event) };
      canvas.setPointerCapture(event.pointerId);
      preview(drag.from, drag.from);
      event.preventDefault();
    });
    canvas.addEventListener("pointermove", function (event) {
      if (drag) preview(drag.from, { x: cellAt(event).x, y: drag.from.y });
    });
    canvas.addEventListener("pointerup", function (event) {
      if (!drag) return;
      var from = drag.from, to = cellAt(event);
      drag = null;
      addRow(from.x, to.x, from.y);
    });

    sectionSelect.addEventListener("change", function () {
      current = parseInt(sectionSelect.value, 10) || 0;
      suggestRow();
      render();
    });
    $("pe-add-section").addEventListener("click", function () {
      var name = $("pe-new-section").value.trim();
      if (!name) { $("pe-new-section").focus(); return; }
      drawing.sections.push({ name: name, seats: [] });
      current = drawing.sections.length - 1;
      $("pe-new-section").value = "";
      fillSections();
      suggestRow();
      render();
    });
    $("pe-add-row").addEventListener("click", function () {
      var x = parseInt($("pe-row-x").value, 10) || 1;
      var y = parseInt($("pe-row-y").value, 10) || 1;
      var n = Math.max(1, Math.min(500, parseInt($("pe-row-n").value, 10) || 1));
      addRow(x, x + n - 1, y);
      $("pe-row-y").value = String(y + 1);
    });
    $("pe-shape").addEventListener("click", reshape);
    $("pe-form").addEventListener("submit", function () {
      drawing.stage_side = $("pe-stage").value;
      var kept = drawing.sections.filter(function (s) { return s.seats.length; });
      $("pe-drawing-field").value = JSON.stringify({
        stage_side: drawing.stage_side, sections: kept,
      });
    });

    fillSections();
    suggestRow();
    render();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
