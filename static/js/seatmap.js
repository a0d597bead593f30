/* Flight seat picker: selection limits, keyboard moves, and the live seat map (the
 * websocket and its resyncs are live-seats.js, shared with the event picker).
 */
(function () {
  "use strict";
  var form = document.getElementById("seat-form");
  if (!form) return;

  var maxSeats = parseInt(form.dataset.max, 10);
  var farePrice = parseFloat(form.dataset.farePrice);
  var currency = form.dataset.currency;
  var inputs = Array.prototype.slice.call(form.querySelectorAll("input.seat-input"));
  var bySeat = {};
  inputs.forEach(function (input) { bySeat[input.dataset.seat] = input; });
  var selection = document.getElementById("selection");
  var notice = document.getElementById("seat-notice");

  function isMine(input) { return input.dataset.mine === "1"; }
  function isFree(input) { return input.dataset.status !== "taken"; }
  function chosen() { return inputs.filter(function (i) { return i.checked; }); }
  // Amounts as the page's language writes them (1.234,00 € / 1 234,00 ₽ / €1,234.00).
  var moneyFormat = new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "currency", currency: currency });
  function money(amount) { return moneyFormat.format(amount); }

  inputs.forEach(function (input) {
    input.dataset.status = input.disabled && isMine(input) ? "taken" : "free";
  });

  function describe(input) {
    var state = !isMine(input) ? gettext("other fare class") : !isFree(input) ? gettext("taken") : input.checked ? gettext("selected") : gettext("free");
    input.setAttribute("aria-label", input.dataset.desc + ", " + state);
  }

  var limitNote = document.getElementById("seat-limit");
  var barSelection = document.getElementById("bar-selection");
  var storeKey = "seatkeeper:picker:" + form.dataset.flight + ":" + form.dataset.fareClass + ":" + maxSeats;

  // The exit-row conditions to confirm: shown (and required) only while an exit seat is picked.
  var exitConditions = document.getElementById("exit-row-conditions");
  function showExitConditions(picked) {
    if (!exitConditions) return;
    var exitPicked = picked.some(function (i) { return i.dataset.exit === "1"; });
    var box = exitConditions.querySelector("input");
    exitConditions.hidden = !exitPicked;
    box.required = exitPicked;
    if (!exitPicked) box.checked = false;
  }

  function refresh() {
    var picked = chosen();
    var full = picked.length >= maxSeats;
    inputs.forEach(function (input) {
      if (!isMine(input)) return;
      // Taken seats are disabled; when the party is complete the others stay focusable but
      // aria-disabled, so a click on one can say why nothing happened.
      input.disabled = !isFree(input);
      if (full && !input.checked && isFree(input)) input.setAttribute("aria-disabled", "true");
      else input.removeAttribute("aria-disabled");
      input.parentNode.classList.toggle("taken", !isFree(input));
      input.parentNode.classList.toggle("selected", input.checked);
      input.parentNode.classList.toggle("full", full && !input.checked && isFree(input));
      describe(input);
    });
    if (!full) limitNote.textContent = "";
    roving();
    showExitConditions(picked);
    if (!picked.length) {
      selection.textContent = interpolate(gettext("No seat chosen yet (0 of %(max)s)."), { max: maxSeats }, true);
      barSelection.textContent = interpolate(ngettext("0 of %(max)s seat", "0 of %(max)s seats", maxSeats), { max: maxSeats }, true);
      return;
    }
    var total = picked.reduce(function (sum, i) { return sum + farePrice + parseFloat(i.dataset.surcharge); }, 0);
    var seatList = picked.map(function (i) { return i.dataset.seat; }).join(", ");
    var amount = money(total);
    selection.textContent = interpolate(gettext("Seats %(seats)s (%(count)s of %(max)s), %(total)s."),
      { seats: seatList, count: picked.length, max: maxSeats, total: amount }, true);
    barSelection.textContent = seatList + " · " + amount;
  }

  // The fare choice (nested booking classes): the running total uses the chosen class's price.
  Array.prototype.forEach.call(form.querySelectorAll('input[name="booking_class"]'), function (radio) {
    if (radio.checked) farePrice = parseFloat(radio.dataset.price);
    radio.addEventListener("change", function () { farePrice = parseFloat(radio.dataset.price); refresh(); });
  });

  // One Tab stop for the whole grid (roving tabindex): the seat last focused, else the first
  // chosen seat, else the first free one.
  var current = null;
  function roving() {
    var focusable = inputs.filter(function (i) { return !i.disabled; });
    if (!current || current.disabled) {
      current = chosen()[0] || focusable[0] || null;
    }
    inputs.forEach(function (i) { i.tabIndex = i === current ? 0 : -1; });
  }
  form.addEventListener("focusin", function (event) {
    if (event.target.classList && event.target.classList.contains("seat-input")) {
      current = event.target;
      roving();
    }
  });

  function save() {
    try {
      sessionStorage.setItem(storeKey, JSON.stringify({
        seats: chosen().map(function (i) { return i.dataset.seat; }),
        names: Array.prototype.map.call(form.querySelectorAll("input[name=names]"), function (i) { return i.value; })
      }));
    } catch (e) { /* storage off: nothing kept */ }
  }
  function restore() {
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(storeKey) || "null"); } catch (e) { saved = null; }
    if (!saved) return;
    (saved.seats || []).slice(0, maxSeats).forEach(function (seatNo) {
      var input = bySeat[seatNo];
      if (input && isMine(input) && isFree(input)) input.checked = true;
    });
    var nameInputs = form.querySelectorAll("input[name=names]");
    (saved.names || []).forEach(function (name, n) { if (nameInputs[n] && !nameInputs[n].value) nameInputs[n].value = name; });
  }

  form.addEventListener("click", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("seat-input")) return;
    // Only unpicked seats are aria-disabled (the click has already ticked it: undo that).
    if (input.getAttribute("aria-disabled") === "true") {
      event.preventDefault();
      limitNote.textContent = interpolate(ngettext(
        "You have already chosen %(max)s seat for %(max)s passenger. Unpick it to choose %(seat)s instead.",
        "You have already chosen %(max)s seats for %(max)s passengers. Unpick one of them to choose %(seat)s instead.",
        maxSeats), { max: maxSeats, seat: input.dataset.seat }, true);
    }
  });

  form.addEventListener("change", function (event) {
    if (event.target.classList.contains("seat-input")) {
      notice.textContent = "";
      refresh();
      save();
    }
  });
  form.addEventListener("input", function (event) {
    if (event.target.name === "names") save();
  });

  // Arrow keys move between the seats one can pick, like in a grid: left/right along the
  // row, up/down to the same letter in the nearest row where it is free.  Tab leaves the map.
  // Enter picks a seat like Space does; it never submits the form.
  form.addEventListener("keydown", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("seat-input")) return;
    if (event.key === "Enter") {
      event.preventDefault();
      input.click();
      return;
    }
    var keys = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    var move = keys[event.key];
    if (!move) return;
    event.preventDefault();
    var enabled = function (i) { return i && !i.disabled; };
    var target = null;
    if (move[1]) {
      var cells = Array.prototype.slice.call(input.closest(".seat-row").querySelectorAll("input.seat-input"));
      for (var c = cells.indexOf(input) + move[1]; c >= 0 && c < cells.length && !target; c += move[1]) {
        if (enabled(cells[c])) target = cells[c];
      }
    } else {
      var rows = Array.prototype.slice.call(form.querySelectorAll(".seat-row[role=group]"));
      var letter = input.dataset.seat.slice(-1);
      for (var r = rows.indexOf(input.closest(".seat-row")) + move[0]; r >= 0 && r < rows.length && !target; r += move[0]) {
        var candidate = rows[r].querySelector('input[data-seat$="' + letter + '"]');
        if (enabled(candidate)) target = candidate;
      }
    }
    if (target) target.focus();
  });

  form.addEventListener("submit", function (event) {
    if (chosen().length !== maxSeats) {
      event.preventDefault();
      notice.textContent = interpolate(ngettext("Pick %(max)s seat first.", "Pick %(max)s seats first.", maxSeats), { max: maxSeats }, true);
      return;
    }
    try { sessionStorage.removeItem(storeKey); } catch (e) { /* nothing kept */ }
  });

  // --- live updates ---------------------------------------------------------------------

  function apply(seats) {
    var lost = [];
    Object.keys(seats).forEach(function (seatNo) {
      var input = bySeat[seatNo];
      if (!input || !isMine(input)) return;
      var free = seats[seatNo] === "AVAILABLE";
      if (!free && input.checked) {
        input.checked = false;
        lost.push(seatNo);
      }
      input.dataset.status = free ? "free" : "taken";
    });
    if (lost.length) {
      notice.textContent = interpolate(gettext("Seat %(seats)s was just taken by someone else. Please pick another."), { seats: lost.join(", ") }, true);
    }
    refresh();
  }

  restore();
  refresh();
  window.SeatkeeperLive.start({ form: form, apply: apply });
})();
