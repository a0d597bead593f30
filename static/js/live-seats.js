/* The live seat map, shared by every picker (flights, events): one websocket per sale.
 *
 * Live updates arrive over a websocket as {version, seats: {"12A": "HELD"}}.  The channel
 * layer delivers at most once, so versions must follow one another: on a gap, and after every
 * (re)connect, the page reloads the snapshot, whose version says which messages it already
 * contains.  Reconnects back off exponentially with jitter.
 *
 * SeatkeeperLive.start({form, apply}): `form` carries data-version, data-snapshot-url and
 * data-ws-path; `apply(seats)` gets {seat number: status} to show.  The page's
 * #live-line / #live-state say whether updates are on.
 *
 * When staff change the plan itself (the seat-map editor: seats added, moved, re-flagged), a
 * {type: "plan", version} message arrives; statuses cannot draw a seat the page never had,
 * so the page reloads (or, with seats ticked, says so and keeps the customer's choice).  A
 * plan message lost in a gap is caught by the resync: the snapshot's planVersion differs
 * from the form's data-plan-version.
 */
(function () {
  "use strict";

  function start(options) {
    var form = options.form;
    var apply = options.apply;
    var version = parseInt(form.dataset.version, 10) || 0;
    var liveState = document.getElementById("live-state");
    var resyncing = false;
    var pending = [];

    function setState(state, text) {
      liveState.dataset.state = state;
      liveState.textContent = text;
    }

    function planChanged() {
      if (!form.querySelector("input:checked")) { location.reload(); return; }
      setState("stale", gettext("the seating plan changed: reload the page to see it"));
    }

    function resync() {
      if (resyncing) return;
      resyncing = true;
      fetch(form.dataset.snapshotUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) {
          if (!response.ok) throw new Error("snapshot " + response.status);
          return response.json();
        })
        .then(function (snapshot) {
          version = snapshot.version;
          apply(snapshot.seats);
          if (snapshot.planVersion !== undefined && form.dataset.planVersion !== undefined &&
              String(snapshot.planVersion) !== form.dataset.planVersion) planChanged();
          resyncing = false;
          form.dataset.version = version;
          var queued = pending.sort(function (a, b) { return a.version - b.version; });
          pending = [];
          queued.forEach(receive);
        })
        .catch(function () {
          resyncing = false;
          setTimeout(resync, 2000);
        });
    }

    // A Redis restarted empty forgets which sockets listen to this sale: the socket stays
    // open but hears nothing.  After a quiet spell, check the snapshot anyway (cheap: cached).
    var QUIET_RESYNC_MS = 30000;
    var lastHeard = Date.now();

    function receive(message) {
      lastHeard = Date.now();
      if (resyncing) { pending.push(message); return; }
      if (typeof message.version !== "number") { resync(); return; }
      if (message.version <= version) return;  // already contained in what we show
      if (message.version !== version + 1) { resync(); return; }  // a message was lost
      version = message.version;
      form.dataset.version = version;
      apply(message.seats);
      if (message.type === "plan") planChanged();
    }

    var attempts = 0;
    function connect() {
      var scheme = location.protocol === "https:" ? "wss://" : "ws://";
      var socket = new WebSocket(scheme + location.host + form.dataset.wsPath);
      socket.onopen = function () {
        attempts = 0;
        setState("live", gettext("on"));
        resync();  // whatever happened while we were not listening
      };
      socket.onmessage = function (event) {
        try { receive(JSON.parse(event.data)); } catch (e) { resync(); }
      };
      socket.onclose = function () {
        attempts += 1;
        var delay = Math.min(30000, 500 * Math.pow(2, attempts - 1)) * (0.5 + Math.random() / 2);
        setState("reconnecting", gettext("reconnecting…"));
        setTimeout(connect, delay);
      };
    }

    document.getElementById("live-line").hidden = false;
    if ("WebSocket" in window && "fetch" in window) {
      connect();
      setInterval(function () {
        if (Date.now() - lastHeard >= QUIET_RESYNC_MS) { lastHeard = Date.now(); resync(); }
      }, QUIET_RESYNC_MS);
    } else {
      setState("off", gettext("off (reload the page to see changes)"));
    }
  }

  window.SeatkeeperLive = { start: start };
})();
