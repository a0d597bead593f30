/* Venue seat picker: seats of one price category per booking, keyboard moves across the
 * plan, and the live seat map (live-seats.js).
 *
 * Without JavaScript the plan is a list of checkboxes that posts as it is: the server works
 * out the category from the seats and refuses a mix with a message.
 */
(function () {
  "use strict";
  var form = document.getElementById("venue-form");
  if (!form) return;

  var maxSeats = parseInt(form.dataset.max, 10);
  var currency = form.dataset.currency;
  var inputs = Array.prototype.slice.call(form.querySelectorAll("input.seat-input"));
  var bySeat = {};
  inputs.forEach(function (input) { bySeat[input.dataset.seat] = input; });
  var categoryInput = form.querySelector("input[name=category]");
  var selection = document.getElementById("selection");
  var notice = document.getElementById("seat-notice");
  var limitNote = document.getElementById("seat-limit");
  var barSelection = document.getElementById("bar-selection");
  var storeKey = "seatkeeper:venue:" + form.dataset.event;
  var moneyFormat = new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "currency", currency: currency });

  inputs.forEach(function (input) { input.dataset.status = input.disabled ? "taken" : "free"; });

  function isFree(input) { return input.dataset.status !== "taken"; }
  function chosen() { return inputs.filter(function (i) { return i.checked; }); }
  function chosenCategory() { var c = chosen()[0]; return c ? c.dataset.category : ""; }
  // Why a free seat cannot join the other chosen seats: the party is complete, or it is of
  // another category ("" if it can).
  function reason(input) {
    if (!isFree(input)) return "";
    var others = chosen().filter(function (i) { return i !== input; });
    if (others.length && others[0].dataset.category !== input.dataset.category) return "category";
    if (others.length >= maxSeats) return "full";
    return "";
  }
  function blocked(input) { return input.checked ? "" : reason(input); }

  function describe(input) {
    var why = blocked(input);
    var state = !isFree(input) ? gettext("taken")
      : input.checked ? gettext("selected")
      : why === "category" ? gettext("free, another price category than your seats")
      : gettext("free");
    input.setAttribute("aria-label", input.dataset.desc + ", " + state);
  }

  function refresh() {
    var picked = chosen();
    inputs.forEach(function (input) {
      input.disabled = !isFree(input);
      var why = blocked(input);
      if (why) input.setAttribute("aria-disabled", "true");
      else input.removeAttribute("aria-disabled");
      var cell = input.parentNode;
      cell.classList.toggle("taken", !isFree(input));
      cell.classList.toggle("selected", input.checked);
      cell.classList.toggle("blocked", !!why);
      describe(input);
    });
    if (picked.length < maxSeats) limitNote.textContent = "";
    categoryInput.value = chosenCategory();
    roving();
    if (!picked.length) {
      selection.textContent = gettext("No seat chosen yet.");
      barSelection.textContent = interpolate(ngettext("0 of up to %(max)s seat", "0 of up to %(max)s seats", maxSeats), { max: maxSeats }, true);
      return;
    }
    var total = picked.reduce(function (sum, i) { return sum + parseFloat(i.dataset.price); }, 0);
    var seatList = picked.map(function (i) { return i.dataset.short; }).join("; ");
    var amount = moneyFormat.format(total);
    selection.textContent = interpolate(ngettext(
      "%(count)s seat, category %(category)s: %(seats)s. Total %(total)s.",
      "%(count)s seats, category %(category)s: %(seats)s. Total %(total)s.", picked.length),
      { count: picked.length, category: chosenCategory(), seats: seatList, total: amount }, true);
    barSelection.textContent = interpolate(ngettext("%(count)s seat · %(total)s", "%(count)s seats · %(total)s", picked.length),
      { count: picked.length, total: amount }, true);
  }

  // One Tab stop for the whole plan (roving tabindex): the seat last focused, else the first
  // chosen seat, else the first free one.
  var current = null;
  function roving() {
    if (!current || current.disabled) {
      current = chosen()[0] || inputs.filter(function (i) { return !i.disabled; })[0] || null;
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
      sessionStorage.setItem(storeKey, JSON.stringify(chosen().map(function (i) { return i.dataset.seat; })));
    } catch (e) { /* storage off: nothing kept */ }
  }
  function restore() {
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(storeKey) || "null"); } catch (e) { saved = null; }
    (saved || []).forEach(function (seatNo) {
      var input = bySeat[seatNo];
      if (input && isFree(input) && !blocked(input)) input.checked = true;
    });
  }

  form.addEventListener("click", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("seat-input")) return;
    // Only seats that cannot be added are aria-disabled (the click has already ticked it).
    var why = input.getAttribute("aria-disabled") === "true" && reason(input);
    if (!why) return;
    event.preventDefault();  // undo the tick
    var mine = chosen().filter(function (i) { return i !== input; })[0];
    limitNote.textContent = why === "category"
      ? interpolate(gettext("One booking holds seats of one price category. Your seats are category %(category)s; unpick them to choose %(seat)s (category %(other)s)."),
          { category: mine.dataset.category, seat: input.dataset.short, other: input.dataset.category }, true)
      : interpolate(ngettext("You can hold at most %(max)s seat at once.", "You can hold at most %(max)s seats at once.", maxSeats), { max: maxSeats }, true);
  });

  form.addEventListener("change", function (event) {
    if (event.target.classList.contains("seat-input")) {
      notice.textContent = "";
      refresh();
      save();
    }
  });

  // Arrow keys move between the seats one can pick, as they are drawn.  Along a row (left/right,
  // or up/down where a stage on the left or right turns rows into columns) to the next free seat
  // of that row; across rows to the nearest seat of the next row drawn that way, whichever side
  // the stage is on.  Enter picks a seat like Space does; it never submits the form.
  var plan = form.querySelector(".pick-plan");
  var rowsRunDown = plan.classList.contains("stage-left") || plan.classList.contains("stage-right");
  function centre(el) {
    var r = el.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }
  function across(from, axis, step) {
    var other = axis === "y" ? "x" : "y";
    var here = centre(from);
    var best = null, bestRow = null, bestOff = Infinity;
    inputs.forEach(function (i) {
      if (i.disabled || i === from) return;
      var c = centre(i);
      var d = (c[axis] - here[axis]) * step;
      var off = Math.abs(c[other] - here[other]);
      if (d < 2) return;
      if (bestRow === null || d < bestRow - 2) { bestRow = d; best = i; bestOff = off; }
      else if (Math.abs(d - bestRow) <= 2 && off < bestOff) { best = i; bestOff = off; }
    });
    return best;
  }
  function along(from, step) {
    var cells = Array.prototype.slice.call(from.closest(".plan-row").querySelectorAll("input.seat-input"));
    for (var c = cells.indexOf(from) + step; c >= 0 && c < cells.length; c += step) {
      if (!cells[c].disabled) return cells[c];
    }
    return null;
  }
  var MOVES = {
    ArrowLeft: { axis: "x", step: -1 }, ArrowRight: { axis: "x", step: 1 },
    ArrowUp: { axis: "y", step: -1 }, ArrowDown: { axis: "y", step: 1 }
  };
  form.addEventListener("keydown", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("seat-input")) return;
    if (event.key === "Enter") {
      event.preventDefault();
      input.click();
      return;
    }
    var move = MOVES[event.key];
    if (!move) return;
    // Seats of a row run left to right, or top to bottom when rows are drawn as columns.
    var alongRow = (move.axis === "y") === rowsRunDown;
    var target = alongRow ? along(input, move.step) : across(input, move.axis, move.step);
    event.preventDefault();
    if (target) {
      target.focus();
      target.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  });

  form.addEventListener("submit", function (event) {
    if (!chosen().length) {
      event.preventDefault();
      notice.textContent = gettext("Pick at least one seat first.");
      return;
    }
    try { sessionStorage.removeItem(storeKey); } catch (e) { /* nothing kept */ }
  });

  function apply(seats) {
    var lost = [];
    Object.keys(seats).forEach(function (seatNo) {
      var input = bySeat[seatNo];
      if (!input) return;
      var free = seats[seatNo] === "AVAILABLE";
      if (!free && input.checked) {
        input.checked = false;
        lost.push(input.dataset.short);
      }
      input.dataset.status = free ? "free" : "taken";
    });
    if (lost.length) {
      notice.textContent = interpolate(gettext("%(seats)s was just taken by someone else. Please pick another seat."), { seats: lost.join("; ") }, true);
    }
    refresh();
  }

  restore();
  refresh();
  window.SeatkeeperLive.start({ form: form, apply: apply });
})();
