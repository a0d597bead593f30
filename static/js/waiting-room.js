// The queue page: live over a websocket, polling status.json while the socket is down.
// Every message is a full status (same body as status.json), so any one of them is enough
// to draw the page; the server resends a snapshot on every (re)connect.
(function () {
  "use strict";
  var root = document.getElementById("waiting-room");
  var statusBox = document.getElementById("queue-status");
  if (!root || !statusBox) return;
  var line = statusBox.querySelector(".queue-position-line");
  var detail = document.getElementById("queue-detail");
  var unlikely = document.getElementById("queue-unlikely");
  var unlikelyText = document.getElementById("queue-unlikely-text");
  var soldOut = document.getElementById("queue-sold-out");
  var stock = document.getElementById("queue-stock");
  var connection = document.getElementById("queue-connection");
  var socket = null;
  var retry = 0;
  var pollTimer = null;
  var lastText = "";

  function minutes(seconds) {
    if (seconds === null || seconds === undefined) return null;
    if (seconds < 60) return gettext("less than a minute");
    var m = Math.round(seconds / 60);
    return interpolate(ngettext("about %(count)s minute", "about %(count)s minutes", m), { count: m }, true);
  }

  function setLine(html, text) {
    // Only touch the live region when the words change, so screen readers are not flooded.
    if (text === lastText) return;
    lastText = text;
    line.innerHTML = html;
  }

  function renderStock(s) {
    // The units left as PostgreSQL counted them at the last tick (or the sell-out push).
    if (s.soldOut) stock.textContent = gettext("Sold out: every seat or ticket is sold.");
    else if (s.stock === "ALL_HELD") stock.textContent = gettext("All held for now: none is free, but holds lapse, so some may come back.");
    else if (typeof s.unitsLeft === "number") stock.textContent = interpolate(gettext("Left on sale: %(count)s."), { count: s.unitsLeft }, true);
  }

  function render(s) {
    if (s.status === "ADMITTED" && s.enterUrl) {
      setLine(gettext("It is your turn! Taking you to the seat map…"), "admitted");
      window.location.assign(s.enterUrl);
      return;
    }
    // Sold out offers the waitlist whatever the place; otherwise only beyond the horizon.
    unlikely.hidden = !(s.unlikely || s.soldOut);
    soldOut.hidden = !s.soldOut;
    unlikelyText.hidden = !!s.soldOut;
    renderStock(s);
    if (s.status === "WAITING") {
      setLine(interpolate(gettext('You are number %(position)s in line.'),
        { position: '<strong id="queue-position">' + Number(s.position) + "</strong>" }, true),
        "pos" + s.position);
      var parts = [interpolate(ngettext("%(count)s person ahead of you.", "%(count)s people ahead of you.", s.ahead), { count: s.ahead }, true)];
      if (s.paused) parts.push(gettext("Admission is paused for a moment."));
      else if (s.unlikely && !s.soldOut) parts.push(gettext("The seats left will probably be gone before your turn."));
      else if (minutes(s.etaSeconds)) parts.push(interpolate(gettext("Estimated wait: %(wait)s."), { wait: minutes(s.etaSeconds) }, true));
      detail.textContent = parts.join(" ");
    } else if (s.status === "PREQUEUE") {
      setLine(interpolate(ngettext("You are in the pre-queue (%(count)s person so far).", "You are in the pre-queue (%(count)s people so far).", s.prequeue),
        { count: '<span id="queue-prequeue">' + Number(s.prequeue) + "</span>" }, true), "pre" + s.prequeue);
      detail.textContent = gettext("When the sale opens everyone in the pre-queue gets a random place.");
    } else if (s.status === "EXPIRED") {
      setLine(gettext("Your turn has passed."), "expired");
      detail.textContent = gettext("Reload the page and join again to queue once more.");
    } else if (s.status === "UNAVAILABLE") {
      detail.textContent = gettext("The queue is briefly unavailable. Your place is kept.");
    }
  }

  function poll() {
    fetch(root.dataset.statusUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) { if (s) render(s); })
      .catch(function () {});
  }

  function startPolling() {
    if (!pollTimer) pollTimer = window.setInterval(poll, 5000);
  }

  function stopPolling() {
    if (pollTimer) window.clearInterval(pollTimer);
    pollTimer = null;
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    try {
      socket = new WebSocket(scheme + window.location.host + root.dataset.wsPath);
    } catch (e) {
      startPolling();
      return;
    }
    socket.onopen = function () {
      retry = 0;
      stopPolling();
      connection.textContent = gettext("Live");
    };
    socket.onmessage = function (event) {
      var s = JSON.parse(event.data);
      if (s.type === "status") render(s);
    };
    socket.onclose = function () {
      connection.textContent = gettext("Reconnecting…");
      startPolling();
      poll();
      retry = Math.min(retry + 1, 5);
      window.setTimeout(connect, 1000 * Math.pow(2, retry - 1));
    };
  }

  connect();
})();
