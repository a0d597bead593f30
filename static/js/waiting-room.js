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
  var connection = document.getElementById("queue-connection");
  var socket = null;
  var retry = 0;
  var pollTimer = null;
  var lastText = "";

  function minutes(seconds) {
    if (seconds === null || seconds === undefined) return null;
    if (seconds < 60) return "less than a minute";
    var m = Math.round(seconds / 60);
    return "about " + m + " minute" + (m === 1 ? "" : "s");
  }

  function setLine(html, text) {
    // Only touch the live region when the words change, so screen readers are not flooded.
    if (text === lastText) return;
    lastText = text;
    line.innerHTML = html;
  }

  function render(s) {
    if (s.status === "ADMITTED" && s.enterUrl) {
      setLine("It is your turn! Taking you to the seat map…", "admitted");
      window.location.assign(s.enterUrl);
      return;
    }
    unlikely.hidden = !s.unlikely;
    if (s.status === "WAITING") {
      setLine('You are number <strong id="queue-position">' + s.position + "</strong> in line.",
        "pos" + s.position);
      var parts = [s.ahead + (s.ahead === 1 ? " person" : " people") + " ahead of you."];
      if (s.paused) parts.push("Admission is paused for a moment.");
      else if (s.unlikely) parts.push("The seats left will probably be gone before your turn.");
      else if (minutes(s.etaSeconds)) parts.push("Estimated wait: " + minutes(s.etaSeconds) + ".");
      detail.textContent = parts.join(" ");
    } else if (s.status === "PREQUEUE") {
      setLine('You are in the pre-queue (<span id="queue-prequeue">' + s.prequeue +
        "</span> people so far).", "pre" + s.prequeue);
      detail.textContent = "When the sale opens everyone in the pre-queue gets a random place.";
    } else if (s.status === "EXPIRED") {
      setLine("Your turn has passed.", "expired");
      detail.textContent = "Reload the page and join again to queue once more.";
    } else if (s.status === "UNAVAILABLE") {
      detail.textContent = "The queue is briefly unavailable. Your place is kept.";
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
      connection.textContent = "Live";
    };
    socket.onmessage = function (event) {
      var s = JSON.parse(event.data);
      if (s.type === "status") render(s);
    };
    socket.onclose = function () {
      connection.textContent = "Reconnecting…";
      startPolling();
      poll();
      retry = Math.min(retry + 1, 5);
      window.setTimeout(connect, 1000 * Math.pow(2, retry - 1));
    };
  }

  connect();
})();
