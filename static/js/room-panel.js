// The waiting room's live panel: the figures move without a reload (a JSON poll, staff only).
(function () {
  "use strict";
  var FIELDS = {
    "fig-rate": "ratePerMinute", "fig-waiting": "waiting", "fig-prequeue": "prequeue",
    "fig-admitted": "admittedPerMinute", "fig-inside": "insideNow", "fig-holds": "holdsPerMinute",
    "fig-sales": "salesPerMinute", "fig-left": "unitsLeft", "fig-eta-given": "etaGivenSeconds",
    "fig-eta-true": "etaCameTrueSeconds", "fig-at": "atLocal"
  };
  function show(id, value) {
    var cell = document.getElementById(id);
    if (cell) { cell.textContent = value === null || value === undefined ? "—" : String(value); }
  }
  function start() {
    var root = document.getElementById("room-panel");
    if (!root) { return; }
    var url = root.getAttribute("data-figures-url");
    var paused = document.getElementById("fig-paused");
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (f) {
          if (!f) { return; }
          Object.keys(FIELDS).forEach(function (id) { show(id, f[FIELDS[id]]); });
          paused.setAttribute("data-paused", f.paused ? "true" : "false");
          paused.textContent = root.getAttribute(f.paused ? "data-paused-word" : "data-running-word");
        })
        .catch(function () { /* the next poll tries again */ });
    }
    setInterval(poll, 2000);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
